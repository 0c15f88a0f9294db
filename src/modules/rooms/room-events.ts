import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Events } from '../../platform/events/emit.js'

/**
 * The room events of the spec (`room:created`, `room:updated` with `update_type`, `room:member_added`,
 * `room:member_removed`, `room:deleted`) and the messages' (`message:new`, `message:updated`,
 * `message:deleted`), each for the chat identities that may receive it: the room's members (a removed
 * member still gets its own `room:member_removed`).
 */
export interface RoomEvent {
  event: string
  data: unknown
  recipients: readonly string[]
}

/** Where events reach connected clients: the built-in Socket.IO gateway (one socket room per identity). */
export interface RoomEventSink {
  toIdentities(conversationIds: readonly string[], event: string, data: unknown): void
}

/**
 * A write's events: `stage` them while its transaction runs (the emit to the conversation socket service
 * is queued in that transaction, so it leaves only if the write commits), then `deliverAfterCommit`
 * hands them to the gateway once the transaction has committed, never before.
 */
export class RoomEvents {
  readonly #staged: RoomEvent[] = []

  constructor(
    private readonly events: Events,
    private readonly accountId: string,
  ) {}

  async stage(tx: Database, roomEvent: RoomEvent): Promise<void> {
    this.#staged.push(roomEvent)
    await this.events.emit(tx, this.accountId, roomEvent.event, roomEvent.data)
  }

  deliverAfterCommit(sink: RoomEventSink): void {
    for (const { event, data, recipients } of this.#staged) sink.toIdentities(recipients, event, data)
    this.#staged.length = 0
  }
}

/** What a room write needs to publish its events: the platform's emit, and the gateway. */
export interface RoomEventDeps {
  db: Database
  events: Events
  sink: RoomEventSink
}

/**
 * Runs a room write in one transaction, its events staged as it goes and delivered to the gateway once
 * it has committed (none when it rolls back).
 */
export async function inRoomTransaction<T>(
  deps: RoomEventDeps,
  accountId: string,
  work: (tx: Database, events: RoomEvents) => Promise<T>,
): Promise<T> {
  const events = new RoomEvents(deps.events, accountId)
  const result = await inTransaction(deps.db, (tx) => work(tx, events))
  events.deliverAfterCommit(deps.sink)
  return result
}

/**
 * A room write of one statement (sending a message): in a transaction only when its events are queued in
 * one (a conversation socket service is configured); otherwise the statement is its own transaction, one
 * round trip instead of three (BEGIN and COMMIT). Its events are delivered to the gateway once it has
 * committed, either way.
 */
export async function inRoomStatement<T>(
  deps: RoomEventDeps,
  accountId: string,
  work: (db: Database, events: RoomEvents) => Promise<T>,
): Promise<T> {
  if (deps.events.queuesInTransaction) return inRoomTransaction(deps, accountId, work)
  const events = new RoomEvents(deps.events, accountId)
  const result = await work(deps.db, events)
  events.deliverAfterCommit(deps.sink)
  return result
}
