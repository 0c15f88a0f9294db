import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { PageQuery } from '../../platform/http/pagination.js'
import { IdParams } from '../../platform/http/schemas.js'
import { getContact, listContactsPage } from './contacts.js'
import { Contact } from './schemas.js'

const ContactsQuery = Type.Composite([
  PageQuery(10, 100),
  Type.Object({ search: Type.Optional(Type.String()) }),
])

/** The caller's own contacts, read with a platform JWT or an app's access token: always the token's account. */
export const contactsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)
  const tenant = (summary: string) => ({ tags: ['contacts'], summary, security: [{ bearer: [] }] })
  // Third-party apps read contacts with an access token carrying `crm.contacts.read`.
  const readable = { oauthScope: 'crm.contacts.read' }

  app.get(
    '/contacts',
    {
      config: readable,
      schema: {
        ...tenant('List contacts'),
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
      schema: { ...tenant('Read a contact'), params: IdParams, response: { 200: Envelope(Contact) } },
    },
    async (request) => ok(await getContact(db, request.auth.account_id, request.params.id)),
  )
}
