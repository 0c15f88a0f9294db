import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ListEnvelope, ok, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import {
  AccountEvent,
  AccountEventBody,
  AccountEventDetail,
  EVENT_EXAMPLE,
  EVENT_INPUT_EXAMPLE,
  EventsQuery,
} from './account-events.schemas.js'
import { getEventOfAccount, listEventsOfAccount, reportAccountEvent } from './account-events.service.js'
import { queueWebhookEvent } from './jobs.js'
import { REVIEWS_READ, REVIEWS_WRITE } from './review-access.service.js'

/**
 * `POST /reviews/events`: the triggers no provider webhook reports, from the account's own systems; `GET`: the
 * account's events (its own, and the payments and orders attributed to it) and what became of each.
 */
export const accountEventsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, queue } = platform
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/events',
    routeOptions({
      operationId: 'reviewEventsReport',
      summary:
        'Report a service delivered, an appointment finished, a custom event or an order: review requests ' +
        'are scheduled when it is the configuration trigger (202; a repeated event_id answers 200)',
      description:
        "The account's own systems report what no provider webhook does: a service delivered, an " +
        'appointment finished, a custom event, or an order (`trigger`). When it is the trigger of the auto ' +
        'review request configuration, review requests for `customer` are scheduled after `delay_hours` ' +
        '(202); a repeated `event_id` answers 200 with the stored event, applied once. 400 `Invalid ' +
        "trigger type` for another trigger; an app's token needs `reviews.write`.",
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      body: AccountEventBody,
      response: { 200: Envelope(AccountEvent), 202: Envelope(AccountEvent) },
      example: { body: EVENT_INPUT_EXAMPLE, response: ok(EVENT_EXAMPLE) },
      errors: [400, 401, 403, 503],
      answers: {
        200: 'A repeated `event_id`: the event stored before, applied once',
        202: 'Stored: a job applies it and schedules the review requests',
      },
    }),
    async (request, reply) => {
      const { event, repeated } = await reportAccountEvent(
        { db, log: request.log },
        request.auth.account_id,
        request.body,
        (id) => queueWebhookEvent(queue, id, request.auth.account_id),
      )
      return reply.status(repeated ? 200 : 202).send(ok(event))
    },
  )

  app.get(
    '/events',
    routeOptions({
      operationId: 'reviewEventsList',
      summary:
        "The account's review events (its own, payments and orders), newest first, each with what became of " +
        'it and the reason in words; by status, trigger and the time received',
      description:
        "The account's review events, newest first: those it reported and the payments and orders " +
        'attributed to it, each with its status (received, processed, skipped, failed) and the reason in ' +
        'words. Filters: `status`, `trigger` and the time received; pages by `page` or `cursor`.',
      tags: ['reviews'],
      access: REVIEWS_READ,
      querystring: EventsQuery,
      response: { 200: ListEnvelope(AccountEvent) },
      errors: [400, 401, 403],
    }),
    async (request) => {
      const { data, pagination } = await listEventsOfAccount(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.get(
    '/events/:id',
    routeOptions({
      operationId: 'reviewEventsGet',
      summary: 'One review event of the account, as received, with the review requests it scheduled',
      description:
        'One review event of the account as received, with the review requests it scheduled; 404 `Review ' +
        'event not found`.',
      tags: ['reviews'],
      access: REVIEWS_READ,
      params: IdParams,
      response: { 200: Envelope(AccountEventDetail) },
      errors: [400, 401, 403, 404],
      answers: { 404: '`Review event not found`' },
    }),
    async (request) => ok(await getEventOfAccount(db, request.auth.account_id, request.params.id)),
  )
}
