import { type Static, Type } from '@sinclair/typebox'
import {
  CREDENTIAL_MAX_LENGTH,
  Email,
  Id,
  LABEL_MAX_LENGTH,
  NAME_MAX_LENGTH,
  PHONE_MAX_LENGTH,
  StringEnum,
  Text,
  Timestamp,
  URL_MAX_LENGTH,
} from '../../platform/http/schemas.js'

/**
 * An account's status: `removed` is set by its removal (`DELETE /v1/admin/accounts/:id`) and never
 * changes again; the other two are the operator's to set.
 */
export const ACCOUNT_STATUSES = ['active', 'suspended', 'removed'] as const
/** The statuses an account may be created with or changed to. */
export const SETTABLE_ACCOUNT_STATUSES = ['active', 'suspended'] as const
export const ACCOUNT_TIERS = ['basic', 'pro', 'enterprise'] as const
/** The platform-wide permissions an operator may grant a user; `funnel_templates:admin` changes template categories. */
export const USER_PERMISSIONS = ['funnel_templates:admin'] as const
export type UserPermission = (typeof USER_PERMISSIONS)[number]

export const AccountStatus = StringEnum(ACCOUNT_STATUSES)
export type AccountStatus = Static<typeof AccountStatus>
export const SettableAccountStatus = StringEnum(SETTABLE_ACCOUNT_STATUSES)
export type SettableAccountStatus = Static<typeof SettableAccountStatus>
export const AccountTier = StringEnum(ACCOUNT_TIERS)
export type AccountTier = Static<typeof AccountTier>

export const Account = Type.Object(
  {
    _id: Id(),
    name: Type.String(),
    parent_account: Type.Union([Id(), Type.Null()]),
    status: AccountStatus,
    tier: AccountTier,
    listings: Type.Object({ entity: Type.String() }),
    listings_status: Type.Boolean(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'Account' },
)
export type Account = Static<typeof Account>

const AccountName = Text(NAME_MAX_LENGTH, { minLength: 1 })
/** The account's entity id at the listings provider. */
const ListingsEntity = Text(LABEL_MAX_LENGTH)

export const CreateAccountBody = Type.Object(
  {
    name: AccountName,
    parent_account: Type.Optional(Id()),
    status: Type.Optional(SettableAccountStatus),
    tier: Type.Optional(AccountTier),
    listings_entity: Type.Optional(ListingsEntity),
  },
  { title: 'AccountInput' },
)

export const UpdateAccountBody = Type.Object(
  {
    name: Type.Optional(AccountName),
    status: Type.Optional(SettableAccountStatus),
    tier: Type.Optional(AccountTier),
    listings_entity: Type.Optional(ListingsEntity),
  },
  { title: 'AccountUpdate' },
)

export const Membership = Type.Object(
  {
    account_id: Id(),
    main: Type.Boolean(),
    conversation_id: Id({ description: "The user's chat identity in the account" }),
  },
  { title: 'Membership' },
)
export type Membership = Static<typeof Membership>

export const User = Type.Object(
  {
    _id: Id(),
    email: Type.String(),
    name: Type.String(),
    first_name: Type.String(),
    last_name: Type.String(),
    phone: Type.String(),
    image: Type.String(),
    memberships: Type.Array(Membership),
    permissions: Type.Array(StringEnum(USER_PERMISSIONS)),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'User' },
)
export type User = Static<typeof User>

export const CreateUserBody = Type.Object(
  {
    email: Email(),
    password: Text(CREDENTIAL_MAX_LENGTH, { minLength: 8 }),
    name: Text(NAME_MAX_LENGTH, { minLength: 1 }),
    first_name: Type.Optional(Text(NAME_MAX_LENGTH)),
    last_name: Type.Optional(Text(NAME_MAX_LENGTH)),
    phone: Type.Optional(Text(PHONE_MAX_LENGTH)),
    image: Type.Optional(Text(URL_MAX_LENGTH, { description: "The address of the user's picture" })),
    account_id: Type.Optional(Id()),
    main: Type.Optional(Type.Boolean()),
  },
  { title: 'UserInput' },
)

/** The user's platform-wide permissions, replaced whole (an empty list takes them all away). */
export const UserPermissionsBody = Type.Object(
  {
    permissions: Type.Array(StringEnum(USER_PERMISSIONS), { maxItems: 20 }),
  },
  { title: 'UserPermissions' },
)

export const MembershipParams = Type.Object({ id: Id(), userId: Id() })

export const RemovedMembership = Type.Object(
  { account_id: Id(), user_id: Id() },
  { title: 'RemovedMembership' },
)

export const AddMembershipBody = Type.Object(
  { account_id: Id(), main: Type.Optional(Type.Boolean()) },
  { title: 'MembershipInput' },
)

export const MintTokenBody = Type.Object(
  {
    user_id: Id(),
    account_id: Id(),
    ttl: Type.Integer({
      minimum: 60,
      maximum: 31_536_000,
      default: 3600,
      description: 'Lifetime in seconds',
    }),
  },
  { title: 'PlatformTokenInput' },
)

export const MintedToken = Type.Object(
  { token: Type.String(), expires_at: Timestamp() },
  { title: 'PlatformToken' },
)

/* Examples of the API reference (test/openapi-reference.test.ts checks each against its schema). */

export const ACCOUNT_INPUT_EXAMPLE = {
  name: 'Acme Dental',
  tier: 'pro',
} satisfies Static<typeof CreateAccountBody>

export const ACCOUNT_EXAMPLE = {
  _id: '65f1c0ffee0000000000a001',
  name: 'Acme Dental',
  parent_account: null,
  status: 'active',
  tier: 'pro',
  listings: { entity: '' },
  listings_status: false,
  created_at: '2026-03-01T09:30:00.000Z',
  updated_at: '2026-03-01T09:30:00.000Z',
} satisfies Account

export const PLATFORM_TOKEN_INPUT_EXAMPLE = {
  user_id: '65f1c0ffee0000000000b001',
  account_id: '65f1c0ffee0000000000a001',
  ttl: 3600,
} satisfies Static<typeof MintTokenBody>

export const PLATFORM_TOKEN_EXAMPLE = {
  token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1aWQiOiI2NWYxYzBmZmVlMDAwMDAwMDAwMGIwMDEifQ.c2lnbmF0dXJl',
  expires_at: '2026-03-01T10:30:00.000Z',
} satisfies Static<typeof MintedToken>
