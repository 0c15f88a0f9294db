/** A parameter of an OAuth request as the endpoints read it: a non-empty string, or nothing. */
export const param = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined

/**
 * RFC 6749 3.1: "Request and response parameters MUST NOT be included more than once." The names given
 * more than once (the query and form parsers make a repeated name an array), in the order they came.
 */
export const repeatedParams = (params: Record<string, unknown>): string[] =>
  Object.entries(params)
    .filter(([, value]) => Array.isArray(value))
    .map(([name]) => name)
