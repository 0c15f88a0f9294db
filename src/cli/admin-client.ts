import { once } from 'node:events'
import { createWriteStream, existsSync, readFileSync } from 'node:fs'
import { isIPv6 } from 'node:net'
import type { Writable } from 'node:stream'
import { finished } from 'node:stream/promises'
import { devSecretsFile } from '../config.js'
import { CliError } from './errors.js'

type Env = Record<string, string | undefined>
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** The admin API under /v1/admin: answers the envelope's `data`, or throws a CliError with its message. */
export interface AdminClient {
  request<T = Record<string, unknown>>(method: Method, path: string, body?: object): Promise<T>
  /** A page of a list read by cursor: its rows and the cursor of the next page (null on the last). */
  page<T = Record<string, unknown>>(path: string): Promise<{ rows: T[]; nextCursor: string | null }>
  /**
   * A GET whose body is a download (an export), written as it arrives into `file`, or stdout without one;
   * the file is created once the server has answered 200, so that a refusal leaves none behind. Resolves
   * with the body's last line, by which the caller knows whether the download is whole.
   */
  download(path: string, file: string | undefined): Promise<string>
}

// Creating a user hashes a password with argon2; anything past this is a server that hangs.
const REQUEST_TIMEOUT_MS = 30_000

/** PLATFORM_URL, else the server of this machine where PORT and HOST (its defaults too) make it listen. */
export function platformUrl(env: Env): string {
  if (!env.PLATFORM_URL) return localServerUrl(env)
  const raw = env.PLATFORM_URL
  let protocol: string
  try {
    protocol = new URL(raw).protocol
  } catch {
    throw new CliError(`PLATFORM_URL is not a URL: ${raw}`)
  }
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new CliError(`PLATFORM_URL must be http(s): ${raw}`)
  return raw.replace(/\/+$/, '')
}

/** A server listening on every address (0.0.0.0, ::) is reached on loopback. */
function localServerUrl(env: Env): string {
  const port = env.PORT || '3000'
  const listens = env.HOST || '0.0.0.0'
  const host = listens === '0.0.0.0' || listens === '::' ? '127.0.0.1' : listens
  const url = `http://${isIPv6(host) ? `[${host}]` : host}:${port}`
  if (!/^\d+$/.test(port) || !URL.canParse(url)) {
    throw new CliError(
      `no server address from PORT "${port}" and HOST "${listens}": fix them, or set PLATFORM_URL`,
    )
  }
  return url
}

/** ADMIN_TOKEN, else the token a development server generated into DATA_DIR on its first start. */
export function adminToken(env: Env): string {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN
  const file = devSecretsFile(env.DATA_DIR || './data')
  if (!existsSync(file)) {
    throw new CliError(
      `no admin token: set ADMIN_TOKEN, or start the server once (npm start) so that it generates ${file}`,
    )
  }
  let secrets: { adminToken?: unknown }
  try {
    secrets = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new CliError(`cannot read the admin token from ${file}: ${(error as Error).message}`)
  }
  if (typeof secrets.adminToken !== 'string' || !secrets.adminToken) {
    throw new CliError(`${file} holds no adminToken: set ADMIN_TOKEN`)
  }
  return secrets.adminToken
}

