import { type Static, Type } from '@sinclair/typebox'
import { Email } from '../../platform/http/schemas.js'
import { DirectoryPageQuery } from './account-directory.schemas.js'

export const UserDirectoryQuery = Type.Composite([
  Type.Object({
    email: Type.Optional(Email({ description: 'The whole address, in any case: the one user who has it' })),
  }),
  DirectoryPageQuery(20, 100),
])
export type UserDirectoryQuery = Static<typeof UserDirectoryQuery>
