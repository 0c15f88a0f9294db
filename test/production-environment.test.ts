import type { ChildProcess } from 'node:child_process'
import { spawnSync } from 'node:child_process'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { eventWebhookKeys, signedEventHeaders } from './fakes/sendgrid.js'
import { freePort, TEST_ADMIN_TOKEN } from './helpers/app.js'
import { overHttp, spawnServer, startCommand, stop } from './helpers/compiled-server.js'
import { createTestDatabase } from './helpers/database.js'
import { signedQuery } from './helpers/edge.js'
import { createAccount } from './helpers/fixtures.js'
import { PROJECT_ROOT } from './helpers/npm-scripts.js'
import { CALLBACK, createUser, obtainCode, postAsClient, registerApp, tokenRequest } from './helpers/oauth.js'
import { behindTlsProxy } from './helpers/production.js'

/**
 * docs/deploying.md's smallest production environment, started as `npm start` starts it (the compiled server) with
 * exactly its variables, and used through a TLS proxy's headers as an operator's users would: an app's
 * OAuth authorization-code exchange, and SendGrid's signed delivery events once SendGrid's own variables are
 * added. A start without TRUST_PROXY is refused in one line naming it.
 */

const EVENT_KEYS = eventWebhookKeys()

/**
 * A value for each `<placeholder>` of the page's blocks. TRUST_PROXY: loopback, where the test's requests
 * come from, standing for a TLS proxy on this machine; ADMIN_TOKEN: the one the fixture helpers send.
 */
const GENERATED: Record<string, string> = {
  TRUST_PROXY: 'loopback',
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  JWT_SECRET: randomBytes(32).toString('hex'),
  SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  OAUTH_SIGNING_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString(),
  SENDGRID_API_KEY: `SG.${randomBytes(16).toString('hex')}`,
  SENDGRID_WEBHOOK_PUBLIC_KEY: EVENT_KEYS.publicKeyBase64,
}

