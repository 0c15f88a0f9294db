import { Type } from '@sinclair/typebox'
import { Id, Integer } from '../../platform/http/schemas.js'

/**
 * A funnel id as sent, in a path, query or body: any bounded text, so that `requireFunnel` answers a
 * malformed one with the spec's 400 `Invalid funnel ID` rather than a schema error.
 */
export const FunnelId = (options: { description?: string } = {}) =>
  Type.String({ maxLength: 100, description: 'The funnel id', ...options })

export const FunnelParams = Type.Object({ id: FunnelId() })

/**
 * A step's position as given (a new step, a reorder): bounded well below the column's limit, so that the
 * next position after the last (`order + 1`, for a step added or copied without one) always fits.
 */
export const MAX_STEP_ORDER = 10_000
export const StepOrder = (description?: string) =>
  Integer({ minimum: 0, maximum: MAX_STEP_ORDER, ...(description && { description }) })

/** Another record named in an answer: a funnel's tag, the funnel holding a base path. */
export const NamedReference = Type.Object({ _id: Id(), name: Type.String() }, { title: 'NamedReference' })
