/**
 * The worker's side of the origin protocol: the signed request, what the origin answers, the page made
 * of it. The signature and the tags come from the origin's own module, bundled into the worker (wrangler
 * or esbuild), so both sides use one definition; only the HMAC primitive differs (Web Crypto here).
 */
import { EDGE_STEP_PATH, edgeSigningText } from '../src/modules/funnels/edge-protocol.js'

/** Where the worker takes purges: the origin's EDGE_PURGE_URL is this path on the worker's host. */
export const PURGE_PATH = '/__edge/purge'

/** The methods of Cloudflare's KVNamespace the worker uses. */
export interface PagesStore {
  get(key: string, type: 'json'): Promise<unknown>
  put(key: string, value: string): Promise<void>
  delete(key: string): Promise<void>
  list(options: {
    prefix: string
    cursor?: string
  }): Promise<{ keys: { name: string }[]; list_complete: boolean; cursor?: string }>
}

export interface Env {
  /** The origin's base URL, e.g. `https://api.example.com`. */
  ORIGIN_URL: string
  /** The origin's EDGE_SIGNING_SECRET. */
  EDGE_SIGNING_SECRET: string
  /** The origin's EDGE_API_TOKEN: what a purge request must carry. */
  PURGE_TOKEN: string
  PAGES: PagesStore
  /** How long a kept copy is served without asking the origin; 60 by default. */
  FRESH_SECONDS?: string
}

/** What the origin answers for a step (its `data`). */
export interface EdgeStep {
  step_id: string
  funnel_id: string
  html: string
  seo: Partial<Record<'title' | 'description' | 'keywords' | 'image' | 'robots' | 'canonical', string>>
  tracking_code: { header?: string; footer?: string }
  css: string
}

const encoder = new TextEncoder()

/** Lowercase hex HMAC-SHA256 (Web Crypto: the worker has no node:crypto). */
export async function hmacHex(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(text)))
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** The signed origin URL of the page at `hostname` + `pathname`. */
export async function signedStepUrl(env: Env, hostname: string, pathname: string, nowSeconds: number) {
  const params = { hostname, pathname }
  const url = new URL(`${env.ORIGIN_URL.replace(/\/+$/, '')}${EDGE_STEP_PATH}`)
  const sig = await hmacHex(env.EDGE_SIGNING_SECRET, edgeSigningText('GET', url.pathname, nowSeconds, params))
  url.search = new URLSearchParams({ ...params, _ts: String(nowSeconds), _sig: sig }).toString()
  return url
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}
const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char)

/** The page: the step's HTML in a document carrying its SEO fields, CSS and tracking codes. */
export function renderPage(step: EdgeStep): string {
  const { seo, tracking_code: tracking } = step
  const meta = (name: string, value: string | undefined) =>
    value ? `<meta name="${name}" content="${escapeHtml(value)}">` : ''
  const head = [
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    seo.title ? `<title>${escapeHtml(seo.title)}</title>` : '',
    meta('description', seo.description),
    meta('keywords', seo.keywords),
    meta('robots', seo.robots),
    seo.image ? `<meta property="og:image" content="${escapeHtml(seo.image)}">` : '',
    seo.canonical ? `<link rel="canonical" href="${escapeHtml(seo.canonical)}">` : '',
    step.css ? `<style>${step.css}</style>` : '',
    tracking.header ?? '',
  ].join('')
  return `<!doctype html><html><head>${head}</head><body>${step.html}${tracking.footer ?? ''}</body></html>`
}
