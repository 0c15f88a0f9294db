import { UpstreamFailed } from '../../platform/http/errors.js'
import type { Logger } from '../../platform/log/logger.js'
import {
  type ProviderRequest,
  type ProviderResponse,
  ProviderUnreachable,
  providerRequest,
} from '../../platform/providers/http-client.js'
import { providerTimeoutMs } from '../../platform/providers/provider-circuits.js'
import type { EventWebhookSettings, ParseSettings } from './provider-setup.schemas.js'

export interface SendgridAddress {
  email: string
  name?: string
}

/** The body of `POST /v3/mail/send`, as SendGrid documents it (the fields this service uses). */
export interface SendgridMailBody {
  personalizations: {
    to: SendgridAddress[]
    cc?: SendgridAddress[]
    bcc?: SendgridAddress[]
    subject?: string
    custom_args?: Record<string, string>
    dynamic_template_data?: Record<string, unknown>
  }[]
  from: SendgridAddress
  reply_to?: SendgridAddress
  subject?: string
  content?: { type: string; value: string }[]
  template_id?: string
  attachments?: {
    content: string
    filename: string
    type?: string
    disposition?: 'attachment' | 'inline'
    /** Required by SendGrid when `disposition` is `inline`. */
    content_id?: string
  }[]
  headers?: Record<string, string>
  custom_args?: Record<string, string>
}

export interface SendgridErrorItem {
  message: string
  field?: string | null
  help?: unknown
}

/** A refusal by SendGrid (its status and `errors`), or a failure to reach it (502). */
export class SendgridError extends Error {
  constructor(
    readonly status: number,
    readonly errors: SendgridErrorItem[],
  ) {
    super(`SendGrid ${status}: ${errors.map((error) => error.message).join('; ')}`)
    this.name = 'SendgridError'
  }
}

/**
 * A SendGrid refusal as the 502 callers get, naming the provider's first error; `refused` says what
 * it refused ('the email'). The status and every error stay in `additional_info`.
 */
export function sendgridFailure(error: SendgridError, refused: string): UpstreamFailed {
  const reason = error.errors[0]?.message ?? `status ${error.status}`
  return new UpstreamFailed(`SendGrid refused ${refused}: ${reason}`, {
    status: error.status,
    errors: error.errors,
  })
}

export interface SendgridClient {
  /** Sends with the given key (a subuser's or the parent's); SendGrid answers 202 with X-Message-Id. */
  sendMail(
    apiKey: string,
    body: SendgridMailBody,
  ): Promise<{ messageId: string; headers: Record<string, string> }>
  /**
   * The message sent with this key whose custom arg `name` is `value`, from the Email Activity Feed
   * (`GET /v3/messages`, `query=unique_args['name']="value"`), or null when SendGrid took none.
   */
  findMessage(
    apiKey: string,
    customArg: { name: string; value: string },
  ): Promise<{ messageId: string } | null>
  /** Settings calls use the parent key with On-Behalf-Of: <subuser username>. */
  getEventWebhookSettings(onBehalfOf: string): Promise<EventWebhookSettings>
  updateEventWebhookSettings(
    onBehalfOf: string,
    settings: Partial<EventWebhookSettings>,
  ): Promise<EventWebhookSettings>
  /** null when SendGrid has no settings for the hostname (404). */
  getParseSettings(onBehalfOf: string, hostname: string): Promise<ParseSettings | null>
  createParseSettings(onBehalfOf: string, settings: ParseSettings): Promise<ParseSettings>
  updateParseSettings(onBehalfOf: string, settings: ParseSettings): Promise<ParseSettings>
  /** Every Inbound Parse setting of the subuser (none when SendGrid knows no such subuser: 403 or 404). */
  listParseSettings(onBehalfOf: string): Promise<ParseSettings[]>
  /** Deletes the hostname's Inbound Parse setting; false when SendGrid had none (404). */
  deleteParseSettings(onBehalfOf: string, hostname: string): Promise<boolean>
  /** Deletes the subuser (`DELETE /v3/subusers/{name}`, with the parent key); false when it had none (404). */
  deleteSubuser(username: string): Promise<boolean>
}

/** SendGrid's message id: the text of X-Message-Id before its first dot. */
export function messageIdOf(xMessageId: string): string {
  const trimmed = xMessageId.trim()
  const dot = trimmed.indexOf('.')
  return dot === -1 ? trimmed : trimmed.slice(0, dot)
}

