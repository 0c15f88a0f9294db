import { Type } from '@sinclair/typebox'
import { ID_PATTERN } from '../db/ids.js'

export const Id = (options: { description?: string } = {}) => Type.String({ pattern: ID_PATTERN, ...options })

export const Timestamp = () => Type.String({ format: 'date-time' })

export const IdParams = Type.Object({ id: Id() })

/** A string limited to `values`, as a plain JSON-schema enum (typed as the union of the values). */
export const StringEnum = <const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
