import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope, Removed } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import {
  AddBody,
  DO_NOT_DISTURB_EXAMPLE,
  DO_NOT_DISTURB_INPUT_EXAMPLE,
  DoNotDisturbEntry,
  ListQuery,
} from './do-not-disturb.schemas.js'
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
      description:
        "The account's do-not-disturb list, newest first: addresses no send of the account may reach. A user " +
        'of the account.',
      tags: ['email'],
      access: 'bearer',
      querystring: ListQuery,
      response: { 200: PageEnvelope(DoNotDisturbEntry) },
      errors: [],
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
      description:
        "Puts an address (or a phone number) on the account's do-not-disturb list: a send to it is refused " +
        'with 400 `DND enabled for received email(s).`. Adding one already there answers the entry that is ' +
        'there with 200. A user of the account.',
      answers: { 200: 'Already on the list: the entry there', 201: 'Added' },
      example: { body: DO_NOT_DISTURB_INPUT_EXAMPLE, response: ok(DO_NOT_DISTURB_EXAMPLE) },
      tags: ['email'],
      access: 'bearer',
      body: AddBody,
      response: { 200: Envelope(DoNotDisturbEntry), 201: Envelope(DoNotDisturbEntry) },
      errors: [],
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
      description:
        "Takes the entry off the account's do-not-disturb list: sends may reach the address again. A user of " +
        'the account.',
      answers: { 404: 'No do-not-disturb entry with this id in the account' },
      tags: ['email'],
      access: 'bearer',
      params: IdParams,
      response: { 200: Envelope(Removed) },
      errors: [404],
    }),
    async (request) => {
      await removeFromDoNotDisturb(db, request.auth.account_id, request.params.id)
      return ok({ _id: request.params.id, deleted: true })
    },
  )
}
