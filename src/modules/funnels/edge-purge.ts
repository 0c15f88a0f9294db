import { UpstreamFailed } from '../../platform/http/errors.js'
import type { Logger } from '../../platform/log/logger.js'
import { ProviderUnreachable, providerRequest } from '../../platform/providers/http-client.js'

/** Cloudflare's most operations (URLs or tags) in one purge request on every plan but Enterprise. */
export const PURGE_BATCH_SIZE = 100
export const EDGE_PURGE_FAILED = 'Edge cache purge failed'

export interface EdgePurgeSettings {
  /** EDGE_PURGE_URL: Cloudflare's `/zones/:zone/purge_cache`, or the edge worker's `/__edge/purge`. */
  purgeUrl: string | undefined
  /** EDGE_API_TOKEN, sent as `Authorization: Bearer`. */
  apiToken: string | undefined
}

/**
 * Purges the edge's copies filed under `tags`, in requests of at most PURGE_BATCH_SIZE tags with
 * Cloudflare's body (`{ tags: [...] }`), one after another (the provider limits purge requests per
 * second). Without EDGE_PURGE_URL there is no edge to purge. A refusal or no answer after the retries:
 * 502 `Edge cache purge failed`.
 */
export async function purgeEdgeTags(settings: EdgePurgeSettings, tags: string[], log: Logger): Promise<void> {
  const { purgeUrl, apiToken } = settings
  if (!purgeUrl) return
  for (let at = 0; at < tags.length; at += PURGE_BATCH_SIZE) {
    let response: Awaited<ReturnType<typeof providerRequest>>
    try {
      response = await providerRequest(
        {
          provider: 'edge',
          method: 'POST',
          url: purgeUrl,
          headers: apiToken ? { authorization: `Bearer ${apiToken}` } : {},
          body: { tags: tags.slice(at, at + PURGE_BATCH_SIZE) },
          retries: 2,
        },
        log,
      )
    } catch (error) {
      if (error instanceof ProviderUnreachable) throw new UpstreamFailed(EDGE_PURGE_FAILED)
      throw error
    }
    // Cloudflare answers `{ success, errors, messages, result }`; a 200 may still say success false.
    const answer = response.body as { success?: unknown } | null
    if (response.status >= 300 || answer?.success === false) {
      throw new UpstreamFailed(EDGE_PURGE_FAILED, { status: response.status })
    }
  }
}

/**
 * `purgeEdgeTags` for a write that has committed (a step saved): the answer does not wait for the edge,
 * and a purge that fails is logged (the edge's copy then lapses after the worker's FRESH_SECONDS).
 */
export function purgeEdgeTagsAfterWrite(settings: EdgePurgeSettings, tags: string[], log: Logger): void {
  purgeEdgeTags(settings, tags, log).catch((error: unknown) => {
    log.warn({ err: error, tags }, 'could not purge the edge after a write')
  })
}
