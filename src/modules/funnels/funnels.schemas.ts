import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { FUNNEL_STATUSES, FunnelStatus, LiveChatWidget, STEP_TYPES, StepSeo } from './documents.schemas.js'
import { FunnelId, NamedReference, StepOrder } from './funnel-access.schemas.js'
import { FunnelTag } from './tags.schemas.js'

const PATH = { maxLength: 500 }
const TRACKING_CODE = { maxLength: 100_000 }

export const StepSummary = Type.Object(
  {
    _id: Id(),
    name: Type.String(),
    path: Type.String(),
    type: StringEnum(STEP_TYPES),
    order: Type.Integer(),
  },
  { title: 'FunnelStepSummary' },
)
export type StepSummary = Static<typeof StepSummary>
const StepWithSeo = Type.Composite([StepSummary, Type.Object({ seo: StepSeo })], {
  title: 'FunnelStepWithSeo',
})
export type StepWithSeo = Static<typeof StepWithSeo>

/** The spec's Funnel fields every view has; absent optional values are null. */
const FunnelFields = Type.Object({
  _id: Id(),
  name: Type.String(),
  domain_id: Nullable(Id()),
  base_path: Type.String(),
  status: FunnelStatus,
  favicon: Nullable(Type.String()),
  header_tracking_code: Nullable(Type.String()),
  footer_tracking_code: Nullable(Type.String()),
  live_chat_widget: Nullable(LiveChatWidget),
  category: Nullable(Type.String()),
  account_id: Id(),
  deleted: Type.Boolean(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  updated_by: Nullable(Type.String()),
})

/** A funnel in the list: the spec's resource, tags as ids, steps without content. */
export const FunnelListItem = Type.Composite(
  [FunnelFields, Type.Object({ tags: Type.Array(Id()), steps: Type.Array(StepSummary) })],
  { title: 'FunnelListItem' },
)
export type FunnelListItem = Static<typeof FunnelListItem>

/** One funnel: its domain and tags populated, its steps (with seo) in order. */
export const FunnelDetail = Type.Composite(
  [
    FunnelFields,
    Type.Object({
      domain: Nullable(Type.Object({ _id: Id(), name: Type.String(), ssl_enabled: Type.Boolean() })),
      tags: Type.Array(NamedReference),
      steps: Type.Array(StepWithSeo),
    }),
  ],
  { title: 'Funnel' },
)
export type FunnelDetail = Static<typeof FunnelDetail>

const TagIdList = Type.String({ maxLength: 2500, description: 'Comma-separated tag ids' })

export const FunnelsQuery = Type.Composite([
  PageQuery(10, 100),
  Type.Object({
    search: Type.Optional(Type.String({ maxLength: 200, description: 'Part of the name' })),
    status: Type.Optional(FunnelStatus),
    tags: Type.Optional(TagIdList),
    domain_connected: Type.Optional(Type.Boolean()),
  }),
])
export type FunnelsQuery = Static<typeof FunnelsQuery>

export const FiltersQuery = Type.Object({
  status: Type.Optional(FunnelStatus),
  tags: Type.Optional(TagIdList),
})
export type FiltersQuery = Static<typeof FiltersQuery>

export const Filters = Type.Object(
  { statuses: Type.Array(FunnelStatus), tags: Type.Array(FunnelTag) },
  { title: 'FunnelFilters' },
)
export type Filters = Static<typeof Filters>

export const ValidatePathBody = Type.Object(
  {
    path: Type.String(PATH),
    domain_id: Type.Optional(Nullable(Id())),
    funnel_id: Type.Optional(FunnelId({ description: 'A funnel to leave out (the one being edited)' })),
  },
  { title: 'PathCheckInput' },
)
export type ValidatePathBody = Static<typeof ValidatePathBody>

export const PathAvailable = Type.Object(
  { available: Type.Literal(true), path: Type.String() },
  { title: 'PathAvailable' },
)

/** The spec's conflict answer (409): the error envelope with `data` naming the funnel holding the path. */
export const PathConflict = Type.Object(
  {
    success: Type.Literal(false),
    errno: Type.Literal(409),
    message: Type.String(),
    data: Type.Object({
      available: Type.Literal(false),
      path: Type.String(),
      conflicting_funnel: NamedReference,
    }),
  },
  { title: 'PathConflict' },
)
export type PathConflict = Static<typeof PathConflict>

const NewStep = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  path: Type.String(PATH),
  type: Type.Optional(StringEnum(STEP_TYPES, { default: 'page' })),
  order: Type.Optional(StepOrder('Position; the list position when absent')),
})

