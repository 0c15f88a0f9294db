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
  FUNNEL_EXAMPLE,
  FUNNEL_INPUT_EXAMPLE,
  FUNNEL_LIST_ITEM_EXAMPLE,
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
      description:
        "The account's live funnels (deleted ones never appear), most recently updated first, each with " +
        'its tag ids and its steps without content. Filters: `search` (part of the name), `status`, `tags` ' +
        '(comma-separated tag ids; 400 otherwise) and `domain_connected`; pages of `limit` (default 10, at ' +
        "most 100). A platform JWT, or an app's token granted `sites.read`.",
      tags: ['funnels'],
      access: SITES_READ,
      querystring: FunnelsQuery,
      response: { 200: PageEnvelope(FunnelListItem) },
      example: { response: okPage([FUNNEL_LIST_ITEM_EXAMPLE], { total: 1, page: 1, limit: 10, pages: 1 }) },
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
      description:
        "The choices of the funnel list's filters: every status (`active`, `inactive`, `draft`) and the " +
        "account's tags, each with `count`, its live funnels (in `status` when given; only the tags of " +
        '`tags` when given).',
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
      description:
        'One funnel of the account with its `domain` {_id, name, ssl_enabled}, its tags {_id, name}, its ' +
        'steps in order with their seo, its tracking codes and live chat widget. 400 `Invalid funnel ID` ' +
        "for a malformed id; 404 `Funnel not found` for an unknown, deleted or another account's funnel.",
      tags: ['funnels'],
      access: SITES_READ,
      params: FunnelParams,
      response: { 200: Envelope(FunnelDetail) },
      example: { response: ok(FUNNEL_EXAMPLE) },
      errors: [400, 401, 403, 404, 429],
      answers: { 404: '`Funnel not found`: unknown, deleted, or of another account' },
    }),
    async (request) => ok(await getFunnel(db, request.auth.account_id, request.params.id)),
  )

  app.post(
    '/validate-path',
    routeOptions({
      operationId: 'funnelValidatePath',
      summary: 'Whether a base path is free on a domain',
      description:
        "Whether `path` is free as a base path on `domain_id` (without one, on the account's default " +
        'host), leaving out `funnel_id`, the funnel being edited. Free: `data: { available: true, path }`, ' +
        'the path normalised. Held by a live funnel: 409 `Path already in use` with `data: { available: ' +
        'false, path, conflicting_funnel: { _id, name } }`.',
      tags: ['funnels'],
      access: SITES_READ,
      body: ValidatePathBody,
      response: { 200: Envelope(PathAvailable), 409: PathConflict },
      errors: [400, 401, 403, 429],
      answers: {
        200: 'The path is free: `data.path` normalised',
        409: '`Path already in use`: `data.conflicting_funnel` names the funnel holding it',
      },
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
      description:
        "Creates a funnel in the caller's account with its steps {name, path, type, order}, each path " +
        'unique within the funnel; `draft` unless `status` says otherwise, `base_path` derived from the ' +
        "name when absent. `domain_id` and `tags` must be the account's own (400 naming the field). A " +
        'base path another live funnel holds on the same host answers 409 `Path already in use` with ' +
        '`data.conflicting_funnel`.',
      tags: ['funnels'],
      access: SITES_WRITE,
      body: CreateFunnelBody,
      response: { 201: Envelope(FunnelDetail), 409: PathConflict },
      example: { body: FUNNEL_INPUT_EXAMPLE, response: ok(FUNNEL_EXAMPLE) },
      errors: [400, 401, 403, 429],
      answers: {
        201: 'The funnel created, with its step ids',
        409: '`Path already in use`: `data.conflicting_funnel` names the funnel holding it',
      },
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
      description:
        'Changes the fields given; `updated_by` becomes the caller. Changing `category` needs the ' +
        "caller's `funnel_templates:admin` permission (403 `Admin permission required for template " +
        'category updates`). `conflicts` is accepted and ignored: a base path another live funnel holds on ' +
        'the host always answers 409 `Path already in use` with `data.conflicting_funnel`.',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      body: UpdateFunnelBody,
      response: { 200: Envelope(FunnelDetail), 409: PathConflict },
      errors: [400, 401, 403, 404, 429],
      answers: {
        403:
          'Not allowed: the account is not active, the token lacks `sites.write`, or `Admin permission ' +
          'required for template category updates`',
        409: '`Path already in use`: `data.conflicting_funnel` names the funnel holding it',
      },
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
      description:
        'Copies the funnel with its steps and their components: named `<name> (Copy)`, status `inactive`, ' +
        'without a domain, at the first free base path among its own, `-copy`, `-copy-2`, ... With ' +
        '`subaccountid` the copy goes to that sub-account, which must be an active sub-account of the ' +
        "caller's account (404 `Sub-account not found` otherwise); only a copy within the account keeps " +
        'the tags.',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      querystring: DuplicateQuery,
      response: { 201: Envelope(FunnelDetail) },
      errors: [400, 401, 403, 404, 429],
      answers: { 201: 'The copy', 404: '`Funnel not found`, or `Sub-account not found`' },
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
      description:
        'Soft delete: the funnel keeps its data and answers `{ _id, deleted: true, deleted_at }`, but it ' +
        'and its steps are found no more (404 `Funnel not found`) and its base path is free for another ' +
        'funnel.',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      response: { 200: Envelope(FunnelDeleted) },
      errors: [400, 401, 403, 404, 429],
    }),
    async (request) => ok(await deleteFunnel(deps, caller(request), request.params.id)),
  )
}
