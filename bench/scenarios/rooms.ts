import { io } from 'socket.io-client'
import { type EachRequest, postEach, type SentEach } from '../each.js'
import { loadLine, sampleMachine } from '../machine.js'
import {
  meetsSqlTarget,
  planSql,
  type RouteAgainstSql,
  requestInputs,
  routeAgainstSql,
  type SqlPlan,
  type SqlSide,
  sqlFailed,
  sqlLines,
} from '../route-vs-sql.js'
import type { Measured, MeasuredScenario, MeasureOptions, Target } from '../scenario.js'
import { MESSAGES_PER_ROOM, ROOMS, ROOMS_PATH, random, serverEnv, withSeed } from './rooms-seed.js'

// Untimed requests first, so that V8 has optimised the path and the pools are open before the clock starts.
const WARMUP = 1_000
const EVENTS_TIMEOUT_MS = 60_000
// The room list holds at least half the rate of its own SQL replayed without the server.
const SQL_TARGET = 0.5

const answered = (sent: SentEach, status: number) => sent.answers.filter((a) => a.status === status).length

/** A phase's figures: requests, seconds, rate, latency, and answers that were not `status`. */
function phaseLine(label: string, sent: SentEach, status: number, unit = 'requests'): string {
  const count = sent.answers.length
  const others = count - answered(sent, status)
  return (
    `${label}: ${count} ${unit} in ${sent.seconds.toFixed(2)} s   ${(count / sent.seconds).toFixed(0)}/s   ` +
    `p50 ${sent.p50Ms.toFixed(1)} ms, p99 ${sent.p99Ms.toFixed(1)} ms   ` +
    `not ${status}: ${others}, connection errors ${sent.errors}`
  )
}

const bad = (sent: SentEach, status: number, expected: number) =>
  sent.errors > 0 || sent.answers.length !== expected || answered(sent, status) !== expected

interface Timed {
  warm: SentEach
  compared: RouteAgainstSql
  plan: SqlPlan | undefined
  lines: string[]
}

/**
 * The warm-up, then the timed requests against their SQL replayed without the server (`side`, built with
 * the number of replays to make: as many as the warm-up and the timed requests); the machine's load lines.
 */
async function run(
  target: Target,
  options: MeasureOptions,
  url: string,
  requests: (count: number, offset: number) => EachRequest[],
  side: (replays: number) => Omit<SqlSide, 'url' | 'contentType' | 'warmupReplays' | 'connections'>,
  count: number,
): Promise<Timed> {
  const send = (list: EachRequest[]) => postEach(url, 'application/json', list, options.connections)
  const warm = await send(requests(WARMUP, 0))
  const plan = await planSql(target, {
    url,
    contentType: 'application/json',
    warmupReplays: WARMUP,
    connections: options.connections,
    ...side(WARMUP + count),
  })
  try {
    const before = sampleMachine([target.pid])
    const compared = await routeAgainstSql(requests(count, WARMUP), send, plan)
    return { warm, compared, plan, lines: [loadLine(before, sampleMachine([target.pid]))] }
  } finally {
    await plan?.end()
  }
}

const MESSAGE_SEND_TARGET = 1_000
const DEFAULT_SENDS = 20_000
// The messages of the SQL-only replays: numbered far past the route's (--requests is at most 100,000).
const REPLAY_OFFSET = 1_000_000

