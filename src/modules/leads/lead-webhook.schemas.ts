import { type Static, Type } from '@sinclair/typebox'

/** Meta's verification request when the callback URL is registered (query names hold dots). */
export const VerificationQuery = Type.Object({
  'hub.mode': Type.Optional(Type.String({ maxLength: 64, description: '`subscribe`' })),
  'hub.verify_token': Type.Optional(Type.String({ maxLength: 1024, description: 'SOCIALNET_VERIFY_TOKEN' })),
  'hub.challenge': Type.Optional(Type.String({ maxLength: 1024, description: 'Answered back as it came' })),
})
export type VerificationQuery = Static<typeof VerificationQuery>

/** An id as Meta sends it: a string of digits, at times a JSON number. */
const GraphId = Type.Union([Type.String(), Type.Integer()])

/**
 * The spec's lead event, read from the raw body once its signature is verified. Documentation only: a signed
 * body of another shape is still stored, and what is not a `leadgen` change is ignored.
 */
export const LeadEventBody = Type.Object(
  {
    object: Type.String({ description: '`page`' }),
    entry: Type.Array(
      Type.Object({
        id: GraphId,
        time: Type.Integer({ description: 'Unix seconds' }),
        changes: Type.Array(
          Type.Object({
            field: Type.String({ description: '`leadgen`' }),
            value: Type.Object({
              leadgen_id: GraphId,
              page_id: GraphId,
              form_id: GraphId,
              adgroup_id: Type.Optional(GraphId),
              ad_id: Type.Optional(GraphId),
              created_time: Type.Integer({ description: 'Unix seconds' }),
            }),
          }),
        ),
      }),
    ),
  },
  {
    title: 'LeadEvent',
    description:
      'Signed with SOCIALNET_APP_SECRET: X-Hub-Signature `sha1=<hex HMAC-SHA1 of the body>` and X-Hub-Signature-256 `sha256=<hex HMAC-SHA256>`, each checked when sent, at least one required',
  },
)

/** Plain-text answers: the challenge echoed, `EVENT_RECEIVED`. */
export const PlainText = (description: string) => ({
  description,
  content: { 'text/plain': { schema: Type.String() } },
})

/** The spec's answer to a lead event once it is stored. */
export const EVENT_RECEIVED = 'EVENT_RECEIVED'

/** A lead event as Meta posts it, for the reference's example (the example campaign's page and form). */
export const LEAD_EVENT_EXAMPLE = {
  object: 'page',
  entry: [
    {
      id: '104857600012345',
      time: 1741947630,
      changes: [
        {
          field: 'leadgen',
          value: {
            leadgen_id: '444444444444444',
            page_id: '104857600012345',
            form_id: '987654321098765',
            created_time: 1741947630,
          },
        },
      ],
    },
  ],
} satisfies Static<typeof LeadEventBody>
