import { UsageError } from './errors.js'

/** How a command's result is printed: `json` (the default, one object on the last line), `table` for people. */
export const OUTPUT_FORMATS = ['json', 'table'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

/**
 * The `--format` option, taken out of `argv` wherever it stands (`--format table`, `--format=table`): the
 * format and the arguments left for the command.
 */
export function takeFormat(argv: string[]): { format: OutputFormat; args: string[] } {
  const args: string[] = []
  let format: string = 'json'
  for (let at = 0; at < argv.length; at++) {
    const arg = argv[at] as string
    if (arg === '--format') format = argv[++at] ?? ''
    else if (arg.startsWith('--format=')) format = arg.slice('--format='.length)
    else args.push(arg)
  }
  if (!OUTPUT_FORMATS.includes(format as OutputFormat))
    throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}`)
  return { format: format as OutputFormat, args }
}

export function render(result: object, format: OutputFormat): string {
  return format === 'json' ? JSON.stringify(result) : asTable(result)
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A value in a cell: text as it is, nothing for null, anything else as compact JSON. */
const cell = (value: unknown) =>
  value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value)

/** Rows of cells in columns as wide as their widest cell, the first row the header, underlined. */
function columns(rows: string[][]): string {
  const widths = (rows[0] ?? []).map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  )
  const line = (row: string[]) =>
    row
      .map((text, column) => text.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd()
  const [header = [], ...body] = rows
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n')
}

/** What a list's result holds beside its records: the cursor of the next page (`account list`). */
const LIST_EXTRAS = new Set(['next_cursor'])

/**
 * A result for people: a list (records under one name, as `accounts` of `account list`, and perhaps the
 * next page's cursor) as a table with a column per field, the cursor after it; a record as a table of its
 * fields and values.
 */
function asTable(result: object): string {
  const entries = Object.entries(result)
  const lists = entries.filter(([, value]) => Array.isArray(value) && value.every(isRecord))
  const [list] = lists
  if (!list || entries.some(([key]) => key !== list[0] && !LIST_EXTRAS.has(key)))
    return columns([['field', 'value'], ...entries.map(([key, value]) => [key, cell(value)])])
  const [name, rows] = list as [string, Record<string, unknown>[]]
  const fields = [...new Set(rows.flatMap((row) => Object.keys(row)))]
  const table =
    rows.length === 0
      ? `(no ${name})`
      : columns([fields, ...rows.map((row) => fields.map((field) => cell(row[field])))])
  const rest = entries.filter(([key]) => key !== name).map(([key, value]) => `${key}: ${cell(value)}`)
  return [table, ...rest].join('\n')
}
