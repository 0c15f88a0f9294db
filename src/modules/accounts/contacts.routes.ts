import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { heavy } from '../../platform/http/account-concurrency.js'
import { Envelope, ListEnvelope, ok, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Id, IdParams } from '../../platform/http/schemas.js'
import {
  CONTACT_EXAMPLE,
  CONTACT_INPUT_EXAMPLE,
  Contact,
  ContactsQuery,
  CreateContactBody,
  UpdateContactBody,
} from './contacts.schemas.js'
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
      description:
        "The account's contacts, newest first, with `search` matching a name, an email or a phone. Read by " +
        '`page` and `limit`, or by `cursor` for a list read to its end. A user of the account, or an app ' +
        'granted `crm.contacts.read`.',
      example: { response: okPage([CONTACT_EXAMPLE], { total: 1, page: 1, limit: 10, pages: 1 }) },
      tags: ['contacts'],
      access: CRM_CONTACTS_READ,
      querystring: ContactsQuery,
      response: { 200: ListEnvelope(Contact) },
      errors: [],
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
      description:
        "The contact with this id in the caller's account. A user of the account, or an app granted " +
        '`crm.contacts.read`.',
      answers: { 404: 'No contact with this id in the account' },
      example: { response: ok(CONTACT_EXAMPLE) },
      tags: ['contacts'],
      access: CRM_CONTACTS_READ,
      params: IdParams,
      response: { 200: Envelope(Contact) },
      errors: [404],
    }),
    async (request) => ok(await getContact(db, request.auth.account_id, request.params.id)),
  )

  app.post(
    '/contacts',
    routeOptions({
      operationId: 'contactCreate',
      summary: 'Create a contact',
      description:
        "Creates a contact in the caller's account; its email, when given, is unique in the account. Email " +
        'variables (`{{contact.first_name}}`, ...) and inbound mail read contacts. A user of the account, or ' +
        'an app granted `crm.contacts.write`; apps subscribed to contact events are notified.',
      answers: { 201: 'The contact created', 409: 'A contact with this email already exists in the account' },
      example: { body: CONTACT_INPUT_EXAMPLE, response: ok(CONTACT_EXAMPLE) },
      tags: ['contacts'],
      access: CRM_CONTACTS_WRITE,
      body: CreateContactBody,
      response: { 201: Envelope(Contact) },
      errors: [409],
    }),
    async (request, reply) =>
      reply.status(201).send(ok(await createContact(db, changes, request.auth.account_id, request.body))),
  )

  app.patch(
    '/contacts/:id',
    routeOptions({
      operationId: 'contactUpdate',
      summary: 'Change a contact',
      description:
        'Changes the fields given of the contact; the others stay. A user of the account, or an app granted ' +
        '`crm.contacts.write`; apps subscribed to contact events are notified.',
      answers: {
        404: 'No contact with this id in the account',
        409: 'Another contact of the account has this email',
      },
      tags: ['contacts'],
      access: CRM_CONTACTS_WRITE,
      params: IdParams,
      body: UpdateContactBody,
      response: { 200: Envelope(Contact) },
      errors: [404, 409],
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
      description:
        "The operator's way to create a contact in any account, as `POST /v1/contacts` does in the caller's.",
      answers: {
        201: 'The contact created',
        404: 'No account with this id',
        409: 'A contact with this email already exists in the account',
      },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: CreateContactBody,
      response: { 201: Envelope(Contact) },
      errors: [404, 409],
    }),
    async (request, reply) =>
      reply.status(201).send(ok(await createContact(db, changes, request.params.id, request.body))),
  )

  app.get(
    '/accounts/:id/contacts/:record_id',
    routeOptions({
      operationId: 'contactAdminRead',
      summary: 'Read a contact',
      description: "The operator's way to read a contact of any account.",
      answers: { 404: 'No such account, or no contact with this id in it' },
      tags: ['admin'],
      access: 'admin',
      params: Type.Object({ id: Id(), record_id: Id() }),
      response: { 200: Envelope(Contact) },
      errors: [404],
    }),
    async (request) => ok(await getContact(db, request.params.id, request.params.record_id)),
  )
}
