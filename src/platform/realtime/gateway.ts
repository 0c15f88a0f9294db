import type { Server as HttpServer } from 'node:http'
import { createAdapter } from '@socket.io/redis-adapter'
import type { Redis } from 'ioredis'
import { type DefaultEventsMap, Server, type Socket } from 'socket.io'
import type { AccountAccess } from '../auth/account-access.js'
import type { AuthContext, PlatformTokens } from '../auth/platform-jwt.js'
import { DomainError, Unauthorized } from '../http/errors.js'
import { unavailabilityOf } from '../http/unavailable.js'
import type { Logger } from '../log/logger.js'
import { closeRedis, duplicateRedis, tolerateUnawaitedCommands } from '../redis.js'

export const REALTIME_PATH = '/socket.io'
/** A client may send at most this many events of one name per socket within the window; the rest are refused. */
export const CLIENT_EVENT_LIMIT = 10
export const CLIENT_EVENT_WINDOW_MS = 5_000

/** A connected client: the context of its platform JWT, which carries a chat identity. */
export type ChatCaller = AuthContext & { conversation: { id: string } }

/** Handles one client event; a DomainError thrown is answered to the client with its message. */
export type ClientEventHandler = (caller: ChatCaller, payload: unknown) => Promise<void> | void

/** What a client's acknowledgement callback receives, when the client asks for one. */
export type ClientEventAnswer = { ok: true } | { ok: false; error: string }

export interface Realtime {
  /**
   * Sends `event` with `data` to every socket of these chat identities, on every instance; a socket gets
   * it once even when its identity is listed twice. Call it after the transaction that caused it commits.
   */
  toIdentities(conversationIds: readonly string[], event: string, data: unknown): void
  /** Calls `handler` for each `event` a client sends, within the per-socket rate limit. One handler per name. */
  onClientEvent(event: string, handler: ClientEventHandler): void
  /**
   * Asks again whether this instance's clients of the account (or of one user in it) may stay, and
   * disconnects those whose account was suspended or who are no longer members.
   */
  recheckAccess(accountId: string, userId: string | undefined): Promise<void>
  /** Disconnects this instance's clients and leaves the Redis channels. */
  close(): Promise<void>
}

export interface RealtimeOptions {
  /** The HTTP server the gateway answers on, at REALTIME_PATH; none for a process that never listens. */
  server: HttpServer | undefined
  tokens: PlatformTokens
  /** Refuses the tokens of suspended accounts and removed members, as the HTTP API does. */
  accountAccess: Pick<AccountAccess, 'refusalFor'>
  /** With Redis, events reach the clients of every instance. */
  redis: Redis | undefined
  /**
   * Runs the handshake's lookups as the account's reads (on a replica that holds its writes and the
   * operator's, when there are replicas); without it, they run as they are.
   */
  readAs?: <T>(accountId: string, work: () => Promise<T>) => Promise<T>
  logger: Logger
}

interface SocketData {
  caller: ChatCaller
  /** When each client event name was last accepted, oldest first, within the rate-limit window. */
  accepted: Map<string, number[]>
  /** When the handshake's token stops being accepted (ms since the epoch): the socket ends then. */
  acceptedUntil: number
}

type GatewaySocket = Socket<DefaultEventsMap, DefaultEventsMap, DefaultEventsMap, SocketData>

const identityRoom = (conversationId: string) => `identity:${conversationId}`
const accountRoom = (accountId: string) => `account:${accountId}`

/** What the client sees as `connect_error`: the message, and `data` (Socket.IO sends an error's `data`). */
const connectError = (message: string, data: { reason: string; retry_after?: number }): Error =>
  Object.assign(new Error(message), { data })

/** The connection refusal the client sees as `connect_error`: message `Unauthorized`, `data.reason`. */
const refusal = (reason: string): Error => connectError('Unauthorized', { reason })

/**
 * The refusal of a handshake whose lookups failed: `Service unavailable` with `data.retry_after` when a
 * dependency did not answer in time (a busy pool, a held lock, PostgreSQL or Redis down), as the HTTP API
 * answers 503, so that the client connects again later; `Internal error` otherwise. Logged either way, and
 * never thrown: a lookup that fails costs the one connection, not the process and its other sockets.
 */
function lookupFailure(error: unknown, logger: Logger): Error {
  const unavailable = unavailabilityOf(error)
  if (!unavailable) {
    logger.error({ err: error }, 'socket handshake failed')
    return connectError('Internal error', { reason: 'internal error' })
  }
  const { dependency, waitedFor, retryAfterSeconds } = unavailable
  logger.warn(
    { err: error, dependency, waitedFor },
    `${dependency} unavailable (${waitedFor}): handshake refused`,
  )
  return connectError('Service unavailable', {
    reason: `the ${dependency} did not answer in time`,
    retry_after: retryAfterSeconds,
  })
}

/** Counts an event against the sliding window `accepted`; false when the limit is reached. */
function withinLimit(accepted: number[], now: number): boolean {
  while (accepted.length > 0 && (accepted[0] as number) <= now - CLIENT_EVENT_WINDOW_MS) accepted.shift()
  if (accepted.length >= CLIENT_EVENT_LIMIT) return false
  accepted.push(now)
  return true
}

