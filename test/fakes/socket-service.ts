import { type FakeServer, sendJson, startFakeServer } from './http-server.js'

export interface FakeSocketService extends FakeServer {
  /** The next `count` emits are answered 500, as a socket service that is restarting. */
  failNext(count: number): void
  /** The events received so far (each attempt, retries included), with the account of their header. */
  emitted(): { account_id: string; event: string; data: unknown }[]
}

/** The conversation socket service: accepts `POST /emit` with `{ event, data }` and a bearer token. */
export async function startFakeSocketService(): Promise<FakeSocketService> {
  let failures = 0
  const server = await startFakeServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/emit')
      return sendJson(response, 404, { error: 'not found' })
    if (!request.headers.authorization?.startsWith('Bearer '))
      return sendJson(response, 401, { error: 'no token' })
    if (!request.headers['x-account-id']) return sendJson(response, 400, { error: 'x-account-id required' })
    const body = JSON.parse(request.body) as { event?: unknown }
    if (typeof body.event !== 'string') return sendJson(response, 400, { error: 'event required' })
    if (failures > 0) {
      failures--
      return sendJson(response, 500, { error: 'restarting' })
    }
    sendJson(response, 200, { ok: true })
  })
  return {
    ...server,
    failNext: (count) => {
      failures = count
    },
    emitted: () =>
      server.requests
        .filter((request) => request.url === '/emit')
        .map((request) => ({
          account_id: String(request.headers['x-account-id']),
          ...(JSON.parse(request.body) as { event: string; data: unknown }),
        })),
  }
}
