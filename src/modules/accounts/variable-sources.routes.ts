import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { NotFound } from '../../platform/http/errors.js'
import { Id, IdParams } from '../../platform/http/schemas.js'
import { adminOperation } from './accounts.routes.js'
import type { VariableSource as VariableSourceKind } from './contacts.repository.js'
import { VariableSource, VariableSourceBodies } from './contacts.schemas.js'
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
      {
        schema: {
          ...adminOperation(`${RECORD_FEATURES[kind]}Create`, `Create one of ${kind}`),
          params: IdParams,
          body,
          response: { 201: Envelope(VariableSource), ...errorResponses(400, 401, 404) },
        },
      },
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
      {
        schema: {
          ...adminOperation(`${RECORD_FEATURES[kind]}Read`, `Read one of ${kind}`),
          params: Type.Object({ id: Id(), record_id: Id() }),
          response: { 200: Envelope(VariableSource), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const found = await getVariableSource(db, request.params.id, kind, request.params.record_id)
        if (!found) throw new NotFound('Record not found')
        return ok(found)
      },
    )
  }
}
