import { Type } from '@sinclair/typebox'

/** Malformed ids pass here so that the funnel access answers the spec's messages. */
export const CacheParams = Type.Object({ id: Type.String({ maxLength: 64 }) })

export const PurgeQuery = Type.Object({
  step_id: Type.Optional(Type.String({ maxLength: 64, description: 'Purge this step only' })),
  all: Type.Optional(Type.Boolean({ description: 'Purge every step of the funnel' })),
})

export const Purged = Type.Object({ success: Type.Literal(true), message: Type.Literal('SUCCESS') })
