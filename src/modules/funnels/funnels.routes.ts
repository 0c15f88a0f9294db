import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { funnelRoute } from './funnel-access.routes.js'
import { FunnelParams } from './funnel-access.schemas.js'
import { duplicateFunnel } from './funnel-duplicate.service.js'
import { PathInUse, validatePath } from './funnel-paths.service.js'
import {
  CreateFunnelBody,
  DuplicateQuery,
  Filters,
  FiltersQuery,
  FunnelDeleted,
  FunnelDetail,
  FunnelListItem,
  FunnelsQuery,
  PathAvailable,
  PathConflict,
  UpdateFunnelBody,
  ValidatePathBody,
} from './funnels.schemas.js'
import {
  createFunnel,
  deleteFunnel,
  funnelFilters,
  getFunnel,
  listFunnelsPage,
  updateFunnel,
} from './funnels.service.js'
import { stepCacheOf } from './step-cache.js'

/** Answers a path conflict with the spec's 409 body (`data.conflicting_funnel`), not the bare envelope. */
async function answeringPathConflicts<T>(reply: FastifyReply, work: () => Promise<T>) {
  try {
    return await work()
  } catch (error) {
    if (!(error instanceof PathInUse)) throw error
    return reply.status(409).send(error.body())
  }
}

const caller = (request: FastifyRequest) => request.auth

/** The funnels of the caller's account, under `/v1/funnels`. */
export const funnelsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  const deps = { db, stepCache: stepCacheOf(platform) }
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/',
    funnelRoute('funnelList', 'List funnels, most recently updated first', 'read', {
      querystring: FunnelsQuery,
      response: { 200: PageEnvelope(FunnelListItem), ...errorResponses(400, 401, 403, 429) },
    }),
    async (request) => {
      const { data, pagination } = await listFunnelsPage(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.get(
    '/filters',
    funnelRoute('funnelFilters', 'The statuses and tags (with funnel counts) to filter by', 'read', {
      querystring: FiltersQuery,
      response: { 200: Envelope(Filters), ...errorResponses(400, 401, 403, 429) },
    }),
    async (request) => ok(await funnelFilters(db, request.auth.account_id, request.query)),
  )

  app.get(
    '/:id',
    funnelRoute('funnelRead', 'Read a funnel with its domain, tags and steps', 'read', {
      params: FunnelParams,
      response: { 200: Envelope(FunnelDetail), ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (request) => ok(await getFunnel(db, request.auth.account_id, request.params.id)),
  )

  app.post(
    '/validate-path',
    funnelRoute('funnelValidatePath', 'Whether a base path is free on a domain', 'read', {
      body: ValidatePathBody,
      response: {
        200: Envelope(PathAvailable),
        409: PathConflict,
        ...errorResponses(400, 401, 403, 429),
      },
    }),
    async (request, reply) =>
      answeringPathConflicts(reply, async () =>
        ok(await validatePath(db, request.auth.account_id, request.body)),
      ),
  )

  app.post(
    '/',
    funnelRoute('funnelCreate', 'Create a funnel with its steps', 'write', {
      body: CreateFunnelBody,
      response: { 201: Envelope(FunnelDetail), 409: PathConflict, ...errorResponses(400, 401, 403, 429) },
    }),
    async (request, reply) =>
      answeringPathConflicts(reply, async () =>
        reply.status(201).send(ok(await createFunnel(deps, caller(request), request.body))),
      ),
  )

  app.put(
    '/:id',
    funnelRoute('funnelUpdate', 'Change a funnel (category: funnel-template admins only)', 'write', {
      params: FunnelParams,
      body: UpdateFunnelBody,
      response: {
        200: Envelope(FunnelDetail),
        409: PathConflict,
        ...errorResponses(400, 401, 403, 404, 429),
      },
    }),
    async (request, reply) =>
      answeringPathConflicts(reply, async () =>
        ok(await updateFunnel(deps, caller(request), request.params.id, request.body)),
      ),
  )

  app.post(
    '/:id/duplicate',
    funnelRoute('funnelDuplicate', 'Copy a funnel with its steps, here or into a sub-account', 'write', {
      params: FunnelParams,
      querystring: DuplicateQuery,
      response: { 201: Envelope(FunnelDetail), ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (request, reply) => {
      const copy = await duplicateFunnel(deps, caller(request), request.params.id, request.query.subaccountid)
      return reply.status(201).send(ok(copy))
    },
  )

  app.delete(
    '/:id',
    funnelRoute('funnelDelete', 'Delete a funnel (soft: its data is kept, out of reach)', 'write', {
      params: FunnelParams,
      response: { 200: Envelope(FunnelDeleted), ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (request) => ok(await deleteFunnel(deps, caller(request), request.params.id)),
  )
}
