import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { requireAccount, requireChangeableAccount } from './accounts.service.js'
import { Credits, GrantCreditsBody } from './credits.schemas.js'
import { creditBalance, grantCredits } from './credits.service.js'

/** The admin API of an account's credits: grant them, read the balance. Guarded by ADMIN_TOKEN. */
export const creditsAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticateAdmin)

  app.post(
    '/accounts/:id/credits',
    routeOptions({
      operationId: 'creditsGrant',
      summary: 'Grant credits',
      description:
        "Adds `amount` credits to the account's balance, recorded as an entry. Sending email spends one " +
        'credit per recipient (event `email`); without enough, a send answers 400 `Insufficient balance`. ' +
        'Operator only.',
      answers: {
        200: 'The balance after the grant',
        404: 'No account with this id',
        409: 'The account is being removed, or was',
      },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: GrantCreditsBody,
      response: { 200: Envelope(Credits) },
      errors: [404, 409],
    }),
    async (request) => {
      await requireChangeableAccount(db, request.params.id)
      const { balance } = await grantCredits(
        db,
        request.params.id,
        request.body.amount,
        request.body.reference,
      )
      return ok({ account_id: request.params.id, balance })
    },
  )

  app.get(
    '/accounts/:id/credits',
    routeOptions({
      operationId: 'creditsRead',
      summary: 'Read the credit balance',
      description:
        "The account's credit balance and its latest entries (grants and what sending spent). Operator only.",
      answers: { 404: 'No account with this id' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(Credits) },
      errors: [404],
    }),
    async (request) => {
      await requireAccount(db, request.params.id)
      return ok({ account_id: request.params.id, balance: await creditBalance(db, request.params.id) })
    },
  )
}
