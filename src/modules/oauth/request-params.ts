/** A parameter of an OAuth request as the endpoints read it: a non-empty string, or nothing. */
export const param = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined
