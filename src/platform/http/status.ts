import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { REPLICA_STATES, type ReplicaStatus } from '../db/replicas.js'
import { errorBody } from './envelope.js'
import { routeOptions } from './route-options.js'

/** What `/status/ready` asks before saying the instance may take traffic. */
export interface Readiness {
  /** Set on SIGTERM: readiness answers 503 from then on, so that a load balancer stops sending. */
  shuttingDown: boolean
  /** Each dependency by the name a 503 gives it: throws when it does not answer. */
  checks: { database: Check; jobs: Check; redis?: Check }
  /**
   * The database's replicas (DATABASE_REPLICA_URLS), shown and never failing readiness: without them, reads
   * go to the primary.
   */
  replicas?: () => ReplicaStatus[]
}

type Check = () => Promise<void>

/** A dependency slower than this to answer counts as down: a load balancer's probe does not wait long. */
const CHECK_TIMEOUT_MS = 2000

function withinTimeout(check: Check): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)
  })
  return Promise.race([check(), timeout]).finally(() => clearTimeout(timer))
}

const Ok = Type.Literal('ok')

/** Retry-After of a readiness 503: an instance that stops or waits for a dependency is back in seconds, if at all. */
const READINESS_RETRY_AFTER_SECONDS = 5

/** Liveness (`/status`, as the spec) and readiness (`/status/ready`: its dependencies answer). */
export const statusRoutes: FastifyPluginAsyncTypebox<{ readiness: Readiness }> = async (
  app,
  { readiness },
) => {
  app.get(
    '/status',
    routeOptions({
      operationId: 'statusLive',
      summary: 'Liveness',
      description:
        'Answers `{ "status": "ok" }` while the process serves requests, without asking its dependencies: ' +
        'for a process supervisor or a liveness probe. No credentials.',
      example: { response: { status: 'ok' } },
      tags: ['status'],
      access: 'public',
      response: { 200: Type.Object({ status: Ok }) },
      // 400: the platform refuses a NUL character in any path, query or body, on every route.
      errors: [400],
    }),
    async () => ({ status: 'ok' as const }),
  )

  app.get(
    '/status/ready',
    routeOptions({
      operationId: 'statusReady',
      summary:
        'Readiness: the database, the job queue and Redis (when configured) answer; 503 naming what failed',
      description:
        "Whether this instance should receive traffic: each dependency answered (and each replica's state, " +
        "with DATABASE_REPLICA_URLS). A load balancer's or a readiness probe's target; after SIGTERM it " +
        'answers 503 for SHUTDOWN_DELAY_MS while the instance still serves. No credentials.',
      example: { response: { status: 'ok', database: 'ok', jobs: 'ok' } },
      tags: ['status'],
      access: 'public',
      response: {
        200: Type.Object({
          status: Ok,
          database: Ok,
          jobs: Ok,
          redis: Type.Optional(Ok),
          replicas: Type.Optional(
            Type.Array(
              Type.Object({
                name: Type.String({ description: 'host:port/database' }),
                state: Type.Union(
                  REPLICA_STATES.map((state) => Type.Literal(state)),
                  {
                    description: 'Only a replica `in rotation` serves reads',
                  },
                ),
                lag_ms: Type.Union([Type.Integer(), Type.Null()], {
                  description:
                    'How far behind the primary it was at its last check; null when it did not answer',
                }),
              }),
              { description: 'The database replicas serving reads, when DATABASE_REPLICA_URLS is set' },
            ),
          ),
        }),
      },
      errors: [400, 503],
    }),
    async (request, reply) => {
      // A load balancer or a client polling readiness is told when to ask again, as any other 503 does.
      const notReady = (message: string, additionalInfo?: unknown) =>
        reply
          .status(503)
          .header('retry-after', String(READINESS_RETRY_AFTER_SECONDS))
          .send(errorBody(503, message, additionalInfo))
      if (readiness.shuttingDown) return notReady('Shutting down')
      const checks = Object.entries(readiness.checks)
      const failed: string[] = []
      await Promise.all(
        checks.map(([name, check]) =>
          withinTimeout(check).catch((error: unknown) => {
            failed.push(name)
            request.log.error({ err: error, check: name }, 'readiness check failed')
          }),
        ),
      )
      if (failed.length === 0) {
        const ok = 'ok' as const
        return {
          status: ok,
          database: ok,
          jobs: ok,
          ...(readiness.checks.redis && { redis: ok }),
          ...(readiness.replicas && {
            replicas: readiness
              .replicas()
              .map(({ name, state, lagMs }) => ({ name, state, lag_ms: lagMs ?? null })),
          }),
        }
      }
      return notReady(`Not ready: ${failed.sort().join(', ')} unavailable`, { unavailable: failed })
    },
  )
}
