import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { NotFound } from '../../platform/http/errors.js'
import { Id, IdParams } from '../../platform/http/schemas.js'
import {
  Account,
  AddMembershipBody,
  CreateAccountBody,
  CreateUserBody,
  Membership,
  MintedToken,
  MintTokenBody,
  UpdateAccountBody,
  User,
} from './accounts.schemas.js'
import {
  addMembership,
  createAccount,
  createUser,
  getUser,
  mintPlatformToken,
  requireAccount,
  updateAccount,
} from './accounts.service.js'
import type { VariableSource as VariableSourceKind } from './contacts.repository.js'
import { Contact, CreateContactBody, VariableSource, VariableSourceBodies } from './contacts.schemas.js'
import { createContact, createVariableSource, getContact, getVariableSource } from './contacts.service.js'
import { Credits, GrantCreditsBody } from './credits.schemas.js'
import { creditBalance, grantCredits } from './credits.service.js'

/** Each kind of record email variables read, as the feature of its operationIds. */
const RECORD_FEATURES: Record<VariableSourceKind, string> = {
  persons: 'person',
  businesses: 'business',
  instasites: 'instasite',
  instareports: 'instareport',
}

/**
 * The admin API: how operators (through the CLI) and the main platform provision accounts, users,
 * contacts, the records email variables read, credits and platform tokens. Guarded by ADMIN_TOKEN.
 */
export const accountsAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, tokens } = platform
  app.addHook('onRequest', app.authenticateAdmin)
  const admin = (operationId: string, summary: string) => ({
    operationId,
    tags: ['admin'],
    summary,
    security: [{ admin: [] }],
  })

  app.post(
    '/accounts',
    {
      schema: {
        ...admin('accountCreate', 'Create an account'),
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
        ...admin('accountRead', 'Read an account'),
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
        ...admin('accountUpdate', 'Update status, tier, name or listings entity'),
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
        ...admin('userCreate', 'Create a user, optionally a member of an account'),
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
        ...admin('userRead', 'Read a user with memberships'),
        params: IdParams,
        response: { 200: Envelope(User), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await getUser(db, request.params.id)),
  )

  app.post(
    '/users/:id/memberships',
    {
      schema: {
        ...admin('membershipCreate', 'Make a user a member of an account'),
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

  app.post(
    '/accounts/:id/contacts',
    {
      schema: {
        ...admin('contactAdminCreate', 'Create a contact'),
        params: IdParams,
        body: CreateContactBody,
        response: { 201: Envelope(Contact), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(ok(await createContact(db, platform.changes, request.params.id, request.body))),
  )

  app.get(
    '/accounts/:id/contacts/:record_id',
    {
      schema: {
        ...admin('contactAdminRead', 'Read a contact'),
        params: Type.Object({ id: Id(), record_id: Id() }),
        response: { 200: Envelope(Contact), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await getContact(db, request.params.id, request.params.record_id)),
  )

  for (const [kind, body] of Object.entries(VariableSourceBodies) as [
    VariableSourceKind,
    (typeof VariableSourceBodies)[VariableSourceKind],
  ][]) {
    app.post(
      `/accounts/:id/${kind}`,
      {
        schema: {
          ...admin(`${RECORD_FEATURES[kind]}Create`, `Create one of ${kind}`),
          params: IdParams,
          body,
          response: { 201: Envelope(VariableSource), ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const created = await createVariableSource(
          db,
          request.params.id,
          kind,
          request.body as Record<string, string>,
        )
        return reply.status(201).send(ok(created))
      },
    )
    app.get(
      `/accounts/:id/${kind}/:record_id`,
      {
        schema: {
          ...admin(`${RECORD_FEATURES[kind]}Read`, `Read one of ${kind}`),
          params: Type.Object({ id: Id(), record_id: Id() }),
          response: { 200: Envelope(VariableSource), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const found = await getVariableSource(db, request.params.id, kind, request.params.record_id)
        if (!found) throw new NotFound('Record not found')
        return ok(found)
      },
    )
  }

  app.post(
    '/accounts/:id/credits',
    {
      schema: {
        ...admin('creditsGrant', 'Grant credits'),
        params: IdParams,
        body: GrantCreditsBody,
        response: { 200: Envelope(Credits), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      await requireAccount(db, request.params.id)
      const { balance } = await grantCredits(
        db,
        request.params.id,
        request.body.amount,
        request.body.reference,
      )
      return ok({ account_id: request.params.id, balance })
    },
  )

  app.get(
    '/accounts/:id/credits',
    {
      schema: {
        ...admin('creditsRead', 'Read the credit balance'),
        params: IdParams,
        response: { 200: Envelope(Credits), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      await requireAccount(db, request.params.id)
      return ok({ account_id: request.params.id, balance: await creditBalance(db, request.params.id) })
    },
  )

  app.post(
    '/tokens',
    {
      schema: {
        ...admin('tokenMint', 'Mint a platform JWT for a member of an account'),
        body: MintTokenBody,
        response: { 201: Envelope(MintedToken), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => reply.status(201).send(ok(await mintPlatformToken(db, tokens, request.body))),
  )
}
