import { type Static, Type } from '@sinclair/typebox'

// additionalProperties: the provider's settings are answered as returned, fields we do not name included.
export const EventWebhookSettings = Type.Object(
  {
    enabled: Type.Boolean(),
    url: Type.String(),
    delivered: Type.Boolean(),
    open: Type.Boolean(),
    click: Type.Boolean(),
    bounce: Type.Boolean(),
    dropped: Type.Boolean(),
    spam_report: Type.Boolean(),
    unsubscribe: Type.Boolean(),
    group_unsubscribe: Type.Boolean(),
    group_resubscribe: Type.Boolean(),
    deferred: Type.Boolean(),
    processed: Type.Boolean(),
  },
  {
    title: 'EventWebhookSettings',
    additionalProperties: true,
    description: "SendGrid's event webhook settings of the account's subuser",
  },
)
export type EventWebhookSettings = Static<typeof EventWebhookSettings>

export const ParseSettings = Type.Object(
  { hostname: Type.String(), url: Type.String(), spam_check: Type.Boolean(), send_raw: Type.Boolean() },
  {
    title: 'InboundParseSettings',
    additionalProperties: true,
    description: "SendGrid's Inbound Parse settings for the hostname",
  },
)
export type ParseSettings = Static<typeof ParseSettings>

export const InboundSetup = Type.Object(
  {
    settings: ParseSettings,
    mx_record: Type.Object(
      {
        type: Type.Literal('MX'),
        host: Type.String(),
        value: Type.String(),
        priority: Type.Integer(),
      },
      { description: 'The DNS record the hostname must carry for its mail to reach the provider' },
    ),
  },
  { title: 'InboundSetup' },
)
export type InboundSetup = Static<typeof InboundSetup>

export const InboundParseBody = Type.Object(
  {
    hostname: Type.String({
      minLength: 1,
      maxLength: 254,
      description: 'The domain that receives replies, e.g. reply.example.com',
    }),
  },
  { title: 'InboundParseInput' },
)
