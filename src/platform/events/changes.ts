import type { Database } from '../db/connection.js'

/** A change to an account's records that other modules may act on, e.g. `contact.created`. */
export interface RecordChange {
  account_id: string
  event: string
  data: object
  occurred_at: Date
}

/**
 * Runs in the announcer's transaction with its executor. Listeners only write or queue jobs (never call
 * out), so what they do commits or rolls back with the change itself.
 */
export type ChangeListener = (tx: Database, change: RecordChange) => Promise<void>

/** How one module tells the others what changed without knowing who listens. */
export interface Changes {
  announce(tx: Database, accountId: string, event: string, data: object): Promise<void>
  listen(listener: ChangeListener): void
}

export function createChanges(): Changes {
  const listeners: ChangeListener[] = []
  return {
    async announce(tx, accountId, event, data) {
      const change = { account_id: accountId, event, data, occurred_at: new Date() }
      for (const listener of listeners) await listener(tx, change)
    },
    listen(listener) {
      listeners.push(listener)
    },
  }
}