/** The spec's error when the provider key is missing or misconfigured (errno 403). */
export const SENDGRID_API_KEY_MISCONFIGURED = 'Sendgrid api key is misconfigured.'

const MISCONFIGURED = () => new SendgridError(403, [{ message: SENDGRID_API_KEY_MISCONFIGURED }])
const UNREACHABLE = () => new SendgridError(502, [{ message: 'SendGrid unreachable' }])

/** Longest wait for a rate-limit reset; a later reset is answered as the 429 it is, not waited for. */
const MAX_RATE_LIMIT_WAIT_MS = 10_000
/** Large attachments (up to SendGrid's 30 MB) take longer to upload than a settings call: 3 times its time. */
const mailSendTimeoutMs = () => 3 * providerTimeoutMs()

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * How long to wait before retrying, or null to stop. SendGrid's 429 says when the window resets in
 * `X-RateLimit-Reset` (Unix seconds) instead of `Retry-After`, which providerRequest's own retry reads.
 */
function retryDelayMs(response: ProviderResponse, attempt: number): number | null {
  if (response.status === 429) {
    const reset = Number(response.headers['x-ratelimit-reset'])
    if (!Number.isFinite(reset)) return 200 * 2 ** attempt
    const wait = Math.max(0, reset * 1000 - Date.now())
    return wait > MAX_RATE_LIMIT_WAIT_MS ? null : wait
  }
  if (response.status >= 500) return 200 * 2 ** attempt
  return null
}

/** SendGrid's `errors` array, or one error describing whatever else came back (a proxy's HTML page). */
function errorsOf(response: ProviderResponse): SendgridErrorItem[] {
  const body = response.body as { errors?: unknown } | null
  const errors = body && typeof body === 'object' ? body.errors : undefined
  if (Array.isArray(errors) && errors.every((error) => typeof error?.message === 'string'))
    return errors as SendgridErrorItem[]
  // Reduced to its words: the message reaches users through the send route's 502.
  const text =
    typeof response.body === 'string'
      ? response.body
          .replace(/<[^>]*>/g, ' ')
          .replace(/\s+/g, ' ')
          .trim()
          .slice(0, 300)
      : ''
  return [{ message: text || `SendGrid answered ${response.status}`, field: null }]
}

function objectBody<T>(response: ProviderResponse): T {
  if (typeof response.body !== 'object' || response.body === null)
    throw new SendgridError(502, [{ message: `SendGrid answered ${response.status} without a JSON body` }])
  return response.body as T
}

