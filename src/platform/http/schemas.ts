import type { Readable } from 'node:stream'
import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { ID_PATTERN } from '../db/ids.js'

export const Id = (options: { description?: string } = {}) => Type.String({ pattern: ID_PATTERN, ...options })

/** The largest value of a PostgreSQL `integer` column, the bound of every integer the API takes. */
export const MAX_INTEGER = 2_147_483_647

/**
 * An integer the API takes (a page, a limit, an amount, an index): bounded, so that no value beyond what a
 * column or an OFFSET holds reaches the database; a larger `maximum` may be given, never none.
 */
export const Integer = (
  options: { minimum?: number; maximum?: number; default?: number; description?: string } = {},
) => Type.Integer({ ...options, maximum: options.maximum ?? MAX_INTEGER })

/**
 * The schema's value or null, written `nullable: true` (OpenAPI 3.0; Ajv reads it too) instead of a union
 * with null: for a union the response serializer first validates the value against each branch, formats
 * included, which was a tenth of what serializing a room list cost.
 */
export const Nullable = <T extends TSchema>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...schema, nullable: true })

/** A body sent as a stream while it is produced (an export): documented as `schema`, typed as either. */
export const Streamed = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T> | Readable>(schema)

export const Timestamp = () => Type.String({ format: 'date-time' })

/** The longest address SMTP carries (RFC 5321: a forward-path of 256 octets, angle brackets included). */
export const EMAIL_MAX_LENGTH = 254

/** An email address, at most EMAIL_MAX_LENGTH characters: what every index on an address column holds. */
export const Email = (options: { description?: string } = {}) =>
  Type.String({ format: 'email', maxLength: EMAIL_MAX_LENGTH, ...options })

export const IdParams = Type.Object({ id: Id() })

/** A string limited to `values`, as a plain JSON-schema enum (typed as the union of the values). */
export const StringEnum = <const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
