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

/*
 * The longest value each kind of free text a request may carry: a stored field without a bound let 100
 * contacts with 1 MB names make a list page of 104 MB. Each is far above what a person or a
 * provider sends, so that no real value is refused; content bodies (an email's, a page's HTML) are bounded
 * by their route's body limit instead.
 */

/** A name or a title (a contact's, an account's, a sender's). */
export const NAME_MAX_LENGTH = 256
/** A phone number, as typed: E.164 is 15 digits, the rest is room for spaces, dashes and an extension. */
export const PHONE_MAX_LENGTH = 64
/** An email subject: RFC 5322's limit of a line (2.1.1), which a subject header must fit. */
export const SUBJECT_MAX_LENGTH = 998
/** A short label: a tag, a type, a state, a currency, a provider's id of a resource. */
export const LABEL_MAX_LENGTH = 128
/** A search term: at most a whole name or email address, which is what a search is for. */
export const SEARCH_MAX_LENGTH = 256
/** A URL: what browsers and CDNs reliably carry. */
export const URL_MAX_LENGTH = 2048
/** A key of a record of free keys (a widget's settings, a template's variables). */
export const FIELD_KEY_MAX_LENGTH = 128
/** How many entries a record of free keys may hold. */
export const FIELD_COUNT_MAX = 200
/** A credential: a password, a token, a client secret, an API key (a JWT with every scope fits). */
export const CREDENTIAL_MAX_LENGTH = 8192
/** A description, a note, an address, a text message. */
export const TEXT_MAX_LENGTH = 10_000

/** Free text of at most `maxLength` characters: every string a request carries is bounded. */
export const Text = (maxLength: number, options: { minLength?: number; description?: string } = {}) =>
  Type.String({ maxLength, ...options })

export const IdParams = Type.Object({ id: Id() })

/** A string limited to `values`, as a plain JSON-schema enum (typed as the union of the values). */
export const StringEnum = <const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
