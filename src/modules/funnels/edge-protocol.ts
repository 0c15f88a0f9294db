/**
 * What the origin and the edge worker share: the signature's definition (ARCHITECTURE.md, "edge
 * signature") and the cache tags of a page. The worker bundles this very module (edge/worker.ts), so both
 * sides use one definition; it is pure and imports nothing. Each side computes the HMAC with its own
 * primitive (node:crypto here, Web Crypto in the worker), tested against each other.
 */

/** How far `_ts` (Unix seconds) may lie from the receiver's clock, either way. */
export const EDGE_SIGNATURE_WINDOW_SECONDS = 300

/** The path both sides sign, under the origin's base URL. */
export const EDGE_STEP_PATH = '/v1/funnels/cloudflare/step'

/**
 * The text `_sig` is the lowercase hex HMAC-SHA256 of: `METHOD\nPATH\n_ts\nparams`, where params are the
 * query (GET) or top-level body (POST) fields other than `_sig` and `_ts`, sorted by key (code-unit
 * order), each `key=value` (strings as they are, other values JSON-encoded), joined by `&`.
 */
export function edgeSigningText(
  method: string,
  path: string,
  ts: string | number,
  params: Record<string, unknown>,
): string {
  const fields = Object.keys(params)
    .filter((key) => key !== '_sig' && key !== '_ts' && params[key] !== undefined)
    .sort()
    .map((key) => {
      const value = params[key]
      return `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`
    })
  return `${method.toUpperCase()}\n${path}\n${ts}\n${fields.join('&')}`
}

/** The tags the edge files a cached page under, and the origin purges by: its funnel's and its step's. */
export const funnelTag = (funnelId: string) => `funnel-${funnelId}`
export const stepTag = (stepId: string) => `step-${stepId}`
