import type { FastifyInstance } from 'fastify'
import { signEdgeRequest } from '../../src/modules/funnels/edge-delivery.service.js'
import { EDGE_STEP_PATH } from '../../src/modules/funnels/edge-protocol.js'

export const nowSeconds = () => Math.floor(Date.now() / 1000)

export interface Signing {
  secret: string
  /** `_ts`; now by default. */
  ts?: number
}

/** The query of a signed `GET /v1/funnels/cloudflare/step` with `params`. */
export function signedQuery(params: Record<string, string>, { secret, ts = nowSeconds() }: Signing): string {
  const _sig = signEdgeRequest(secret, 'GET', EDGE_STEP_PATH, ts, params)
  return new URLSearchParams({ ...params, _ts: String(ts), _sig }).toString()
}

/** The body of a signed `POST /v1/funnels/cloudflare/step`. */
export function signedBody(body: Record<string, unknown>, { secret, ts = nowSeconds() }: Signing) {
  return { ...body, _ts: ts, _sig: signEdgeRequest(secret, 'POST', EDGE_STEP_PATH, ts, body) }
}

/** The edge asks the origin for a page. */
export function edgeGet(app: FastifyInstance, params: Record<string, string>, signing?: Partial<Signing>) {
  const secret = signing?.secret ?? app.platform.config.edge.signingSecret
  return app.inject({
    method: 'GET',
    url: `${EDGE_STEP_PATH}?${signedQuery(params, { ...signing, secret })}`,
  })
}

/** The edge syncs a step's HTML back to the origin. */
export function edgePost(app: FastifyInstance, body: Record<string, unknown>, signing?: Partial<Signing>) {
  const secret = signing?.secret ?? app.platform.config.edge.signingSecret
  return app.inject({
    method: 'POST',
    url: EDGE_STEP_PATH,
    payload: signedBody(body, { ...signing, secret }),
  })
}
