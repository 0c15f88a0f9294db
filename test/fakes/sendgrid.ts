import { generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'
import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import type { EventWebhookSettings, ParseSettings } from '../../src/modules/email/provider-setup.schemas.js'
import type { SendgridErrorItem, SendgridMailBody } from '../../src/modules/email/sendgrid.js'
import {
  type FakeServer,
  type FakeServerOptions,
  type RecordedRequest,
  sendJson,
  startFakeServer,
} from './http-server.js'

export interface FakeSendgridRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  /** The parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  body: unknown
  receivedAt: number
}

export interface FakeSentMessage {
  /** The X-Message-Id before its first dot: the key of `messages`. */
  messageId: string
  xMessageId: string
  apiKey: string
  body: SendgridMailBody
}

export interface FakeSendgrid extends FakeServer {
  /** Every request, in order, with its JSON body parsed. */
  received: FakeSendgridRequest[]
  /** Accepted mail, by message id. */
  messages: Map<string, FakeSentMessage>
  /** The next `count` requests, whatever they are, get `status` (429 carries the rate-limit headers). */
  failNext(status: number, count?: number): void
  addSubuser(username: string): void
  /** Whether SendGrid has the subuser (added, and not deleted since). */
  hasSubuser(username: string): boolean
  eventWebhookSettingsOf(subuser: string): EventWebhookSettings | undefined
  parseSettingsOf(subuser: string): ParseSettings[]
}

export interface FakeSendgridOptions extends FakeServerOptions {
  apiKeys: string[]
  subusers?: string[]
  /** Appended to every X-Message-Id (e.g. `.filter0001p1las1-1234-5F6B0C5F-2.0`), as ids with a dot look. */
  messageIdSuffix?: string
  /** A 429's `X-RateLimit-Reset` lies this many seconds ahead (rounded up to SendGrid's whole seconds). */
  rateLimitResetSeconds?: number
}

/** SendGrid answers a payload of 30 MB or more from its proxy, before the API sees it. */
export const MAX_MAIL_BYTES = 30 * 1024 * 1024

const error = (message: string, field: string | null = null): SendgridErrorItem => ({
  message,
  field,
  help: null,
})
const errors = (...items: SendgridErrorItem[]) => ({ errors: items })

const UNAUTHORIZED = errors(error('The provided authorization grant is invalid, expired, or revoked'))
const NGINX_413 =
  '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n' +
  '<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n'

const EVENT_FLAGS = [
  'group_resubscribe',
  'delivered',
  'group_unsubscribe',
  'spam_report',
  'bounce',
  'deferred',
  'unsubscribe',
  'processed',
  'open',
  'click',
  'dropped',
] as const

const defaultEventWebhook = (): EventWebhookSettings => ({
  enabled: false,
  url: '',
  ...(Object.fromEntries(EVENT_FLAGS.map((flag) => [flag, false])) as Record<
    (typeof EVENT_FLAGS)[number],
    false
  >),
})

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const nonEmpty = (value: unknown): value is string => typeof value === 'string' && value.length > 0
const isEmail = (value: unknown) =>
  typeof value === 'string' && /^[^\s@<>,;]+@[^\s@<>,;]+\.[^\s@<>,;]+$/.test(value)
const isHttpUrl = (value: unknown) => typeof value === 'string' && /^https?:\/\/[^\s/]+/.test(value)
const isBase64 = (value: unknown) =>
  nonEmpty(value) &&
  /^[A-Za-z0-9+/]*={0,2}$/.test(value.replace(/\r?\n/g, '')) &&
  value.replace(/\r?\n/g, '').length % 4 === 0

/** The JSON-schema type name SendGrid's validator puts in "Invalid type" messages. */
function jsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function stringValues(record: unknown, field: string, found: SendgridErrorItem[]): void {
  if (record === undefined) return
  if (!isObject(record))
    return void found.push(error(`Invalid type. Expected: object, given: ${jsonType(record)}.`, field))
  for (const [key, value] of Object.entries(record)) {
    if (typeof value !== 'string')
      found.push(error(`Invalid type. Expected: string, given: ${jsonType(value)}.`, `${field}.${key}`))
  }
}

