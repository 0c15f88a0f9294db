import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isIPv4 } from 'node:net'
import { join, resolve } from 'node:path'
import { MIGRATION_DEFAULTS, type MigrationSettings } from './platform/db/migrations.js'
import { REPLICA_MAX_LAG_DEFAULT_MS } from './platform/db/replicas.js'
import { DATABASE_WAIT_DEFAULTS, type DatabaseWaits } from './platform/db/waits.js'
import { MAX_REQUEST_BUDGET } from './platform/http/account-budget.js'
import { type AddressRange, parseAddressRanges } from './platform/http/outbound-address.js'
import {
  PROVIDER_CIRCUIT_DEFAULTS,
  type ProviderCircuitSettings,
} from './platform/providers/provider-circuits.js'
import { StartError } from './platform/start-error.js'
import { DAY_MS, HOUR_MS, MINUTE_MS } from './platform/time.js'

/** The one typed configuration, read from the environment and validated at start. */
export interface Config {
  nodeEnv: 'development' | 'production' | 'test'
  port: number
  host: string
  logLevel: string
  dataDir: string
  databaseUrl: string | undefined
  /** Connections the API and the jobs' handlers share on PostgreSQL (pg-boss keeps 4 of its own). */
  databasePoolSize: number
  /** Streaming replicas of DATABASE_URL that serve reads (docs/decisions.md, "Reads on replicas"). */
  databaseReplicas: DatabaseReplicas
  /** How a migration waits for its locks (docs/decisions.md, "Migrations that never take a table offline"). */
  migrations: MigrationSettings
  /** How long the service waits on PostgreSQL (docs/decisions.md, "Every wait has a bound"). */
  databaseWaits: DatabaseWaits
  /** How long a client may take to send a request (docs/decisions.md, "A slow request is cut off"). */
  httpTimeouts: HttpTimeouts
  redisUrl: string | undefined
  /** REDIS_COMMAND_TIMEOUT_MS: how long a Redis command may take, reconnection included, before it fails. */
  redisCommandTimeoutMs: number
  /** OpenTelemetry, on when an OTLP endpoint is set (src/platform/tracing); the SDK reads the other OTEL_*. */
  tracing: { enabled: boolean; protocol: TracingProtocol }
  publicBaseUrl: string
  trustProxy: boolean | string
  adminToken: string
  jwt: { secret: string | undefined; publicKey: string | undefined; privateKey: string | undefined }
  conversationSocketUrl: string | undefined
  storage: {
    s3:
      | { bucket: string; endpoint?: string; region: string; accessKeyId?: string; secretAccessKey?: string }
      | undefined
  }
  listings: { apiUrl: string; apiKey: string | undefined; version: string }
  edge: {
    /**
     * HMAC key of the edge endpoints' `_sig` (ARCHITECTURE.md, edge signature). Production without an edge
     * (no EDGE_PURGE_URL) may leave it unset: a key no one knows then refuses every edge request.
     */
    signingSecret: string
    /** The edge provider's cache purge API (Cloudflare's `purge_cache` body); unset: purges stay local. */
    purgeUrl: string | undefined
    apiToken: string | undefined
  }
  mail: {
    provider: 'outbox' | 'sendgrid'
    sendgridApiKey: string | undefined
    sendgridBaseUrl: string
    /**
     * Verifies SendGrid's Signed Event Webhook when set (base64 DER or PEM of the P-256 key). Production
     * without one (not sending through SendGrid) holds a key whose private half no one has: every post refused.
     */
    webhookPublicKey: string | undefined
    /** SENDGRID_WEBHOOK_UNSIGNED_UNSAFE: production accepts unsigned delivery events (no key set). */
    acceptUnsignedEvents: boolean
    sendMaintenance: boolean
  }
  /** 32-byte key encrypting provider credentials kept in the database (subuser API keys); unset only in production. */
  secretsKey: Buffer | undefined
  oauth: {
    /** ES256 private key of OAuth access tokens (PEM or JWK); unset only in production without it. */
    signingKey: string | undefined
    /** Public JWKs (JSON array) still published after a rotation, until tokens they signed expire. */
    previousPublicKeys: string | undefined
    /** Seconds a replaced refresh token stays usable, for a client that lost the answer. */
    refreshGraceSeconds: number
    /** How long an instance takes a grant it found live as live, before asking the database again. */
    revocationCacheMs: number
    /** PKCE required of every client at /authorize, confidential ones too (RFC 9700 2.1.1). */
    requirePkce: boolean
    /** APP_WEBHOOK_ALLOWED_CIDRS: non-public ranges app webhooks may still reach in production. */
    webhookAllowedRanges: AddressRange[]
    webhooks: AppWebhookSettings
  }
  /**
   * ROOM_SEARCH_RANKED_HITS: how many of the newest hits a room search ranks; with more, its total is this
   * bound and says so (`total_exact: false`).
   */
  roomSearchRankedHits: number
  rateLimits: {
    emailSendPerMinute: number
    roomPerMinute: number
    oauthAuthorizePerMinute: number
    oauthTokenPerHour: number
    funnelPreviewPerMinute: number
    formSubmitPerMinute: number
  }
  /** Each account's request budget, across instances (platform/http/account-budget.ts). */
  accountBudget: {
    /** ACCOUNT_REQUEST_BUDGET: requests per window of an account without a budget of its own. */
    requests: number
    /** ACCOUNT_REQUEST_BUDGET_WINDOW_SECONDS: the window's length. */
    windowSeconds: number
  }
  /** Each account's requests an instance runs at once (platform/http/account-concurrency.ts). */
  accountConcurrency: {
    every: {
      /** ACCOUNT_CONCURRENCY: requests of one account an instance runs at once; half the pool by default. */
      concurrency: number
      /** ACCOUNT_CONCURRENCY_WAIT_MS: how long one more waits for a turn before its 429. */
      waitMs: number
      /** DATABASE_POOL_SIZE: below this many requests of all accounts, an account may run past its share. */
      shared: number
    }
    heavy: {
      /** ACCOUNT_HEAVY_CONCURRENCY: heavy requests of one account an instance runs at once. */
      concurrency: number
      /** ACCOUNT_HEAVY_WAIT_MS: how long one more waits for a turn before its 429. */
      waitMs: number
    }
  }
  jobs: {
    pollingIntervalSeconds: number
    lockSeconds: number
    runWorkers: boolean
    /**
     * How much of each queue's workers one account may hold while its jobs wait, in percent: the default
     * (JOBS_ACCOUNT_SHARE_PERCENT, also for a job whose tier is not known) and per tier (platform/jobs/fair-share.ts).
     */
    shares: { percent: number; tiers: Record<string, number> }
  }
  /** How an account's removal deletes its rows (`DELETE /v1/admin/accounts/:id`, docs/decisions.md). */
  accountRemoval: {
    /** ACCOUNT_REMOVAL_BATCH_SIZE: rows per delete statement. */
    batchSize: number
    /** ACCOUNT_REMOVAL_PAUSE_MS: the rest after each batch, which leaves the database to other tenants. */
    pauseMs: number
  }
  /**
   * How long each event table keeps a row once it is expendable, in milliseconds (docs/decisions.md,
   * retention); undefined keeps every row (`off`). Customer data has no period: retention never removes it.
   */
  retention: {
    mailEventBatches: number | undefined
    reviewWebhookEvents: number | undefined
    leadWebhookEvents: number | undefined
    oauthAuditEvents: number | undefined
    oauthCodes: number | undefined
    oauthRefreshTokens: number | undefined
    /** App webhook deliveries, once delivered, dead or dropped. */
    appWebhookDeliveries: number | undefined
    shortLinkClicks: number | undefined
    /** pg-boss's: finished jobs are deleted this long after they finish. */
    jobsCompleted: number
  }
  metrics: {
    /** METRICS_TOKEN: the bearer token `GET /metrics` asks for; unset (and no METRICS_PORT), not served. */
    token: string | undefined
    /** METRICS_PORT: `/metrics` served on a port of its own (kept off the public one) instead. */
    port: number | undefined
  }
  shutdown: {
    /** SHUTDOWN_DELAY_MS: after SIGTERM, how long the server keeps serving while readiness answers 503. */
    delayMs: number
    /** SHUTDOWN_TIMEOUT_MS: after the delay, how long in-flight requests and jobs get before exit 1. */
    timeoutMs: number
  }
  reviews: {
    /** Stripe's endpoint secret (`whsec_...`); unset, every payment webhook is refused as unsigned. */
    stripeWebhookSecret: string | undefined
    sms: {
      /** `outbox` keeps each SMS in the database only; `twilio` sends it through Twilio's Messages API. */
      provider: 'outbox' | 'twilio'
      accountSid: string | undefined
      authToken: string | undefined
      from: string | undefined
      baseUrl: string
    }
    square: {
      /** The subscription's signature key: `x-square-hmacsha256-signature` is its HMAC over the URL and body. */
      webhookSignatureKey: string | undefined
      /** The notification URL as registered with Square, part of what it signs. */
      webhookUrl: string
      /** Reads orders and customers (`GET /v2/orders/{id}`, `GET /v2/customers/{id}`). */
      accessToken: string | undefined
      baseUrl: string
    }
  }
  leads: {
    /** The Meta app: SOCIALNET_APP_ID and SOCIALNET_APP_SECRET (the secret also signs lead events). */
    appId: string | undefined
    appSecret: string | undefined
    /** SOCIALNET_VERIFY_TOKEN, compared with `hub.verify_token` when Meta verifies the callback. */
    verifyToken: string | undefined
    /** GRAPH_API_URL and GRAPH_API_VERSION: every Graph call goes to `{url}/{version}/...`. */
    graphApiUrl: string
    graphApiVersion: string
    /** How often each campaign's leads are reconciled with Graph and its page subscription checked. */
    syncIntervalMinutes: number
  }
  /** Each outside provider's circuit, bulkhead and call timeout (docs/decisions.md, "Providers that fail"). */
  providers: ProviderCircuitSettings
}

