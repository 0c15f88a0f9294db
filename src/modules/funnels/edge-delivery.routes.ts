import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope } from '../../platform/http/envelope.js'
import { registerJsonParser } from '../../platform/http/request-guards.js'
import { routeOptions } from '../../platform/http/route-options.js'
import {
  EdgeStep,
  EdgeStepQuery,
  MAX_STEP_HTML_BYTES,
  StepSyncAnswer,
  StepSyncBody,
} from './edge-delivery.schemas.js'
import { cachedEdgeStep, loadEdgeStep, syncStepHtml, verifyEdgeSignature } from './edge-delivery.service.js'
import { listenForForgottenFunnels, stepCacheOf } from './step-cache.js'

const SIGNED =
  'Signed by the edge, no JWT: `_ts` (Unix seconds, 300 s either way) and `_sig`, the lowercase hex ' +
  'HMAC-SHA256 with EDGE_SIGNING_SECRET of METHOD, PATH, _ts and the other fields sorted by key as ' +
  '`key=value` joined by `&`, one a line (ARCHITECTURE.md). 401 `Unauthorized` otherwise.'

/** The edge delivery endpoints under `/v1/funnels`: what the edge worker reads and syncs back. */
export const edgeDeliveryRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, config } = platform
  const cache = stepCacheOf(platform)
  app.addHook('onClose', await listenForForgottenFunnels(platform))

  // On the fields as sent, before validation: what the edge signed, not what coercion makes of it.
  const verify = (request: FastifyRequest, params: unknown) => {
    const queryAt = request.url.indexOf('?')
    verifyEdgeSignature(config.edge.signingSecret, {
      method: request.method,
      path: queryAt === -1 ? request.url : request.url.slice(0, queryAt),
      params,
      nowSeconds: Math.floor(Date.now() / 1000),
    })
  }
  /** A callback hook verifying what `signed` picks: the check is synchronous, and the edge's reads are hot. */
  const verifying =
    (signed: (request: FastifyRequest) => unknown) =>
    (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
      try {
        verify(request, signed(request))
      } catch (error) {
        return done(error as Error)
      }
      done()
    }
  // A body is verified once parsed, before the JSON guards walk it: an unsigned 5 MB body costs one pass
  // over its text and the parse (both bounded, see request-guards.ts), never the walk.
  registerJsonParser(app, { verify })
  const verifyBody = verifying((request) => request.body)
  // JSON is the scope's only parser: a POST whose body it did not verify sent none, and is refused here.
  const verifyUnparsedBody: typeof verifyBody = (request, reply, done) =>
    request.body === undefined ? verifyBody(request, reply, done) : done()

  app.get(
    '/cloudflare/step',
    {
      preValidation: verifying((request) => request.query),
      ...routeOptions({
        operationId: 'edgeDeliveryReadStep',
        summary: 'The published step at a hostname and path, for the edge',
        description:
          'The page the edge worker serves at `hostname` + `pathname` (or `pathname` of `funnel_id`, whatever ' +
          'the host): `data: { step_id, funnel_id, html, checksum, seo, tracking_code, css }`; inactive and ' +
          `draft funnels only with \`isPreview\`. ${SIGNED}`,
        tags: ['funnels'],
        access: 'edgeSignature',
        querystring: EdgeStepQuery,
        response: { 200: Envelope(EdgeStep) },
        errors: [400, 401, 404],
        answers: {
          401: '`Unauthorized`: `_sig` missing or wrong, or `_ts` stale',
          404: '`Funnel not found` or `Step not found` at this hostname and path',
        },
      }),
    },
    (request, reply) => {
      // Serialized once when read, then sent as kept: a cache hit does no query, no serializing and
      // no promise (nor a closure made for it).
      const cached = cachedEdgeStep(cache, request.query)
      if (cached !== undefined) return sendSerialized(reply, cached)
      return loadEdgeStep(db, cache, request.query).then((body) => sendSerialized(reply, body))
    },
  )

  app.post(
    '/cloudflare/step',
    {
      preValidation: verifyUnparsedBody,
      bodyLimit: MAX_STEP_HTML_BYTES,
      ...routeOptions({
        operationId: 'edgeDeliverySyncStep',
        summary: "Store the edge's HTML of a step if its hash is still the one read",
        description:
          "The edge's rendered HTML of a step, stored when `currentHash` is still the step's: reason " +
          '`UPDATED` (the hash becomes `newHash`), `NO_CHANGE` with `skipIfUnchanged` and the same hash, ' +
          '404 `NOT_FOUND`, 409 `CONFLICT` when the step changed since it was read; `message` is the reason. ' +
          SIGNED,
        tags: ['funnels'],
        access: 'edgeSignature',
        body: StepSyncBody,
        response: { 200: StepSyncAnswer, 404: StepSyncAnswer, 409: StepSyncAnswer },
        errors: [400, 401, 413],
        answers: {
          200: '`UPDATED`, or `NO_CHANGE`',
          401: '`Unauthorized`: `_sig` missing or wrong, or `_ts` stale',
          404: '`NOT_FOUND`: no such step',
          409: "`CONFLICT`: the step's hash moved since the edge read it; `data.checksum` is the stored one",
          413: 'The HTML is over 5 MB',
        },
      }),
    },
    async (request, reply) => {
      const outcome = await syncStepHtml(db, request.body)
      if (outcome.updatedFunnelId) cache.forgetFunnel(outcome.updatedFunnelId)
      const success = outcome.status === 200
      return reply.status(outcome.status).send({
        success,
        ...(!success && { errno: outcome.status }),
        message: outcome.reason,
        data: outcome.data,
      })
    },
  )
}

const asIs = (payload: unknown) => payload as string

/** A JSON body serialized before, sent as it is. */
function sendSerialized(reply: FastifyReply, body: string): void {
  reply.type('application/json; charset=utf-8').serializer(asIs).send(body)
}
