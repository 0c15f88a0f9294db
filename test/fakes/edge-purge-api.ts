import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { type FakeServer, type RecordedRequest, sendJson, startFakeServer } from './http-server.js'

/** The path of Cloudflare's purge endpoint for the fake's one zone. */
export const FAKE_PURGE_PATH = '/client/v4/zones/fake-zone/purge_cache'

export interface FakeEdgePurgeApi extends FakeServer {
  /** The `tags` or `files` of each accepted purge request, in order. */
  purges: { tags?: string[]; files?: string[] }[]
  /** The next `count` requests are answered `status` (a 5xx as an API that is restarting). */
  failNext(status: number, count?: number): void
}

// Codes are the fake's own; the envelope is Cloudflare's (`success`, `errors`, `messages`, `result`).
const refusal = (code: number, message: string) => ({
  success: false,
  errors: [{ code, message }],
  messages: [],
  result: null,
})

/** At most this many URLs or tags in one request, as Cloudflare allows on every plan but Enterprise. */
const MAX_OPERATIONS = 100

/**
 * Cloudflare's `POST /client/v4/zones/:zone/purge_cache` on 127.0.0.1: a bearer API token, a JSON body
 * of exactly one of `files` or `tags` (1 to 100 strings), refused otherwise as the real API does.
 */
export async function startFakeEdgePurgeApi(options: { apiToken: string }): Promise<FakeEdgePurgeApi> {
  const purges: FakeEdgePurgeApi['purges'] = []
  let failing = { status: 0, count: 0 }

  const respond = (request: RecordedRequest, response: ServerResponse) => {
    if (failing.count > 0) {
      failing.count--
      return sendJson(response, failing.status, refusal(10000, 'Temporary failure'))
    }
    if (request.headers.authorization !== `Bearer ${options.apiToken}`) {
      return sendJson(response, 401, refusal(10000, 'Authentication error'))
    }
    if (request.method !== 'POST' || request.url !== FAKE_PURGE_PATH) {
      return sendJson(response, 404, refusal(7003, 'Could not route to the requested resource'))
    }
    let body: Record<string, unknown>
    try {
      body = JSON.parse(request.body)
    } catch {
      return sendJson(
        response,
        400,
        refusal(1012, 'Request must contain one of "purge_everything", "files", "tags"'),
      )
    }
    const kinds = (['files', 'tags'] as const).filter((kind) => kind in body)
    const [kind] = kinds
    const items = kind ? body[kind] : undefined
    if (
      kinds.length !== 1 ||
      !kind ||
      !Array.isArray(items) ||
      items.length === 0 ||
      !items.every((item) => typeof item === 'string')
    ) {
      return sendJson(
        response,
        400,
        refusal(1012, 'Request must contain one of "purge_everything", "files", "tags"'),
      )
    }
    if (items.length > MAX_OPERATIONS) {
      return sendJson(
        response,
        400,
        refusal(1019, `Only ${MAX_OPERATIONS} ${kind} may be purged in one request`),
      )
    }
    purges.push({ [kind]: items })
    return sendJson(response, 200, { success: true, errors: [], messages: [], result: { id: randomUUID() } })
  }

  const server = await startFakeServer((request, response) => respond(request, response))
  return {
    ...server,
    purges,
    failNext(status, count = 1) {
      failing = { status, count }
    },
  }
}