export interface HttpTimeouts {
  /** HTTP_REQUEST_TIMEOUT_MS: from a request's first byte to its body's last; past it 408, connection closed. */
  requestMs: number
  /** HTTP_HEADERS_TIMEOUT_MS: from a request's first byte to its headers' end (a slowloris client). */
  headersMs: number
  /** HTTP_KEEP_ALIVE_TIMEOUT_MS: how long an idle connection is kept for a next request. */
  keepAliveMs: number
}

/** How app webhook notifications are sent (docs/decisions.md, "App webhook notifications"). */
export interface AppWebhookSettings {
  /** APP_WEBHOOK_CONCURRENCY_PER_APP: an app's deliveries in flight at once, across every instance. */
  concurrencyPerApp: number
  /** APP_WEBHOOK_CONCURRENCY: deliveries in flight at once in one instance, all apps together. */
  concurrency: number
  /** APP_WEBHOOK_TIMEOUT_MS: how long a receiver has to answer an attempt. */
  timeoutMs: number
  /** APP_WEBHOOK_RETRY_SCHEDULE: the wait before each retry (ms); after the last, the delivery is dead. */
  retryScheduleMs: number[]
  /** APP_WEBHOOK_POLL_MS: how often an instance looks for deliveries that are due. */
  pollMs: number
}

