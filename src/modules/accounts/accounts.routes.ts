import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import {
  Account,
  AddMembershipBody,
  CreateAccountBody,
  CreateUserBody,
  Membership,
  MembershipParams,
  RemovedMembership,
  UpdateAccountBody,
  User,
  UserPermissionsBody,
} from './accounts.schemas.js'
import {
  addMember,
  createAccount,
  createUser,
  getUser,
  removeMember,
  requireAccount,
  setUserPermissions,
  updateAccount,
} from './accounts.service.js'

/**
 * The admin API of accounts and users: how operators (through the CLI) and the main platform provision
 * accounts, users and their memberships. Guarded by ADMIN_TOKEN.
 */
export const accountsAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, changes, accountAccess } = platform
  app.addHook('onRequest', app.authenticateAdmin)

  app.post(
    '/accounts',
    routeOptions({
      operationId: 'accountCreate',
      summary: 'Create an account',
      tags: ['admin'],
      access: 'admin',
      body: CreateAccountBody,
      response: { 201: Envelope(Account) },
      errors: [400, 401, 404, 409],
    }),
    async (request, reply) => reply.status(201).send(ok(await createAccount(db, request.body))),
  )

  app.get(
    '/accounts/:id',
    routeOptions({
      operationId: 'accountRead',
      summary: 'Read an account',
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(Account) },
      errors: [400, 401, 404],
    }),
    async (request) => ok(await requireAccount(db, request.params.id)),
  )

  app.patch(
    '/accounts/:id',
    routeOptions({
      operationId: 'accountUpdate',
      summary: 'Update status, tier, name or listings entity',
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: UpdateAccountBody,
      response: { 200: Envelope(Account) },
      errors: [400, 401, 404, 409],
    }),
    async (request) => ok(await updateAccount(db, accountAccess, request.params.id, request.body)),
  )

  app.post(
    '/users',
    routeOptions({
      operationId: 'userCreate',
      summary: 'Create a user, optionally a member of an account',
      tags: ['admin'],
      access: 'admin',
      body: CreateUserBody,
      response: { 201: Envelope(User) },
      errors: [400, 401, 404, 409],
    }),
    async (request, reply) => reply.status(201).send(ok(await createUser(db, request.body))),
  )

  app.get(
    '/users/:id',
    routeOptions({
      operationId: 'userRead',
      summary: 'Read a user with memberships',
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(User) },
      errors: [400, 401, 404],
    }),
    async (request) => ok(await getUser(db, request.params.id)),
  )

  app.put(
    '/users/:id/permissions',
    routeOptions({
      operationId: 'userPermissionsSet',
      summary: "Replace a user's platform-wide permissions",
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: UserPermissionsBody,
      response: { 200: Envelope(User) },
      errors: [400, 401, 404],
    }),
    async (request) => ok(await setUserPermissions(db, request.params.id, request.body.permissions)),
  )

  app.post(
    '/users/:id/memberships',
    routeOptions({
      operationId: 'membershipCreate',
      summary: 'Make a user a member of an account',
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: AddMembershipBody,
      response: { 201: Envelope(Membership) },
      errors: [400, 401, 404, 409],
    }),
    async (request, reply) => {
      const { account_id, main = false } = request.body
      const membership = await addMember(db, accountAccess, {
        userId: request.params.id,
        accountId: account_id,
        main,
      })
      return reply.status(201).send(ok(membership))
    },
  )

  app.delete(
    '/accounts/:id/users/:userId',
    routeOptions({
      operationId: 'membershipDelete',
      summary: "Remove a user from an account: their tokens and apps' grants there stop working",
      tags: ['admin'],
      access: 'admin',
      params: MembershipParams,
      response: { 200: Envelope(RemovedMembership) },
      errors: [400, 401, 404, 409],
    }),
    async (request) => {
      const { id, userId } = request.params
      return ok(await removeMember(db, { changes, access: accountAccess }, id, userId))
    },
  )
}
