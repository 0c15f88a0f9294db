import type { Database } from '../db/connection.js'
import type { JobQueue } from '../jobs/queue.js'
import type { Logger } from '../log/logger.js'
import { providerRequest } from '../providers/http-client.js'

export const EMIT_JOB = 'platform.emit'

export interface EmittedEvent {
  account_id: string
  event: string
  data: unknown
}

/**
 * Events for the conversation socket service (`CONVERSATION_SOCKET_URL`). Without one there is no one to
 * emit to: clients of the built-in Socket.IO gateway get their events from the gateway directly, after
 * the write commits (see the rooms module), so no job is queued for nobody.
 */
export interface Events {
  /**
   * True when `emit` queues a job, so in the caller's transaction: a conversation socket service is
   * configured. False when it does nothing, so that a write of one statement need not open a transaction.
   */
  readonly queuesInTransaction: boolean
  /** Queues the event in the caller's transaction; a job delivers it once that commits. */
  emit(executor: Database, accountId: string, event: string, data: unknown): Promise<void>
}

export interface EventsOptions {
  queue: JobQueue
  socketUrl: string | undefined
  serviceToken: (accountId: string) => Promise<string>
  logger: Logger
}

export function createEvents(options: EventsOptions): Events {
  const { socketUrl } = options
  if (!socketUrl) return { queuesInTransaction: false, emit: async () => {} }

  /** `jobId` is the same on every attempt: sent as `Idempotency-Key`, so the service can drop a redelivery. */
  async function deliver(message: EmittedEvent, { id: jobId }: { id: string }): Promise<void> {
    const response = await providerRequest(
      {
        provider: 'socket_service',
        method: 'POST',
        url: `${socketUrl}/emit`,
        headers: {
          authorization: `Bearer ${await options.serviceToken(message.account_id)}`,
          'x-account-id': message.account_id,
          'idempotency-key': jobId,
        },
        body: { event: message.event, data: message.data },
        retries: 0,
        timeoutMs: 5_000,
      },
      options.logger,
    )
    // Thrown so that the job queue retries it with backoff.
    if (response.status >= 300)
      throw new Error(`socket service answered ${response.status} to ${message.event}`)
  }

  options.queue.define({
    name: EMIT_JOB,
    handle: deliver,
    retryLimit: 8,
    retryDelaySeconds: 2,
    retryBackoff: true,
    // Chat messages raise one event each: a burst drains 100 a fetch, each settled on its own.
    batchSize: 100,
  })

  return {
    queuesInTransaction: true,
    async emit(executor, accountId, event, data) {
      await options.queue.enqueue(executor, EMIT_JOB, { account_id: accountId, event, data })
    },
  }
}