/** A setting that is wrong in itself; the message names the variable, what it holds and what it accepts. */
export class ConfigError extends StartError {}

/** pino's levels, and `silent`: anything else stops pino with a stack when the logger is made. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export type TracingProtocol = 'http/protobuf' | 'http/json'

type Env = Record<string, string | undefined>

/** Secrets a bare development start generates once and keeps in DATA_DIR. */
interface DevSecrets {
  jwtSecret: string
  adminToken: string
  secretsKey: string
  oauthSigningKey: string
  edgeSigningSecret: string
}

/** The shortest ADMIN_TOKEN production starts with, as JWT_SECRET's: random, that many is beyond guessing. */
const ADMIN_TOKEN_MIN_LENGTH = 32

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'], 'development')
  const production = nodeEnv === 'production'
  const port = integer(env, 'PORT', 3000, 0, 65535)
  const dataDir = resolve(env.DATA_DIR || './data')
  const jwtPublicKey = env.JWT_PUBLIC_KEY || undefined
  const s3Bucket = env.S3_BUCKET || undefined

  const mailProvider = oneOf(env, 'MAIL_PROVIDER', ['outbox', 'sendgrid'], 'outbox')
  const smsProvider = oneOf(env, 'SMS_PROVIDER', ['outbox', 'twilio'], 'outbox')
  if (smsProvider === 'twilio' && !(env.TWILIO_ACCOUNT_SID && env.TWILIO_AUTH_TOKEN)) {
    throw new ConfigError('SMS_PROVIDER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN')
  }
  if (production) requireProductionSettings(env, mailProvider)
  // The admin API answers anyone who can reach it: in production a token short enough to guess is refused.
  if (production && (env.ADMIN_TOKEN ?? '').length < ADMIN_TOKEN_MIN_LENGTH) {
    throw new ConfigError(
      `ADMIN_TOKEN must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters in production (e.g. openssl rand -hex 24)`,
    )
  }
  if (env.JWT_SECRET && env.JWT_SECRET.length < 32) {
    throw new ConfigError('JWT_SECRET must be at least 32 characters')
  }
  if (env.EDGE_SIGNING_SECRET && env.EDGE_SIGNING_SECRET.length < 32) {
    throw new ConfigError('EDGE_SIGNING_SECRET must be at least 32 characters')
  }
  const metricsPort = env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 1, 65535) : undefined
  if (metricsPort !== undefined && metricsPort === port) {
    throw new ConfigError('METRICS_PORT must differ from PORT')
  }
  if (env.METRICS_TOKEN && env.METRICS_TOKEN.length < 16) {
    throw new ConfigError('METRICS_TOKEN must be at least 16 characters')
  }
  const secrets = production ? undefined : devSecrets(dataDir)
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://127.0.0.1:${port}`
  if (production) requireHttpsPublicUrl(publicBaseUrl)
  const databasePoolSize = integer(env, 'DATABASE_POOL_SIZE', 20, 1, 1000)
  // Half the pool: one account's requests leave the other half to the rest, whatever the pool's size.
  const accountConcurrency = Math.max(1, Math.floor(databasePoolSize / 2))

  return {
    nodeEnv,
    port,
    // A development server is this machine's alone (its admin API, its outbox page); production serves all.
    host: env.HOST || (production ? '0.0.0.0' : '127.0.0.1'),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, nodeEnv === 'test' ? 'silent' : 'info'),
    dataDir,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databasePoolSize,
    databaseReplicas: databaseReplicas(env),
    migrations: migrationSettings(env),
    databaseWaits: databaseWaits(env),
    httpTimeouts: httpTimeouts(env),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisCommandTimeoutMs: integer(env, 'REDIS_COMMAND_TIMEOUT_MS', 1000, 10, 60_000),
    tracing: tracing(env),
    publicBaseUrl,
    trustProxy: trustProxy(env.TRUST_PROXY),
    adminToken: env.ADMIN_TOKEN || (secrets as DevSecrets).adminToken,
    jwt: {
      secret: env.JWT_SECRET || (jwtPublicKey ? undefined : secrets?.jwtSecret),
      publicKey: jwtPublicKey,
      privateKey: env.JWT_PRIVATE_KEY || undefined,
    },
    conversationSocketUrl: url(env, 'CONVERSATION_SOCKET_URL', ['http:', 'https:']),
    storage: {
      s3: s3Bucket
        ? {
            bucket: s3Bucket,
            endpoint: url(env, 'S3_ENDPOINT', ['http:', 'https:']),
            region: env.S3_REGION || 'us-east-1',
            accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
            secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
          }
        : undefined,
    },
    listings: {
      apiUrl: url(env, 'LISTINGS_API_URL', ['http:', 'https:']) ?? 'https://api.yextapis.com',
      apiKey: env.LISTINGS_API_KEY || undefined,
      version: env.LISTINGS_API_VERSION || '20200525',
    },
    edge: {
      signingSecret: env.EDGE_SIGNING_SECRET || secrets?.edgeSigningSecret || unknownSecret(),
      purgeUrl: url(env, 'EDGE_PURGE_URL', ['http:', 'https:']),
      apiToken: env.EDGE_API_TOKEN || undefined,
    },
    mail: {
      provider: mailProvider,
      sendgridApiKey: env.SENDGRID_API_KEY || undefined,
      sendgridBaseUrl: url(env, 'SENDGRID_BASE_URL', ['http:', 'https:']) ?? 'https://api.sendgrid.com',
      webhookPublicKey: env.SENDGRID_WEBHOOK_PUBLIC_KEY || (production ? unheldEventKey(env) : undefined),
      acceptUnsignedEvents: boolean(env, 'SENDGRID_WEBHOOK_UNSIGNED_UNSAFE', false),
      sendMaintenance: boolean(env, 'EMAIL_SEND_MAINTENANCE', false),
    },
    secretsKey: secretsKey(env.SECRETS_ENCRYPTION_KEY || secrets?.secretsKey),
    oauth: {
      signingKey: env.OAUTH_SIGNING_KEY || secrets?.oauthSigningKey,
      previousPublicKeys: env.OAUTH_PREVIOUS_PUBLIC_KEYS || undefined,
      refreshGraceSeconds: integer(env, 'OAUTH_REFRESH_GRACE_SECONDS', 60, 0, 3600),
      revocationCacheMs: integer(env, 'OAUTH_REVOCATION_CACHE_MS', 5000, 100, 60_000),
      requirePkce: boolean(env, 'OAUTH_REQUIRE_PKCE', false),
      webhookAllowedRanges: addressRanges(env, 'APP_WEBHOOK_ALLOWED_CIDRS'),
      webhooks: {
        concurrencyPerApp: integer(env, 'APP_WEBHOOK_CONCURRENCY_PER_APP', 8, 1, 100),
        concurrency: integer(env, 'APP_WEBHOOK_CONCURRENCY', 100, 1, 1000),
        timeoutMs: integer(env, 'APP_WEBHOOK_TIMEOUT_MS', 5000, 100, 60_000),
        // Standard Webhooks' (Svix's) schedule: immediately, then these waits; 27.6 hours in all.
        retryScheduleMs: periods(env, 'APP_WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h'),
        pollMs: integer(env, 'APP_WEBHOOK_POLL_MS', 500, 10, 60_000),
      },
    },
    roomSearchRankedHits: integer(env, 'ROOM_SEARCH_RANKED_HITS', 200, 1, 10_000),
    rateLimits: {
      emailSendPerMinute: integer(env, 'RATE_LIMIT_EMAIL_SEND_PER_MINUTE', 120, 1),
      roomPerMinute: integer(env, 'RATE_LIMIT_ROOMS_PER_MINUTE', 600, 1),
      oauthAuthorizePerMinute: integer(env, 'RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE', 10, 1),
      oauthTokenPerHour: integer(env, 'RATE_LIMIT_OAUTH_TOKEN_PER_HOUR', 100, 1),
      funnelPreviewPerMinute: integer(env, 'RATE_LIMIT_FUNNEL_PREVIEW_PER_MINUTE', 120, 1),
      formSubmitPerMinute: integer(env, 'RATE_LIMIT_FORMS_PER_MINUTE', 60, 1),
    },
    accountBudget: {
      requests: integer(env, 'ACCOUNT_REQUEST_BUDGET', 6000, 1, MAX_REQUEST_BUDGET),
      windowSeconds: integer(env, 'ACCOUNT_REQUEST_BUDGET_WINDOW_SECONDS', 60, 1, 86_400),
    },
    accountConcurrency: {
      every: {
        concurrency: integer(env, 'ACCOUNT_CONCURRENCY', accountConcurrency, 1, 1000),
        waitMs: integer(env, 'ACCOUNT_CONCURRENCY_WAIT_MS', 2000, 0, 60_000),
        shared: databasePoolSize,
      },
      heavy: {
        concurrency: integer(env, 'ACCOUNT_HEAVY_CONCURRENCY', 4, 1, 1000),
        waitMs: integer(env, 'ACCOUNT_HEAVY_WAIT_MS', 2000, 0, 60_000),
      },
    },
    jobs: {
      pollingIntervalSeconds: number(env, 'JOBS_POLLING_INTERVAL_SECONDS', 2, 0.5),
      // Longer than any job's provider calls take; an account's removal sets its own.
      lockSeconds: integer(env, 'JOBS_LOCK_SECONDS', 120, 4, 3_600),
      runWorkers: env.RUN_WORKERS !== 'false',
      shares: {
        percent: integer(env, 'JOBS_ACCOUNT_SHARE_PERCENT', 50, 1, 100),
        tiers: {
          basic: integer(env, 'JOBS_BASIC_SHARE_PERCENT', 50, 1, 100),
          pro: integer(env, 'JOBS_PRO_SHARE_PERCENT', 50, 1, 100),
          enterprise: integer(env, 'JOBS_ENTERPRISE_SHARE_PERCENT', 50, 1, 100),
        },
      },
    },
    accountRemoval: {
      batchSize: integer(env, 'ACCOUNT_REMOVAL_BATCH_SIZE', 500, 1, 10_000),
      pauseMs: integer(env, 'ACCOUNT_REMOVAL_PAUSE_MS', 50, 0, 60_000),
    },
    retention: {
      mailEventBatches: retentionPeriod(env, 'MAIL_EVENT_BATCHES_RETENTION', '7d'),
      reviewWebhookEvents: retentionPeriod(env, 'REVIEW_WEBHOOK_EVENTS_RETENTION', '400d'),
      leadWebhookEvents: retentionPeriod(env, 'LEAD_WEBHOOK_EVENTS_RETENTION', '30d'),
      oauthAuditEvents: retentionPeriod(env, 'OAUTH_AUDIT_EVENTS_RETENTION', '365d'),
      oauthCodes: retentionPeriod(env, 'OAUTH_CODES_RETENTION', '1d'),
      oauthRefreshTokens: retentionPeriod(env, 'OAUTH_REFRESH_TOKENS_RETENTION', '30d'),
      appWebhookDeliveries: retentionPeriod(env, 'APP_WEBHOOK_DELIVERIES_RETENTION', '30d'),
      // A click is a repeat when its visitor clicked within the hour before: that hour is read.
      shortLinkClicks: retentionPeriod(env, 'SHORT_LINK_CLICKS_RETENTION', '90d', '1h'),
      // pg-boss keeps its once-a-minute cron jobs apart by their finished predecessors (less: cron is off).
      jobsCompleted: period(env, 'JOBS_COMPLETED_RETENTION', '12h', '60s'),
    },
    metrics: { token: env.METRICS_TOKEN || undefined, port: metricsPort },
    shutdown: {
      // In production a load balancer needs a moment to see readiness fail and stop sending.
      delayMs: integer(env, 'SHUTDOWN_DELAY_MS', production ? 5000 : 0, 0, 300_000),
      timeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 1000, 300_000),
    },
    reviews: {
      stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
      sms: {
        provider: smsProvider,
        accountSid: env.TWILIO_ACCOUNT_SID || undefined,
        authToken: env.TWILIO_AUTH_TOKEN || undefined,
        from: env.TWILIO_FROM || undefined,
        baseUrl: url(env, 'TWILIO_BASE_URL', ['http:', 'https:']) ?? 'https://api.twilio.com',
      },
      square: {
        webhookSignatureKey: env.SQUARE_WEBHOOK_SIGNATURE_KEY || undefined,
        // Kept exactly as registered (a trailing slash too): Square signs these very characters.
        webhookUrl: url(env, 'SQUARE_WEBHOOK_URL', ['http:', 'https:'])
          ? (env.SQUARE_WEBHOOK_URL as string)
          : `${publicBaseUrl}/reviews/webhook/orderprovider/order`,
        accessToken: env.SQUARE_ACCESS_TOKEN || undefined,
        baseUrl: url(env, 'SQUARE_BASE_URL', ['http:', 'https:']) ?? 'https://connect.squareup.com',
      },
    },
    leads: {
      appId: env.SOCIALNET_APP_ID || undefined,
      appSecret: env.SOCIALNET_APP_SECRET || undefined,
      verifyToken: env.SOCIALNET_VERIFY_TOKEN || undefined,
      graphApiUrl: url(env, 'GRAPH_API_URL', ['http:', 'https:']) ?? 'https://graph.facebook.com',
      graphApiVersion: graphApiVersion(env.GRAPH_API_VERSION),
      syncIntervalMinutes: integer(env, 'LEADS_SYNC_INTERVAL_MINUTES', 15, 1, 1440),
    },
    providers: providerCircuits(env),
  }
}

