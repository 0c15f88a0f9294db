import { randomBytes } from 'node:crypto'
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose'
import pg from 'pg'
import { keptHash } from '../../src/modules/oauth/kept-hash.js'
import { newId } from '../../src/platform/db/ids.js'
import { adminPost, createMember, type Member } from '../admin.js'
import { type EachRequest, postEach, type SentEach } from '../each.js'
import { loadLine, sampleMachine } from '../machine.js'
import { type RouteAgainstSql, routeAgainstSql, type SqlPlan, sqlFailed, sqlLines } from '../route-vs-sql.js'
import type { Measured, MeasuredScenario, MeasureOptions, Target } from '../scenario.js'
import { planTokenSql, s256, storedGrants, type TokenSql } from './oauth-token-sql.js'

export const TOKEN_PATH = '/v1/auth/oauth/token'
const DEFAULT_GRANTS = 10_000
// Untimed grants first, so that V8 has optimised the path and the pools are open before the clock starts.
const WARMUP_GRANTS = 1_000
// Each grant costs its app two token requests (the exchange, then one refresh): 80 of the 100 an hour
// that RATE_LIMIT_OAUTH_TOKEN_PER_HOUR allows each client by default, which the run leaves as it is.
const GRANTS_PER_APP = 40
const ACCOUNTS = 8
const SCOPES = ['crm.contacts.read', 'analytics.read']
const REDIRECT_URI = 'https://bench.example/callback'
// As long as the server gives its own codes (authorize.service.ts): preparing and warming up take far less.
const CODE_SECONDS = 10 * 60
const TARGET_PER_SECOND = 1_500
const ADMIN_CONCURRENCY = 8
// Grants whose exchange and refresh the server answers with the SQL recorder on (route-vs-sql.ts): 6 more
// requests of the first app, within its 100 an hour.
const RECORDED_GRANTS = 3

export interface Client {
  id: string
  /** `Basic base64(id:secret)`, as RFC 6749 2.3.1 sends it. */
  authorization: string
}

interface TokenAnswer {
  access_token: string
  token_type: string
  expires_in: number
  refresh_token: string
  scope: string
}

