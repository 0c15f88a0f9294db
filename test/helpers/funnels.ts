import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import type { FunnelStatus, StepType } from '../../src/modules/funnels/documents.schemas.js'
import { normalisePath } from '../../src/modules/funnels/funnel-access.service.js'
import { stepCacheOf } from '../../src/modules/funnels/step-cache.js'
import { funnelDomains, funnelSteps, funnels } from '../../src/modules/funnels/tables.js'
import { newId } from '../../src/platform/db/ids.js'
import type { Tenant } from './fixtures.js'

export const FUNNELS = '/v1/funnels'

/** A call to a funnel route (`path` under `/v1/funnels`) as `tenant`. */
export function funnelCall(
  app: FastifyInstance,
  tenant: Tenant,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  payload?: object,
) {
  return app.inject({ method, url: `${FUNNELS}${path}`, headers: tenant.headers, payload })
}

export interface SeedFunnel {
  name?: string
  basePath?: string
  status?: FunnelStatus
  /** A domain of the tenant's account created with the funnel (a unique hostname by default). */
  domainName?: string
  steps?: { name?: string; path?: string; type?: StepType; html?: string }[]
}

export interface SeededFunnel {
  funnelId: string
  domainId: string | undefined
  domainName: string | undefined
  basePath: string
  stepIds: string[]
}

/**
 * A funnel with steps written straight into the tables: for tests of features that read funnels (forms,
 * short links, edge delivery) and for the bench's 10,000 steps, independent of the builder routes.
 */
export async function seedFunnel(
  app: FastifyInstance,
  tenant: Pick<Tenant, 'accountId'>,
  seed: SeedFunnel = {},
): Promise<SeededFunnel> {
  const { db } = app.platform
  const { accountId } = tenant
  const domainId = seed.domainName ? newId() : undefined
  if (domainId)
    await db.insert(funnelDomains).values({ id: domainId, accountId, name: seed.domainName ?? '' })
  const funnelId = newId()
  const basePath = normalisePath(seed.basePath ?? `/funnel-${funnelId.slice(-8)}`)
  await db.insert(funnels).values({
    id: funnelId,
    accountId,
    name: seed.name ?? 'Spring sale',
    domainId,
    basePath,
    status: seed.status ?? 'active',
  })
  const steps = (seed.steps ?? [{}]).map((step, order) => ({
    id: newId(),
    accountId,
    funnelId,
    name: step.name ?? `Step ${order + 1}`,
    path: normalisePath(step.path ?? `/step-${order + 1}`),
    type: step.type ?? 'page',
    order,
    html: step.html ?? `<h1>Step ${order + 1}</h1>`,
  }))
  if (steps.length) await db.insert(funnelSteps).values(steps)
  return { funnelId, domainId, domainName: seed.domainName, basePath, stepIds: steps.map((s) => s.id) }
}

/** A base path no other test's funnel holds. */
export const uniqueBasePath = () => `/funnel-${newId().slice(-10)}`
/** A hostname no other test's domain holds. */
export const uniqueHostname = () => `shop-${newId().slice(-10)}.example.com`

/** Parsed JSON, as loosely typed as inject's `json()`. */
type ParsedJson = ReturnType<typeof JSON.parse>

/**
 * A funnel, domain or tag created through the API (POST to `path` under `/v1/funnels`): its `data`, the
 * test failing on any answer but 201.
 */
export async function createThroughApi(
  app: FastifyInstance,
  tenant: Tenant,
  path: '/' | '/domains' | '/tags',
  payload: object,
): Promise<ParsedJson> {
  const response = await funnelCall(app, tenant, 'POST', path, payload)
  if (response.statusCode !== 201)
    throw new Error(`POST ${path} answered ${response.statusCode}: ${response.body}`)
  return response.json().data
}

/** A funnel created through the API, on a path of its own unless `body` gives one. */
export const createFunnel = (app: FastifyInstance, tenant: Tenant, body: object = {}) =>
  createThroughApi(app, tenant, '/', { name: 'Spring sale', base_path: uniqueBasePath(), ...body })

/**
 * Puts an entry for the funnel into the app's step cache; the function returned tells whether a write
 * has forgotten it since.
 */
export function cacheProbe(app: FastifyInstance, funnelId: string): () => boolean {
  const cache = stepCacheOf(app.platform)
  const key = `probe:${funnelId}:${Math.random()}`
  cache.set(key, funnelId, 'cached', cache.generation())
  return () => cache.get(key) === undefined
}

/** Soft-deletes a funnel straight in its table, as the funnel delete route does. */
export async function softDeleteFunnel(app: FastifyInstance, funnelId: string): Promise<void> {
  await app.platform.db
    .update(funnels)
    .set({ deleted: true, deletedAt: new Date() })
    .where(eq(funnels.id, funnelId))
}

/** A builder components document with `count` components, the first one's text set to `text`. */
export function builderDocument(text: string, count = 1, version = '2.1') {
  return {
    version,
    components: Array.from({ length: count }, (_, i) => ({
      id: `block-${i}`,
      type: 'text',
      settings: { align: 'left', margin: { top: i } },
      content: { text: i === 0 ? text : `block ${i}` },
    })),
  }
}