/**
 * On when an OTLP endpoint is set, unless OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none says otherwise.
 * grpc is refused: it would need another exporter and its HTTP/2 stack, and collectors take OTLP/HTTP too.
 */
function tracing(env: Env): Config['tracing'] {
  const endpoint =
    url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']) ??
    url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:'])
  const enabled = Boolean(endpoint) && env.OTEL_SDK_DISABLED !== 'true' && env.OTEL_TRACES_EXPORTER !== 'none'
  const protocol =
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf'
  if (enabled && protocol !== 'http/protobuf' && protocol !== 'http/json')
    throw new ConfigError('OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json')
  return { enabled, protocol: protocol as TracingProtocol }
}

/**
 * A request's body may be SendGrid's 30 MB: a minute is 4 Mbit/s. Headers are a few kilobytes. An idle
 * connection outlives a load balancer's usual 60 s, so that the balancer, not the service, closes it.
 */
function httpTimeouts(env: Env): HttpTimeouts {
  const requestMs = integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 60_000, 100, HOUR_MS)
  const headersMs = integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, HOUR_MS)
  if (headersMs > requestMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not be longer than HTTP_REQUEST_TIMEOUT_MS')
  }
  const keepAliveMs = integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, HOUR_MS)
  return { requestMs, headersMs, keepAliveMs }
}

