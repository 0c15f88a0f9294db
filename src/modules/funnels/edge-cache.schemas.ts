import { Type } from '@sinclair/typebox'

export const PurgeQuery = Type.Object({
  step_id: Type.Optional(Type.String({ maxLength: 64, description: 'Purge this step only' })),
  all: Type.Optional(Type.Boolean({ description: 'Purge every step of the funnel' })),
})
