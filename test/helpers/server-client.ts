import type { FastifyInstance } from 'fastify'

/** What a call to a running server answered, in the shape of `app.inject`'s response. */
export interface ServerResponse {
  statusCode: number
  headers: Record<string, string>
  body: string
  // biome-ignore lint/suspicious/noExplicitAny: as light-my-request types `inject`'s, which the helpers read
  json(): any
}

export interface ServerCall {
  method?: string
  url: string
  headers?: Record<string, string>
  payload?: object
}

/**
 * `inject` over real HTTP to a server in another process, so that the helpers written for `app.inject`
 * (createTenant, createGroup...) drive it too. A call that gets no answer rejects (a reset connection).
 */
export function serverClient(baseUrl: string, timeoutMs = 10_000) {
  const inject = async ({
    method = 'GET',
    url,
    headers = {},
    payload,
  }: ServerCall): Promise<ServerResponse> => {
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { ...headers, ...(payload && { 'content-type': 'application/json' }) },
      body: payload && JSON.stringify(payload),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const body = await response.text()
    return {
      statusCode: response.status,
      headers: Object.fromEntries(response.headers),
      body,
      json: () => JSON.parse(body),
    }
  }
  return { inject, asApp: { inject } as unknown as FastifyInstance }
}
