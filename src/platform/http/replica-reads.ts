import type {
  FastifyInstance,
  FastifyRequest,
  onSendAsyncHookHandler,
  onSendHookHandler,
  RouteHandlerMethod,
} from 'fastify'
import type { ReplicaSet } from '../db/replicas.js'
import { PAST_EVERY_POSITION } from '../db/wal-positions.js'
import { OPERATOR_SESSION, type WritePositions } from '../db/write-positions.js'

/**
 * Which requests read on replicas (DATABASE_REPLICA_URLS; docs/decisions.md, "Reads on replicas"): every
 * GET authenticated as an account (its lists, reads, searches, statistics, exports) or as the operator (the
 * admin API's pages), on a replica that holds the session's last write and the operator's. Every other
 * request reads and writes on the primary, and one that authenticated records its write's position when
 * it answers, after its transaction committed and before the client can ask again. Public GETs (edge
 * pages, redirects, webhooks' challenges) stay on the primary: nothing tells whose writes they must see.
 */

export interface ReplicaReads {
  /** Routes registered after this call read on replicas, or record their writes, as above. */
  register(app: FastifyInstance): void
  /** Runs read-only work of the session (the Socket.IO handshake's lookups) on a replica that holds its writes. */
  readAs<T>(session: string, work: () => Promise<T>): Promise<T>
}

const READ_METHODS = new Set(['GET', 'HEAD'])
const ADMIN_PREFIX = '/v1/admin/'

type SessionOf = (request: FastifyRequest) => string | undefined

const accountSession: SessionOf = (request) => request.auth?.account_id
const operatorSession: SessionOf = () => OPERATOR_SESSION

export function createReplicaReads(replicas: ReplicaSet, positions: WritePositions): ReplicaReads {
  const readAs = async <T>(session: string, work: () => Promise<T>): Promise<T> =>
    replicas.readOn(replicas.choose(await positions.of(session)), work)

  const recordWriteOf =
    (sessionOf: SessionOf): onSendAsyncHookHandler =>
    async (request, _reply, payload) => {
      const session = sessionOf(request)
      if (session === undefined) return payload
      // Unknown, the position is past every one: the session reads on the primary until it is forgotten.
      const position = await replicas.writePosition().catch(() => PAST_EVERY_POSITION)
      await positions.raise(session, position)
      return payload
    }

  return {
    readAs,
    register(app) {
      app.addHook('onRoute', (route) => {
        const methods = [route.method].flat()
        if (methods.includes('OPTIONS')) return
        const sessionOf = route.url.startsWith(ADMIN_PREFIX) ? operatorSession : accountSession
        if (!methods.every((method) => READ_METHODS.has(method))) {
          const onSend = [route.onSend ?? []].flat() as onSendHookHandler[]
          route.onSend = [...onSend, recordWriteOf(sessionOf) as onSendHookHandler]
          return
        }
        const handler = route.handler as RouteHandlerMethod
        route.handler = function replicaReadHandler(this: FastifyInstance, request, reply) {
          const session = sessionOf(request)
          if (session === undefined) return handler.call(this, request, reply)
          return readAs(session, async () => handler.call(this, request, reply))
        }
      })
    },
  }
}