export const CreateFunnelBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    domain_id: Type.Optional(Nullable(Id())),
    base_path: Type.Optional(Type.String({ ...PATH, description: 'Derived from the name when absent' })),
    status: Type.Optional(StringEnum(FUNNEL_STATUSES, { default: 'draft' })),
    favicon: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    tags: Type.Optional(Type.Array(Id(), { maxItems: 50 })),
    steps: Type.Optional(Type.Array(NewStep, { maxItems: 100 })),
    header_tracking_code: Type.Optional(Nullable(Type.String(TRACKING_CODE))),
    footer_tracking_code: Type.Optional(Nullable(Type.String(TRACKING_CODE))),
    live_chat_widget: Type.Optional(Nullable(LiveChatWidget)),
  },
  { title: 'FunnelInput' },
)
export type CreateFunnelBody = Static<typeof CreateFunnelBody>

export const UpdateFunnelBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(FunnelStatus),
    favicon: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    tags: Type.Optional(Type.Array(Id(), { maxItems: 50 })),
    header_tracking_code: Type.Optional(Nullable(Type.String(TRACKING_CODE))),
    footer_tracking_code: Type.Optional(Nullable(Type.String(TRACKING_CODE))),
    live_chat_widget: Type.Optional(Nullable(LiveChatWidget)),
    domain_id: Type.Optional(Nullable(Id())),
    base_path: Type.Optional(Type.String(PATH)),
    conflicts: Type.Optional(
      Type.Boolean({ description: 'Accepted and ignored: path conflicts are always refused with 409' }),
    ),
    category: Type.Optional(
      Nullable(Id({ description: 'Template category; changing it needs funnel_templates:admin' })),
    ),
  },
  { title: 'FunnelUpdate' },
)
export type UpdateFunnelBody = Static<typeof UpdateFunnelBody>

export const DuplicateQuery = Type.Object({
  subaccountid: Type.Optional(Id({ description: 'A sub-account of the caller’s account to copy into' })),
})

export const FunnelDeleted = Type.Object(
  { _id: Id(), deleted: Type.Literal(true), deleted_at: Timestamp() },
  { title: 'FunnelDeleted' },
)
export type FunnelDeleted = Static<typeof FunnelDeleted>

/** The funnel of the reference's examples (ids and times made up): `POST /` creates it, `GET /:id` reads it. */
export const FUNNEL_INPUT_EXAMPLE = {
  name: 'Spring sale',
  domain_id: '65f1c0ffee0000000000f401',
  base_path: '/spring-sale',
  status: 'active',
  tags: ['65f1c0ffee0000000000f201'],
  live_chat_widget: { enabled: true, provider: 'intercom', config: { app_id: 'ab12cd34' } },
  steps: [
    { name: 'Opt-in', path: '/opt-in', type: 'page', order: 0 },
    { name: 'Thank you', path: '/thank-you', type: 'page', order: 1 },
  ],
} satisfies CreateFunnelBody

export const FUNNEL_EXAMPLE = {
  _id: '65f1c0ffee0000000000f001',
  name: 'Spring sale',
  domain_id: '65f1c0ffee0000000000f401',
  base_path: '/spring-sale',
  status: 'active',
  favicon: null,
  header_tracking_code: null,
  footer_tracking_code: null,
  live_chat_widget: { enabled: true, provider: 'intercom', config: { app_id: 'ab12cd34' } },
  category: null,
  account_id: '65f1c0ffee0000000000a001',
  deleted: false,
  created_at: '2025-03-14T09:26:53.000Z',
  updated_at: '2025-03-14T09:26:53.000Z',
  updated_by: '65f1c0ffee0000000000a002',
  domain: { _id: '65f1c0ffee0000000000f401', name: 'shop.example.com', ssl_enabled: true },
  tags: [{ _id: '65f1c0ffee0000000000f201', name: 'Seasonal' }],
  steps: [
    { _id: '65f1c0ffee0000000000f101', name: 'Opt-in', path: '/opt-in', type: 'page', order: 0, seo: {} },
    {
      _id: '65f1c0ffee0000000000f102',
      name: 'Thank you',
      path: '/thank-you',
      type: 'page',
      order: 1,
      seo: {},
    },
  ],
} satisfies FunnelDetail

/** A funnel as the list shows it: tags as ids, steps without seo. */
const listed = ({ domain: _domain, tags, steps, ...fields }: FunnelDetail): FunnelListItem => ({
  ...fields,
  tags: tags.map((tag) => tag._id),
  steps: steps.map(({ seo: _seo, ...step }) => step),
})
export const FUNNEL_LIST_ITEM_EXAMPLE = listed(FUNNEL_EXAMPLE)
