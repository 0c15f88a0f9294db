import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { IdParams } from '../../platform/http/schemas.js'
import { funnelRoute } from './funnel-access.routes.js'
import { Removed } from './funnel-access.schemas.js'
import { stepCacheOf } from './step-cache.js'
import { CreateTagBody, FunnelTag, TagsQuery } from './tags.schemas.js'
import { createTag, listTagsPage, removeTag } from './tags.service.js'

/** The account's funnel tags, under `/v1/funnels/tags`. */
export const tagsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/tags',
    funnelRoute('tagList', 'List the funnel tags of the account, with their funnel counts', 'read', {
      querystring: TagsQuery,
      response: { 200: PageEnvelope(FunnelTag), ...errorResponses(400, 401, 403, 429) },
    }),
    async (request) => {
      const { data, pagination } = await listTagsPage(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.post(
    '/tags',
    funnelRoute('tagCreate', 'Add a tag (a name already there returns that tag, 200)', 'write', {
      body: CreateTagBody,
      response: {
        200: Envelope(FunnelTag),
        201: Envelope(FunnelTag),
        ...errorResponses(400, 401, 403, 429),
      },
    }),
    async (request, reply) => {
      const { tag, created } = await createTag(db, request.auth.account_id, request.body)
      return reply.status(created ? 201 : 200).send(ok(tag))
    },
  )

  app.delete(
    '/tags/:id',
    funnelRoute('tagDelete', 'Delete a tag; its funnels lose it', 'write', {
      params: IdParams,
      response: { 200: Envelope(Removed), ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (request) => {
      await removeTag(db, stepCacheOf(platform), request.auth.account_id, request.params.id)
      return ok({ _id: request.params.id, deleted: true as const })
    },
  )
}
