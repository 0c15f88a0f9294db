/** The one request a scenario repeats on every connection. */
export interface BenchRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Path and query, e.g. `/v1/e/changelog/posts?page=2`. */
  path: string
  headers?: Record<string, string>
  body?: string
}

/** The running server as a scenario sees it while preparing. */
export interface Target {
  baseUrl: string
  adminToken: string
}

export interface Scenario {
  /** One line: what the request exercises. */
  description: string
  /** The least server/baseline ratio of req/s that passes. */
  target: number
  /** Creates what the request needs (accounts, users, tokens) through the admin API. */
  prepare(target: Target): Promise<BenchRequest>
}
