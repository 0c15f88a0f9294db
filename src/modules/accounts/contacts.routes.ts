import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { heavy } from '../../platform/http/account-concurrency.js'
import { Envelope, ListEnvelope, ok, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Id, IdParams } from '../../platform/http/schemas.js'
import { Contact, ContactsQuery, CreateContactBody, UpdateContactBody } from './contacts.schemas.js'
import {
  CRM_CONTACTS_READ,
  CRM_CONTACTS_WRITE,
  createContact,
  getContact,
  listContactsPage,
  updateContact,
} from './contacts.service.js'

/**
 * The caller's own contacts, with a platform JWT or an app's access token: always the token's account.
 * Creating and changing one is announced, so that authorized apps with a webhook hear of it.
 */
export const contactsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, changes } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/contacts',
    routeOptions({
      operationId: 'contactList',
      summary: 'List contacts',
      tags: ['contacts'],
      access: CRM_CONTACTS_READ,
      querystring: ContactsQuery,
      response: { 200: ListEnvelope(Contact) },
      errors: [400, 401, 403, 429],
      config: heavy({ when: (request) => Boolean((request.query as { search?: string }).search) }),
    }),
    async (request) => {
      const { data, pagination } = await listContactsPage(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.get(
    '/contacts/:id',
    routeOptions({
      operationId: 'contactRead',
      summary: 'Read a contact',
      tags: ['contacts'],
      access: CRM_CONTACTS_READ,
      params: IdParams,
      response: { 200: Envelope(Contact) },
      errors: [400, 401, 403, 404, 429],
    }),
    async (request) => ok(await getContact(db, request.auth.account_id, request.params.id)),
  )

  app.post(
    '/contacts',
    routeOptions({
      operationId: 'contactCreate',
      summary: 'Create a contact',
      tags: ['contacts'],
      access: CRM_CONTACTS_WRITE,
      body: CreateContactBody,
      response: { 201: Envelope(Contact) },
      errors: [400, 401, 403, 409, 429],
    }),
    async (request, reply) =>
      reply.status(201).send(ok(await createContact(db, changes, request.auth.account_id, request.body))),
  )

  app.patch(
    '/contacts/:id',
    routeOptions({
      operationId: 'contactUpdate',
      summary: 'Change a contact',
      tags: ['contacts'],
      access: CRM_CONTACTS_WRITE,
      params: IdParams,
      body: UpdateContactBody,
      response: { 200: Envelope(Contact) },
      errors: [400, 401, 403, 404, 409, 429],
    }),
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
    routeOptions({
      operationId: 'contactAdminCreate',
      summary: 'Create a contact',
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: CreateContactBody,
      response: { 201: Envelope(Contact) },
      errors: [400, 401, 404, 409],
    }),
    async (request, reply) =>
      reply.status(201).send(ok(await createContact(db, changes, request.params.id, request.body))),
  )

  app.get(
    '/accounts/:id/contacts/:record_id',
    routeOptions({
      operationId: 'contactAdminRead',
      summary: 'Read a contact',
      tags: ['admin'],
      access: 'admin',
      params: Type.Object({ id: Id(), record_id: Id() }),
      response: { 200: Envelope(Contact) },
      errors: [400, 401, 404],
    }),
    async (request) => ok(await getContact(db, request.params.id, request.params.record_id)),
  )
}
