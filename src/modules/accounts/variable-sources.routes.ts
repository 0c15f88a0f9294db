import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { NotFound } from '../../platform/http/errors.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Id, IdParams } from '../../platform/http/schemas.js'
import { VariableSource, VariableSourceBodies, type VariableSourceKind } from './contacts.schemas.js'
import { createVariableSource, getVariableSource } from './contacts.service.js'

/** Each kind of record email variables read, as the feature of its operationIds. */
const RECORD_FEATURES: Record<VariableSourceKind, string> = {
  persons: 'person',
  businesses: 'business',
  instasites: 'instasite',
  instareports: 'instareport',
}

/**
 * The admin API of the records email variables read (persons, businesses, instasites, instareports):
 * the main platform creates and reads them per account. Guarded by ADMIN_TOKEN.
 */
export const variableSourcesAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (
  app,
  { platform },
) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticateAdmin)

  for (const [kind, body] of Object.entries(VariableSourceBodies) as [
    VariableSourceKind,
    (typeof VariableSourceBodies)[VariableSourceKind],
  ][]) {
    app.post(
      `/accounts/:id/${kind}`,
      routeOptions({
        operationId: `${RECORD_FEATURES[kind]}Create`,
        summary: `Create one of ${kind}`,
        description:
          `Stores a record of the account's ${kind}, which email variables read when a send names one ` +
          '(`{{person.first_name}}`, `{{business.name}}`, ...). Operator only: the main platform keeps them here.',
        answers: {
          201: 'The record created',
          404: 'No account with this id',
          409: 'The account is being removed, or was',
        },
        tags: ['admin'],
        access: 'admin',
        params: IdParams,
        body,
        response: { 201: Envelope(VariableSource) },
        errors: [404, 409],
      }),
      async (request, reply) => {
        const created = await createVariableSource(
          db,
          request.params.id,
          kind,
          request.body as Record<string, string>,
        )
        return reply.status(201).send(ok(created))
      },
    )
    app.get(
      `/accounts/:id/${kind}/:record_id`,
      routeOptions({
        operationId: `${RECORD_FEATURES[kind]}Read`,
        summary: `Read one of ${kind}`,
        description: `One record of the account's ${kind}, as email variables read it. Operator only.`,
        answers: { 404: 'No account with this id, or no such record in it' },
        tags: ['admin'],
        access: 'admin',
        params: Type.Object({ id: Id(), record_id: Id() }),
        response: { 200: Envelope(VariableSource) },
        errors: [404],
      }),
      async (request) => {
        const found = await getVariableSource(db, request.params.id, kind, request.params.record_id)
        if (!found) throw new NotFound('Record not found')
        return ok(found)
      },
    )
  }
}