/** The variables of docs/deploying.md's first `sh` block after `heading`, each `<placeholder>` given its GENERATED value. */
function readmeVariables(heading: string): Record<string, string> {
  const readme = readFileSync(join(PROJECT_ROOT, 'docs/deploying.md'), 'utf8')
  const block = readme
    .split(heading)[1]
    ?.split(/```sh[^\n]*\n/)[1]
    ?.split('```')[0]
  if (!block) throw new Error(`docs/deploying.md lost its block after "${heading}"`)
  return Object.fromEntries(
    block
      .trim()
      .split('\n')
      .map((line) => {
        const name = line.slice(0, line.indexOf('='))
        const value = line.slice(line.indexOf('=') + 1)
        if (!value.startsWith('<')) return [name, value]
        if (!GENERATED[name]) throw new Error(`no test value for docs/deploying.md's ${name}`)
        return [name, GENERATED[name]]
      }),
  )
}

const SMALLEST = 'The smallest production environment that starts'
const SENDGRID_ADDS = 'Sending through SendGrid adds'

const running: ChildProcess[] = []
afterAll(() => {
  for (const child of running) child.kill('SIGKILL')
})

/**
 * The compiled server with exactly `variables` and a free PORT (the test's machine may use 3000), in a
 * directory of its own; on the suite's PostgreSQL (a database of its own) where the suite runs on one,
 * else without DATABASE_URL, which docs/deploying.md says starts as well.
 */
async function startProduction(variables: Record<string, string>) {
  const { DATABASE_URL, ...rest } = variables
  expect(DATABASE_URL).toMatch(/^postgres:/)
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined
  const port = await freePort()
  const cwd = mkdtempSync(join(tmpdir(), 'platform-production-'))
  const env = { ...rest, ...(database && { DATABASE_URL: database.url }), PORT: String(port) }
  const server = await spawnServer(cwd, env)
  running.push(server.child)
  const base = `http://127.0.0.1:${port}`
  const close = async () => {
    expect(await stop(server.child)).toBe(0)
    await database?.drop()
  }
  return { server, base, cwd, database, close }
}

/** A batch of SendGrid delivery events, as its Signed Event Webhook posts it. */
const eventBatch = () =>
  JSON.stringify([
    {
      email: 'ada@example.com',
      event: 'delivered',
      sg_event_id: randomBytes(8).toString('hex'),
      sg_message_id: 'unknown-message.filter0001',
      timestamp: Math.floor(Date.now() / 1000),
    },
  ])

function postEvents(base: string, body: string, headers: Record<string, string>) {
  return fetch(`${base}/v1/e/mailprovider/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https', ...headers },
    body,
  })
}

describe("docs/deploying.md's smallest production environment, compiled and started as npm start does", () => {
  it('runs an OAuth authorization-code exchange through the TLS proxy, and refuses what the features that are off would take', async () => {
    const { server, base, cwd, database, close } = await startProduction(readmeVariables(SMALLEST))
    expect(await (await fetch(`${base}/status/ready`)).json()).toEqual({
      status: 'ok',
      database: 'ok',
      jobs: 'ok',
    })
    // Through the proxy: every request as a TLS proxy on this machine forwards it.
    const app = behindTlsProxy(overHttp(base))
    const client = await registerApp(app)
    await createUser(app, 'ada@production.example', [await createAccount(app, { name: 'Production' })])
    const code = await obtainCode(app, client, 'ada@production.example')
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }
    const credentials: [string, string] = [client._id, client.client_secret]

    // The same exchange straight to the server, not through the proxy: refused, and the code left unused.
    const direct = await tokenRequest(overHttp(base), exchange, credentials)
    expect(direct.statusCode).toBe(400)
    expect(direct.json()).toEqual({ error: 'invalid_request', error_description: 'HTTPS is required' })

    const tokens = await tokenRequest(app, exchange, credentials)
    expect(tokens.statusCode, tokens.body).toBe(200)
    expect(tokens.json()).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) })
    const introspected = await postAsClient(app, 'introspect', { token: tokens.json().access_token }, client)
    expect(introspected.json()).toMatchObject({ active: true, client_id: client._id })
    const metadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as {
      token_endpoint: string
    }
    expect(metadata.token_endpoint).toBe('https://api.example.com/v1/auth/oauth/token')

    // SendGrid does not send this server's mail: its events are refused, signed with any key or unsigned.
    const body = eventBatch()
    const signed = await postEvents(base, body, signedEventHeaders(EVENT_KEYS.privateKey, body))
    expect(signed.status).toBe(403)
    expect((await postEvents(base, body, {})).status).toBe(403)
    // No edge: what no one can sign is refused.
    const edge = await fetch(
      `${base}/v1/funnels/cloudflare/step?${signedQuery(
        { hostname: 'shop.example.com', pathname: '/' },
        { secret: randomBytes(32).toString('hex') },
      )}`,
    )
    expect(edge.status).toBe(401)

    // A production server suggests no demo account, and generates no secret.
    expect(server.output()).not.toContain('quickstart')
    expect(server.output()).toContain('npm run cli -- --help')
    await close()
    const warnings = server
      .output()
      .match(/DATABASE_URL is not set: production runs on the embedded database/g)
    expect(warnings ?? []).toHaveLength(database ? 0 : 1)
    expect(existsSync(join(cwd, 'data', 'secrets.json'))).toBe(false)
  }, 120_000)

  it("accepts SendGrid's signed delivery events with SendGrid's own variables added, and refuses them unsigned", async () => {
    const { base, close } = await startProduction({
      ...readmeVariables(SMALLEST),
      ...readmeVariables(SENDGRID_ADDS),
    })
    const body = eventBatch()
    const signed = await postEvents(base, body, signedEventHeaders(EVENT_KEYS.privateKey, body))
    expect(signed.status).toBe(200)
    expect(await signed.json()).toEqual({ success: true, message: 'SUCCESS' })
    const unsigned = await postEvents(base, body, {})
    expect(unsigned.status).toBe(403)
    await close()
  }, 120_000)

  it('refuses to start without TRUST_PROXY, in one line naming it', () => {
    const { TRUST_PROXY, DATABASE_URL, ...withoutProxy } = readmeVariables(SMALLEST)
    expect(TRUST_PROXY).toBe('loopback')
    const refused = spawnSync(startCommand.command, startCommand.args, {
      cwd: mkdtempSync(join(tmpdir(), 'platform-production-')),
      env: withoutProxy,
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(refused.status).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toBe(
      "Configuration error: NODE_ENV=production needs these set: TRUST_PROXY (the TLS proxy's addresses: OAuth and the providers' webhooks require the HTTPS it forwards)\n",
    )
  }, 60_000)
})
