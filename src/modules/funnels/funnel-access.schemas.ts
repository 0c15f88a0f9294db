import { Type } from '@sinclair/typebox'
import { Id } from '../../platform/http/schemas.js'

/**
 * A funnel id as sent, in a path, query or body: any bounded text, so that `requireFunnel` answers a
 * malformed one with the spec's 400 `Invalid funnel ID` rather than a schema error.
 */
export const FunnelId = (options: { description?: string } = {}) =>
  Type.String({ maxLength: 100, description: 'The funnel id', ...options })

export const FunnelParams = Type.Object({ id: FunnelId() })

/** The answer of a delete of a domain or tag. */
export const Removed = Type.Object({ _id: Id(), deleted: Type.Literal(true) })

/** The bare success envelope, without `data`: a step deletion, a cache purge. */
export const Succeeded = Type.Object({ success: Type.Literal(true), message: Type.Literal('SUCCESS') })
