import { Type } from '@sinclair/typebox'
import { Id, Integer, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { ACCOUNT_STATUSES, ACCOUNT_TIERS } from './tables.js'

export const AccountStatus = StringEnum(ACCOUNT_STATUSES)
export const AccountTier = StringEnum(ACCOUNT_TIERS)

export const Account = Type.Object({
  _id: Id(),
  name: Type.String(),
  parent_account: Type.Union([Id(), Type.Null()]),
  status: AccountStatus,
  tier: AccountTier,
  listings: Type.Object({ entity: Type.String() }),
  listings_status: Type.Boolean(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})

export const CreateAccountBody = Type.Object({
  name: Type.String({ minLength: 1 }),
  parent_account: Type.Optional(Id()),
  status: Type.Optional(AccountStatus),
  tier: Type.Optional(AccountTier),
  listings_entity: Type.Optional(Type.String()),
})

export const UpdateAccountBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1 })),
  status: Type.Optional(AccountStatus),
  tier: Type.Optional(AccountTier),
  listings_entity: Type.Optional(Type.String()),
})

export const Membership = Type.Object({
  account_id: Id(),
  main: Type.Boolean(),
  conversation_id: Id({ description: "The user's chat identity in the account" }),
})

export const User = Type.Object({
  _id: Id(),
  email: Type.String(),
  name: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  phone: Type.String(),
  image: Type.String(),
  memberships: Type.Array(Membership),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})

export const CreateUserBody = Type.Object({
  email: Type.String({ format: 'email' }),
  password: Type.String({ minLength: 8 }),
  name: Type.String({ minLength: 1 }),
  first_name: Type.Optional(Type.String()),
  last_name: Type.Optional(Type.String()),
  phone: Type.Optional(Type.String()),
  image: Type.Optional(Type.String()),
  account_id: Type.Optional(Id()),
  main: Type.Optional(Type.Boolean()),
})

export const AddMembershipBody = Type.Object({ account_id: Id(), main: Type.Optional(Type.Boolean()) })

export const Contact = Type.Object({
  _id: Id(),
  account_id: Id(),
  email: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  phone: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})

export const CreateContactBody = Type.Object({
  email: Type.Optional(Type.String({ format: 'email' })),
  name: Type.Optional(Type.String()),
  phone: Type.Optional(Type.String()),
})

export const UpdateContactBody = Type.Object(CreateContactBody.properties, { minProperties: 1 })

const optionalText = () => Type.Optional(Type.String())

/** Bodies of the records email variables read, per admin path segment. */
export const VariableSourceBodies = {
  persons: Type.Object({ first_name: optionalText(), last_name: optionalText(), email: optionalText() }),
  businesses: Type.Object({
    name: Type.String({ minLength: 1 }),
    address: optionalText(),
    phone: optionalText(),
  }),
  instasites: Type.Object({ url: Type.String({ minLength: 1 }), name: optionalText() }),
  instareports: Type.Object({ url: Type.String({ minLength: 1 }), link: optionalText() }),
}

export const VariableSource = Type.Object(
  { _id: Id(), account_id: Id(), created_at: Timestamp(), updated_at: Timestamp() },
  { additionalProperties: Type.String() },
)

export const Credits = Type.Object({ account_id: Id(), balance: Type.Integer() })

export const GrantCreditsBody = Type.Object({
  amount: Integer({ minimum: 1 }),
  reference: Type.Optional(Type.String({ minLength: 1, description: 'Applied once per reference' })),
})

export const MintTokenBody = Type.Object({
  user_id: Id(),
  account_id: Id(),
  ttl: Type.Integer({ minimum: 60, maximum: 31_536_000, default: 3600, description: 'Lifetime in seconds' }),
})

export const MintedToken = Type.Object({ token: Type.String(), expires_at: Timestamp() })
