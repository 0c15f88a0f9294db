import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope, Removed } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { REVIEWS_READ, REVIEWS_WRITE } from './review-access.service.js'
import {
  CreateBody,
  ListQuery,
  TEMPLATE_EXAMPLE,
  TEMPLATE_INPUT_EXAMPLE,
  Template,
  UpdateBody,
} from './templates.schemas.js'
import {
  changeTemplate,
  createTemplate,
  getTemplate,
  listAccountTemplates,
  removeTemplate,
} from './templates.service.js'

/** The account's review request templates, under `/reviews/templates` of both reviews prefixes. */
export const templatesRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/templates',
    routeOptions({
      operationId: 'reviewTemplatesCreate',
      summary: 'Create a review request template (email or SMS)',
      description:
        'Creates a review request template for email (subject and HTML body) or SMS (body, at most 1600 ' +
        'characters). The body may use the email variables ({{contact.first_name}}, ...) plus ' +
        '{{customer.name}}, {{business.name}} and {{review.link}}; an email template needs a subject (400 ' +
        'otherwise).',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      body: CreateBody,
      response: { 201: Envelope(Template) },
      example: { body: TEMPLATE_INPUT_EXAMPLE, response: ok(TEMPLATE_EXAMPLE) },
      errors: [400, 401, 403],
    }),
    async (request, reply) =>
      reply.status(201).send(ok(await createTemplate(db, request.auth.account_id, request.body))),
  )

  app.get(
    '/templates',
    routeOptions({
      operationId: 'reviewTemplatesList',
      summary: 'List review request templates, newest first',
      description: "The account's review request templates, newest first, paged.",
      tags: ['reviews'],
      access: REVIEWS_READ,
      querystring: ListQuery,
      response: { 200: PageEnvelope(Template) },
      errors: [400, 401, 403],
    }),
    async (request) => {
      const { data, pagination } = await listAccountTemplates(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.get(
    '/templates/:id',
    routeOptions({
      operationId: 'reviewTemplatesGet',
      summary: 'Read a review request template',
      description: 'One review request template of the account; 404 `Template not found`.',
      tags: ['reviews'],
      access: REVIEWS_READ,
      params: IdParams,
      response: { 200: Envelope(Template) },
      errors: [400, 401, 403, 404],
      answers: { 404: '`Template not found`' },
    }),
    async (request) => ok(await getTemplate(db, request.auth.account_id, request.params.id)),
  )

  app.patch(
    '/templates/:id',
    routeOptions({
      operationId: 'reviewTemplatesUpdate',
      summary: "Change a template's name, subject or body (its channel stays)",
      description:
        'Changes the name, subject or body of a template; its channel stays, and an SMS body stays within ' +
        '1600 characters. 404 `Template not found`.',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      params: IdParams,
      body: UpdateBody,
      response: { 200: Envelope(Template) },
      errors: [400, 401, 403, 404],
      answers: { 404: '`Template not found`' },
    }),
    async (request) => ok(await changeTemplate(db, request.auth.account_id, request.params.id, request.body)),
  )

  app.delete(
    '/templates/:id',
    routeOptions({
      operationId: 'reviewTemplatesDelete',
      summary: 'Delete a template; 409 while the configuration uses it',
      description:
        'Deletes a template; 409 `Template is in use by the auto review request configuration` while the ' +
        'configuration names it, 404 `Template not found`.',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      params: IdParams,
      response: { 200: Envelope(Removed) },
      errors: [400, 401, 403, 404, 409],
      answers: {
        404: '`Template not found`',
        409: '`Template is in use by the auto review request configuration`',
      },
    }),
    async (request) => {
      await removeTemplate(db, request.auth.account_id, request.params.id)
      return ok({ _id: request.params.id, deleted: true })
    },
  )
}