export function createAdminClient(baseUrl: string, token: string): AdminClient {
  /** The envelope of a success, or a CliError with the failure's message. */
  async function call(method: Method, path: string, body?: object): Promise<ResponseEnvelope> {
    const endpoint = `${method} /v1/admin${path}`
    const answer = await send(`${baseUrl}/v1/admin${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    })
    const envelope = parseEnvelope(answer, endpoint)
    if (answer.status >= 300) throw new CliError(failureMessage(envelope, answer.status, endpoint))
    return envelope
  }

  return {
    request: async <T>(method: Method, path: string, body?: object) =>
      (await call(method, path, body)).data as T,

    async page<T>(path: string) {
      const { data, pagination } = await call('GET', path)
      const next = (pagination as { next_cursor?: unknown } | undefined)?.next_cursor
      return { rows: data as T[], nextCursor: typeof next === 'string' ? next : null }
    },

    async download(path: string, file: string | undefined): Promise<string> {
      const endpoint = `GET /v1/admin${path}`
      const response = await startDownload(`${baseUrl}/v1/admin${path}`, token)
      if (response.status !== 200 || !response.body) {
        const answer = { status: response.status, text: await response.text() }
        throw new CliError(failureMessage(parseEnvelope(answer, endpoint), answer.status, endpoint))
      }
      const into: Writable = file ? await openFile(file) : process.stdout
      let tail = ''
      try {
        for await (const chunk of response.body) {
          tail = (tail + Buffer.from(chunk).toString('utf8')).slice(-LAST_LINE_KEPT)
          if (!into.write(chunk)) await once(into, 'drain')
        }
      } catch (error) {
        throw new CliError(`${endpoint} was cut off: ${(error as Error).message}`)
      } finally {
        if (file) await finished(into.end())
      }
      return tail.trimEnd().split('\n').at(-1) ?? ''
    },
  }
}

/** A file to write, created (or emptied) now; an unwritable path is a CliError naming it. */
async function openFile(file: string): Promise<Writable> {
  const stream = createWriteStream(file)
  try {
    await once(stream, 'open')
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${(error as Error).message}`)
  }
  return stream
}

/** How much of a download's end is kept to read its last line (an export's counts, a few kilobytes). */
const LAST_LINE_KEPT = 65_536

/** A download's answer: the headers within REQUEST_TIMEOUT_MS, then the body as long as it takes. */
async function startDownload(url: string, token: string): Promise<Response> {
  const controller = new AbortController()
  const timer = setTimeout(
    () => controller.abort(new DOMException('timeout', 'TimeoutError')),
    REQUEST_TIMEOUT_MS,
  )
  try {
    return await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal })
  } catch (error) {
    throw unreachable(new URL(url).origin, error)
  } finally {
    clearTimeout(timer)
  }
}

interface Answer {
  status: number
  text: string
}

interface ResponseEnvelope {
  data?: unknown
  pagination?: unknown
  message?: unknown
  additional_info?: unknown
}

async function send(url: string, init: RequestInit): Promise<Answer> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    return { status: response.status, text: await response.text() }
  } catch (error) {
    throw unreachable(new URL(url).origin, error)
  }
}

function unreachable(origin: string, error: unknown): CliError {
  if ((error as Error).name === 'TimeoutError') {
    return new CliError(`no answer from the platform at ${origin} within ${REQUEST_TIMEOUT_MS / 1000} s`)
  }
  // fetch reports a refused or unresolvable host as "fetch failed" with the system error as its cause.
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  const reason = cause?.code ?? cause?.message ?? (error as Error).message
  return new CliError(
    `cannot reach the platform at ${origin} (${reason}): is the server running? Start it with npm start, or set PLATFORM_URL`,
  )
}

function parseEnvelope(answer: Answer, endpoint: string): ResponseEnvelope {
  try {
    const parsed: unknown = JSON.parse(answer.text)
    if (parsed && typeof parsed === 'object') return parsed as ResponseEnvelope
  } catch {
    // Falls through to the error below: the server at PLATFORM_URL is not this platform.
  }
  throw new CliError(
    `${endpoint} answered HTTP ${answer.status} without a JSON envelope: is PLATFORM_URL right?`,
  )
}

/** `Account not found (HTTP 404 from GET /v1/admin/...)`; a 401 adds its reason and where tokens come from. */
function failureMessage(envelope: ResponseEnvelope, status: number, endpoint: string): string {
  const message = typeof envelope.message === 'string' ? envelope.message : 'request failed'
  const reason = typeof envelope.additional_info === 'string' ? `: ${envelope.additional_info}` : ''
  const hint = status === 401 ? '; check ADMIN_TOKEN, or DATA_DIR/secrets.json of the server' : ''
  return `${message}${reason} (HTTP ${status} from ${endpoint})${hint}`
}