/** The longest delay a timer takes (about 24.8 days); a longer one would fire at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

/**
 * Ends a socket when its platform JWT does, as HTTP then answers 401: a socket must not go on receiving
 * what its token no longer allows. The client connects again with a fresh token.
 */
function disconnectAtExpiry(socket: GatewaySocket): void {
  const msLeft = socket.data.acceptedUntil - Date.now()
  if (msLeft > LONGEST_TIMER_MS) return
  const timer = setTimeout(() => socket.disconnect(true), msLeft)
  socket.once('disconnect', () => clearTimeout(timer))
}

/**
 * The built-in Socket.IO gateway: clients connect with their platform JWT in `auth.token` and join their
 * chat identity's room; modules deliver events to identities and handle the events clients send.
 */
export function createRealtimeGateway(options: RealtimeOptions): Realtime {
  const io = new Server<DefaultEventsMap, DefaultEventsMap, DefaultEventsMap, SocketData>({
    path: REALTIME_PATH,
    serveClient: false,
    // Clients authenticate with a token in the handshake, never a cookie, so any origin may connect.
    cors: { origin: '*' },
    // Client events are small (typing); a larger message closes the connection.
    maxHttpBufferSize: 65_536,
  })
  const { redis, logger } = options
  const readAs = options.readAs ?? ((_account, work) => work())
  const redisClients = redis
    ? [
        tolerateUnawaitedCommands(duplicateRedis(redis, logger, 'realtime publisher')),
        tolerateUnawaitedCommands(duplicateRedis(redis, logger, 'realtime subscriber')),
      ]
    : []
  const [pub, sub] = redisClients
  if (pub && sub) io.adapter(createAdapter(pub, sub))
  const handlers = new Map<string, ClientEventHandler>()

  io.use((socket, next) => {
    const token: unknown = socket.handshake.auth.token
    if (typeof token !== 'string' || token === '') return next(refusal('token required'))
    options.tokens
      .verify(token)
      .then(
        async (auth) => {
          if (!auth.conversation) return next(refusal('token lacks conversation.id'))
          const closed = await readAs(auth.account_id, async () => options.accountAccess.refusalFor(auth))
          if (closed)
            return next(
              refusal(closed instanceof Unauthorized ? String(closed.additionalInfo) : closed.message),
            )
          socket.data.caller = auth as ChatCaller
          socket.data.accepted = new Map()
          socket.data.acceptedUntil = options.tokens.acceptedUntil(token) ?? Date.now()
          next()
        },
        (error: unknown) =>
          next(refusal(error instanceof Unauthorized ? String(error.additionalInfo) : 'invalid token')),
      )
      .catch((error: unknown) => next(lookupFailure(error, logger)))
  })

  async function handleClientEvent(socket: GatewaySocket, event: string, args: unknown[]) {
    const ack =
      typeof args.at(-1) === 'function' ? (args.pop() as (answer: ClientEventAnswer) => void) : undefined
    const answer = (result: ClientEventAnswer) => ack?.(result)
    const handler = handlers.get(event)
    if (!handler) return answer({ ok: false, error: `Unknown event ${event}` })
    const accepted = socket.data.accepted.get(event) ?? []
    socket.data.accepted.set(event, accepted)
    if (!withinLimit(accepted, Date.now())) return answer({ ok: false, error: 'Too many events' })
    try {
      await handler(socket.data.caller, args[0])
      answer({ ok: true })
    } catch (error) {
      if (error instanceof DomainError) return answer({ ok: false, error: error.message })
      options.logger.error({ err: error, event }, 'client event handler failed')
      answer({ ok: false, error: 'Internal error' })
    }
  }

  io.on('connection', (socket) => {
    socket.join([
      identityRoom(socket.data.caller.conversation.id),
      accountRoom(socket.data.caller.account_id),
    ])
    socket.onAny((event: string, ...args: unknown[]) => void handleClientEvent(socket, event, args))
    disconnectAtExpiry(socket)
  })

  if (options.server) io.attach(options.server)

  return {
    toIdentities(conversationIds, event, data) {
      // An empty list of rooms would be a broadcast to everyone.
      if (conversationIds.length === 0) return
      io.to(conversationIds.map(identityRoom)).emit(event, data)
    },
    onClientEvent(event, handler) {
      if (handlers.has(event)) throw new Error(`a handler for client event ${event} is already set`)
      handlers.set(event, handler)
    },
    async recheckAccess(accountId, userId) {
      for (const socket of await io.local.in(accountRoom(accountId)).fetchSockets()) {
        const caller = socket.data.caller
        if (userId !== undefined && caller.uid !== userId) continue
        if (await options.accountAccess.refusalFor(caller)) socket.disconnect(true)
      }
    },
    async close() {
      // Also closes the HTTP server, which Fastify closes next anyway.
      await io.close()
      await Promise.all(redisClients.map(closeRedis))
    },
  }
}
