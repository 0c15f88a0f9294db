/**
 * A mistake in how the service is set up (a setting, or what one points at: a port taken, a database out of
 * reach): a start reports it as one line naming the setting, without a stack, and exits 1 (lifecycle.ts).
 * Any other error at start is a bug and keeps its stack.
 */
export class StartError extends Error {
  constructor(message: string) {
    super(message)
    this.name = new.target.name
  }
}
