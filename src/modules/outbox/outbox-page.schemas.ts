import { Type } from '@sinclair/typebox'
import { ErrorEnvelope } from '../../platform/http/envelope.js'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Id, Integer } from '../../platform/http/schemas.js'

/** The page size of the lists when none is asked for. */
export const DEFAULT_LIMIT = 25

export const OutboxListQuery = Type.Composite([
  CursorPageQuery(DEFAULT_LIMIT, 100),
  Type.Object({ account_id: Type.Optional(Id({ description: "Only this account's messages" })) }),
])

export const OutboxMessageParams = Type.Object({ account_id: Id(), id: Id() })

export const OutboxAttachmentParams = Type.Composite([
  OutboxMessageParams,
  Type.Object({
    index: Integer({ minimum: 0, description: "Position in the message's attachments, from 0" }),
  }),
])

export const SignInForm = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 4096, description: 'ADMIN_TOKEN' }),
  next: Type.Optional(Type.String({ maxLength: 2048, description: 'The outbox page to go back to' })),
})

/** A server-rendered page, documented under its status. */
export const Page = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String() } },
})

/** A refusal: a page for a browser (it asks for text/html), the shared error envelope for any other client. */
export const PageOrEnvelope = (description: string) => ({
  description,
  content: {
    'text/html': { schema: Type.String() },
    'application/json': { schema: Type.Ref(ErrorEnvelope) },
  },
})
