/** NUL and UTF-16 surrogates without their pair: characters PostgreSQL's text and jsonb cannot hold. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character looked for.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

export function holdsUnstorable(value: unknown): boolean {
  if (typeof value === 'string') return new RegExp(UNSTORABLE.source).test(value)
  if (typeof value !== 'object' || value === null) return false
  return Object.entries(value).some(([key, item]) => holdsUnstorable(key) || holdsUnstorable(item))
}

/** `value` with each such character replaced by U+FFFD, in keys and values at any depth. */
export function replaceUnstorable(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UNSTORABLE, '\ufffd')
  if (Array.isArray(value)) return value.map(replaceUnstorable)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [replaceUnstorable(key), replaceUnstorable(item)]),
  )
}
