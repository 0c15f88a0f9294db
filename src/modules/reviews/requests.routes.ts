import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ListEnvelope, ok, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { ListQuery, ReviewRequest } from './requests.schemas.js'
import { cancelRequest, listAccountRequests } from './requests.service.js'
import { REVIEWS_READ, REVIEWS_WRITE } from './review-access.service.js'

/** The account's review requests and what became of each, under both reviews prefixes. */
export const requestsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/requests',
    routeOptions({
      operationId: 'reviewRequestsList',
      summary: 'Review requests, newest first, by status, platform, customer and creation time',
      description:
        "The account's review requests, newest first, each with its status and why it was skipped, failed " +
        'or cancelled. Filters: `status`, `platform`, `customer` (email or phone) and the creation time; ' +
        'pages by `page` or `cursor`.',
      tags: ['reviews'],
      access: REVIEWS_READ,
      querystring: ListQuery,
      response: { 200: ListEnvelope(ReviewRequest) },
      errors: [400, 401, 403],
    }),
    async (request) => {
      const { data, pagination } = await listAccountRequests(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.post(
    '/requests/:id/cancel',
    routeOptions({
      operationId: 'reviewRequestsCancel',
      summary: 'Cancel a scheduled review request (409 once it is sent, skipped or cancelled)',
      description:
        'Cancels a scheduled review request: it is never sent. 409 once it is sent, skipped or cancelled ' +
        '(`Only a scheduled review request can be cancelled; this one is <status>`); 404 `Review request ' +
        'not found`.',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      params: IdParams,
      response: { 200: Envelope(ReviewRequest) },
      errors: [400, 401, 403, 404, 409],
      answers: {
        404: '`Review request not found`',
        409: 'Not scheduled any more: sent, skipped or cancelled',
      },
    }),
    async (request) => ok(await cancelRequest(db, request.auth.account_id, request.params.id)),
  )
}
