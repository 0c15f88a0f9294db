import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { JobQueues, JobQueuesQuery } from './job-queues.schemas.js'

/**
 * `GET /v1/admin/jobs`: per job queue, its waiting and active jobs, and the accounts holding most of them
 * (a bounded list rather than a metric label per account). Guarded by ADMIN_TOKEN.
 */
export const jobQueuesAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/jobs',
    routeOptions({
      operationId: 'jobQueuesRead',
      summary:
        'Read the job queues: per queue its jobs ready, scheduled and running, and the accounts holding most of ' +
        'them (the top `top`), to see which account fills a queue',
      description:
        'What the background worker has to do: per queue, its jobs ready, scheduled for later and running, ' +
        'and the accounts holding the most of them, so an operator sees which account fills a queue. Operator ' +
        'only.',
      tags: ['admin'],
      access: 'admin',
      querystring: JobQueuesQuery,
      response: { 200: Envelope(JobQueues) },
      errors: [],
    }),
    async (request) => ok({ queues: await platform.queue.status(request.query.top) }),
  )
}