export interface DatabaseReplicas {
  /** DATABASE_REPLICA_URLS: none by default, and every statement goes to DATABASE_URL. */
  urls: string[]
  /** DATABASE_REPLICA_MAX_LAG_MS: a replica further behind the primary leaves the rotation. */
  maxLagMs: number
}

function databaseReplicas(env: Env): DatabaseReplicas {
  const raw = env.DATABASE_REPLICA_URLS?.trim() ?? ''
  const urls =
    raw === ''
      ? []
      : raw.split(',').map((item, index) => {
          const replica = url({ DATABASE_REPLICA_URLS: item.trim() }, 'DATABASE_REPLICA_URLS', [
            'postgres:',
            'postgresql:',
          ])
          if (!replica)
            throw new ConfigError(`DATABASE_REPLICA_URLS has an empty URL at position ${index + 1}`)
          return replica
        })
  if (urls.length > 0 && !env.DATABASE_URL)
    throw new ConfigError('DATABASE_REPLICA_URLS needs DATABASE_URL: the embedded database has no replicas')
  const maxLagMs = integer(env, 'DATABASE_REPLICA_MAX_LAG_MS', REPLICA_MAX_LAG_DEFAULT_MS, 100, HOUR_MS)
  return { urls, maxLagMs }
}

function databaseWaits(env: Env): DatabaseWaits {
  const { statementMs, lockMs, idleInTransactionMs, connectionMs } = DATABASE_WAIT_DEFAULTS
  return {
    statementMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', statementMs, 100, HOUR_MS),
    lockMs: integer(env, 'DATABASE_LOCK_TIMEOUT_MS', lockMs, 10, HOUR_MS),
    idleInTransactionMs: integer(env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', idleInTransactionMs, 100),
    connectionMs: integer(env, 'DATABASE_CONNECTION_WAIT_MS', connectionMs, 100, MINUTE_MS),
  }
}

function providerCircuits(env: Env): ProviderCircuitSettings {
  const { failures, halfOpenAfterMs, concurrency, timeoutMs } = PROVIDER_CIRCUIT_DEFAULTS
  return {
    failures: integer(env, 'PROVIDER_CIRCUIT_FAILURES', failures, 1, 1000),
    halfOpenAfterMs: integer(env, 'PROVIDER_CIRCUIT_HALF_OPEN_AFTER_MS', halfOpenAfterMs, 100, HOUR_MS),
    concurrency: integer(env, 'PROVIDER_CONCURRENCY', concurrency, 1, 10_000),
    timeoutMs: integer(env, 'PROVIDER_TIMEOUT_MS', timeoutMs, 50, 300_000),
  }
}

function migrationSettings(env: Env): MigrationSettings {
  const defaults = MIGRATION_DEFAULTS
  return {
    lockTimeoutMs: integer(env, 'MIGRATION_LOCK_TIMEOUT_MS', defaults.lockTimeoutMs, 10, 60_000),
    lockAttempts: integer(env, 'MIGRATION_LOCK_ATTEMPTS', defaults.lockAttempts, 1, 1000),
  }
}

/** Graph's versions are `v<major>.<minor>`; anything else would build paths Graph does not know. */
function graphApiVersion(raw: string | undefined): string {
  const version = raw || 'v18.0'
  if (!/^v\d+\.\d+$/.test(version)) throw new ConfigError('GRAPH_API_VERSION must look like v18.0')
  return version
}

function devSecrets(dataDir: string): DevSecrets {
  const file = join(dataDir, 'secrets.json')
  const kept = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<DevSecrets>) : {}
  const secrets: DevSecrets = {
    jwtSecret: kept.jwtSecret ?? randomBytes(32).toString('hex'),
    adminToken: kept.adminToken ?? randomBytes(24).toString('hex'),
    secretsKey: kept.secretsKey ?? randomBytes(32).toString('hex'),
    oauthSigningKey: kept.oauthSigningKey ?? newSigningKey(),
    edgeSigningSecret: kept.edgeSigningSecret ?? randomBytes(32).toString('hex'),
  }
  // Written once, and again only when a newer version adds a secret the file lacks.
  if (Object.keys(secrets).some((name) => !(name in kept))) {
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 })
  }
  return secrets
}

