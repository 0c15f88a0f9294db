/** An option a bench refuses: printed with the bench's usage, and the bench exits 2. */
export class UsageError extends Error {}

/**
 * The options `parse` reads from the command line; undefined once it has printed why they are refused
 * (a UsageError, or node's parseArgs TypeError for an unknown flag) with the usage.
 */
export function readOptions<T>(parse: (argv: string[]) => T, usage: () => string): T | undefined {
  try {
    return parse(process.argv.slice(2))
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error
    console.error(`${error.message}\n${usage()}`)
    return undefined
  }
}

/** A flag's value that must be above 0, and whole when `integer`; a UsageError naming the flag otherwise. */
export function positive(raw: string, flag: string, integer: boolean): number {
  const value = Number(raw)
  if (!(value > 0) || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${flag} must be ${integer ? 'an integer' : 'a number'} above 0, not ${raw}`)
  }
  return value
}