async function measureSend(target: Target, options: MeasureOptions): Promise<Measured> {
  return withSeed('room-send', target, async ({ member, roomIds }, db) => {
    // The member's own client: every message it sends comes back to it as `message:new` through the gateway.
    const socket = io(target.baseUrl, { auth: { token: member.token }, reconnection: false, forceNew: true })
    let received = 0
    socket.on('message:new', () => received++)
    try {
      await new Promise<void>((resolve, reject) =>
        socket.once('connect', () => resolve()).once('connect_error', reject),
      )
      const sends = options.requests ?? DEFAULT_SENDS
      const message = (n: number): EachRequest => ({
        path: `${ROOMS_PATH}/${roomIds[n % roomIds.length]}/messages`,
        headers: { authorization: `Bearer ${member.token}` },
        body: JSON.stringify({ content: `bench message ${n} about the launch plan` }),
      })
      const messages = (count: number, offset: number) =>
        Array.from({ length: count }, (_, i) => message(offset + i))
      const url = new URL(ROOMS_PATH, target.baseUrl).toString()
      const recordedFrom = WARMUP + sends
      const { warm, compared, plan, lines } = await run(
        target,
        options,
        url,
        messages,
        (replays) => ({
          recorded: { send: [0, 1, 2].map((i) => message(recordedFrom + i)) },
          inputs: requestInputs,
          replays: messages(replays, REPLAY_OFFSET).map((request) => ({ kind: 'send', request })),
        }),
        sends,
      )
      const sent = compared.route
      const answeredByServer = WARMUP + sends + (plan?.recorded.requests ?? 0)
      // The replays store and sequence their messages as the route does, but raise no event.
      const expected = answeredByServer + (plan ? WARMUP + sends : 0)
      const deadline = Date.now() + EVENTS_TIMEOUT_MS
      while (received < answeredByServer && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      const { rows } = await db.query<{ messages: string; sequenced: string }>(
        `select (select count(*) from room_messages) as messages, (select sum(last_seq) from rooms) as sequenced`,
      )
      const stored = Number(rows[0]?.messages) - ROOMS * MESSAGES_PER_ROOM
      const sequenced = Number(rows[0]?.sequenced) - ROOMS * MESSAGES_PER_ROOM
      const failed =
        bad(warm, 201, WARMUP) ||
        bad(sent, 201, sends) ||
        sqlFailed(compared) ||
        stored !== expected ||
        sequenced !== expected ||
        received !== answeredByServer
      const rate = sends / sent.seconds
      return {
        passed: !failed && rate >= MESSAGE_SEND_TARGET,
        failed,
        lines: [
          `${WARMUP} messages untimed, then ${sends} timed, round the ${ROOMS} rooms, on ${options.connections} connections`,
          '',
          `${phaseLine('send (answered 201: stored, sequenced, events raised)', sent, 201, 'messages')}   target >= ${MESSAGE_SEND_TARGET}/s`,
          ...sqlLines(compared, plan),
          '',
          `messages stored ${stored} of ${expected}; room sequences advanced ${sequenced}; ` +
            `message:new received by the member's socket ${received} of ${answeredByServer}` +
            (plan ? ' (the replays of the SQL stored and sequenced theirs, without events)' : ''),
          ...lines,
        ],
      }
    } finally {
      socket.disconnect()
    }
  })
}

const SEARCH_P99_TARGET_MS = 100
const DEFAULT_SEARCHES = 5_000

async function measureSearch(target: Target, options: MeasureOptions): Promise<Measured> {
  return withSeed('room-search', target, async ({ member, words }) => {
    // Four in five searches one word (about 320 hits each to count and rank), one in five two words.
    const searcher = (seed: number) => {
      const next = random(seed)
      const pick = () => words[Math.floor(next() * words.length)] as string
      return (count: number, offset: number): EachRequest[] =>
        Array.from({ length: count }, (_, i) => ({
          method: 'GET',
          path: `${ROOMS_PATH}/search?${new URLSearchParams({ q: (offset + i) % 5 === 4 ? `${pick()} ${pick()}` : pick() })}`,
          headers: { authorization: `Bearer ${member.token}` },
          body: '',
        }))
    }
    const count = options.requests ?? DEFAULT_SEARCHES
    const url = new URL(ROOMS_PATH, target.baseUrl).toString()
    // Three one-word searches, of a sequence of their own.
    const recorded = searcher(8)(3, 0)
    const { warm, compared, plan, lines } = await run(
      target,
      options,
      url,
      searcher(7),
      (replays) => ({
        recorded: { search: recorded },
        inputs: requestInputs,
        replays: searcher(9)(replays, 0).map((request) => ({ kind: 'search', request })),
      }),
      count,
    )
    const sent = compared.route
    const totals = (
      await Promise.all(
        searcher(7)(20, WARMUP).map(async (request) => {
          const response = await fetch(new URL(request.path ?? '', url), { headers: request.headers })
          return ((await response.json()) as { pagination?: { total: number } }).pagination?.total ?? 0
        }),
      )
    ).filter((total) => total > 0)
    const failed =
      bad(warm, 200, WARMUP) || bad(sent, 200, count) || sqlFailed(compared) || totals.length === 0
    const meanHits = totals.reduce((sum, n) => sum + n, 0) / Math.max(1, totals.length)
    return {
      passed: !failed && sent.p99Ms < SEARCH_P99_TARGET_MS,
      failed,
      lines: [
        `${WARMUP} searches untimed, then ${count} timed, on ${options.connections} connections`,
        '',
        `${phaseLine('search (first page of 20, ranked, with the total)', sent, 200)}   target p99 < ${SEARCH_P99_TARGET_MS} ms`,
        ...sqlLines(compared, plan),
        '',
        `hits per search: ${meanHits.toFixed(0)} on average (20 of the timed searches, again)`,
        ...lines,
      ],
    }
  })
}

const LIST_P99_TARGET_MS = 50
const DEFAULT_LISTS = 10_000

async function measureList(target: Target, options: MeasureOptions): Promise<Measured> {
  return withSeed('room-list', target, async ({ member }) => {
    const url = new URL(ROOMS_PATH, target.baseUrl).toString()
    const list: EachRequest = {
      method: 'GET',
      headers: { authorization: `Bearer ${member.token}` },
      body: '',
    }
    const lists = (count: number): EachRequest[] => Array.from({ length: count }, () => list)
    const probe = await fetch(url, { headers: list.headers })
    if (probe.status !== 200)
      return {
        passed: false,
        failed: true,
        lines: [`GET ${ROOMS_PATH} answered ${probe.status}: ${(await probe.text()).slice(0, 200)}`],
      }
    const first = (await probe.json()) as { rooms: unknown[]; pagination: { total: number } }
    const count = options.requests ?? DEFAULT_LISTS
    const { warm, compared, plan, lines } = await run(
      target,
      options,
      url,
      lists,
      (replays) => ({
        recorded: { list: [list, list, list] },
        inputs: requestInputs,
        replays: lists(replays).map((request) => ({ kind: 'list', request })),
      }),
      count,
    )
    const sent = compared.route
    const failed =
      bad(warm, 200, WARMUP) ||
      bad(sent, 200, count) ||
      sqlFailed(compared) ||
      first.pagination.total !== ROOMS ||
      first.rooms.length !== 20
    return {
      passed: !failed && sent.p99Ms < LIST_P99_TARGET_MS && meetsSqlTarget(compared, SQL_TARGET),
      failed,
      lines: [
        `${WARMUP} lists untimed, then ${count} timed, on ${options.connections} connections`,
        '',
        `${phaseLine('room list (first page of 20, members, last message, unread counts)', sent, 200)}   target p99 < ${LIST_P99_TARGET_MS} ms`,
        ...sqlLines(compared, plan, SQL_TARGET),
        '',
        `rooms on the first page ${first.rooms.length}, total ${first.pagination.total} of ${ROOMS}`,
        ...lines,
      ],
    }
  })
}

/** Messages posted round 1,000 rooms, each answered once stored and once its event reached the gateway. */
export const roomSend: MeasuredScenario = {
  description: `POST ${ROOMS_PATH}/:roomId/messages by one member of ${ROOMS} rooms holding 200,000 messages`,
  requiresPostgres: true,
  serverEnv,
  replaysSql: true,
  measure: measureSend,
}

/** Full-text search over the member's 200,000 messages. */
export const roomSearch: MeasuredScenario = {
  description: `GET ${ROOMS_PATH}/search?q=… by one member of ${ROOMS} rooms holding 200,000 messages`,
  requiresPostgres: true,
  serverEnv,
  replaysSql: true,
  measure: measureSearch,
}

/** The member's room list (the rooms feature's `GET /`), first page. */
export const roomList: MeasuredScenario = {
  description: `GET ${ROOMS_PATH} by one member of ${ROOMS} rooms holding 200,000 messages`,
  requiresPostgres: true,
  serverEnv,
  replaysSql: true,
  measure: measureList,
}
