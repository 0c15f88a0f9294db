import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { byIp } from '../../platform/http/rate-limit.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { FunnelPreview, PreviewQuery } from './preview.schemas.js'
import { previewFunnel } from './preview.service.js'

/** The public funnel preview under `/v1/funnels`: no credentials (a token, if sent, is not needed). */
export const previewRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform

  app.get(
    '/preview',
    routeOptions({
      operationId: 'previewRead',
      summary: 'Preview a funnel: its steps in order, tracking codes empty, preview_mode true (public)',
      description:
        'Public, no credentials needed: the funnel `funnel_id`, whatever its status, with its steps in ' +
        'order, its tracking codes empty and `preview_mode: true`, so that a preview neither counts as a ' +
        "visit nor runs the owner's scripts. Limited per IP (RATE_LIMIT_FUNNEL_PREVIEW_PER_MINUTE, 120 a " +
        'minute by default). 400 `Invalid funnel ID`; 404 `Funnel not found`.',
      tags: ['funnels'],
      access: 'public',
      querystring: PreviewQuery,
      response: { 200: Envelope(FunnelPreview) },
      errors: [400, 404, 429],
      answers: {
        404: '`Funnel not found`',
        429: 'Too many previews from this IP: retry after `Retry-After` seconds',
      },
      // Public and answering by id: limited per IP, so that ids cannot be tried in bulk.
      config: {
        rateLimit: {
          max: platform.config.rateLimits.funnelPreviewPerMinute,
          timeWindow: '1 minute',
          keyGenerator: byIp,
        },
      },
    }),
    async (request) => ok(await previewFunnel(db, request.query.funnel_id)),
  )
}
