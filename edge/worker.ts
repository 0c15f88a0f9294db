/**
 * The edge worker (Cloudflare Workers, module syntax): serves a published funnel page for its hostname and
 * path. A copy younger than FRESH_SECONDS is served from the PAGES KV namespace; otherwise the page is read
 * from the origin with a signed `GET /v1/funnels/cloudflare/step`, rendered, kept, and served. When the
 * origin fails (5xx, a refusal, no answer) the last good copy is served, however old; an origin 404 drops
 * the copy. `POST /__edge/purge` takes Cloudflare's purge body by tags (`{ tags: [...] }`, at most 100)
 * with `Authorization: Bearer PURGE_TOKEN`: the origin's EDGE_PURGE_URL points here. See edge/README.md.
 *
 * The entry module exports its handler only (workerd refuses other exports); the rest is in origin.ts.
 */
import { funnelTag, stepTag } from '../src/modules/funnels/edge-protocol.js'
import { type EdgeStep, type Env, PURGE_PATH, renderPage, signedStepUrl } from './origin.js'

interface KeptPage {
  page: string
  storedAt: number
  tags: string[]
}

const DEFAULT_FRESH_SECONDS = 60
const MAX_PURGE_TAGS = 100
const ORIGIN_TIMEOUT_MS = 10_000

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url)
    if (request.method === 'POST' && url.pathname === PURGE_PATH) return purge(request, env)
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response('Method Not Allowed', { status: 405, headers: { allow: 'GET, HEAD' } })
    }
    return servePage(url, env)
  },
}

/** Pages are kept by host and path as asked; the origin's tags let a purge find every spelling. */
const pageKey = (url: URL) => `page:${url.hostname.toLowerCase()}${url.pathname}`
const tagKey = (tag: string, key: string) => `tag:${tag}:${key}`

async function servePage(url: URL, env: Env): Promise<Response> {
  const key = pageKey(url)
  const kept = (await env.PAGES.get(key, 'json')) as KeptPage | null
  const freshMs = Number(env.FRESH_SECONDS ?? DEFAULT_FRESH_SECONDS) * 1000
  if (kept && Date.now() - kept.storedAt < freshMs) return pageResponse(kept.page, 'HIT')
  let origin: Response
  try {
    const signed = await signedStepUrl(env, url.hostname, url.pathname, Math.floor(Date.now() / 1000))
    origin = await fetch(signed, { signal: AbortSignal.timeout(ORIGIN_TIMEOUT_MS) })
  } catch {
    return kept ? pageResponse(kept.page, 'STALE') : text(502, 'Bad Gateway')
  }
  if (origin.status === 404) {
    if (kept) await forget(env, key, kept)
    return text(404, 'Not Found')
  }
  if (!origin.ok) return kept ? pageResponse(kept.page, 'STALE') : text(502, 'Bad Gateway')
  const { data } = (await origin.json()) as { data: EdgeStep }
  const page: KeptPage = {
    page: renderPage(data),
    storedAt: Date.now(),
    tags: [funnelTag(data.funnel_id), stepTag(data.step_id)],
  }
  await Promise.all([
    env.PAGES.put(key, JSON.stringify(page)),
    ...page.tags.map((tag) => env.PAGES.put(tagKey(tag, key), '')),
  ])
  return pageResponse(page.page, 'MISS')
}

async function forget(env: Env, key: string, kept: KeptPage): Promise<void> {
  await Promise.all([env.PAGES.delete(key), ...kept.tags.map((tag) => env.PAGES.delete(tagKey(tag, key)))])
}

/** Cloudflare's purge by tags: every kept page filed under one of `tags` is dropped. */
async function purge(request: Request, env: Env): Promise<Response> {
  if (
    !env.PURGE_TOKEN ||
    !sameText(request.headers.get('authorization') ?? '', `Bearer ${env.PURGE_TOKEN}`)
  ) {
    return refusal(401, 10000, 'Authentication error')
  }
  const body = (await request.json().catch(() => null)) as { tags?: unknown } | null
  const tags = body?.tags
  if (!Array.isArray(tags) || tags.length === 0 || !tags.every((tag) => typeof tag === 'string')) {
    return refusal(400, 1012, 'Request must contain "tags"')
  }
  if (tags.length > MAX_PURGE_TAGS) return refusal(400, 1019, `At most ${MAX_PURGE_TAGS} tags in one request`)
  for (const tag of tags as string[]) {
    const prefix = `tag:${tag}:`
    let cursor: string | undefined
    do {
      const listed = await env.PAGES.list({ prefix, cursor })
      for (const { name } of listed.keys) {
        const key = name.slice(prefix.length)
        const kept = (await env.PAGES.get(key, 'json')) as KeptPage | null
        await (kept ? forget(env, key, kept) : env.PAGES.delete(name))
      }
      cursor = listed.list_complete ? undefined : listed.cursor
    } while (cursor)
  }
  return Response.json({ success: true, errors: [], messages: [], result: { id: crypto.randomUUID() } })
}

function pageResponse(page: string, cache: 'HIT' | 'MISS' | 'STALE'): Response {
  return new Response(page, {
    headers: { 'content-type': 'text/html; charset=utf-8', 'x-edge-cache': cache },
  })
}

const text = (status: number, body: string) =>
  new Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } })

const refusal = (status: number, code: number, message: string) =>
  Response.json({ success: false, errors: [{ code, message }], messages: [], result: null }, { status })

/** Compares a secret without stopping at the first difference. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let at = 0; at < a.length; at++) difference |= a.charCodeAt(at) ^ b.charCodeAt(at)
  return difference === 0
}