/** A P-256 private key (PKCS #8 PEM) for ES256 access tokens. */
const newSigningKey = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string

/** Where the generated development secrets live; the CLI reads the admin token from here. */
export function devSecretsFile(dataDir: string): string {
  return join(resolve(dataDir), 'secrets.json')
}

/**
 * Production generates nothing and falls back to no development default: every secret a development
 * start generates into DATA_DIR that a feature which is on uses, the public URL, and the proxy it is reached
 * through must be set. All missing ones are named at once. A feature that is off needs nothing: SendGrid's
 * event key only when SendGrid sends the mail, the edge's secret only when the edge is purged (there is one).
 */
function requireProductionSettings(env: Env, mailProvider: Config['mail']['provider']): void {
  const missing = ['ADMIN_TOKEN', 'SECRETS_ENCRYPTION_KEY', 'OAUTH_SIGNING_KEY', 'PUBLIC_BASE_URL'].filter(
    (name) => !env[name],
  )
  if (!env.JWT_SECRET && !env.JWT_PUBLIC_KEY) missing.unshift('JWT_SECRET or JWT_PUBLIC_KEY')
  if (env.EDGE_PURGE_URL && !env.EDGE_SIGNING_SECRET)
    missing.push('EDGE_SIGNING_SECRET (EDGE_PURGE_URL is set: the edge worker signs its reads with it)')
  // Unsigned, anyone could post delivery events: an unsubscribe naming an account lists any address there.
  if (
    mailProvider === 'sendgrid' &&
    !env.SENDGRID_WEBHOOK_PUBLIC_KEY &&
    env.SENDGRID_WEBHOOK_UNSIGNED_UNSAFE !== 'true'
  )
    missing.push(
      'SENDGRID_WEBHOOK_PUBLIC_KEY (or SENDGRID_WEBHOOK_UNSIGNED_UNSAFE=true to accept unsigned events)',
    )
  // The server speaks plain HTTP: OAuth and every provider webhook take HTTPS only from a trusted proxy.
  if (!env.TRUST_PROXY || env.TRUST_PROXY === 'false')
    missing.push(
      "TRUST_PROXY (the TLS proxy's addresses: OAuth and the providers' webhooks require the HTTPS it forwards)",
    )
  if (missing.length > 0) {
    throw new ConfigError(`NODE_ENV=production needs these set: ${missing.join(', ')}`)
  }
}

