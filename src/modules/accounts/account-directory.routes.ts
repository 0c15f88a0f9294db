import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { AccountDirectoryQuery, DirectoryPage } from './account-directory.schemas.js'
import { listAccountDirectory } from './account-directory.service.js'
import { Account } from './accounts.schemas.js'

/** The operator's account directory (admin API, ADMIN_TOKEN): finding an account without its id. */
export const accountDirectoryAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (
  app,
  { platform },
) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/accounts',
    routeOptions({
      operationId: 'accountDirectoryList',
      summary: 'List and search accounts by name, status and parent',
      description:
        'Every account of the service, by name (case-insensitive), then id. `name` keeps the accounts whose ' +
        'name starts with it, in any case; `status` those of one status (`removed`: being removed, until ' +
        'the removal has deleted them); `parent` the sub-accounts of one account; every filter given ' +
        'applies. Pages are read ' +
        "by cursor: the first without one, each next with the last page's `pagination.next_cursor`, null " +
        'on the last page. Nothing is counted: each page reads along an index, however many accounts there are.',
      tags: ['admin'],
      access: 'admin',
      querystring: AccountDirectoryQuery,
      response: { 200: DirectoryPage(Account) },
      errors: [400, 401],
    }),
    async (request) => {
      const { data, pagination } = await listAccountDirectory(platform.db, request.query)
      return okPage(data, pagination)
    },
  )
}
