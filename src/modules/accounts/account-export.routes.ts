import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { heavy } from '../../platform/http/account-concurrency.js'
import { contentDisposition } from '../../platform/http/content-disposition.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams, Streamed } from '../../platform/http/schemas.js'
import { AccountExportLine } from './account-export.schemas.js'
import { exportAccount } from './account-export.service.js'

/** `GET /v1/admin/accounts/:id/export`: an account handed over whole, for the operator. Guarded by ADMIN_TOKEN. */
export const accountExportAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (
  app,
  { platform },
) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/accounts/:id/export',
    routeOptions({
      operationId: 'accountExport',
      summary: 'Export everything an account and its sub-accounts own, streamed as NDJSON',
      description:
        'Streams everything the account and its sub-accounts own as NDJSON, one line per row, table by table, ' +
        'for a copy or a move. A large account takes a while: the answer starts at once and flows. Operator ' +
        'only.',
      answers: {
        404: 'No account with this id',
        409: 'The account is being removed: export it before removing it',
      },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: {
        200: {
          description:
            'One JSON object per line: `{"export": …}` first, then `{"table", "row"}` for every row, table ' +
            'by table, then `{"export_end": …}` (an export without it was cut short). Secrets are left out.',
          content: { 'application/x-ndjson': { schema: Streamed(AccountExportLine) } },
        },
      },
      errors: [404, 409, 429],
      config: heavy({ account: (request) => (request.params as { id: string }).id }),
    }),
    async (request, reply) => {
      const file = await exportAccount(platform.db, request.params.id)
      return reply
        .header('content-disposition', contentDisposition(file.fileName))
        .type('application/x-ndjson; charset=utf-8')
        .send(file.body)
    },
  )
}
