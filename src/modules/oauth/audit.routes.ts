import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { ListEnvelope, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { AuditEvent, AuditQuery } from './audit.schemas.js'
import { listAudit } from './audit.service.js'

/** The audit trail of grants and tokens, through the admin API (ADMIN_TOKEN): it spans accounts. */
export const auditRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/oauth/audit',
    routeOptions({
      operationId: 'auditList',
      summary: 'What happened to grants and tokens, newest first (optionally of one app or account)',
      description:
        "The authorization server's audit trail, newest first: consents granted, tokens issued and refreshed, " +
        'grants revoked, client authentication failures; of one app (`client_id`) or account (`account_id`) ' +
        'when given. Read by `page` or `cursor`. Operator only.',
      tags: ['admin'],
      access: 'admin',
      querystring: AuditQuery,
      response: { 200: ListEnvelope(AuditEvent) },
      errors: [],
    }),
    async (request) => {
      const { data, pagination } = await listAudit(platform.db, request.query)
      return okPage(data, pagination)
    },
  )
}
