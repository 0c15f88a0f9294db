import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { DirectoryPage } from './account-directory.schemas.js'
import { PasswordReset, PasswordResetBody, RemovedUser } from './user-admin.schemas.js'
import { removeUser, resetPassword } from './user-admin.service.js'
import { UserDirectoryQuery } from './user-directory.schemas.js'
import { listUserDirectory } from './user-directory.service.js'
import { FoundUser } from './user-search.schemas.js'

/** The operator's user tools (admin API, ADMIN_TOKEN): find a user, remove one, reset a password. */
export const userAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, changes, accountAccess } = platform
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/users',
    routeOptions({
      operationId: 'userDirectoryList',
      summary: 'List users, or find the one with an email',
      description:
        'Every user of the service, newest first, each with the accounts they belong to; removed users ' +
        'are left out. `email` finds the one user with that address, in any case. Pages are read by ' +
        "cursor: the first without one, each next with the last page's `pagination.next_cursor`, null on " +
        'the last page.',
      tags: ['admin'],
      access: 'admin',
      querystring: UserDirectoryQuery,
      response: { 200: DirectoryPage(FoundUser) },
      errors: [400, 401],
    }),
    async (request) => {
      const { data, pagination } = await listUserDirectory(db, request.query)
      return okPage(data, pagination)
    },
  )

  app.delete(
    '/users/:id',
    routeOptions({
      operationId: 'userRemove',
      summary: 'Remove a user: every membership ends and the person is erased',
      description:
        "In one transaction: the user's memberships end (their apps' grants in each account are revoked) " +
        'and their email, names, phone, picture, permissions and password are erased. From then on every ' +
        'token naming the user is refused (401) on every instance within seconds. What the user wrote stays ' +
        "with each account's history, under their chat identity. Their email is free for a new user. A " +
        'second removal answers 404.',
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(RemovedUser) },
      errors: [400, 401, 404],
    }),
    async (request) => ok(await removeUser(db, { changes, access: accountAccess }, request.params.id)),
  )

  app.post(
    '/users/:id/password',
    routeOptions({
      operationId: 'userPasswordReset',
      summary: "Reset a user's password: the one given, or a generated one shown once",
      description:
        'Sets `password`, or without it a generated one, answered this once (`password` of the answer; ' +
        'null when the request gave it). The old password stops working at once, and so do the apps the ' +
        "user allowed: their grants are revoked in every account of the user. So do the user's sessions: " +
        'platform JWTs issued before the reset (or in the same second) are refused (401) on every instance ' +
        'within seconds; tokens issued after it work.',
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: PasswordResetBody,
      response: { 200: Envelope(PasswordReset) },
      errors: [400, 401, 404],
    }),
    async (request) =>
      ok(
        await resetPassword(db, { changes, access: accountAccess }, request.params.id, request.body.password),
      ),
  )
}
