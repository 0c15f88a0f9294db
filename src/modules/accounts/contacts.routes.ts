import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { bearerOrOAuth } from '../../platform/auth/plugin.js'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { PageQuery } from '../../platform/http/pagination.js'
import { IdParams } from '../../platform/http/schemas.js'
import { Contact, CreateContactBody, UpdateContactBody } from './accounts.schemas.js'
import { createContact, getContact, listContactsPage, updateContact } from './contacts.service.js'

const ContactsQuery = Type.Composite([
  PageQuery(10, 100),
  Type.Object({ search: Type.Optional(Type.String()) }),
])

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
        security: bearerOrOAuth(readable.oauthScope),
        querystring: ContactsQuery,
        response: { 200: PageEnvelope(Contact) },
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
        security: bearerOrOAuth(readable.oauthScope),
        params: IdParams,
        response: { 200: Envelope(Contact) },
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
        security: bearerOrOAuth(writable.oauthScope),
        body: CreateContactBody,
        response: { 201: Envelope(Contact) },
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
        security: bearerOrOAuth(writable.oauthScope),
        params: IdParams,
        body: UpdateContactBody,
        response: { 200: Envelope(Contact) },
      },
    },
    async (request) =>
      ok(await updateContact(db, changes, request.auth.account_id, request.params.id, request.body)),
  )
}