/** The checks of `POST /v3/mail/send`, with SendGrid's messages and field paths; [] when valid. */
export function validateMail(body: unknown): SendgridErrorItem[] {
  if (!isObject(body)) return [error('Bad Request')]
  const found: SendgridErrorItem[] = []
  const withTemplate = nonEmpty(body.template_id)
  const personalizations = Array.isArray(body.personalizations) ? body.personalizations : []
  if (personalizations.length === 0)
    found.push(
      error(
        'The personalizations field is required and must have at least one personalization.',
        'personalizations',
      ),
    )
  if (personalizations.length > 1000)
    found.push(
      error(
        'The personalization block is limited to 1000 personalizations per API request.',
        'personalizations',
      ),
    )
  let recipients = 0
  personalizations.forEach((raw: unknown, i) => {
    const field = `personalizations.${i}`
    const p = isObject(raw) ? raw : {}
    if (!Array.isArray(p.to) || p.to.length === 0)
      found.push(
        error(
          'The to array is required for all personalization objects, and must have at least one email object with a valid email address.',
          `${field}.to`,
        ),
      )
    const seen = new Set<string>()
    for (const kind of ['to', 'cc', 'bcc'] as const) {
      const list = p[kind]
      if (list === undefined) continue
      if (!Array.isArray(list)) {
        found.push(error(`Invalid type. Expected: array, given: ${jsonType(list)}.`, `${field}.${kind}`))
        continue
      }
      for (const [j, address] of (list as unknown[]).entries()) {
        recipients++
        const email = isObject(address) ? address.email : undefined
        if (!isEmail(email)) {
          found.push(error('Does not contain a valid address.', `${field}.${kind}.${j}.email`))
          continue
        }
        const name = isObject(address) ? address.name : undefined
        if (typeof name === 'string' && /[;,]/.test(name))
          found.push(
            error(
              `The ${kind}.name cannot include either the ; or , characters.`,
              `${field}.${kind}.${j}.name`,
            ),
          )
        const key = String(email).toLowerCase()
        if (seen.has(key))
          found.push(
            error(
              `Each email address in the personalization block should be unique between to, cc, and bcc. We found the first duplicate instance of [${email}] in the ${field}.${kind} field.`,
              field,
            ),
          )
        seen.add(key)
      }
    }
    if (p.subject !== undefined && typeof p.subject !== 'string')
      found.push(error(`Invalid type. Expected: string, given: ${jsonType(p.subject)}.`, `${field}.subject`))
    stringValues(p.custom_args, `${field}.custom_args`, found)
  })
  if (recipients > 1000)
    found.push(
      error('There is a limit of 1000 total recipients (to + cc + bcc) per request.', 'personalizations'),
    )

  if (!isObject(body.from))
    found.push(
      error(
        'The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name parameter.',
        'from',
      ),
    )
  else if (!isEmail(body.from.email))
    found.push(error('The from email does not contain a valid address.', 'from.email'))
  if (body.reply_to !== undefined && !(isObject(body.reply_to) && isEmail(body.reply_to.email)))
    found.push(error('The reply_to email does not contain a valid address.', 'reply_to.email'))

  const everyPersonalizationHasSubject =
    personalizations.length > 0 && personalizations.every((p: unknown) => isObject(p) && nonEmpty(p.subject))
  if (!withTemplate && !nonEmpty(body.subject) && !everyPersonalizationHasSubject)
    found.push(
      error(
        'The subject is required. You can get around this requirement if you use a template with a subject defined or if every personalization has a subject defined.',
        'subject',
      ),
    )

  const content = Array.isArray(body.content) ? body.content : []
  if (!withTemplate && content.length === 0)
    found.push(
      error(
        'Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block. We typically suggest both text/plain and text/html blocks are included, but only one block is required.',
        'content',
      ),
    )
  // SendGrid builds the MIME alternatives in this order: plain text, then HTML, then anything else.
  const rank = (type: unknown) => (type === 'text/plain' ? 0 : type === 'text/html' ? 1 : 2)
  content.forEach((block: unknown, i) => {
    const b = isObject(block) ? block : {}
    if (!nonEmpty(b.type))
      found.push(
        error('The content type must be a string at least one character in length.', `content.${i}.type`),
      )
    if (!nonEmpty(b.value))
      found.push(
        error('The content value must be a string at least one character in length.', `content.${i}.value`),
      )
    const previous = content[i - 1]
    if (i > 0 && isObject(previous) && rank(b.type) < rank(previous.type))
      found.push(
        error(
          'If present, text/plain and text/html may only be provided in this order: text/plain, then text/html.',
          'content',
        ),
      )
  })

  const attachments = Array.isArray(body.attachments) ? body.attachments : []
  attachments.forEach((raw: unknown, i) => {
    const a = isObject(raw) ? raw : {}
    if (!isBase64(a.content))
      found.push(error('The attachment content must be base64 encoded.', `attachments.${i}.content`))
    if (!nonEmpty(a.filename))
      found.push(error('The attachment filename parameter is required.', `attachments.${i}.filename`))
    if (a.disposition !== undefined && a.disposition !== 'attachment' && a.disposition !== 'inline')
      found.push(
        error(
          'The disposition of your attachment can be either "inline" or "attachment".',
          `attachments.${i}.disposition`,
        ),
      )
    if (a.disposition === 'inline' && !nonEmpty(a.content_id))
      found.push(
        error(
          'The content_id parameter is required if your attachment is inline.',
          `attachments.${i}.content_id`,
        ),
      )
  })
  stringValues(body.headers, 'headers', found)
  stringValues(body.custom_args, 'custom_args', found)
  return found
}

