import { pipeline, Readable } from 'node:stream'
import { stringify } from 'csv-stringify'

/** A column: the record's key, and the header cell when it differs from the key. */
export type CsvColumn<T> = (keyof T & string) | { key: keyof T & string; header: string }

/**
 * A CSV download streamed from batches of records through csv-stringify: a header row, RFC 4180 quoting,
 * and `escape_formulas`, which prefixes with `'` any cell starting with `=`, `+`, `-`, `@`, tab or CR (and
 * their full-width forms), so that no cell runs as a formula when the file is opened in a spreadsheet.
 * A batch is read only when the consumer wants more, so a slow download holds no more than one.
 * `bom` starts the file with a byte-order mark, for spreadsheets that otherwise guess the encoding.
 */
export function csvStream<T extends object>(
  batches: AsyncIterable<T[]>,
  options: { columns: readonly CsvColumn<T>[]; bom?: boolean },
): Readable {
  async function* records() {
    for await (const batch of batches) yield* batch
  }
  const csv = stringify({
    header: true,
    columns: options.columns.map((column) => (typeof column === 'string' ? column : { ...column })),
    bom: options.bom ?? false,
    escape_formulas: true,
  })
  // An error on either side (a failed query) destroys both, and with them the response.
  return pipeline(Readable.from(records()), csv, () => undefined)
}
