/** A JSON object's fields, read from a payload whose shape is not known in advance (a provider's webhook). */
export type JsonFields = Record<string, unknown>

/** Whether a parsed JSON value is an object (not an array, not null). */
export const isJsonObject = (value: unknown): value is JsonFields =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A string field's value trimmed, or undefined when it is no string or only whitespace. */
export const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined
