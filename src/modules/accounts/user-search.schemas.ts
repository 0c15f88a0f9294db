import { type Static, Type } from '@sinclair/typebox'
import { Id } from '../../platform/http/schemas.js'

/** A user of the directory (the spec's `findUsers`), with the accounts they belong to. */
export const FoundUser = Type.Object(
  {
    _id: Id(),
    email: Type.String(),
    name: Type.String(),
    accounts: Type.Array(Type.Object({ _id: Id(), name: Type.String(), main: Type.Boolean() })),
  },
  { title: 'UserWithAccounts' },
)
export type FoundUser = Static<typeof FoundUser>