/** A secret no one knows, kept by no one: what it guards refuses everything (a feature that is off). */
const unknownSecret = () => randomBytes(32).toString('hex')

/**
 * The public half of a key pair whose private half is dropped at once, so that no signature verifies with
 * it: production refuses SendGrid's events when no key is set, unless unsigned ones are accepted on purpose.
 */
function unheldEventKey(env: Env): string | undefined {
  if (env.SENDGRID_WEBHOOK_UNSIGNED_UNSAFE === 'true') return undefined
  return generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ type: 'spki', format: 'der' })
    .toString('base64')
}

/**
 * The spec requires HTTPS for the authorization and webhook endpoints in production, and PUBLIC_BASE_URL is
 * the OAuth issuer and the address every provider is given: it is https there, or loopback (a production
 * build tried on one machine), which is never reached from outside it.
 */
function requireHttpsPublicUrl(publicBaseUrl: string): void {
  const { protocol, hostname } = new URL(publicBaseUrl)
  if (protocol === 'http:' && !isLoopback(hostname)) {
    throw new ConfigError(
      'PUBLIC_BASE_URL must be https:// in production (http:// only for localhost, 127.0.0.0/8 or [::1])',
    )
  }
}

/** A URL's hostname (the URL parser writes 127.1 as 127.0.0.1, and IPv6 in brackets) on loopback. */
const isLoopback = (hostname: string) =>
  hostname === 'localhost' || hostname === '[::1]' || (isIPv4(hostname) && hostname.startsWith('127.'))

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = env[name] || fallback
  if (!allowed.includes(value as T)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${value}"`)
  }
  return value as T
}

