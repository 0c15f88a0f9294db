import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope, Removed } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { SITES_READ, SITES_WRITE } from './funnel-access.service.js'
import { stepCacheOf } from './step-cache.js'
import { CreateTagBody, FunnelTag, TagsQuery } from './tags.schemas.js'
import { createTag, listTagsPage, removeTag } from './tags.service.js'

/** The account's funnel tags, under `/v1/funnels/tags`. */
export const tagsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/tags',
    routeOptions({
      operationId: 'tagList',
      summary: 'List the funnel tags of the account, with their funnel counts',
      description: "The account's funnel tags, each with `count`, the live funnels carrying it, paged.",
      tags: ['funnels'],
      access: SITES_READ,
      querystring: TagsQuery,
      response: { 200: PageEnvelope(FunnelTag) },
      errors: [400, 401, 403, 429],
    }),
    async (request) => {
      const { data, pagination } = await listTagsPage(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.post(
    '/tags',
    routeOptions({
      operationId: 'tagCreate',
      summary: 'Add a tag (a name already there returns that tag, 200)',
      description:
        'Adds a tag to the account (201). A name the account already has, in any case, returns that tag ' +
        'with 200; an empty name is refused with 400.',
      tags: ['funnels'],
      access: SITES_WRITE,
      body: CreateTagBody,
      response: { 200: Envelope(FunnelTag), 201: Envelope(FunnelTag) },
      errors: [400, 401, 403, 429],
      answers: { 200: 'The tag the account already has by this name', 201: 'The tag added' },
    }),
    async (request, reply) => {
      const { tag, created } = await createTag(db, request.auth.account_id, request.body)
      return reply.status(created ? 201 : 200).send(ok(tag))
    },
  )

  app.delete(
    '/tags/:id',
    routeOptions({
      operationId: 'tagDelete',
      summary: 'Delete a tag; its funnels lose it',
      description: 'Deletes the tag from the account and from every funnel carrying it; 404 `Tag not found`.',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: IdParams,
      response: { 200: Envelope(Removed) },
      errors: [400, 401, 403, 404, 429],
      answers: { 404: '`Tag not found`' },
    }),
    async (request) => {
      await removeTag(db, stepCacheOf(platform), request.auth.account_id, request.params.id)
      return ok({ _id: request.params.id, deleted: true as const })
    },
  )
}
