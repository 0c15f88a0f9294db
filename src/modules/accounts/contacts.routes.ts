import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { bearerOrOAuth } from '../../platform/auth/plugin.js'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { Id, IdParams } from '../../platform/http/schemas.js'
import { adminOperation } from './accounts.routes.js'
import { Contact, ContactsQuery, CreateContactBody, UpdateContactBody } from './contacts.schemas.js'
import { createContact, getContact, listContactsPage, updateContact } from './contacts.service.js'

/**
 * The caller's own contacts, with a platform JWT or an app's access token: always the token's account.
 * Creating and changing one is announced, so that authorized apps with a webhook hear of it.
 */
export const contactsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, changes } = platform
  app.addHook('onRequest', app.authenticate)
  const tenant = (summary: string) => ({ tags: ['contacts'], summary, security: [{ bearer: [] }] })
  // Third-party apps need `crm.contacts.read` to read contacts and `crm.contacts.write` to change them.
  const readable = { oauthScope: 'crm.contacts.read' }
  const writable = { oauthScope: 'crm.contacts.write' }

  app.get(
    '/contacts',
    {
      config: readable,
      schema: {
        ...tenant('List contacts'),
        operationId: 'contactList',
        security: bearerOrOAuth(readable.oauthScope),
        querystring: ContactsQuery,
        response: { 200: PageEnvelope(Contact), ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const { data, pagination } = await listContactsPage(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.get(
    '/contacts/:id',
    {
      config: readable,
      schema: {
        ...tenant('Read a contact'),
        operationId: 'contactRead',
        security: bearerOrOAuth(readable.oauthScope),
        params: IdParams,
        response: { 200: Envelope(Contact), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ok(await getContact(db, request.auth.account_id, request.params.id)),
  )

  app.post(
    '/contacts',
    {
      config: writable,
      schema: {
        ...tenant('Create a contact'),
        operationId: 'contactCreate',
        security: bearerOrOAuth(writable.oauthScope),
        body: CreateContactBody,
        response: { 201: Envelope(Contact), ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(ok(await createContact(db, changes, request.auth.account_id, request.body))),
  )

  app.patch(
    '/contacts/:id',
    {
      config: writable,
      schema: {
        ...tenant('Change a contact'),
        operationId: 'contactUpdate',
        security: bearerOrOAuth(writable.oauthScope),
        params: IdParams,
        body: UpdateContactBody,
        response: { 200: Envelope(Contact), ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) =>
      ok(await updateContact(db, changes, request.auth.account_id, request.params.id, request.body)),
  )
}

/** The admin API of contacts: the main platform creates and reads them in any account. Guarded by ADMIN_TOKEN. */
export const contactsAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, changes } = platform
  app.addHook('onRequest', app.authenticateAdmin)

  app.post(
    '/accounts/:id/contacts',
    {
      schema: {
        ...adminOperation('contactAdminCreate', 'Create a contact'),
        params: IdParams,
        body: CreateContactBody,
        response: { 201: Envelope(Contact), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(ok(await createContact(db, changes, request.params.id, request.body))),
  )

  app.get(
    '/accounts/:id/contacts/:record_id',
    {
      schema: {
        ...adminOperation('contactAdminRead', 'Read a contact'),
        params: Type.Object({ id: Id(), record_id: Id() }),
        response: { 200: Envelope(Contact), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await getContact(db, request.params.id, request.params.record_id)),
  )
}
