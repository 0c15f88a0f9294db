import { generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PRODUCTION_ENV as PRODUCTION } from '../test/helpers/production.js'
import { ConfigError, loadConfig } from './config.js'
import { DAY_MS, HOUR_MS, MINUTE_MS } from './platform/time.js'

const tempDir = () => mkdtempSync(join(tmpdir(), 'config-test-'))

/** How production names SendGrid's missing event webhook key. */
const SENDGRID_KEY_NEEDED =
  'SENDGRID_WEBHOOK_PUBLIC_KEY (or SENDGRID_WEBHOOK_UNSIGNED_UNSAFE=true to accept unsigned events)'
/** How production names a missing TRUST_PROXY. */
const TRUST_PROXY_NEEDED =
  "TRUST_PROXY (the TLS proxy's addresses: OAuth and the providers' webhooks require the HTTPS it forwards)"
/** How production names the edge's missing secret. */
const EDGE_SECRET_NEEDED =
  'EDGE_SIGNING_SECRET (EDGE_PURGE_URL is set: the edge worker signs its reads with it)'

describe('configuration', () => {
  it('starts a bare development machine with generated secrets, reused on restart', () => {
    const dataDir = tempDir()
    const first = loadConfig({ DATA_DIR: dataDir })
    expect(first).toMatchObject({
      port: 3000,
      // This machine's alone: its admin API and outbox page are not offered to the network.
      host: '127.0.0.1',
      nodeEnv: 'development',
      databaseUrl: undefined,
    })
    // What main.ts prints at start, where a newcomer opens the pages.
    expect(first.publicBaseUrl).toBe('http://127.0.0.1:3000')
    expect(first.jwt.secret).toMatch(/^[0-9a-f]{64}$/)
    expect(existsSync(join(dataDir, 'secrets.json'))).toBe(true)
    const again = loadConfig({ DATA_DIR: dataDir })
    expect(again.jwt.secret).toBe(first.jwt.secret)
    expect(again.adminToken).toBe(first.adminToken)
    expect(first.edge).toEqual({
      signingSecret: expect.stringMatching(/^[0-9a-f]{64}$/),
      purgeUrl: undefined,
      apiToken: undefined,
    })
    expect(again.edge.signingSecret).toBe(first.edge.signingSecret)
    expect(JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8')).adminToken).toBe(first.adminToken)
  })

  it('prefers the environment over generated secrets', () => {
    const config = loadConfig({
      DATA_DIR: tempDir(),
      ADMIN_TOKEN: 'a'.repeat(20),
      JWT_SECRET: 's'.repeat(32),
    })
    expect(config.adminToken).toBe('a'.repeat(20))
    expect(config.jwt.secret).toBe('s'.repeat(32))
  })

  it.each([
    [{ NODE_ENV: 'staging' }, 'NODE_ENV must be one of'],
    [{ PORT: 'abc' }, 'PORT must be an integer from 0 to 65535, got "abc"'],
    [{ PORT: '70000' }, 'PORT must be an integer from 0 to 65535, got "70000"'],
    [{ PORT: '80.5' }, 'PORT must be an integer from 0 to 65535, got "80.5"'],
    [
      { LOG_LEVEL: 'verbose' },
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    ],
    [
      { RATE_LIMIT_ROOMS_PER_MINUTE: '0' },
      'RATE_LIMIT_ROOMS_PER_MINUTE must be an integer of at least 1, got "0"',
    ],
    [
      { JOBS_POLLING_INTERVAL_SECONDS: 'soon' },
      'JOBS_POLLING_INTERVAL_SECONDS must be a number of at least 0.5, got "soon"',
    ],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must use postgres or postgresql'],
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL must be a URL'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET must be at least 32 characters'],
    [{ EDGE_SIGNING_SECRET: 'short' }, 'EDGE_SIGNING_SECRET must be at least 32 characters'],
    [{ EDGE_PURGE_URL: 'ftp://purge' }, 'EDGE_PURGE_URL must use http or https'],
    [{ MAIL_PROVIDER: 'mailgun' }, 'MAIL_PROVIDER must be one of outbox, sendgrid'],
    [{ EMAIL_SEND_MAINTENANCE: 'yes' }, 'EMAIL_SEND_MAINTENANCE must be true or false'],
    [{ SECRETS_ENCRYPTION_KEY: 'abcd' }, 'SECRETS_ENCRYPTION_KEY must be 32 bytes'],
    [{ GRAPH_API_VERSION: '18' }, 'GRAPH_API_VERSION must look like v18.0'],
    [{ GRAPH_API_URL: 'graph' }, 'GRAPH_API_URL must be a URL'],
    [{ LEADS_SYNC_INTERVAL_MINUTES: '0' }, 'LEADS_SYNC_INTERVAL_MINUTES must be an integer from 1 to 1440'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN must be at least 16 characters'],
    [{ METRICS_PORT: '3000' }, 'METRICS_PORT must differ from PORT'],
    [{ METRICS_PORT: 'x' }, 'METRICS_PORT must be'],
    [{ SHUTDOWN_DELAY_MS: '-1' }, 'SHUTDOWN_DELAY_MS must be an integer from 0 to 300000'],
    [{ SHUTDOWN_TIMEOUT_MS: '10' }, 'SHUTDOWN_TIMEOUT_MS must be an integer from 1000 to 300000'],
    [{ SENDGRID_WEBHOOK_UNSIGNED_UNSAFE: 'yes' }, 'SENDGRID_WEBHOOK_UNSIGNED_UNSAFE must be true or false'],
    [
      { APP_WEBHOOK_ALLOWED_CIDRS: '10.1.0.0/16,10.2.0.0/33' },
      'APP_WEBHOOK_ALLOWED_CIDRS must be IP addresses or CIDR ranges, comma-separated: "10.2.0.0/33" is not an IP address or CIDR range',
    ],
    [{ APP_WEBHOOK_ALLOWED_CIDRS: 'internal.example' }, 'APP_WEBHOOK_ALLOWED_CIDRS must be IP addresses'],
    [
      { LEAD_WEBHOOK_EVENTS_RETENTION: '90' },
      'LEAD_WEBHOOK_EVENTS_RETENTION must be a period such as 30d, 12h, 15m or 90s, or off, got "90"',
    ],
    [{ OAUTH_CODES_RETENTION: '0d' }, 'OAUTH_CODES_RETENTION must be a period such as'],
    [
      { SHORT_LINK_CLICKS_RETENTION: '30m' },
      'SHORT_LINK_CLICKS_RETENTION must be a period of at least 1h such as 30d, 12h, 15m or 90s, or off, got "30m"',
    ],
    [{ OAUTH_AUDIT_EVENTS_RETENTION: '1 year' }, 'OAUTH_AUDIT_EVENTS_RETENTION must be a period such as'],
    [{ MAIL_EVENT_BATCHES_RETENTION: '36501d' }, 'MAIL_EVENT_BATCHES_RETENTION must be a period such as'],
    [
      { JOBS_COMPLETED_RETENTION: '30s' },
      'JOBS_COMPLETED_RETENTION must be a period of at least 60s such as 30d, 12h, 15m or 90s, got "30s"',
    ],
  ])('fails fast naming the bad variable: %o', (env, message) => {
    expect(() => loadConfig({ DATA_DIR: tempDir(), ...env })).toThrow(ConfigError)
    expect(() => loadConfig({ DATA_DIR: tempDir(), ...env })).toThrow(message)
  })

  it.each([
    [
      'only an admin token and a JWT secret',
      { ADMIN_TOKEN: 'x', JWT_SECRET: 's'.repeat(32) },
      `SECRETS_ENCRYPTION_KEY, OAUTH_SIGNING_KEY, PUBLIC_BASE_URL, ${TRUST_PROXY_NEEDED}`,
    ],
    [
      'nothing',
      {},
      `JWT_SECRET or JWT_PUBLIC_KEY, ADMIN_TOKEN, SECRETS_ENCRYPTION_KEY, OAUTH_SIGNING_KEY, PUBLIC_BASE_URL, ${TRUST_PROXY_NEEDED}`,
    ],
    ['all but TRUST_PROXY', { ...PRODUCTION, TRUST_PROXY: '' }, TRUST_PROXY_NEEDED],
    ['TRUST_PROXY=false, which trusts no proxy', { ...PRODUCTION, TRUST_PROXY: 'false' }, TRUST_PROXY_NEEDED],
    [
      'SendGrid sending the mail, without its event webhook key',
      { ...PRODUCTION, MAIL_PROVIDER: 'sendgrid', SENDGRID_WEBHOOK_PUBLIC_KEY: '' },
      SENDGRID_KEY_NEEDED,
    ],
    [
      'SendGrid, unsigned events accepted only by a value other than true',
      {
        ...PRODUCTION,
        MAIL_PROVIDER: 'sendgrid',
        SENDGRID_WEBHOOK_PUBLIC_KEY: '',
        SENDGRID_WEBHOOK_UNSIGNED_UNSAFE: 'false',
      },
      SENDGRID_KEY_NEEDED,
    ],
    ['all but the admin token', { ...PRODUCTION, ADMIN_TOKEN: '' }, 'ADMIN_TOKEN'],
    ['no JWT key of either kind', { ...PRODUCTION, JWT_SECRET: '' }, 'JWT_SECRET or JWT_PUBLIC_KEY'],
    [
      'an edge purge URL without the edge signing secret',
      { ...PRODUCTION, EDGE_PURGE_URL: 'https://edge.example.com/__edge/purge', EDGE_SIGNING_SECRET: '' },
      EDGE_SECRET_NEEDED,
    ],
  ])('refuses production with %s, naming every missing variable in one message', (_case, env, named) => {
    expect(() => loadConfig({ DATA_DIR: tempDir(), NODE_ENV: 'production', ...env })).toThrow(
      new ConfigError(`NODE_ENV=production needs these set: ${named}`),
    )
  })

  it("starts production without the settings of features that are off: SendGrid's event key, the edge's secret", () => {
    const { SENDGRID_WEBHOOK_PUBLIC_KEY: _key, EDGE_SIGNING_SECRET: _secret, ...featuresOff } = PRODUCTION
    const config = loadConfig({ ...featuresOff, DATA_DIR: tempDir() })
    // Keys no one holds: every event post and every edge request is refused (their tests show it over HTTP).
    expect(config.mail).toMatchObject({ provider: 'outbox', acceptUnsignedEvents: false })
    expect(config.mail.webhookPublicKey).toMatch(/^[A-Za-z0-9+/]+=*$/)
    expect(config.edge.signingSecret).toMatch(/^[0-9a-f]{64}$/)
    const again = loadConfig({ ...featuresOff, DATA_DIR: tempDir() })
    expect(again.mail.webhookPublicKey).not.toBe(config.mail.webhookPublicKey)
    expect(again.edge.signingSecret).not.toBe(config.edge.signingSecret)
  })

  it('listens on every address in production, and where HOST says anywhere', () => {
    expect(loadConfig({ ...PRODUCTION, DATA_DIR: tempDir() }).host).toBe('0.0.0.0')
    expect(loadConfig({ DATA_DIR: tempDir(), HOST: '0.0.0.0' }).host).toBe('0.0.0.0')
    expect(loadConfig({ ...PRODUCTION, DATA_DIR: tempDir(), HOST: '10.0.0.5' }).host).toBe('10.0.0.5')
  })

  it('refuses production with an ADMIN_TOKEN shorter than 32 characters, and starts it with 32', () => {
    const env = { ...PRODUCTION, DATA_DIR: tempDir() }
    expect(() => loadConfig({ ...env, ADMIN_TOKEN: 'a'.repeat(31) })).toThrow(
      new ConfigError('ADMIN_TOKEN must be at least 32 characters in production (e.g. openssl rand -hex 24)'),
    )
    expect(loadConfig({ ...env, ADMIN_TOKEN: 'a'.repeat(32) }).adminToken).toBe('a'.repeat(32))
  })

  it('starts production on SendGrid without its key when SENDGRID_WEBHOOK_UNSIGNED_UNSAFE=true says so', () => {
    const env = {
      ...PRODUCTION,
      DATA_DIR: tempDir(),
      MAIL_PROVIDER: 'sendgrid',
      SENDGRID_WEBHOOK_PUBLIC_KEY: '',
    }
    expect(loadConfig({ ...env, SENDGRID_WEBHOOK_UNSIGNED_UNSAFE: 'true' }).mail).toMatchObject({
      webhookPublicKey: undefined,
      acceptUnsignedEvents: true,
    })
  })

  it('starts production with everything set, from the environment only, writing no secrets to disk', () => {
    const dataDir = tempDir()
    const config = loadConfig({ ...PRODUCTION, DATA_DIR: dataDir })
    expect(config).toMatchObject({
      nodeEnv: 'production',
      adminToken: PRODUCTION.ADMIN_TOKEN,
      publicBaseUrl: PRODUCTION.PUBLIC_BASE_URL,
      jwt: { secret: PRODUCTION.JWT_SECRET },
      oauth: { signingKey: PRODUCTION.OAUTH_SIGNING_KEY },
    })
    expect(config.secretsKey).toEqual(Buffer.from(PRODUCTION.SECRETS_ENCRYPTION_KEY, 'hex'))
    expect(existsSync(join(dataDir, 'secrets.json'))).toBe(false)
    const { JWT_SECRET: _secret, ...withPublicKey } = PRODUCTION
    const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString()
    expect(loadConfig({ ...withPublicKey, JWT_PUBLIC_KEY: publicKey, DATA_DIR: dataDir }).jwt).toEqual({
      secret: undefined,
      publicKey,
      privateKey: undefined,
    })
  })

  it.each([
    'http://api.example.com',
    'http://10.0.0.5:3000',
    'http://127.example.com',
    'http://localhost.example.com',
    'http://[::2]:3000',
  ])('refuses production with the plain HTTP PUBLIC_BASE_URL %s, which is not loopback', (publicBaseUrl) => {
    expect(() => loadConfig({ ...PRODUCTION, DATA_DIR: tempDir(), PUBLIC_BASE_URL: publicBaseUrl })).toThrow(
      new ConfigError(
        'PUBLIC_BASE_URL must be https:// in production (http:// only for localhost, 127.0.0.0/8 or [::1])',
      ),
    )
  })

  it.each([
    'https://api.example.com',
    'http://localhost:3000',
    'http://127.0.0.1:3000',
    'http://127.10.20.30',
    'http://[::1]:3000',
  ])('starts production with the PUBLIC_BASE_URL %s, HTTPS or loopback', (publicBaseUrl) => {
    const config = loadConfig({ ...PRODUCTION, DATA_DIR: tempDir(), PUBLIC_BASE_URL: publicBaseUrl })
    expect(config.publicBaseUrl).toBe(publicBaseUrl)
  })

  it('takes any http:// PUBLIC_BASE_URL outside production', () => {
    const config = loadConfig({ DATA_DIR: tempDir(), PUBLIC_BASE_URL: 'http://api.example.com' })
    expect(config.publicBaseUrl).toBe('http://api.example.com')
  })

  it('keeps a generated secrets key for stored credentials, and reads mail settings', () => {
    const dataDir = tempDir()
    const first = loadConfig({ DATA_DIR: dataDir })
    expect(first.secretsKey).toHaveLength(32)
    expect(loadConfig({ DATA_DIR: dataDir }).secretsKey).toEqual(first.secretsKey)
    expect(first.mail).toEqual({
      provider: 'outbox',
      sendgridApiKey: undefined,
      sendgridBaseUrl: 'https://api.sendgrid.com',
      webhookPublicKey: undefined,
      acceptUnsignedEvents: false,
      sendMaintenance: false,
    })
  })

  it('reads the ranges app webhooks may reach besides public addresses, one address as its own range', () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).oauth.webhookAllowedRanges).toEqual([])
    const config = loadConfig({
      DATA_DIR: tempDir(),
      APP_WEBHOOK_ALLOWED_CIDRS: ' 10.1.0.0/16, fd00:1::/64,192.168.5.7,',
    })
    expect(config.oauth.webhookAllowedRanges).toEqual([
      { address: '10.1.0.0', prefix: 16, family: 'ipv4' },
      { address: 'fd00:1::', prefix: 64, family: 'ipv6' },
      { address: '192.168.5.7', prefix: 32, family: 'ipv4' },
    ])
  })

  it("reads the accounts' request budget and heavy-route bound: documented defaults, and their bounds", () => {
    const config = loadConfig({ DATA_DIR: tempDir() })
    expect(config.accountBudget).toEqual({ requests: 6000, windowSeconds: 60 })
    expect(config.accountConcurrency).toEqual({
      every: { concurrency: 10, waitMs: 2000, shared: 20 },
      heavy: { concurrency: 4, waitMs: 2000 },
    })
    // Half the pool whatever its size, unless set.
    expect(
      loadConfig({ DATA_DIR: tempDir(), DATABASE_POOL_SIZE: '7' }).accountConcurrency.every.concurrency,
    ).toBe(3)
    expect(
      loadConfig({ DATA_DIR: tempDir(), DATABASE_POOL_SIZE: '1' }).accountConcurrency.every.concurrency,
    ).toBe(1)
    expect(
      loadConfig({ DATA_DIR: tempDir(), ACCOUNT_CONCURRENCY: '40' }).accountConcurrency.every.concurrency,
    ).toBe(40)
    expect(() => loadConfig({ DATA_DIR: tempDir(), ACCOUNT_REQUEST_BUDGET: '0' })).toThrow(
      'ACCOUNT_REQUEST_BUDGET must be an integer from 1 to 1000000000, got "0"',
    )
    expect(() => loadConfig({ DATA_DIR: tempDir(), ACCOUNT_REQUEST_BUDGET_WINDOW_SECONDS: '0' })).toThrow(
      'ACCOUNT_REQUEST_BUDGET_WINDOW_SECONDS must be an integer from 1 to 86400, got "0"',
    )
  })

  it('reads the database replicas: none by default, each a postgres URL, only beside DATABASE_URL', () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).databaseReplicas).toEqual({ urls: [], maxLagMs: 5000 })
    const primary = { DATA_DIR: tempDir(), DATABASE_URL: 'postgres://db/app' }
    const replicas = 'postgres://replica-1/app, postgresql://u:p@replica-2:6432/app/'
    expect(
      loadConfig({ ...primary, DATABASE_REPLICA_URLS: replicas, DATABASE_REPLICA_MAX_LAG_MS: '800' })
        .databaseReplicas,
    ).toEqual({ urls: ['postgres://replica-1/app', 'postgresql://u:p@replica-2:6432/app'], maxLagMs: 800 })
    expect(() =>
      loadConfig({ DATA_DIR: tempDir(), DATABASE_REPLICA_URLS: 'postgres://replica/app' }),
    ).toThrow('DATABASE_REPLICA_URLS needs DATABASE_URL: the embedded database has no replicas')
    expect(() => loadConfig({ ...primary, DATABASE_REPLICA_URLS: 'postgres://r/app,mysql://r/app' })).toThrow(
      'DATABASE_REPLICA_URLS must use postgres or postgresql',
    )
    expect(() => loadConfig({ ...primary, DATABASE_REPLICA_URLS: 'postgres://r/app,,' })).toThrow(
      'DATABASE_REPLICA_URLS has an empty URL at position 2',
    )
    expect(() => loadConfig({ ...primary, DATABASE_REPLICA_MAX_LAG_MS: '10' })).toThrow(
      'DATABASE_REPLICA_MAX_LAG_MS must be an integer from 100 to 3600000, got "10"',
    )
  })

  it('reads provider settings with their defaults', () => {
    const config = loadConfig({
      DATA_DIR: tempDir(),
      LISTINGS_API_VERSION: '20240101',
      TRUST_PROXY: '10.0.0.0/8, loopback',
    })
    expect(config.listings).toEqual({
      apiUrl: 'https://api.yextapis.com',
      apiKey: undefined,
      version: '20240101',
    })
    expect(config.trustProxy).toBe('10.0.0.0/8, loopback')
  })

  it('refuses a TRUST_PROXY hop count, which Fastify would trust for nothing', () => {
    expect(() => loadConfig({ DATA_DIR: tempDir(), TRUST_PROXY: '1' })).toThrow(
      new ConfigError(
        `TRUST_PROXY must be true, false or the proxies' addresses and CIDRs, comma-separated (e.g. 10.0.0.0/8, loopback, linklocal, uniquelocal), got "1": a hop count is not trusted`,
      ),
    )
  })

  it.each(['maybe', '10.0.0.0/8, nearby', '10.0.0.0/99'])(
    'refuses a TRUST_PROXY Fastify could not compile, naming it: %s',
    (value) => {
      expect(() => loadConfig({ DATA_DIR: tempDir(), TRUST_PROXY: value })).toThrow(
        `TRUST_PROXY must be true, false or the proxies' addresses and CIDRs, comma-separated (e.g. 10.0.0.0/8, loopback, linklocal, uniquelocal), got "${value}"`,
      )
    },
  )

  it.each(['loopback, linklocal, uniquelocal', '::1', '192.168.0.0/16,fc00::/7'])(
    'takes every TRUST_PROXY Fastify compiles: %s',
    (value) => {
      expect(loadConfig({ DATA_DIR: tempDir(), TRUST_PROXY: value }).trustProxy).toBe(value)
    },
  )

  it('reads the Square settings, the signed URL kept exactly as registered, and the pool size', () => {
    const bare = loadConfig({ DATA_DIR: tempDir(), PUBLIC_BASE_URL: 'https://api.example.com' })
    expect(bare.reviews.square).toEqual({
      webhookSignatureKey: undefined,
      webhookUrl: 'https://api.example.com/reviews/webhook/orderprovider/order',
      accessToken: undefined,
      baseUrl: 'https://connect.squareup.com',
    })
    expect(bare.databasePoolSize).toBe(20)
    const set = loadConfig({
      DATA_DIR: tempDir(),
      SQUARE_WEBHOOK_URL: 'https://hooks.example.com/square/',
      SQUARE_BASE_URL: 'https://connect.squareupsandbox.com/',
      DATABASE_POOL_SIZE: '8',
    })
    expect(set.reviews.square.webhookUrl).toBe('https://hooks.example.com/square/')
    expect(set.reviews.square.baseUrl).toBe('https://connect.squareupsandbox.com')
    expect(set.databasePoolSize).toBe(8)
    expect(() => loadConfig({ DATA_DIR: tempDir(), SQUARE_WEBHOOK_URL: 'hooks' })).toThrow(
      'SQUARE_WEBHOOK_URL must be a URL',
    )
    expect(() => loadConfig({ DATA_DIR: tempDir(), DATABASE_POOL_SIZE: '0' })).toThrow('DATABASE_POOL_SIZE')
  })

  it('reads the Meta app and Graph settings, with the spec example version by default', () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).leads).toEqual({
      appId: undefined,
      appSecret: undefined,
      verifyToken: undefined,
      graphApiUrl: 'https://graph.facebook.com',
      graphApiVersion: 'v18.0',
      syncIntervalMinutes: 15,
    })
    const set = loadConfig({
      DATA_DIR: tempDir(),
      SOCIALNET_APP_ID: '123',
      SOCIALNET_APP_SECRET: 'secret',
      SOCIALNET_VERIFY_TOKEN: 'verify',
      GRAPH_API_URL: 'http://127.0.0.1:9999/',
      GRAPH_API_VERSION: 'v21.0',
      LEADS_SYNC_INTERVAL_MINUTES: '5',
    })
    expect(set.leads).toEqual({
      appId: '123',
      appSecret: 'secret',
      verifyToken: 'verify',
      graphApiUrl: 'http://127.0.0.1:9999',
      graphApiVersion: 'v21.0',
      syncIntervalMinutes: 5,
    })
  })

  it("reads how app webhooks are sent: Standard Webhooks' retry schedule by default, any list of periods", () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).oauth.webhooks).toEqual({
      concurrencyPerApp: 8,
      concurrency: 100,
      timeoutMs: 5000,
      retryScheduleMs: [5, 300, 1800, 7200, 18_000, 36_000, 36_000].map((seconds) => seconds * 1000),
      pollMs: 500,
    })
    const set = loadConfig({
      DATA_DIR: tempDir(),
      APP_WEBHOOK_RETRY_SCHEDULE: '1s, 2m,3h',
      APP_WEBHOOK_CONCURRENCY_PER_APP: '1',
    }).oauth.webhooks
    expect(set).toMatchObject({ retryScheduleMs: [1000, 120_000, 3 * HOUR_MS], concurrencyPerApp: 1 })
    expect(
      loadConfig({ DATA_DIR: tempDir(), APP_WEBHOOK_RETRY_SCHEDULE: '' }).oauth.webhooks.retryScheduleMs,
    ).toEqual([])
    expect(() => loadConfig({ DATA_DIR: tempDir(), APP_WEBHOOK_RETRY_SCHEDULE: '5s,soon' })).toThrow(
      'APP_WEBHOOK_RETRY_SCHEDULE must be periods separated by commas, such as 5s,5m,2h, got "5s,soon"',
    )
    expect(() => loadConfig({ DATA_DIR: tempDir(), APP_WEBHOOK_CONCURRENCY_PER_APP: '0' })).toThrow(
      'APP_WEBHOOK_CONCURRENCY_PER_APP',
    )
  })

  it('reads the retention periods: documented defaults, any unit, and off where a table may keep every row', () => {
    expect(loadConfig({ DATA_DIR: tempDir() }).retention).toEqual({
      mailEventBatches: 7 * DAY_MS,
      reviewWebhookEvents: 400 * DAY_MS,
      leadWebhookEvents: 30 * DAY_MS,
      oauthAuditEvents: 365 * DAY_MS,
      oauthCodes: DAY_MS,
      oauthRefreshTokens: 30 * DAY_MS,
      appWebhookDeliveries: 30 * DAY_MS,
      shortLinkClicks: 90 * DAY_MS,
      jobsCompleted: 12 * HOUR_MS,
    })
    const set = loadConfig({
      DATA_DIR: tempDir(),
      SHORT_LINK_CLICKS_RETENTION: 'off',
      OAUTH_CODES_RETENTION: '90s',
      LEAD_WEBHOOK_EVENTS_RETENTION: '15m',
      JOBS_COMPLETED_RETENTION: '1m',
    }).retention
    expect(set).toMatchObject({
      shortLinkClicks: undefined,
      oauthCodes: 90_000,
      leadWebhookEvents: 15 * MINUTE_MS,
      jobsCompleted: MINUTE_MS,
    })
  })

  it('reads the metrics and shutdown settings: a drain delay in production only by default', () => {
    const development = loadConfig({ DATA_DIR: tempDir() })
    expect(development.metrics).toEqual({ token: undefined, port: undefined })
    expect(development.shutdown).toEqual({ delayMs: 0, timeoutMs: 10_000 })
    expect(loadConfig({ DATA_DIR: tempDir(), ...PRODUCTION }).shutdown).toEqual({
      delayMs: 5000,
      timeoutMs: 10_000,
    })
    const set = loadConfig({
      DATA_DIR: tempDir(),
      METRICS_TOKEN: 'm'.repeat(16),
      METRICS_PORT: '9464',
      SHUTDOWN_DELAY_MS: '250',
      SHUTDOWN_TIMEOUT_MS: '3000',
    })
    expect(set.metrics).toEqual({ token: 'm'.repeat(16), port: 9464 })
    expect(set.shutdown).toEqual({ delayMs: 250, timeoutMs: 3000 })
  })
})

