import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { FoundUser } from '../accounts/user-search.schemas.js'
import { findUsersByEmail } from '../accounts/user-search.service.js'
import { FindUsersQuery } from './find-users.schemas.js'

/** The spec's `findUsers`: the user directory, for operators (it lists users across accounts). */
export const findUsersRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.get(
    '/findUsers',
    {
      onRequest: app.authenticateAdmin,
      ...routeOptions({
        operationId: 'findUsersList',
        summary: 'Users whose email contains `email`, each with the accounts they belong to',
        description:
          'Users whose email contains `email`, each with the accounts they belong to (`main` marks their main ' +
          'account), `limit` 1 to 50. Operator only.',
        tags: ['oauth'],
        access: 'admin',
        requiresHttps: true,
        querystring: FindUsersQuery,
        response: { 200: PageEnvelope(FoundUser) },
        errors: [],
      }),
    },
    async (request) => {
      const { data, pagination } = await findUsersByEmail(platform.db, request.query)
      return okPage(data, pagination)
    },
  )
}