export function createSendgridClient(
  options: { baseUrl: string; parentApiKey: string | undefined },
  log?: Logger,
): SendgridClient {
  const base = options.baseUrl.replace(/\/+$/, '')

  /**
   * One SendGrid call with at most `retries` retries on 429 and 5xx. Network failures are retried only
   * when `retryUnreachable`: a timed-out mail send may have been accepted, and a duplicate email is
   * worse than an error the user can retry.
   */
  async function call(
    request: Omit<ProviderRequest, 'provider'> & { retries: number; retryUnreachable: boolean },
  ): Promise<ProviderResponse> {
    for (let attempt = 0; ; attempt++) {
      let response: ProviderResponse
      try {
        // Retries are ours, so that a 429 waits for SendGrid's reset.
        response = await providerRequest({ ...request, provider: 'sendgrid', retries: 0 }, log)
      } catch (error) {
        if (!(error instanceof ProviderUnreachable)) throw error
        if (!request.retryUnreachable || attempt >= request.retries) throw UNREACHABLE()
        await sleep(200 * 2 ** attempt)
        continue
      }
      const delay = attempt < request.retries ? retryDelayMs(response, attempt) : null
      if (delay === null) return response
      await sleep(delay)
    }
  }

  async function settingsCall(
    onBehalfOf: string,
    request: Omit<ProviderRequest, 'provider' | 'url' | 'headers'> & { path: string },
  ): Promise<ProviderResponse> {
    if (!options.parentApiKey) throw MISCONFIGURED()
    const { path, ...rest } = request
    // Creating is not idempotent: a retried POST would meet its own first attempt as a conflict.
    const idempotent = rest.method !== 'POST'
    return call({
      ...rest,
      url: `${base}${path}`,
      headers: { authorization: `Bearer ${options.parentApiKey}`, 'on-behalf-of': onBehalfOf },
      retries: idempotent ? 2 : 0,
      retryUnreachable: idempotent,
    })
  }

  const ensure = (response: ProviderResponse, ok: (status: number) => boolean) => {
    if (!ok(response.status)) throw new SendgridError(response.status, errorsOf(response))
    return response
  }
  const is2xx = (status: number) => status >= 200 && status < 300
  const parsePath = (hostname: string) => `/v3/user/webhooks/parse/settings/${encodeURIComponent(hostname)}`

  return {
    async sendMail(apiKey, body) {
      if (!apiKey) throw MISCONFIGURED()
      const response = await call({
        method: 'POST',
        url: `${base}/v3/mail/send`,
        headers: { authorization: `Bearer ${apiKey}` },
        body,
        timeoutMs: mailSendTimeoutMs(),
        retries: 2,
        retryUnreachable: false,
      })
      ensure(response, is2xx)
      const xMessageId = response.headers['x-message-id']
      if (!xMessageId)
        throw new SendgridError(502, [
          { message: `SendGrid answered ${response.status} without X-Message-Id` },
        ])
      return { messageId: messageIdOf(xMessageId), headers: response.headers }
    },

    async findMessage(apiKey, { name, value }) {
      if (!apiKey) throw MISCONFIGURED()
      const query = new URLSearchParams({ query: `unique_args['${name}']="${value}"`, limit: '1' })
      const response = ensure(
        await call({
          url: `${base}/v3/messages?${query}`,
          headers: { authorization: `Bearer ${apiKey}` },
          retries: 2,
          retryUnreachable: true,
        }),
        is2xx,
      )
      const [message] = objectBody<{ messages?: { msg_id?: string }[] }>(response).messages ?? []
      return message?.msg_id ? { messageId: messageIdOf(message.msg_id) } : null
    },

    async getEventWebhookSettings(onBehalfOf) {
      const response = await settingsCall(onBehalfOf, { path: '/v3/user/webhooks/event/settings' })
      return objectBody<EventWebhookSettings>(ensure(response, is2xx))
    },

    async updateEventWebhookSettings(onBehalfOf, settings) {
      const response = await settingsCall(onBehalfOf, {
        method: 'PATCH',
        path: '/v3/user/webhooks/event/settings',
        body: settings,
      })
      return objectBody<EventWebhookSettings>(ensure(response, is2xx))
    },

    async getParseSettings(onBehalfOf, hostname) {
      const response = await settingsCall(onBehalfOf, { path: parsePath(hostname) })
      if (response.status === 404) return null
      return objectBody<ParseSettings>(ensure(response, is2xx))
    },

    async createParseSettings(onBehalfOf, settings) {
      const response = await settingsCall(onBehalfOf, {
        method: 'POST',
        path: '/v3/user/webhooks/parse/settings',
        body: settings,
      })
      return objectBody<ParseSettings>(ensure(response, is2xx))
    },

    async listParseSettings(onBehalfOf) {
      const response = await settingsCall(onBehalfOf, { path: '/v3/user/webhooks/parse/settings' })
      // A subuser SendGrid no longer has is refused (403) or unknown (404): it holds no settings.
      if (response.status === 403 || response.status === 404) return []
      const { result } = objectBody<{ result?: ParseSettings[] }>(ensure(response, is2xx))
      return Array.isArray(result) ? result : []
    },

    async deleteParseSettings(onBehalfOf, hostname) {
      const response = await settingsCall(onBehalfOf, { method: 'DELETE', path: parsePath(hostname) })
      if (response.status === 404) return false
      ensure(response, is2xx)
      return true
    },

    async deleteSubuser(username) {
      if (!options.parentApiKey) throw MISCONFIGURED()
      const response = await call({
        method: 'DELETE',
        url: `${base}/v3/subusers/${encodeURIComponent(username)}`,
        headers: { authorization: `Bearer ${options.parentApiKey}` },
        retries: 2,
        retryUnreachable: true,
      })
      if (response.status === 404) return false
      ensure(response, is2xx)
      return true
    },

    async updateParseSettings(onBehalfOf, { hostname, ...changes }) {
      // The hostname names the resource in the path; SendGrid's PATCH body carries only what changes.
      const response = await settingsCall(onBehalfOf, {
        method: 'PATCH',
        path: parsePath(hostname),
        body: changes,
      })
      return objectBody<ParseSettings>(ensure(response, is2xx))
    },
  }
}