function number(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < min) {
    throw new ConfigError(`${name} must be a number of at least ${min}, got "${raw}"`)
  }
  return value
}

function integer(env: Env, name: string, fallback: number, min = 0, max?: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  // Digits only: Number() would also take 0x10, 1e3 and surrounding blanks.
  const value = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) {
    const range = max === undefined ? `of at least ${min}` : `from ${min} to ${max}`
    throw new ConfigError(`${name} must be an integer ${range}, got "${raw}"`)
  }
  return value
}

const PERIOD_UNITS: Record<string, number> = { s: 1000, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS }
/** The longest period: a century, far inside what a Date can be taken back by. */
const MAX_PERIOD_MS = 36_500 * DAY_MS

/**
 * A length of time written with its unit (`90s`, `15m`, `12h`, `30d`) in milliseconds; undefined for
 * anything else. Retention periods range from seconds (tests) to a year, which no one unit in a name writes well.
 */
function periodMs(raw: string): number | undefined {
  const [, amount, unit] = /^(\d{1,9})([smhd])$/.exec(raw) ?? []
  const ms = amount && unit ? Number(amount) * (PERIOD_UNITS[unit] as number) : 0
  return ms > 0 && ms <= MAX_PERIOD_MS ? ms : undefined
}

/** What a period setting accepts, in its error message. */
const periodAccepted = (least: string | undefined) =>
  `a period${least ? ` of at least ${least}` : ''} such as 30d, 12h, 15m or 90s`

/** A period; `least` (itself a period) is the shortest accepted. */
function period(env: Env, name: string, fallback: string, least?: string): number {
  const raw = env[name] || fallback
  const ms = periodMs(raw)
  if (ms === undefined || ms < (least ? (periodMs(least) as number) : 0))
    throw new ConfigError(`${name} must be ${periodAccepted(least)}, got "${raw}"`)
  return ms
}

/** A comma-separated list of periods, in order (`5s,5m,30m`); empty: none. */
function periods(env: Env, name: string, fallback: string): number[] {
  const raw = env[name] ?? fallback
  if (raw.trim() === '') return []
  return raw.split(',').map((item) => {
    const ms = periodMs(item.trim())
    if (ms === undefined)
      throw new ConfigError(`${name} must be periods separated by commas, such as 5s,5m,2h, got "${raw}"`)
    return ms
  })
}

/** A retention period, or `off` (undefined): the table keeps every row. */
function retentionPeriod(env: Env, name: string, fallback: string, least?: string): number | undefined {
  const raw = env[name] || fallback
  if (raw === 'off') return undefined
  const ms = periodMs(raw)
  if (ms === undefined || ms < (least ? (periodMs(least) as number) : 0))
    throw new ConfigError(`${name} must be ${periodAccepted(least)}, or off, got "${raw}"`)
  return ms
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name]
  if (!raw) return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be a URL`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.map((p) => p.replace(':', '')).join(' or ')}`)
  }
  return raw.replace(/\/+$/, '')
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false`)
  return raw === 'true'
}

function addressRanges(env: Env, name: string): AddressRange[] {
  try {
    return parseAddressRanges(env[name] ?? '')
  } catch (error) {
    throw new ConfigError(
      `${name} must be IP addresses or CIDR ranges, comma-separated: ${(error as Error).message}`,
    )
  }
}

function secretsKey(raw: string | undefined): Buffer | undefined {
  if (!raw) return undefined
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64')
  if (key.length !== 32)
    throw new ConfigError('SECRETS_ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64')
  return key
}

/**
 * The proxy-addr Fastify compiles TRUST_PROXY with, resolved from Fastify's own folder: a value is accepted
 * here exactly when Fastify accepts it, instead of Fastify throwing its stack at start.
 */
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'))
const proxyAddr = fastifyRequire('@fastify/proxy-addr') as {
  compile(values: string[]): unknown
}

const TRUST_PROXY_ACCEPTS =
  "true, false or the proxies' addresses and CIDRs, comma-separated (e.g. 10.0.0.0/8, loopback, linklocal, uniquelocal)"

/**
 * Fastify trusts nothing for a hop count (it cannot verify the immediate peer with one, so it fails closed):
 * `TRUST_PROXY=1` would silently leave `https` and client addresses unread behind the proxy, and every
 * endpoint that requires HTTPS in production refused. A count is refused at start instead.
 */
function trustProxy(raw: string | undefined): boolean | string {
  if (!raw || raw === 'false') return false
  if (raw === 'true') return true
  if (/^\d+$/.test(raw))
    throw new ConfigError(
      `TRUST_PROXY must be ${TRUST_PROXY_ACCEPTS}, got "${raw}": a hop count is not trusted`,
    )
  try {
    // As Fastify splits a string value.
    proxyAddr.compile(raw.split(',').map((value) => value.trim()))
  } catch {
    throw new ConfigError(`TRUST_PROXY must be ${TRUST_PROXY_ACCEPTS}, got "${raw}"`)
  }
  return raw
}