/** Registers `count` active confidential apps through the admin API, a few at a time. */
export async function registerApps(target: Target, count: number): Promise<Client[]> {
  const clients: Client[] = []
  for (let start = 0; start < count; start += ADMIN_CONCURRENCY) {
    const batch = Array.from({ length: Math.min(ADMIN_CONCURRENCY, count - start) }, async (_, i) => {
      const app = await adminPost<{ client_id: string; client_secret: string }>(
        target,
        '/v1/admin/oauth/apps',
        {
          name: `Bench app ${start + i}`,
          redirect_uris: [REDIRECT_URI],
          scopes: SCOPES,
          active: true,
        },
      )
      const credentials = `${encodeURIComponent(app.client_id)}:${encodeURIComponent(app.client_secret)}`
      return { id: app.client_id, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` }
    })
    clients.push(...(await Promise.all(batch)))
  }
  return clients
}

/**
 * `count` authorization codes with PKCE (S256), as the consent page would leave them, written directly
 * into the server's database with the server's own hashing; returns the exchanges that redeem them.
 * Grant i belongs to client i mod the number of clients, so consecutive requests come from different apps.
 */
export async function insertCodes(
  db: pg.Pool,
  clients: Client[],
  members: Pick<Member, 'userId' | 'accountId'>[],
  count: number,
): Promise<EachRequest[]> {
  const codes = Array.from({ length: count }, (_, i) => {
    const member = members[i % members.length] as Pick<Member, 'userId' | 'accountId'>
    const verifier = randomBytes(32).toString('base64url')
    return {
      id: newId(),
      code: randomBytes(32).toString('base64url'),
      client: clients[i % clients.length] as Client,
      userId: member.userId,
      accountId: member.accountId,
      verifier,
      challenge: s256(verifier),
    }
  })
  await db.query(
    `insert into oauth_codes
       (id, code_hash, client_id, user_id, account_id, code_challenge, scopes, redirect_uri, expires_at)
     select c.*, $7::text[], $8, now() + make_interval(secs => $9)
     from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) as c`,
    [
      codes.map((c) => c.id),
      codes.map((c) => keptHash(c.code)),
      codes.map((c) => c.client.id),
      codes.map((c) => c.userId),
      codes.map((c) => c.accountId),
      codes.map((c) => c.challenge),
      SCOPES,
      REDIRECT_URI,
      CODE_SECONDS,
    ],
  )
  return codes.map((c) => ({
    headers: { authorization: c.client.authorization },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: c.code,
      redirect_uri: REDIRECT_URI,
      code_verifier: c.verifier,
    }).toString(),
  }))
}

/** The answers that are 200 with a well-formed RFC 6749 token response for SCOPES. */
function tokenAnswers(driven: SentEach): TokenAnswer[] {
  const valid: TokenAnswer[] = []
  for (const { status, body } of driven.answers) {
    if (status !== 200) continue
    try {
      const answer = JSON.parse(body) as TokenAnswer
      if (
        typeof answer.access_token === 'string' &&
        answer.token_type === 'Bearer' &&
        answer.expires_in === 3600 &&
        /^[A-Za-z0-9_-]{43}$/.test(answer.refresh_token) &&
        answer.scope === SCOPES.join(' ')
      )
        valid.push(answer)
    } catch {}
  }
  return valid
}

interface Checked {
  /** Access tokens whose signature, issuer, audience, type and claims hold. */
  verified: number
  /** The refresh requests of the grants, by the client each access token names. */
  refreshes: EachRequest[]
}

/** What the phases of a run share. */
interface Run {
  target: Target
  options: MeasureOptions
  clients: Map<string, Client>
  /** The user of each account. */
  users: Map<string, string>
  issuer: string
  keys: ReturnType<typeof createLocalJWKSet>
}

async function getJson<T>(baseUrl: string, path: string): Promise<T> {
  return (await (await fetch(new URL(path, baseUrl))).json()) as T
}

/** Verifies every access token against the published keys (after the clock), and prepares the refreshes. */
async function checkTokens(run: Run, answers: TokenAnswer[]): Promise<Checked> {
  const checked: Checked = { verified: 0, refreshes: [] }
  for (const answer of answers) {
    const { payload } = await jwtVerify(answer.access_token, run.keys, {
      issuer: run.issuer,
      audience: run.issuer,
      typ: 'at+jwt',
      algorithms: ['ES256'],
    }).catch(() => ({ payload: undefined }))
    const client = run.clients.get(String(payload?.client_id))
    if (
      !payload ||
      !client ||
      payload.type !== 'access_token' ||
      payload.scope !== SCOPES.join(' ') ||
      run.users.get(String(payload.account_id)) !== payload.uid
    )
      continue
    checked.verified++
    const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: answer.refresh_token })
    checked.refreshes.push({ headers: { authorization: client.authorization }, body: body.toString() })
  }
  return checked
}

interface Phase {
  requests: number
  driven: SentEach
  answers: TokenAnswer[]
  checked: Checked
  /** The phase against its SQL replayed without the server, when `plan` was given. */
  compared: RouteAgainstSql
  plan?: SqlPlan
}

async function runPhase(run: Run, requests: EachRequest[], plan?: SqlPlan): Promise<Phase> {
  const send = (list: EachRequest[]) =>
    postEach(tokenUrl(run.target), 'application/x-www-form-urlencoded', list, run.options.connections, {
      keepBodies: true,
    })
  const compared = await routeAgainstSql(requests, send, plan)
  const driven = compared.route
  const answers = tokenAnswers(driven)
  const checked = await checkTokens(run, answers)
  return { requests: requests.length, driven, answers, checked, compared, plan }
}

const tokenUrl = (target: Target) => new URL(TOKEN_PATH, target.baseUrl).href

/** Whether every request had its 200, a valid body, a verified access token, and a refresh token of its own. */
function phaseValid(phase: Phase): boolean {
  const distinct = new Set(phase.answers.map((a) => a.refresh_token)).size
  return (
    phase.driven.errors === 0 &&
    phase.driven.answers.length === phase.requests &&
    phase.answers.length === phase.requests &&
    phase.checked.verified === phase.requests &&
    distinct === phase.requests
  )
}

function phaseLines(name: string, phase: Phase): string[] {
  const { driven } = phase
  const statuses = new Map<number, number>()
  for (const { status } of driven.answers) statuses.set(status, (statuses.get(status) ?? 0) + 1)
  const answered = [...statuses].map(([status, n]) => `${n} × ${status}`).join(', ') || 'none'
  const perSecond = phase.requests / driven.seconds
  return [
    `${name.padEnd(22)} ${driven.seconds.toFixed(2)} s   ${perSecond.toFixed(0)} token responses/s   ` +
      `p50 ${driven.p50Ms.toFixed(1)} ms, p99 ${driven.p99Ms.toFixed(1)} ms   target >= ${TARGET_PER_SECOND}`,
    `${''.padEnd(22)} answers: ${answered}; valid token responses ${phase.answers.length}, ` +
      `verified access tokens ${phase.checked.verified}; connection errors ${driven.errors}`,
    ...(phase.plan ? sqlLines(phase.compared, phase.plan).map((line) => `${''.padEnd(22)} ${line}`) : []),
  ]
}

async function measure(target: Target, options: MeasureOptions): Promise<Measured> {
  if (!target.databaseUrl) throw new Error('oauth-token needs the server on PostgreSQL (--postgres)')
  const db = new pg.Pool({ connectionString: target.databaseUrl, max: 2 })
  let sql: TokenSql | undefined
  try {
    const grants = options.requests ?? DEFAULT_GRANTS
    const total = WARMUP_GRANTS + grants
    const members = await Promise.all(Array.from({ length: ACCOUNTS }, () => createMember(target)))
    const clientList = await registerApps(target, Math.ceil(total / GRANTS_PER_APP))
    const run: Run = {
      target,
      options,
      clients: new Map(clientList.map((c) => [c.id, c])),
      users: new Map(members.map((m) => [m.accountId, m.userId])),
      issuer: (await getJson<{ issuer: string }>(target.baseUrl, '/.well-known/oauth-authorization-server'))
        .issuer,
      keys: createLocalJWKSet(await getJson<JSONWebKeySet>(target.baseUrl, '/.well-known/jwks.json')),
    }
    const exchanges = await insertCodes(db, clientList, members, total)
    // Codes to record the route's SQL with, all of one app (whose cached row the later ones find, as most
    // requests under load do), and those of the SQL's replays, never sent to the server.
    const recorded = target.sql ? await insertCodes(db, clientList.slice(0, 1), members, RECORDED_GRANTS) : []
    const replays = target.sql ? await insertCodes(db, clientList, members, WARMUP_GRANTS + grants) : []

    const warmExchange = await runPhase(run, exchanges.slice(0, WARMUP_GRANTS))
    const warmRefresh = await runPhase(run, warmExchange.checked.refreshes)
    sql = await planTokenSql(target, tokenUrl(target), recorded, replays, WARMUP_GRANTS, options.connections)
    const before = sampleMachine([target.pid])
    const exchange = await runPhase(run, exchanges.slice(WARMUP_GRANTS, total), sql?.exchange)
    const between = sampleMachine([target.pid])
    const refresh = await runPhase(run, exchange.checked.refreshes, sql?.refresh)
    const after = sampleMachine([target.pid])

    const found = await storedGrants(db)
    // Every code used once; one refresh token per exchange and per refresh; each refreshed one replaced,
    // none revoked (no reuse); one audit record per answer and nothing else. The grants recorded and
    // replayed for the SQL-only figures each did the same.
    const all = total + (sql ? sql.recordedGrants + sql.replayedGrants : 0)
    const consistent =
      found.codesUsed === all &&
      found.refreshTokens === 2 * all &&
      found.replaced === all &&
      found.revoked === 0 &&
      found.issued === all &&
      found.refreshed === all &&
      found.otherEvents === 0
    const phases = [warmExchange, warmRefresh, exchange, refresh]
    const failed =
      !phases.every(phaseValid) ||
      refresh.requests !== grants ||
      !consistent ||
      sqlFailed(exchange.compared) ||
      sqlFailed(refresh.compared)
    const rate = (phase: Phase) => phase.requests / phase.driven.seconds
    return {
      passed: !failed && rate(exchange) >= TARGET_PER_SECOND && rate(refresh) >= TARGET_PER_SECOND,
      failed,
      lines: [
        `${grants} grants (after ${WARMUP_GRANTS} untimed) of ${clientList.length} confidential apps (HTTP Basic, ` +
          `PKCE S256) in ${ACCOUNTS} accounts; each code exchanged once, then each refresh token used once; ` +
          `${options.connections} connections`,
        '',
        ...phaseLines('code exchange', exchange),
        ...phaseLines('refresh', refresh),
        '',
        `stored: codes used ${found.codesUsed} of ${all}; refresh tokens ${found.refreshTokens} of ${2 * all}, ` +
          `replaced ${found.replaced}, revoked ${found.revoked}; audit token.issued ${found.issued}, ` +
          `token.refreshed ${found.refreshed}, other ${found.otherEvents}: ${consistent ? 'as expected' : 'MISMATCH'}`,
        `code exchange: ${loadLine(before, between)}`,
        `refresh: ${loadLine(between, after)}`,
      ],
    }
  } finally {
    await sql?.end()
    await db.end()
  }
}

/** The token endpoint's two grants, each request redeeming something only it may: a code, a refresh token. */
export const oauthToken: MeasuredScenario = {
  description:
    `POST ${TOKEN_PATH}: authorization_code exchanges, then refresh_token grants, each code and ` +
    'refresh token used once',
  requiresPostgres: true,
  replaysSql: true,
  measure,
}
