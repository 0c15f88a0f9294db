import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { signEdgeRequest } from '../../src/modules/funnels/edge-delivery.service.js'
import { EDGE_STEP_PATH } from '../../src/modules/funnels/edge-protocol.js'
import { newId } from '../../src/platform/db/ids.js'
import { createMember } from '../admin.js'
import type { ComparedScenario, Target } from '../scenario.js'

const FUNNELS = 100
const STEPS_PER_FUNNEL = 100
const DOMAIN = 'bench-funnels.example.com'
const WARM_CONNECTIONS = 20
// The run's signing secret, given to the server, so the bench signs as the edge worker does.
const SECRET = randomBytes(32).toString('hex')
// A page of about 2 kB, as a small landing page's body.
const HTML = `<section class="hero"><h1>Spring sale</h1>${'<p>Everything must go, this week only.</p>'.repeat(45)}</section>`

const pageOf = (funnel: number, step: number) => ({ hostname: DOMAIN, pathname: `/f${funnel}/s${step}` })

/** The signed path and query of the edge's read of a page, `_ts` now. */
function signedPath(page: Record<string, string>): string {
  const ts = Math.floor(Date.now() / 1000)
  const sig = signEdgeRequest(SECRET, 'GET', EDGE_STEP_PATH, ts, page)
  return `${EDGE_STEP_PATH}?${new URLSearchParams({ ...page, _ts: String(ts), _sig: sig })}`
}

/** 100 active funnels of 100 steps on one domain, written as the builder leaves them. */
async function seed(db: pg.Pool, accountId: string): Promise<void> {
  const domainId = newId()
  await db.query('insert into funnel_domains (id, account_id, name) values ($1, $2, $3)', [
    domainId,
    accountId,
    DOMAIN,
  ])
  const funnels = Array.from({ length: FUNNELS }, (_, f) => ({ id: newId(), basePath: `/f${f}` }))
  await db.query(
    `insert into funnels (id, account_id, name, domain_id, base_path, status)
     select id, $1, 'Bench funnel', $2, base_path, 'active' from unnest($3::text[], $4::text[]) as f(id, base_path)`,
    [accountId, domainId, funnels.map((f) => f.id), funnels.map((f) => f.basePath)],
  )
  const steps = funnels.flatMap((funnel) =>
    Array.from({ length: STEPS_PER_FUNNEL }, (_, s) => ({ id: newId(), funnelId: funnel.id, order: s })),
  )
  await db.query(
    `insert into funnel_steps (id, account_id, funnel_id, name, path, "order", html, checksum)
     select id, $1, funnel_id, 'Step ' || n, '/s' || n, n, $2, md5(id)
     from unnest($3::text[], $4::text[], $5::int[]) as s(id, funnel_id, n)`,
    [accountId, HTML, steps.map((s) => s.id), steps.map((s) => s.funnelId), steps.map((s) => s.order)],
  )
}

/** Every page read once, so that the origin's step cache holds all 10,000. */
async function warm(target: Target): Promise<void> {
  const pages = Array.from({ length: FUNNELS * STEPS_PER_FUNNEL }, (_, i) =>
    pageOf(Math.floor(i / STEPS_PER_FUNNEL), i % STEPS_PER_FUNNEL),
  )
  let next = 0
  const worker = async () => {
    for (let page = pages[next++]; page; page = pages[next++]) {
      const response = await fetch(new URL(signedPath(page), target.baseUrl))
      if (!response.ok)
        throw new Error(`${page.pathname} answered ${response.status}: ${await response.text()}`)
      await response.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: WARM_CONNECTIONS }, worker))
}

/**
 * The edge worker's read of a published page: signed `GET /v1/funnels/cloudflare/step` (HMAC check, no
 * JWT) over 10,000 published steps, all in the origin's cache, repeating one page. The signature is good
 * for 300 s: runs of more than about two minutes a side get 401s.
 */
export const edgeStep: ComparedScenario = {
  description: 'signed GET /v1/funnels/cloudflare/step, 10,000 published steps, cache warm',
  target: 0.5,
  requiresPostgres: true,
  serverEnv: { EDGE_SIGNING_SECRET: SECRET },
  async prepare(target) {
    if (!target.databaseUrl) throw new Error('edge-step needs the server on PostgreSQL (--postgres)')
    const { accountId } = await createMember(target)
    const db = new pg.Pool({ connectionString: target.databaseUrl, max: 2 })
    try {
      await seed(db, accountId)
    } finally {
      await db.end()
    }
    await warm(target)
    return { method: 'GET', path: signedPath(pageOf(FUNNELS / 2, STEPS_PER_FUNNEL / 2)) }
  },
}
