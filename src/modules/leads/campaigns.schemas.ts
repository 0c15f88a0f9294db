import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { SUBSCRIPTION_STATUSES } from './tables.js'

/** Meta's ids (pages, forms) are strings of digits. */
export const GraphId = (description: string) =>
  Type.String({ pattern: '^[0-9]{1,32}$', description: `${description}: Meta's id, digits` })

export const CreateCampaignBody = Type.Object(
  {
    page_id: GraphId('The page'),
    form_id: GraphId('The lead form'),
  },
  { title: 'LeadCampaignInput' },
)
export type CreateCampaignBody = Static<typeof CreateCampaignBody>

/** The spec's lead campaign, with its page subscription's health and its newest lead. */
export const Campaign = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    integration: Type.Literal('socialnet_ads'),
    page_id: Type.String(),
    form_id: Type.String(),
    is_deleted: Type.Boolean(),
    created_at: Timestamp(),
    /** Whether Meta still sends this page's leads to our app, as the last check found it. */
    subscription_status: StringEnum(SUBSCRIPTION_STATUSES),
    subscription_error: Nullable(Type.String()),
    subscription_checked_at: Nullable(Timestamp()),
    /** `created_time` of the newest lead captured. */
    last_lead_at: Nullable(Timestamp()),
    synced_at: Nullable(Timestamp()),
  },
  { title: 'LeadCampaign' },
)
export type Campaign = Static<typeof Campaign>

export const CampaignsQuery = Type.Composite([
  PageQuery(20, 100),
  Type.Object({
    include_deleted: Type.Boolean({ default: false, description: 'Also list campaigns marked is_deleted' }),
  }),
])
export type CampaignsQuery = Static<typeof CampaignsQuery>

/** A campaign of the reference's examples (ids and times made up; Meta's ids are digits). */
export const CAMPAIGN_INPUT_EXAMPLE = {
  page_id: '104857600012345',
  form_id: '987654321098765',
} satisfies CreateCampaignBody

export const CAMPAIGN_EXAMPLE = {
  _id: '65f1c0ffee0000000000d001',
  account_id: '65f1c0ffee0000000000a001',
  integration: 'socialnet_ads',
  ...CAMPAIGN_INPUT_EXAMPLE,
  is_deleted: false,
  created_at: '2025-03-14T09:26:53.000Z',
  subscription_status: 'unknown',
  subscription_error: null,
  subscription_checked_at: null,
  last_lead_at: null,
  synced_at: null,
} satisfies Campaign
