import { type Static, Type } from '@sinclair/typebox'
import { ErrorEnvelope } from '../../platform/http/envelope.js'
import { Id, Nullable } from '../../platform/http/schemas.js'

export const LeadFormsParams = Type.Object({
  pageid: Type.String({ pattern: '^[0-9]+$', maxLength: 32, description: "The Meta page's id (digits)" }),
})
export type LeadFormsParams = Static<typeof LeadFormsParams>

export const LeadFormsQuery = Type.Object({
  pageaccesstoken: Type.String({
    minLength: 1,
    maxLength: 4096,
    description: "The page's access token; Graph is asked with it and it is not kept",
  }),
  account_id: Type.Optional(Id({ description: "The caller's account or one of its sub-accounts" })),
})
export type LeadFormsQuery = Static<typeof LeadFormsQuery>

/**
 * The spec's lead form. What Graph leaves out is null (an empty list for `questions`); `created_time` is
 * ISO 8601 when Graph's time (`2024-01-15T10:20:30+0000`) parses, else Graph's text as it came.
 */
export const LeadForm = Type.Object(
  {
    id: Type.String(),
    name: Nullable(Type.String()),
    /** Graph's form status: `ACTIVE`, `ARCHIVED`, ... */
    status: Nullable(Type.String()),
    locale: Nullable(Type.String()),
    questions: Type.Array(
      Type.Object({
        key: Nullable(Type.String()),
        label: Nullable(Type.String()),
        /** Graph's question type: `EMAIL`, `FULL_NAME`, `CUSTOM`, ... */
        type: Nullable(Type.String()),
      }),
    ),
    privacy_policy: Nullable(
      Type.Object({ url: Nullable(Type.String()), link_text: Nullable(Type.String()) }),
    ),
    created_time: Nullable(Type.String()),
    /** The page the forms were listed for (the path's `pageid`). */
    page_id: Type.String(),
  },
  { title: 'LeadForm' },
)
export type LeadForm = Static<typeof LeadForm>

/**
 * A 400: the shared error envelope. When Graph refused the page token, `message` is Graph's, and the spec's
 * provider error object `{ message, type, code }` is `additional_info` and, for `type` and `code`, also
 * beside the envelope's fields.
 */
export const LeadFormsRefusal = Type.Object(
  {
    ...ErrorEnvelope.properties,
    type: Type.Optional(Type.String({ description: "Graph's error type, e.g. `OAuthException`" })),
    code: Type.Optional(Type.Integer({ description: "Graph's error code, e.g. 190 for an invalid token" })),
  },
  {
    title: 'LeadFormsRefusal',
    description: "Error envelope; Graph's refusal also carries the provider error object's type and code",
  },
)
export type LeadFormsRefusal = Static<typeof LeadFormsRefusal>
