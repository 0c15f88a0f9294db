import { type Static, Type } from '@sinclair/typebox'
import { Id } from '../../platform/http/schemas.js'

export const RegisterWebhookBody = Type.Object(
  {
    campaign_id: Id({ description: 'The lead campaign whose page is subscribed' }),
  },
  { title: 'LeadWebhookRegistrationInput' },
)
export type RegisterWebhookBody = Static<typeof RegisterWebhookBody>

/** The spec's webhook registration. */
export const WebhookRegistration = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    /** The user who registered it (the account, for a token without a user). */
    owner: Id(),
    /** The callback Meta posts lead events to: PUBLIC_BASE_URL + `/webhooks/socialnet/leads`. */
    webhook_url: Type.String(),
  },
  { title: 'LeadWebhookRegistration' },
)
export type WebhookRegistration = Static<typeof WebhookRegistration>

/**
 * The spec's answer: `{ success: true, message: 'SUCCESS', data: <registration> }`, or exactly
 * `{ success: true }` when the campaign is not found (in the caller's account, or deleted).
 */
export const RegisterWebhookResponse = Type.Object(
  {
    success: Type.Literal(true),
    message: Type.Optional(Type.String()),
    data: Type.Optional(WebhookRegistration),
  },
  {
    title: 'LeadWebhookRegistrationAnswer',
    description: 'The registration; only `{ success: true }` when the campaign is not found',
  },
)
export type RegisterWebhookResponse = Static<typeof RegisterWebhookResponse>

/** A registration of the reference's examples (ids made up), for the example campaign. */
export const REGISTRATION_EXAMPLE = {
  _id: '65f1c0ffee0000000000d201',
  account_id: '65f1c0ffee0000000000a001',
  owner: '65f1c0ffee0000000000a002',
  webhook_url: 'https://api.example.com/webhooks/socialnet/leads',
} satisfies WebhookRegistration