function validateEventWebhookPatch(body: Record<string, unknown>): SendgridErrorItem[] {
  const found: SendgridErrorItem[] = []
  for (const flag of ['enabled', ...EVENT_FLAGS]) {
    if (body[flag] !== undefined && typeof body[flag] !== 'boolean')
      found.push(error(`Invalid type. Expected: boolean, given: ${jsonType(body[flag])}.`, flag))
  }
  if (body.url !== undefined && typeof body.url !== 'string')
    found.push(error(`Invalid type. Expected: string, given: ${jsonType(body.url)}.`, 'url'))
  return found
}

function validateParse(body: Record<string, unknown>, creating: boolean): SendgridErrorItem[] {
  const found: SendgridErrorItem[] = []
  if (creating && !nonEmpty(body.hostname)) found.push(error('hostname is required', 'hostname'))
  if ((creating || body.url !== undefined) && !isHttpUrl(body.url)) found.push(error('url is invalid', 'url'))
  for (const flag of ['spam_check', 'send_raw']) {
    if (body[flag] !== undefined && typeof body[flag] !== 'boolean')
      found.push(error(`Invalid type. Expected: boolean, given: ${jsonType(body[flag])}.`, flag))
  }
  return found
}

function parseJson(text: string): unknown {
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * SendGrid's v3 API on 127.0.0.1, as strict as the real one where this service touches it: Bearer API
 * keys, `POST /v3/mail/send` (validated, 202 + X-Message-Id), the event webhook settings and the
 * Inbound Parse settings of subusers addressed with `On-Behalf-Of`. Records every request.
 */
export async function startFakeSendgrid(options: FakeSendgridOptions): Promise<FakeSendgrid> {
  const apiKeys = new Set(options.apiKeys)
  const subusers = new Set(options.subusers ?? [])
  const eventWebhooks = new Map<string, EventWebhookSettings>()
  const parseSettings = new Map<string, Map<string, ParseSettings>>()
  const messages = new Map<string, FakeSentMessage>()
  const received: FakeSendgridRequest[] = []
  let failure = { status: 0, count: 0 }

  const fail = (response: ServerResponse, status: number) => {
    if (status === 429) {
      const reset = Math.ceil((Date.now() + (options.rateLimitResetSeconds ?? 1) * 1000) / 1000)
      response.setHeader('x-ratelimit-limit', '600')
      response.setHeader('x-ratelimit-remaining', '0')
      response.setHeader('x-ratelimit-reset', String(reset))
      return sendJson(response, 429, errors(error('too many requests')))
    }
    sendJson(response, status, errors(error(status >= 500 ? 'internal error' : 'request failed')))
  }

  const sendMail = (apiKey: string, body: unknown, response: ServerResponse) => {
    const invalid = validateMail(body)
    if (invalid.length > 0) return sendJson(response, 400, errors(...invalid))
    const messageId = randomBytes(16).toString('base64url').slice(0, 22)
    const xMessageId = `${messageId}${options.messageIdSuffix ?? ''}`
    messages.set(messageId, { messageId, xMessageId, apiKey, body: body as SendgridMailBody })
    response.writeHead(202, { 'x-message-id': xMessageId })
    response.end()
  }

  /**
   * The Email Activity Feed's `GET /v3/messages`, for the one query type this service sends:
   * `unique_args['name']="value"`, matched against the custom args of the key's own messages.
   */
  const findMessages = (apiKey: string, search: URLSearchParams, response: ServerResponse) => {
    const query = /^unique_args\['([^']+)'\]="([^"]*)"$/.exec(search.get('query') ?? '')
    const limit = Number(search.get('limit') ?? 10)
    if (!query || !Number.isInteger(limit) || limit < 1 || limit > 1000)
      return sendJson(response, 400, errors(error('invalid query')))
    const [, name, value] = query
    const found = [...messages.values()].filter(
      (message) =>
        message.apiKey === apiKey &&
        message.body.personalizations.some(
          (p) => (p.custom_args as Record<string, string> | undefined)?.[name as string] === value,
        ),
    )
    sendJson(response, 200, {
      messages: found.slice(0, limit).map((message) => ({
        msg_id: message.xMessageId,
        from_email: message.body.from.email,
        subject: message.body.subject,
        to_email: message.body.personalizations[0]?.to[0]?.email,
        status: 'processed',
        opens_count: 0,
        clicks_count: 0,
        last_event_time: new Date().toISOString(),
      })),
    })
  }

  const settings = (
    subuser: string,
    method: string,
    path: string,
    body: unknown,
    response: ServerResponse,
  ) => {
    const input = isObject(body) ? body : {}
    if (path === '/v3/user/webhooks/event/settings') {
      const current = eventWebhooks.get(subuser) ?? defaultEventWebhook()
      if (method === 'GET') return sendJson(response, 200, current)
      if (method !== 'PATCH') return sendJson(response, 405, errors(error('method not allowed')))
      const invalid = validateEventWebhookPatch(input)
      const merged = { ...current }
      for (const key of ['enabled', 'url', ...EVENT_FLAGS] as const) {
        if (input[key] !== undefined) Object.assign(merged, { [key]: input[key] })
      }
      if (invalid.length === 0 && merged.enabled && !isHttpUrl(merged.url))
        invalid.push(error('url is required when the webhook is enabled and must be a valid URL', 'url'))
      if (invalid.length > 0) return sendJson(response, 400, errors(...invalid))
      eventWebhooks.set(subuser, merged)
      return sendJson(response, 200, merged)
    }
    const hosts = parseSettings.get(subuser) ?? new Map<string, ParseSettings>()
    parseSettings.set(subuser, hosts)
    if (path === '/v3/user/webhooks/parse/settings') {
      if (method === 'GET') return sendJson(response, 200, { result: [...hosts.values()] })
      if (method !== 'POST') return sendJson(response, 405, errors(error('method not allowed')))
      const invalid = validateParse(input, true)
      if (invalid.length > 0) return sendJson(response, 400, errors(...invalid))
      const hostname = String(input.hostname)
      if (hosts.has(hostname))
        return sendJson(response, 400, errors(error('hostname already exists', 'hostname')))
      const created: ParseSettings = {
        hostname,
        url: String(input.url),
        spam_check: input.spam_check === true,
        send_raw: input.send_raw === true,
      }
      hosts.set(hostname, created)
      return sendJson(response, 201, created)
    }
    const match = /^\/v3\/user\/webhooks\/parse\/settings\/([^/]+)$/.exec(path)
    if (!match?.[1]) return sendJson(response, 404, errors(error('not found')))
    const hostname = decodeURIComponent(match[1])
    const existing = hosts.get(hostname)
    if (!existing) return sendJson(response, 404, errors(error('not found')))
    if (method === 'GET') return sendJson(response, 200, existing)
    if (method === 'DELETE') {
      hosts.delete(hostname)
      response.writeHead(204)
      return response.end()
    }
    if (method !== 'PATCH') return sendJson(response, 405, errors(error('method not allowed')))
    const invalid = validateParse(input, false)
    if (invalid.length > 0) return sendJson(response, 400, errors(...invalid))
    const updated: ParseSettings = {
      hostname,
      url: typeof input.url === 'string' ? input.url : existing.url,
      spam_check: typeof input.spam_check === 'boolean' ? input.spam_check : existing.spam_check,
      send_raw: typeof input.send_raw === 'boolean' ? input.send_raw : existing.send_raw,
    }
    hosts.set(hostname, updated)
    return sendJson(response, 200, updated)
  }

  const respond = (request: RecordedRequest, response: ServerResponse) => {
    const path = new URL(request.url, 'http://fake').pathname
    const bytes = Buffer.byteLength(request.body)
    // A payload over the limit is never parsed: the proxy in front of SendGrid refuses it unread.
    const body = bytes >= MAX_MAIL_BYTES ? request.body : parseJson(request.body)
    received.push({ method: request.method, path, headers: request.headers, body, receivedAt: Date.now() })
    if (failure.count > 0) {
      failure.count--
      return fail(response, failure.status)
    }
    if (bytes >= MAX_MAIL_BYTES) {
      response.writeHead(413, { 'content-type': 'text/html' })
      return response.end(NGINX_413)
    }
    const key = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1]
    if (!key || !apiKeys.has(key)) return sendJson(response, 401, UNAUTHORIZED)
    if (request.body && !String(request.headers['content-type']).startsWith('application/json'))
      return sendJson(response, 415, errors(error('Content-Type should be application/json.')))
    if (typeof body === 'string') return sendJson(response, 400, errors(error('Bad Request')))

    if (path === '/v3/messages') {
      if (request.method !== 'GET') return sendJson(response, 405, errors(error('method not allowed')))
      return findMessages(key, new URL(request.url, 'http://fake').searchParams, response)
    }
    if (path === '/v3/mail/send') {
      if (request.method !== 'POST') return sendJson(response, 405, errors(error('method not allowed')))
      // SendGrid ignores On-Behalf-Of here: mail goes out as the owner of the key.
      return sendMail(key, body, response)
    }
    const subuserPath = /^\/v3\/subusers\/([^/]+)$/.exec(path)
    if (subuserPath?.[1]) {
      // The parent account's own call: no On-Behalf-Of.
      if (request.method !== 'DELETE') return sendJson(response, 405, errors(error('method not allowed')))
      const username = decodeURIComponent(subuserPath[1])
      if (!subusers.delete(username)) return sendJson(response, 404, errors(error('subuser not found')))
      eventWebhooks.delete(username)
      parseSettings.delete(username)
      response.writeHead(204)
      return response.end()
    }
    if (!path.startsWith('/v3/user/webhooks/')) return sendJson(response, 404, errors(error('not found')))
    const subuser = request.headers['on-behalf-of']
    // Without On-Behalf-Of SendGrid would change the parent's own settings; here that is a bug to catch.
    if (typeof subuser !== 'string' || !subuser)
      return sendJson(
        response,
        403,
        errors(error('access forbidden: On-Behalf-Of naming a subuser is required')),
      )
    if (!subusers.has(subuser)) return sendJson(response, 403, errors(error('access forbidden')))
    return settings(subuser, request.method, path, body, response)
  }

  const server = await startFakeServer(respond, options)
  return {
    ...server,
    received,
    messages,
    failNext: (status, count = 1) => {
      failure = { status, count }
    },
    addSubuser: (username) => {
      subusers.add(username)
    },
    hasSubuser: (username) => subusers.has(username),
    eventWebhookSettingsOf: (subuser) => eventWebhooks.get(subuser),
    parseSettingsOf: (subuser) => [...(parseSettings.get(subuser)?.values() ?? [])],
  }
}

/** A key pair of SendGrid's Signed Event Webhook, the public half as SendGrid shows it: base64 DER (SPKI). */
export function eventWebhookKeys(): { privateKey: KeyObject; publicKeyBase64: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  return { privateKey, publicKeyBase64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') }
}

/**
 * The headers SendGrid signs an event post with: the base64 DER ECDSA signature of the timestamp (Unix
 * seconds, now unless given) followed by the body.
 */
export function signedEventHeaders(
  privateKey: KeyObject,
  body: string,
  timestamp = String(Math.floor(Date.now() / 1000)),
): Record<string, string> {
  return {
    'X-Twilio-Email-Event-Webhook-Signature': sign(
      'sha256',
      Buffer.from(timestamp + body),
      privateKey,
    ).toString('base64'),
    'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
  }
}
