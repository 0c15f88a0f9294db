import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { IdParams } from '../../platform/http/schemas.js'
import {
  Account,
  AddMembershipBody,
  CreateAccountBody,
  CreateUserBody,
  Membership,
  UpdateAccountBody,
  User,
  UserPermissionsBody,
} from './accounts.schemas.js'
import {
  addMembership,
  createAccount,
  createUser,
  getUser,
  requireAccount,
  setUserPermissions,
  updateAccount,
} from './accounts.service.js'

/** The OpenAPI description every admin operation shares: tagged `admin`, guarded by ADMIN_TOKEN. */
export const adminOperation = (operationId: string, summary: string) => ({
  operationId,
  tags: ['admin'],
  summary,
  security: [{ admin: [] }],
})

/**
 * The admin API of accounts and users: how operators (through the CLI) and the main platform provision
 * accounts, users and their memberships. Guarded by ADMIN_TOKEN.
 */
export const accountsAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticateAdmin)

  app.post(
    '/accounts',
    {
      schema: {
        ...adminOperation('accountCreate', 'Create an account'),
        body: CreateAccountBody,
        response: { 201: Envelope(Account), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => reply.status(201).send(ok(await createAccount(db, request.body))),
  )

  app.get(
    '/accounts/:id',
    {
      schema: {
        ...adminOperation('accountRead', 'Read an account'),
        params: IdParams,
        response: { 200: Envelope(Account), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await requireAccount(db, request.params.id)),
  )

  app.patch(
    '/accounts/:id',
    {
      schema: {
        ...adminOperation('accountUpdate', 'Update status, tier, name or listings entity'),
        params: IdParams,
        body: UpdateAccountBody,
        response: { 200: Envelope(Account), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await updateAccount(db, request.params.id, request.body)),
  )

  app.post(
    '/users',
    {
      schema: {
        ...adminOperation('userCreate', 'Create a user, optionally a member of an account'),
        body: CreateUserBody,
        response: { 201: Envelope(User), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(ok(await createUser(db, request.body))),
  )

  app.get(
    '/users/:id',
    {
      schema: {
        ...adminOperation('userRead', 'Read a user with memberships'),
        params: IdParams,
        response: { 200: Envelope(User), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await getUser(db, request.params.id)),
  )

  app.put(
    '/users/:id/permissions',
    {
      schema: {
        ...adminOperation('userPermissionsSet', "Replace a user's platform-wide permissions"),
        params: IdParams,
        body: UserPermissionsBody,
        response: { 200: Envelope(User), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await setUserPermissions(db, request.params.id, request.body.permissions)),
  )

  app.post(
    '/users/:id/memberships',
    {
      schema: {
        ...adminOperation('membershipCreate', 'Make a user a member of an account'),
        params: IdParams,
        body: AddMembershipBody,
        response: { 201: Envelope(Membership), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { account_id, main = false } = request.body
      return reply.status(201).send(ok(await addMembership(db, request.params.id, account_id, main)))
    },
  )
}
