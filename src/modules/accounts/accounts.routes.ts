import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import {
  ACCOUNT_EXAMPLE,
  ACCOUNT_INPUT_EXAMPLE,
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
      description:
        'Creates an account, active unless `status` says otherwise; with `parent_account` it is a sub-account ' +
        "of that account (an agency's client). Operator only (ADMIN_TOKEN). Then create its users (`POST " +
        '/v1/admin/users`) and mint their tokens (`POST /v1/admin/tokens`).',
      answers: {
        201: 'The account created',
        404: 'The parent account does not exist',
        409: 'The parent account is removed',
      },
      example: { body: ACCOUNT_INPUT_EXAMPLE, response: ok(ACCOUNT_EXAMPLE) },
      tags: ['admin'],
      access: 'admin',
      body: CreateAccountBody,
      response: { 201: Envelope(Account) },
      errors: [404, 409],
    }),
    async (request, reply) => reply.status(201).send(ok(await createAccount(db, request.body))),
  )

  app.get(
    '/accounts/:id',
    routeOptions({
      operationId: 'accountRead',
      summary: 'Read an account',
      description: 'The account with its status, tier, parent and listings entity. Operator only.',
      answers: { 404: 'No account with this id' },
      example: { response: ok(ACCOUNT_EXAMPLE) },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(Account) },
      errors: [404],
    }),
    async (request) => ok(await requireAccount(db, request.params.id)),
  )

  app.patch(
    '/accounts/:id',
    routeOptions({
      operationId: 'accountUpdate',
      summary: 'Update status, tier, name or listings entity',
      description:
        "Changes an account's name, status, tier or listings entity; what the body leaves out stays. " +
        'Suspending an account makes every token of its users and apps answer 403 on its next request (at ' +
        'most OAUTH_REVOCATION_CACHE_MS later on another instance without Redis). A removed account can no ' +
        'longer be changed.',
      answers: { 404: 'No account with this id', 409: 'The account is being removed, or was' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: UpdateAccountBody,
      response: { 200: Envelope(Account) },
      errors: [404, 409],
    }),
    async (request) => ok(await updateAccount(db, accountAccess, request.params.id, request.body)),
  )

  app.post(
    '/users',
    routeOptions({
      operationId: 'userCreate',
      summary: 'Create a user, optionally a member of an account',
      description:
        'Creates a user with an email and a password (stored as an Argon2 hash), and with `account_id` a ' +
        'member of that account. The email is unique across the platform. Operator only.',
      answers: {
        201: 'The user created, with their memberships',
        404: 'The account does not exist',
        409: 'A user with this email already exists',
      },
      tags: ['admin'],
      access: 'admin',
      body: CreateUserBody,
      response: { 201: Envelope(User) },
      errors: [404, 409],
    }),
    async (request, reply) => reply.status(201).send(ok(await createUser(db, request.body))),
  )

  app.get(
    '/users/:id',
    routeOptions({
      operationId: 'userRead',
      summary: 'Read a user with memberships',
      description:
        'The user with the accounts they are a member of (one of them their main account). Operator only.',
      answers: { 404: 'No user with this id' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(User) },
      errors: [404],
    }),
    async (request) => ok(await getUser(db, request.params.id)),
  )

  app.put(
    '/users/:id/permissions',
    routeOptions({
      operationId: 'userPermissionsSet',
      summary: "Replace a user's platform-wide permissions",
      description:
        "Replaces the user's platform-wide permissions with the list given (an empty list takes them all " +
        'away). Operator only.',
      answers: { 404: 'No user with this id' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: UserPermissionsBody,
      response: { 200: Envelope(User) },
      errors: [404],
    }),
    async (request) => ok(await setUserPermissions(db, request.params.id, request.body.permissions)),
  )

  app.post(
    '/users/:id/memberships',
    routeOptions({
      operationId: 'membershipCreate',
      summary: 'Make a user a member of an account',
      description:
        "Makes the user a member of the account; `main: true` makes it their main account. A member's " +
        'platform JWT for the account then works. Operator only.',
      answers: {
        201: 'The membership',
        404: 'The user or the account does not exist',
        409: 'Already a member, or the account is being removed',
      },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: AddMembershipBody,
      response: { 201: Envelope(Membership) },
      errors: [404, 409],
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
      description:
        "Takes the user out of the account: their platform JWTs for it and their apps' grants there stop " +
        'working within seconds (at once with REDIS_URL). The user and their other memberships stay. Operator ' +
        'only.',
      answers: {
        404: 'No such user, or not a member of the account',
        409: 'The account is being removed, or was',
      },
      tags: ['admin'],
      access: 'admin',
      params: MembershipParams,
      response: { 200: Envelope(RemovedMembership) },
      errors: [404, 409],
    }),
    async (request) => {
      const { id, userId } = request.params
      return ok(await removeMember(db, { changes, access: accountAccess }, id, userId))
    },
  )
}