/** The distinct names a pattern captures (its first group that matched), sorted. */
function namesIn(text: string, pattern: RegExp): string[] {
  const names = [...text.matchAll(pattern)].map((match) => match.slice(1).find(Boolean) ?? '')
  return [...new Set(names)].sort()
}

const readText = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8')

/** Upper-case names as config.ts and the CLI read them: `env.NAME` or a helper given `(env, 'NAME'`. */
const variablesOfConfig = () =>
  namesIn(
    `${readText('./config.ts')}\n${readText('./cli/admin-client.ts')}`,
    /\benv\.([A-Z][A-Z0-9_]+)|\(env, '([A-Z][A-Z0-9_]+)'/g,
  )

/** The names `.env.example` sets or shows commented out (`# NAME=`). */
const variablesOfEnvExample = () => namesIn(readText('../.env.example'), /^(?:# )?([A-Z][A-Z0-9_]+)=/gm)

describe('the configuration, written down', () => {
  // docs/configuration.md is generated and checked by config-reference.test.ts.
  it('names the same variables in config.ts and .env.example', () => {
    const inConfig = variablesOfConfig()
    expect(inConfig).toContain('DATABASE_URL')
    expect(inConfig).toContain('PLATFORM_URL')
    expect(variablesOfEnvExample()).toEqual(inConfig)
  })
})
