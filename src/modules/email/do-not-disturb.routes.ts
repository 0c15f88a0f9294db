import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { AddBody, DoNotDisturbEntry, ListQuery, Removed } from './do-not-disturb.schemas.js'
import { addToDoNotDisturb, listDoNotDisturb, removeFromDoNotDisturb } from './do-not-disturb.service.js'

/** The caller's do-not-disturb list, under `/mailprovider/dnd` of both integration prefixes. */
export const doNotDisturbRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/mailprovider/dnd',
    routeOptions({
      operationId: 'doNotDisturbList',
      summary: 'List do-not-disturb entries',
      tags: ['email'],
      access: 'bearer',
      querystring: ListQuery,
      response: { 200: PageEnvelope(DoNotDisturbEntry) },
      errors: [400, 401, 403],
    }),
    async (request) => {
      const { data, pagination } = await listDoNotDisturb(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.post(
    '/mailprovider/dnd',
    routeOptions({
      operationId: 'doNotDisturbAdd',
      summary: 'Put an address on the do-not-disturb list (repeating it returns the entry there, 200)',
      tags: ['email'],
      access: 'bearer',
      body: AddBody,
      response: { 200: Envelope(DoNotDisturbEntry), 201: Envelope(DoNotDisturbEntry) },
      errors: [400, 401, 403],
    }),
    async (request, reply) => {
      const { entry, created } = await addToDoNotDisturb(db, request.auth.account_id, request.body)
      return reply.status(created ? 201 : 200).send(ok(entry))
    },
  )

  app.delete(
    '/mailprovider/dnd/:id',
    routeOptions({
      operationId: 'doNotDisturbRemove',
      summary: 'Take an address off the do-not-disturb list',
      tags: ['email'],
      access: 'bearer',
      params: IdParams,
      response: { 200: Envelope(Removed) },
      errors: [400, 401, 403, 404],
    }),
    async (request) => {
      await removeFromDoNotDisturb(db, request.auth.account_id, request.params.id)
      return ok({ _id: request.params.id, deleted: true })
    },
  )
}
