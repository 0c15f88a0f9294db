import { io, type Socket } from 'socket.io-client'
import { afterEach } from 'vitest'

export interface RealtimeClient {
  socket: Socket
  /** Every event the server sent this client, in order. */
  received: { event: string; data: unknown }[]
}

/**
 * `connect(url, auth)`: a socket.io-client connection with this handshake `auth`, resolved once
 * connected (rejected with the server's refusal); every client of a test is disconnected after it.
 */
export function realtimeClients() {
  const open: Socket[] = []
  afterEach(() => {
    for (const socket of open.splice(0)) socket.disconnect()
  })
  return async function connect(url: string, auth: Record<string, unknown>): Promise<RealtimeClient> {
    const socket = io(url, { auth, reconnection: false, forceNew: true })
    open.push(socket)
    const received: RealtimeClient['received'] = []
    socket.onAny((event: string, data: unknown) => received.push({ event, data }))
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('connect_error', reject)
    })
    return { socket, received }
  }
}
