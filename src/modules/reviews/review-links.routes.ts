import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, Removed } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { REVIEWS_READ, REVIEWS_WRITE } from './review-access.service.js'
import { CreateBody, ReviewLink, UpdateBody } from './review-links.schemas.js'
import { changeLink, createLink, listAccountLinks, removeLink } from './review-links.service.js'

/** The account's review URL per platform, under `/reviews/links` of both reviews prefixes. */
export const reviewLinksRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/links',
    routeOptions({
      operationId: 'reviewLinksCreate',
      summary: "Set the account's review URL for a platform (409 when it has one: update it)",
      description:
        "Sets the account's review URL for a platform (`google`, `facebook`, `yelp`, `trustpilot`): the " +
        "page a review request's `{{review.link}}` leads to. One per platform: 409 `A review link for " +
        '<platform> already exists` (change that one instead).',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      body: CreateBody,
      response: { 201: Envelope(ReviewLink) },
      errors: [400, 401, 403, 409],
      answers: { 409: 'The account has a link for this platform: change that one' },
    }),
    async (request, reply) =>
      reply.status(201).send(ok(await createLink(db, request.auth.account_id, request.body))),
  )

  app.get(
    '/links',
    routeOptions({
      operationId: 'reviewLinksList',
      summary: "The account's review URLs, one per platform at most",
      description: "The account's review URLs, one per platform at most.",
      tags: ['reviews'],
      access: REVIEWS_READ,
      response: { 200: Envelope(Type.Array(ReviewLink)) },
      errors: [401, 403],
    }),
    async (request) => ok(await listAccountLinks(db, request.auth.account_id)),
  )

  app.patch(
    '/links/:id',
    routeOptions({
      operationId: 'reviewLinksUpdate',
      summary: 'Change a review URL',
      description: 'Changes a review URL; 404 `Review link not found`.',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      params: IdParams,
      body: UpdateBody,
      response: { 200: Envelope(ReviewLink) },
      errors: [400, 401, 403, 404],
      answers: { 404: '`Review link not found`' },
    }),
    async (request) => ok(await changeLink(db, request.auth.account_id, request.params.id, request.body.url)),
  )

  app.delete(
    '/links/:id',
    routeOptions({
      operationId: 'reviewLinksDelete',
      summary: 'Remove a review URL; requests due for its platform are then skipped (no_review_link)',
      description:
        'Removes a review URL; requests due for its platform are then skipped (`no_review_link`). 404 ' +
        '`Review link not found`.',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      params: IdParams,
      response: { 200: Envelope(Removed) },
      errors: [400, 401, 403, 404],
      answers: { 404: '`Review link not found`' },
    }),
    async (request) => {
      await removeLink(db, request.auth.account_id, request.params.id)
      return ok({ _id: request.params.id, deleted: true })
    },
  )
}
