import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { ClaimBody, ListQuery, LocationParams, OrderLocation, Released } from './order-locations.schemas.js'
import { claimLocation, listAccountLocations, releaseLocation } from './order-locations.service.js'
import { REVIEWS_READ, REVIEWS_WRITE } from './review-access.service.js'

/** The Square locations an account claims, under `/reviews/orderprovider/locations` of both prefixes. */
export const orderLocationsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/orderprovider/locations',
    routeOptions({
      operationId: 'reviewOrderLocationsCreate',
      summary:
        "Claim a Square location: its order events become the account's (claiming again: 200; another account's: 409)",
      description:
        'Claims a Square location for the account: the order events of that location become the ' +
        "account's. Claiming a location it holds answers 200; a location another account claims answers " +
        '409 `This location is claimed by another account`.',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      body: ClaimBody,
      response: { 200: Envelope(OrderLocation), 201: Envelope(OrderLocation) },
      errors: [400, 401, 403, 409],
      answers: {
        200: 'The account claims it already',
        201: 'Claimed now',
        409: '`This location is claimed by another account`',
      },
    }),
    async (request, reply) => {
      const { location, created } = await claimLocation(db, request.auth.account_id, request.body.location_id)
      return reply.status(created ? 201 : 200).send(ok(location))
    },
  )

  app.get(
    '/orderprovider/locations',
    routeOptions({
      operationId: 'reviewOrderLocationsList',
      summary: 'The Square locations the account claims, newest first',
      description: 'The Square locations the account claims, newest first, paged.',
      tags: ['reviews'],
      access: REVIEWS_READ,
      querystring: ListQuery,
      response: { 200: PageEnvelope(OrderLocation) },
      errors: [400, 401, 403],
    }),
    async (request) => {
      const { data, pagination } = await listAccountLocations(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.delete(
    '/orderprovider/locations/:location_id',
    routeOptions({
      operationId: 'reviewOrderLocationsDelete',
      summary: 'Give up a Square location: its later order events are skipped (unclaimed_location)',
      description:
        'Gives up a Square location: its later order events are skipped (`unclaimed_location`). 404 ' +
        '`Location not found` for a location the account does not claim.',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      params: LocationParams,
      response: { 200: Envelope(Released) },
      errors: [400, 401, 403, 404],
      answers: { 404: '`Location not found`' },
    }),
    async (request) => {
      await releaseLocation(db, request.auth.account_id, request.params.location_id)
      return ok({ location_id: request.params.location_id, deleted: true })
    },
  )
}
