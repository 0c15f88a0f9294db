import { parseArgs } from 'node:util'
import { ID_PATTERN } from '../platform/db/ids.js'
import { UsageError } from './errors.js'
import { closest } from './suggest.js'

/** One command-line flag: how parseArgs reads it, how usage shows it, and how its value is checked. */
export interface Flag<T> {
  type: 'string' | 'boolean'
  required: boolean
  /** Given once per value (`--redirect-uri A --redirect-uri B`). */
  multiple?: boolean
  /** The value as usage shows it (NAME, active|suspended); none for a switch. */
  placeholder?: string
  read(raw: string | boolean | string[] | undefined, name: string): T
}

export type FlagSpecs = Record<string, Flag<unknown>>
export type FlagValues<S extends FlagSpecs> = { [K in keyof S]: S[K] extends Flag<infer T> ? T : never }

function optional<T>(placeholder: string, check: (raw: string, name: string) => T): Flag<T | undefined> {
  return {
    type: 'string',
    required: false,
    placeholder,
    read: (raw, name) => (raw === undefined ? undefined : check(String(raw), name)),
  }
}

export const text = (placeholder: string) => optional(placeholder, (raw) => raw)

const idPattern = new RegExp(ID_PATTERN)
export const id = () =>
  optional('ID', (raw, name) => {
    if (!idPattern.test(raw)) throw new UsageError(`${name} must be a 24-character lowercase hex id`)
    return raw
  })

export const oneOf = <V extends string>(values: readonly V[]) =>
  optional(values.join('|'), (raw, name) => {
    if (!values.includes(raw as V)) throw new UsageError(`${name} must be one of ${values.join(', ')}`)
    return raw as V
  })

export const positiveInteger = (placeholder: string) =>
  optional(placeholder, (raw, name) => {
    if (!/^[1-9]\d*$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
      throw new UsageError(`${name} must be a positive integer`)
    }
    return Number(raw)
  })

/** A flag given once per value; its values in order. */
export const repeated = (placeholder: string): Flag<string[] | undefined> => ({
  type: 'string',
  required: false,
  multiple: true,
  placeholder,
  read: (raw) => (Array.isArray(raw) && raw.length > 0 ? raw : undefined),
})

export const toggle = (): Flag<boolean> => ({ type: 'boolean', required: false, read: (raw) => raw === true })

/** An empty value counts as missing: no required field of the admin API accepts one. */
export function required<T>(flag: Flag<T | undefined>): Flag<T> {
  return {
    ...flag,
    required: true,
    read: (raw, name) => {
      const value = raw === '' ? undefined : flag.read(raw, name)
      if (value === undefined) throw new UsageError(`missing required flag ${name}`)
      return value
    },
  }
}

/** Reads `args` strictly against `specs`: unknown flags and stray words are usage errors. */
export function parseFlags<S extends FlagSpecs>(specs: S, args: string[]): FlagValues<S> {
  const options: Record<string, { type: 'string' | 'boolean'; multiple: boolean }> = {}
  for (const [name, flag] of Object.entries(specs)) {
    options[name] = { type: flag.type, multiple: flag.multiple ?? false }
  }
  // Only string flags are multiple, so a list holds strings.
  let parsed: {
    values: Record<string, string | boolean | (string | boolean)[] | undefined>
    positionals: string[]
  }
  try {
    parsed = parseArgs({
      args: withNegativeValues(specs, args),
      options,
      strict: true,
      allowPositionals: true,
    })
  } catch (error) {
    throw new UsageError(parseArgsProblem(error as Error & { code?: string }, Object.keys(specs)))
  }
  const [stray] = parsed.positionals
  if (stray !== undefined) throw new UsageError(`unexpected argument '${stray}'`)
  const values = Object.entries(specs).map(([name, flag]) => [
    name,
    flag.read(parsed.values[name] as string | boolean | string[] | undefined, `--${name}`),
  ])
  return Object.fromEntries(values) as FlagValues<S>
}

/** A negative number, which parseArgs would take for a flag of its own. */
const NEGATIVE_NUMBER = /^-\d/

/**
 * `--amount -5` as `--amount=-5`: parseArgs refuses a value that starts with a dash as ambiguous, though a
 * negative number after a flag that takes a value can be nothing else; its own check then judges it.
 */
function withNegativeValues(specs: FlagSpecs, args: string[]): string[] {
  const joined: string[] = []
  for (let at = 0; at < args.length; at++) {
    const arg = args[at] as string
    const next = args[at + 1]
    const takesValue = arg.startsWith('--') && specs[arg.slice(2)]?.type === 'string'
    if (takesValue && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      joined.push(`${arg}=${next}`)
      at++
    } else joined.push(arg)
  }
  return joined
}

/**
 * parseArgs's message, but for an unknown option its own advice (about positionals starting with '-')
 * gives way to the flag most likely meant.
 */
function parseArgsProblem(error: Error & { code?: string }, names: string[]): string {
  const option = /'([^']+)'/.exec(error.message)?.[1]
  if (error.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || !option) return error.message
  const meant = closest(
    option,
    names.map((name) => `--${name}`),
  )
  return `unknown option ${option}${meant ? `; did you mean ${meant}?` : ''}`
}

/** `--name NAME [--parent ID] [--main]`: required flags bare, optional ones in brackets. */
export function flagsUsage(specs: FlagSpecs): string {
  return Object.entries(specs)
    .map(([name, flag]) => {
      const shown = flag.placeholder ? `--${name} ${flag.placeholder}` : `--${name}`
      if (flag.multiple) return flag.required ? `${shown} [${shown} ...]` : `[${shown} ...]`
      return flag.required ? shown : `[${shown}]`
    })
    .join(' ')
}
