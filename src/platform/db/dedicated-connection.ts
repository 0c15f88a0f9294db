import pg from 'pg'
import type { ConnectionSettings } from './waits.js'

/**
 * One connection of its own, outside every pool, made when first needed: what asks PostgreSQL about itself
 * (readiness, a replica's replay position) must not wait behind requests that hold every pooled
 * connection. A connection that fails or is lost is dropped at once, and the next query makes another.
 */
export function dedicatedConnection(connectionString: string, settings: ConnectionSettings) {
  let current: Promise<pg.Client> | undefined
  let closed = false
  const forget = (connection: Promise<pg.Client>) => {
    if (current === connection) current = undefined
    connection.then((client) => client.end()).catch(() => undefined)
  }
  const connect = () => {
    // pg's own read timeout too: a database cut off without a reset would otherwise hold the query forever.
    const client = new pg.Client({ connectionString, ...settings, query_timeout: settings.statement_timeout })
    const connection = client.connect().then(() => client)
    client.on('error', () => forget(connection))
    connection.catch(() => forget(connection))
    return connection
  }
  return {
    async query(text: string): Promise<unknown[]> {
      if (closed) throw new Error('the connection is closed')
      current ??= connect()
      const connection = current
      try {
        return (await (await connection).query(text)).rows
      } catch (error) {
        forget(connection)
        throw error
      }
    },
    async close(): Promise<void> {
      closed = true
      const connection = current
      current = undefined
      await connection?.then((client) => client.end()).catch(() => undefined)
    },
  }
}
