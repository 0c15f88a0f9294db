import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { CursorPaginationSchema } from '../../platform/http/envelope.js'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Id, NAME_MAX_LENGTH, Text } from '../../platform/http/schemas.js'
import { AccountStatus } from './accounts.schemas.js'

/**
 * How the operator's directories page: by cursor only (`limit`, `cursor`), never by offset or with a count,
 * since they span every account or every user of the service.
 */
export const DirectoryPageQuery = (defaultLimit: number, maxLimit: number) =>
  Type.Omit(CursorPageQuery(defaultLimit, maxLimit), ['page'])

/** A page of a directory: its rows and the cursor of the next page; named after its rows (`AccountDirectoryPage`). */
export const DirectoryPage = <T extends TSchema>(item: T) =>
  Type.Object(
    {
      success: Type.Literal(true),
      message: Type.String(),
      data: Type.Array(item),
      pagination: CursorPaginationSchema,
    },
    typeof item.title === 'string' ? { title: `${item.title}DirectoryPage` } : {},
  )

export const AccountDirectoryQuery = Type.Composite([
  Type.Object({
    name: Type.Optional(
      Text(NAME_MAX_LENGTH, { minLength: 1, description: 'How the name starts, in any case' }),
    ),
    status: Type.Optional(AccountStatus),
    parent: Type.Optional(Id({ description: 'The parent account: its sub-accounts' })),
  }),
  DirectoryPageQuery(20, 100),
])
export type AccountDirectoryQuery = Static<typeof AccountDirectoryQuery>
