import { createHash } from 'node:crypto'
import type pg from 'pg'
import { keptHash } from '../../src/modules/oauth/kept-hash.js'
import type { EachRequest } from '../each.js'
import { planFrom, recordRequests, type SqlPlan, stopRecording } from '../route-vs-sql.js'
import type { Target } from '../scenario.js'

/**
 * The token endpoint's SQL replayed without the server (route-vs-sql.ts): each grant's exchange, then its
 * refresh. What reaches SQL of a token request is not its body as sent but the client of its Basic
 * credentials and the hashes the server keeps (src/modules/oauth/kept-hash.ts) of the code and its PKCE
 * verifier, or of the refresh token; a replayed refresh uses the refresh token its replayed exchange
 * stored (a fresh hash, as the server would have made a fresh token).
 */

export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url')

/** The client id of `Basic base64(id:secret)`. */
function clientOf(request: EachRequest): string {
  const basic = request.headers?.authorization?.replace(/^Basic /, '') ?? ''
  return decodeURIComponent(Buffer.from(basic, 'base64').toString().split(':')[0] ?? '')
}

/** A token request's inputs as they reach SQL: the client, the code's hash and PKCE challenge, or the refresh token's hash. */
function tokenInputs(request: EachRequest): string[] {
  const form = new URLSearchParams(request.body)
  return form.get('grant_type') === 'authorization_code'
    ? [clientOf(request), keptHash(form.get('code') ?? ''), s256(form.get('code_verifier') ?? '')]
    : [clientOf(request), keptHash(form.get('refresh_token') ?? '')]
}

const refreshOf = (exchange: EachRequest, answer: string): EachRequest => ({
  headers: exchange.headers,
  body: new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: (JSON.parse(answer) as { refresh_token: string }).refresh_token,
  }).toString(),
})

export interface TokenSql {
  exchange: SqlPlan
  refresh: SqlPlan
  /** Grants the server answered while recording: an exchange and a refresh each. */
  recordedGrants: number
  /** Grants replayed: an exchange and a refresh each, the warm-up's included. */
  replayedGrants: number
  end(): Promise<void>
}

/**
 * Records exchanges (`recorded`, three) and the refreshes of the tokens they gave, then plans the replays of
 * `replays` (exchanges of codes the server never saw, `warmup` of them first) and of their refreshes.
 */
export async function planTokenSql(
  target: Target,
  url: string,
  recorded: EachRequest[],
  replays: EachRequest[],
  warmup: number,
  connections: number,
): Promise<TokenSql | undefined> {
  const side = { url, contentType: 'application/x-www-form-urlencoded', inputs: tokenInputs }
  const exchanges = await recordRequests(target, { ...side, recorded: { exchange: recorded } })
  const answers = exchanges?.answers.exchange
  const refreshRequests = answers?.map((answer, i) => refreshOf(recorded[i] as EachRequest, answer))
  const refreshes =
    refreshRequests && (await recordRequests(target, { ...side, recorded: { refresh: refreshRequests } }))
  stopRecording(target)
  if (!exchanges || !refreshRequests || !refreshes) return undefined
  const exchange = planFrom(target, exchanges, {
    replays: replays.map((request) => ({ kind: 'exchange', inputs: tokenInputs(request) })),
    warmupReplays: warmup,
    connections,
  })
  // The refresh token the replays' template exchange stored, and what each replayed exchange stored instead.
  const template = exchanges.pairs.exchange?.[0] ?? 0
  const recordedToken = tokenInputs(refreshRequests[template] as EachRequest)[1] ?? ''
  const refresh = planFrom(target, refreshes, {
    replays: exchange.planned.map((replayed, i) => {
      const stored = replayed.substituted.get(recordedToken)
      if (!stored) throw new Error("the recorded exchange's SQL does not hold its refresh token's hash")
      return { kind: 'refresh', inputs: [clientOf(replays[i] as EachRequest), stored] }
    }),
    warmupReplays: warmup,
    connections,
  })
  return {
    exchange,
    refresh,
    recordedGrants: exchanges.requests,
    replayedGrants: replays.length,
    end: async () => {
      await exchange.end()
      await refresh.end()
    },
  }
}

export interface Stored {
  codesUsed: number
  refreshTokens: number
  replaced: number
  revoked: number
  issued: number
  refreshed: number
  otherEvents: number
}

/** What the token tables hold after the run, to check every grant against. */
export async function storedGrants(db: pg.Pool): Promise<Stored> {
  const { rows } = await db.query<Record<keyof Stored, string>>(
    `select (select count(*) from oauth_codes where used_at is not null) as "codesUsed",
       (select count(*) from oauth_refresh_tokens) as "refreshTokens",
       (select count(*) from oauth_refresh_tokens where replaced_at is not null) as replaced,
       (select count(*) from oauth_refresh_tokens where revoked_at is not null) as revoked,
       (select count(*) from oauth_audit_events where event = 'token.issued') as issued,
       (select count(*) from oauth_audit_events where event = 'token.refreshed') as refreshed,
       (select count(*) from oauth_audit_events where event not in ('token.issued', 'token.refreshed')) as "otherEvents"`,
  )
  const row = rows[0] as Record<keyof Stored, string>
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [key, Number(value)]),
  ) as unknown as Stored
}
