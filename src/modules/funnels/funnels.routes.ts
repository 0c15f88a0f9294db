import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { FunnelParams } from './funnel-access.schemas.js'
import { SITES_READ, SITES_WRITE } from './funnel-access.service.js'
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
    routeOptions({
      operationId: 'funnelList',
      summary: 'List funnels, most recently updated first',
      tags: ['funnels'],
      access: SITES_READ,
      querystring: FunnelsQuery,
      response: { 200: PageEnvelope(FunnelListItem) },
      errors: [400, 401, 403, 429],
    }),
    async (request) => {
      const { data, pagination } = await listFunnelsPage(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.get(
    '/filters',
    routeOptions({
      operationId: 'funnelFilters',
      summary: 'The statuses and tags (with funnel counts) to filter by',
      tags: ['funnels'],
      access: SITES_READ,
      querystring: FiltersQuery,
      response: { 200: Envelope(Filters) },
      errors: [400, 401, 403, 429],
    }),
    async (request) => ok(await funnelFilters(db, request.auth.account_id, request.query)),
  )

  app.get(
    '/:id',
    routeOptions({
      operationId: 'funnelRead',
      summary: 'Read a funnel with its domain, tags and steps',
      tags: ['funnels'],
      access: SITES_READ,
      params: FunnelParams,
      response: { 200: Envelope(FunnelDetail) },
      errors: [400, 401, 403, 404, 429],
    }),
    async (request) => ok(await getFunnel(db, request.auth.account_id, request.params.id)),
  )

  app.post(
    '/validate-path',
    routeOptions({
      operationId: 'funnelValidatePath',
      summary: 'Whether a base path is free on a domain',
      tags: ['funnels'],
      access: SITES_READ,
      body: ValidatePathBody,
      response: { 200: Envelope(PathAvailable), 409: PathConflict },
      errors: [400, 401, 403, 429],
    }),
    async (request, reply) =>
      answeringPathConflicts(reply, async () =>
        ok(await validatePath(db, request.auth.account_id, request.body)),
      ),
  )

  app.post(
    '/',
    routeOptions({
      operationId: 'funnelCreate',
      summary: 'Create a funnel with its steps',
      tags: ['funnels'],
      access: SITES_WRITE,
      body: CreateFunnelBody,
      response: { 201: Envelope(FunnelDetail), 409: PathConflict },
      errors: [400, 401, 403, 429],
    }),
    async (request, reply) =>
      answeringPathConflicts(reply, async () =>
        reply.status(201).send(ok(await createFunnel(deps, caller(request), request.body))),
      ),
  )

  app.put(
    '/:id',
    routeOptions({
      operationId: 'funnelUpdate',
      summary: 'Change a funnel (category: funnel-template admins only)',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      body: UpdateFunnelBody,
      response: { 200: Envelope(FunnelDetail), 409: PathConflict },
      errors: [400, 401, 403, 404, 429],
    }),
    async (request, reply) =>
      answeringPathConflicts(reply, async () =>
        ok(await updateFunnel(deps, caller(request), request.params.id, request.body)),
      ),
  )

  app.post(
    '/:id/duplicate',
    routeOptions({
      operationId: 'funnelDuplicate',
      summary: 'Copy a funnel with its steps, here or into a sub-account',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      querystring: DuplicateQuery,
      response: { 201: Envelope(FunnelDetail) },
      errors: [400, 401, 403, 404, 429],
    }),
    async (request, reply) => {
      const copy = await duplicateFunnel(deps, caller(request), request.params.id, request.query.subaccountid)
      return reply.status(201).send(ok(copy))
    },
  )

  app.delete(
    '/:id',
    routeOptions({
      operationId: 'funnelDelete',
      summary: 'Delete a funnel (soft: its data is kept, out of reach)',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      response: { 200: Envelope(FunnelDeleted) },
      errors: [400, 401, 403, 404, 429],
    }),
    async (request) => ok(await deleteFunnel(deps, caller(request), request.params.id)),
  )
}
