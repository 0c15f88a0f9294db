/** A failure the CLI reports as one line on stderr before exiting with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
    this.name = new.target.name
  }
}

/** Wrong or missing arguments: exit 2, as shells expect of a usage error. */
export class UsageError extends CliError {
  constructor(
    message: string,
    /** The command's own usage line, printed after the message once the command is known. */
    readonly usage?: string,
  ) {
    super(message, 2)
  }
}
