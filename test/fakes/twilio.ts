import { randomBytes } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import {
  type FakeServer,
  type FakeServerOptions,
  type RecordedRequest,
  sendJson,
  startFakeServer,
} from './http-server.js'

export interface FakeTwilioMessage {
  sid: string
  to: string
  from: string
  body: string
}

export interface FakeTwilio extends FakeServer {
  /** Accepted messages, in order. */
  messages: FakeTwilioMessage[]
  /** Numbers that replied STOP to the account: Twilio refuses to message them (error 21610). */
  unsubscribed: Set<string>
}

const MESSAGES_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/

/** Twilio's error body: its code, message, a link to the code's page, and the HTTP status. */
function sendTwilioError(response: ServerResponse, status: number, code: number, message: string) {
  sendJson(response, status, {
    code,
    message,
    more_info: `https://www.twilio.com/docs/errors/${code}`,
    status,
  })
}

/** The Basic credentials of a request, or undefined when it has none. */
function basicCredentials(request: RecordedRequest): { user: string; password: string } | undefined {
  const header = request.headers.authorization
  if (!header?.startsWith('Basic ')) return undefined
  const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

/** The form parameters; Twilio reads none from another content type, so they count as missing. */
function formOf(request: RecordedRequest): URLSearchParams {
  const isForm = request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')
  return new URLSearchParams(isForm ? request.body : '')
}

/** What Twilio checks of a new message, in its order: To, From, Body present, the recipient not opted out. */
function refusalOf(form: URLSearchParams, unsubscribed: Set<string>): [number, string] | undefined {
  if (!form.get('To')) return [21604, "A 'To' phone number is required."]
  if (!form.get('From')) return [21603, "A 'From' phone number is required."]
  if (!form.get('Body')) return [21602, 'Message body is required.']
  if (unsubscribed.has(form.get('To') as string)) return [21610, 'Attempt to send to unsubscribed recipient']
  return undefined
}

/**
 * Twilio's Messages API on 127.0.0.1: `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded, Basic
 * auth with the account SID and auth token (401, code 20003, otherwise). Answers 201 with the new message,
 * `queued`, as Twilio does; records every request.
 */
export async function startFakeTwilio(
  options: { accountSid: string; authToken: string } & FakeServerOptions,
): Promise<FakeTwilio> {
  const messages: FakeTwilioMessage[] = []
  const unsubscribed = new Set<string>()

  const respond = (request: RecordedRequest, response: ServerResponse) => {
    const path = MESSAGES_PATH.exec(new URL(request.url, 'http://fake').pathname)
    const credentials = basicCredentials(request)
    if (credentials?.user !== options.accountSid || credentials.password !== options.authToken)
      return sendTwilioError(response, 401, 20003, 'Authenticate')
    if (path?.[1] !== options.accountSid || !['GET', 'POST'].includes(request.method))
      return sendTwilioError(response, 404, 20404, 'The requested resource was not found')
    if (request.method === 'GET')
      return listMessages(new URL(request.url, 'http://fake').searchParams, response)
    const form = formOf(request)
    const refusal = refusalOf(form, unsubscribed)
    if (refusal) return sendTwilioError(response, 400, ...refusal)
    const message = {
      sid: `SM${randomBytes(16).toString('hex')}`,
      to: form.get('To') as string,
      from: form.get('From') as string,
      body: form.get('Body') as string,
    }
    messages.push(message)
    sendJson(response, 201, resourceOf(message))
  }

  /** Twilio's message resource, `queued`, as it answers a new message and lists it. */
  const resourceOf = (message: FakeTwilioMessage) => {
    const now = new Date().toUTCString().replace('GMT', '+0000')
    return {
      ...message,
      account_sid: options.accountSid,
      api_version: '2010-04-01',
      date_created: now,
      date_updated: now,
      date_sent: null,
      direction: 'outbound-api',
      error_code: null,
      error_message: null,
      messaging_service_sid: null,
      num_media: '0',
      num_segments: '1',
      price: null,
      price_unit: 'USD',
      status: 'queued',
      uri: `/2010-04-01/Accounts/${options.accountSid}/Messages/${message.sid}.json`,
    }
  }

  /** `GET .../Messages.json`: the account's messages, newest first, filtered by `To` and `From`, a page of `PageSize`. */
  const listMessages = (query: URLSearchParams, response: ServerResponse) => {
    const pageSize = Number(query.get('PageSize') ?? 50)
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
      return sendTwilioError(response, 400, 20001, 'Invalid PageSize')
    const matches = (value: string, name: string) => !query.has(name) || query.get(name) === value
    const found = messages.filter((message) => matches(message.to, 'To') && matches(message.from, 'From'))
    sendJson(response, 200, {
      messages: found.reverse().slice(0, pageSize).map(resourceOf),
      page_size: pageSize,
    })
  }

  const server = await startFakeServer(respond, options)
  return { ...server, messages, unsubscribed }
}
