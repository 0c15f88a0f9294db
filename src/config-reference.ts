/**
 * Every variable the service and its CLI read (config.ts, cli/admin-client.ts), with its default and what it
 * does: docs/configuration.md's tables are generated from these (`npx tsx scripts/configuration-docs.ts`), and
 * config-reference.test.ts fails when a variable read is missing here or a default differs from config.ts's.
 */

export interface VariableReference {
  name: string
  /** The value the variable takes when unset, as it would be written; checked against loadConfig. */
  default?: string
  /** The default as the page shows it, when the value alone says too little (or there is none to check). */
  shown?: string
  description: string
}

export interface VariableSection {
  title: string
  intro?: string
  variables: VariableReference[]
}

export const CONFIG_REFERENCE: VariableSection[] = [
  {
    title: 'The process',
    intro: 'Where it listens, what it logs, how it is reached and how it stops.',
    variables: [
      { name: 'PORT', default: '3000', description: 'the port the API listens on' },
      {
        name: 'HOST',
        default: '127.0.0.1',
        shown: '`127.0.0.1` (`0.0.0.0` in production)',
        description:
          "the address the API listens on: a development server is this machine's alone (its admin API and outbox page with it) unless `HOST` says otherwise (`0.0.0.0`: every address)",
      },
      {
        name: 'NODE_ENV',
        default: 'development',
        description:
          '`production` generates nothing and writes no secrets to disk: it refuses to start, naming every missing one, until `ADMIN_TOKEN`, `JWT_SECRET` (or `JWT_PUBLIC_KEY`), `SECRETS_ENCRYPTION_KEY`, `OAUTH_SIGNING_KEY`, `PUBLIC_BASE_URL` and `TRUST_PROXY` are all set, and the settings of the features that are on: `SENDGRID_WEBHOOK_PUBLIC_KEY` (or `SENDGRID_WEBHOOK_UNSIGNED_UNSAFE=true`) with `MAIL_PROVIDER=sendgrid`, `EDGE_SIGNING_SECRET` with `EDGE_PURGE_URL`; without `DATABASE_URL` it logs a warning that it runs on the embedded database. Logs are JSON, except in development when stdout is a terminal: readable lines (pino-pretty, a development dependency; JSON where it is not installed)',
      },
      {
        name: 'LOG_LEVEL',
        default: 'info',
        shown: '`info` (`silent` under `NODE_ENV=test`)',
        description: 'pino log level',
      },
      {
        name: 'DATA_DIR',
        default: './data',
        description: 'embedded database, generated development secrets, local object storage',
      },
      {
        name: 'PUBLIC_BASE_URL',
        shown: '`http://127.0.0.1:PORT` (printed at start)',
        description:
          "the service's public URL (webhook callbacks, links in mail, OAuth issuer); in production `https://` (plain `http://` only on localhost, 127.0.0.0/8 or [::1]), else the start is refused",
      },
      {
        name: 'TRUST_PROXY',
        default: 'false',
        description:
          "behind a TLS-terminating proxy: `true` or the proxies' addresses or CIDRs (`10.0.0.0/8`, `loopback`); a hop count is refused, as Fastify trusts nothing by one. Required in production (unset or `false`, it refuses to start): the server speaks plain HTTP, and the authorization and webhook endpoints accept only HTTPS, learnt from the proxy's `X-Forwarded-Proto`; one said by a peer it does not trust is refused with a warning naming `TRUST_PROXY`, the header and the peer",
      },
      {
        name: 'SHUTDOWN_DELAY_MS',
        default: '0',
        shown: '`5000` in production, else `0`',
        description:
          'after SIGTERM, how long the server keeps serving while `/status/ready` answers 503, so a load balancer stops sending',
      },
      {
        name: 'SHUTDOWN_TIMEOUT_MS',
        default: '10000',
        description:
          'after that delay, how long in-flight requests and running jobs get to finish before the process exits 1 anyway',
      },
      {
        name: 'METRICS_TOKEN',
        description:
          'bearer token of `GET /metrics` (Prometheus text: request durations by route, jobs per queue and state, event-loop lag, heap and RSS, database pool); at least 16 characters. With neither it nor `METRICS_PORT`, `/metrics` is not served',
      },
      {
        name: 'METRICS_PORT',
        description:
          'serves `/metrics` on this port only (no token), for a port only the monitoring network reaches',
      },
    ],
  },
  {
    title: 'Secrets',
    intro:
      'Generated once into `DATA_DIR/secrets.json` by a development start. Production generates none: each is required there, except as its row says. A PEM value spans several lines: in `.env`, put it in double quotes.',
    variables: [
      {
        name: 'ADMIN_TOKEN',
        shown: 'generated into `DATA_DIR`',
        description: 'bearer token of the admin API under `/v1/admin`',
      },
      {
        name: 'JWT_SECRET',
        shown: 'generated into `DATA_DIR`',
        description: 'HS256 secret of platform JWTs (at least 32 characters)',
      },
      {
        name: 'JWT_PUBLIC_KEY',
        description:
          'PEM public key (RSA → RS256, EC → ES256) to verify platform JWTs instead of `JWT_SECRET`',
      },
      {
        name: 'JWT_PRIVATE_KEY',
        description:
          'PEM private key matching `JWT_PUBLIC_KEY`, to mint tokens through the admin API in that mode',
      },
      {
        name: 'SECRETS_ENCRYPTION_KEY',
        shown: 'generated into `DATA_DIR`',
        description:
          '32 bytes (64 hex characters or base64) sealing stored credentials (subuser API keys, Meta user and page tokens), keying the hashes of OAuth client secrets and signing unsubscribe links; required in production',
      },
      {
        name: 'OAUTH_SIGNING_KEY',
        shown: 'generated into `DATA_DIR`',
        description:
          'the P-256 private key (PEM or JWK) signing OAuth access tokens (ES256); its public half is at `/.well-known/jwks.json`; required in production',
      },
      {
        name: 'OAUTH_PREVIOUS_PUBLIC_KEYS',
        description:
          'JSON array of public JWKs still published at `/.well-known/jwks.json` after `OAUTH_SIGNING_KEY` is replaced, until the access tokens they signed have expired (an hour)',
      },
      {
        name: 'EDGE_SIGNING_SECRET',
        shown: 'generated into `DATA_DIR`',
        description:
          "HMAC key (at least 32 characters) of the edge endpoints' `_sig` (`/v1/funnels/cloudflare/step`); the edge worker holds the same; required in production when `EDGE_PURGE_URL` is set (the edge is used). Production without it refuses every edge request with 401",
      },
    ],
  },
  {
    title: 'PostgreSQL and Redis',
    intro:
      'Without `DATABASE_URL` the service runs the embedded PGlite in `DATA_DIR`, one process at a time; without `REDIS_URL` each instance keeps its limits and real-time events to itself.',
    variables: [
      {
        name: 'DATABASE_URL',
        description: 'PostgreSQL (`postgres://…`); unset means the embedded PGlite in `DATA_DIR`',
      },
      {
        name: 'DATABASE_POOL_SIZE',
        default: '20',
        description:
          'PostgreSQL connections of one process, shared by the API and the job handlers (the job queue keeps 4 more of its own)',
      },
      {
        name: 'DATABASE_REPLICA_URLS',
        description:
          "PostgreSQL streaming replicas of `DATABASE_URL` (comma-separated `postgres://…` URLs) that serve the reads: every GET authenticated as an account or as the operator reads on a replica that has replayed the account's last write and the operator's (read your writes, across instances through Redis); writes, transactions, jobs and public routes stay on the primary. Each replica has a pool of `DATABASE_POOL_SIZE`. Needs `DATABASE_URL`: the embedded database has no replicas (see [Reads on replicas](deploying.md#reads-on-replicas))",
      },
      {
        name: 'DATABASE_REPLICA_MAX_LAG_MS',
        default: '5000',
        description:
          "a replica further behind the primary than this leaves the rotation until it catches up, as one that does not answer does; the most others' writes (a colleague's, a webhook's) may be late in a read",
      },
      {
        name: 'DATABASE_STATEMENT_TIMEOUT_MS',
        default: '3000',
        description:
          "the longest one statement of the API or a job may run (PostgreSQL's `statement_timeout`); past it the request answers 503 with `Retry-After`",
      },
      {
        name: 'DATABASE_LOCK_TIMEOUT_MS',
        default: '1000',
        description:
          'the longest a statement waits for a lock (`lock_timeout`), e.g. behind a migration or a long transaction: requests on a locked table answer 503 instead of holding every pool connection',
      },
      {
        name: 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS',
        default: '10000',
        description:
          'a transaction left open with nothing running is ended by PostgreSQL after this (`idle_in_transaction_session_timeout`)',
      },
      {
        name: 'DATABASE_CONNECTION_WAIT_MS',
        default: '2000',
        description:
          'the longest a request waits for a pool connection, or for a new connection to PostgreSQL; past it, 503 with `Retry-After`',
      },
      {
        name: 'MIGRATION_LOCK_TIMEOUT_MS',
        default: '500',
        description:
          "how long a migration waits for a table's lock (its `lock_timeout`) before it is rolled back and tried again: what requests queued behind it wait at most, kept below `DATABASE_LOCK_TIMEOUT_MS` so that they wait rather than fail",
      },
      {
        name: 'MIGRATION_LOCK_ATTEMPTS',
        default: '20',
        description:
          'tries of a migration that cannot get its lock, 0.5 s apart doubling to 30 s (with jitter), before `db:migrate` gives up (4 to 7 minutes in all)',
      },
      {
        name: 'REDIS_URL',
        description:
          'rate limits and real-time events shared across instances; unset keeps them in memory and in process',
      },
      {
        name: 'REDIS_COMMAND_TIMEOUT_MS',
        default: '1000',
        description:
          "the longest a Redis command waits, reconnecting included; past it the route limits count in the instance's memory, and what must have Redis (sign-in lockouts) answers 503",
      },
    ],
  },
  {
    title: 'HTTP',
    intro: 'How long a client may take.',
    variables: [
      {
        name: 'HTTP_REQUEST_TIMEOUT_MS',
        default: '60000',
        description:
          'the longest a client may take to send a whole request, body included, from its first byte; past it 408 and the connection is closed',
      },
      {
        name: 'HTTP_HEADERS_TIMEOUT_MS',
        default: '10000',
        description:
          "the longest a client may take to send a request's headers (at most `HTTP_REQUEST_TIMEOUT_MS`); past it 408 and the connection is closed",
      },
      {
        name: 'HTTP_KEEP_ALIVE_TIMEOUT_MS',
        default: '72000',
        description:
          "how long an idle connection is kept open for the client's next request (longer than a load balancer's usual 60 s)",
      },
    ],
  },
  {
    title: 'Jobs',
    intro: 'The job workers (pg-boss) and the work they do in batches.',
    variables: [
      {
        name: 'RUN_WORKERS',
        default: 'true',
        description: '`false` makes an API-only process (run `npm run worker` elsewhere)',
      },
      {
        name: 'JOBS_POLLING_INTERVAL_SECONDS',
        default: '2',
        description: 'how often idle workers look for jobs (at least 0.5)',
      },
      {
        name: 'JOBS_LOCK_SECONDS',
        default: '120',
        description:
          'a job still running this long after it started is taken to belong to a dead process and is retried by a live one, within 1.25 times this (4 to 3600)',
      },
      {
        name: 'JOBS_ACCOUNT_SHARE_PERCENT',
        default: '50',
        description:
          "how much of each job queue's workers one account may hold at once while its jobs wait (1 to 100, at least one job): the rest stays free for the other accounts, so that one account's backlog delays another's job by at most a fetch. Applies to a job whose account's tier is not known. At 50 or less a busy account fills at most one of a queue's two fetch loops; above, another account's job may wait for one batch",
      },
      {
        name: 'JOBS_BASIC_SHARE_PERCENT',
        default: '50',
        description: 'the same share for an account of tier `basic` (1 to 100)',
      },
      {
        name: 'JOBS_PRO_SHARE_PERCENT',
        default: '50',
        description: 'the same share for an account of tier `pro` (1 to 100)',
      },
      {
        name: 'JOBS_ENTERPRISE_SHARE_PERCENT',
        default: '50',
        description: 'the same share for an account of tier `enterprise` (1 to 100)',
      },
      {
        name: 'ACCOUNT_REMOVAL_BATCH_SIZE',
        default: '500',
        description:
          "rows an account's removal (`DELETE /v1/admin/accounts/:id`) deletes per statement (1 to 10,000)",
      },
      {
        name: 'ACCOUNT_REMOVAL_PAUSE_MS',
        default: '50',
        description:
          "how long an account's removal rests after each batch (0 to 60,000), leaving the database to the other tenants' requests",
      },
    ],
  },
  {
    title: 'Retention',
    intro:
      'How long each event table keeps a row it no longer needs: a period with its unit (`90s`, `15m`, `12h`, `30d`), or `off` to keep every row. Customer data has no setting: retention never removes it.',
    variables: [
      {
        name: 'MAIL_EVENT_BATCHES_RETENTION',
        default: '7d',
        description:
          "how long SendGrid's delivery-event posts are kept once processed (their events stay with the communications). Every `…_RETENTION` is a period with its unit (`90s`, `15m`, `12h`, `30d`), or `off` to keep every row; a job deletes what is older every minute, in batches. Customer data (contacts, communications and their events, messages, leads, form submissions, review requests) has no setting: retention never removes it",
      },
      {
        name: 'REVIEW_WEBHOOK_EVENTS_RETENTION',
        default: '400d',
        description: `how long the reviews' Stripe, Square and account events are kept once applied (one still waiting for its job is kept). They are also the order history that the \`new\` and \`vip\` customer segments count: shorter, \`new\` means "no order within the period"`,
      },
      {
        name: 'LEAD_WEBHOOK_EVENTS_RETENTION',
        default: '30d',
        description: "how long Meta's lead events are kept once filed",
      },
      {
        name: 'OAUTH_AUDIT_EVENTS_RETENTION',
        default: '365d',
        description: 'how long the OAuth audit trail (`GET /v1/admin/oauth/audit`) keeps an event',
      },
      {
        name: 'OAUTH_CODES_RETENTION',
        default: '1d',
        description:
          'how long an authorization code is kept after it expired; until then a replayed code revokes its grant',
      },
      {
        name: 'OAUTH_REFRESH_TOKENS_RETENTION',
        default: '30d',
        description:
          'how long a refresh token is kept after it was revoked or expired; until then a reused one revokes its grant',
      },
      {
        name: 'APP_WEBHOOK_DELIVERIES_RETENTION',
        default: '30d',
        description:
          "how long an app webhook delivery is kept once settled (delivered, dead or dropped) and untouched: until then the app's developer lists it (`GET /v1/admin/oauth/apps/:id/webhook-deliveries`) and may replay it",
      },
      {
        name: 'SHORT_LINK_CLICKS_RETENTION',
        default: '90d',
        description:
          'how long raw short-link clicks are kept (at least `1h`: a click is a repeat when its visitor clicked within the hour before)',
      },
      {
        name: 'JOBS_COMPLETED_RETENTION',
        default: '12h',
        description:
          'how long finished jobs stay in the job queue before pg-boss deletes them (at least `60s`)',
      },
    ],
  },
  {
    title: "Each account's share",
    intro: 'What one account may take of the service, so that it cannot slow the others.',
    variables: [
      {
        name: 'ACCOUNT_REQUEST_BUDGET',
        default: '6000',
        description:
          "requests an account may make in each budget window, all its users and apps together, on all instances together (1 to 1,000,000,000): past it 429 with `Retry-After`, and every answer to the account carries `RateLimit-Policy` and `RateLimit`; an account's own budget is set by `PUT /v1/admin/accounts/:id/request-budget`",
      },
      {
        name: 'ACCOUNT_REQUEST_BUDGET_WINDOW_SECONDS',
        default: '60',
        description:
          "the budget's window (1 to 86,400 s); windows start at multiples of it, alike on every instance",
      },
      {
        name: 'ACCOUNT_CONCURRENCY',
        default: '10',
        shown: 'half of `DATABASE_POOL_SIZE` (`10`)',
        description:
          "requests of one account an instance runs at once, whatever the route, once the instance runs as many requests as its pool has connections (1 to 1,000): one account's requests cannot hold the pool while another's wait for a connection",
      },
      {
        name: 'ACCOUNT_CONCURRENCY_WAIT_MS',
        default: '2000',
        description:
          'how long one more request of the account waits for a turn (as many wait as may run) before its 429 with `Retry-After: 1` (0 to 60,000; 0: refused at once)',
      },
      {
        name: 'ACCOUNT_HEAVY_CONCURRENCY',
        default: '4',
        description:
          'heavy requests of one account (exports, review statistics, contact, form and message searches) an instance runs at once (1 to 1,000), so that one account cannot hold the database pool',
      },
      {
        name: 'ACCOUNT_HEAVY_WAIT_MS',
        default: '2000',
        description:
          'how long one more heavy request of the account waits for a turn (as many wait as may run) before its 429 with `Retry-After: 1` (0 to 60,000; 0: refused at once)',
      },
      {
        name: 'ROOM_SEARCH_RANKED_HITS',
        default: '200',
        description:
          "how many of the newest hits a room search (`GET /api/conversation-v2/room/search`) ranks; when more match, its total is this bound with `total_exact: false`. It first reads ten times as many of the account's newest messages",
      },
    ],
  },
  {
    title: 'Rate limits',
    intro: "Per route, on top of the account's budget; shared across instances with `REDIS_URL`.",
    variables: [
      {
        name: 'RATE_LIMIT_EMAIL_SEND_PER_MINUTE',
        default: '120',
        description: 'per account, on the email send endpoint',
      },
      {
        name: 'RATE_LIMIT_ROOMS_PER_MINUTE',
        default: '600',
        description: 'per user, on the chat-room endpoints',
      },
      {
        name: 'RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE',
        default: '10',
        description: 'per IP, on each `/v1/auth/oauth/authorize` page',
      },
      {
        name: 'RATE_LIMIT_OAUTH_TOKEN_PER_HOUR',
        default: '100',
        description: 'per authenticated client, on `/v1/auth/oauth/token`',
      },
      {
        name: 'RATE_LIMIT_FUNNEL_PREVIEW_PER_MINUTE',
        default: '120',
        description: 'per IP, on the public `/v1/funnels/preview`',
      },
      {
        name: 'RATE_LIMIT_FORMS_PER_MINUTE',
        default: '60',
        description: 'per IP, on the public `/v1/funnels/forms/submit`',
      },
    ],
  },
  {
    title: 'OAuth and app webhooks',
    intro:
      'The authorization server for third-party apps, and the notifications sent to their `webhook_url`.',
    variables: [
      {
        name: 'OAUTH_REFRESH_GRACE_SECONDS',
        default: '60',
        description:
          'how long a replaced refresh token may be presented once more, as a retry of a lost answer, getting the same new refresh token; any other reuse revokes the grant (RFC 9700 4.14.2)',
      },
      {
        name: 'OAUTH_REVOCATION_CACHE_MS',
        default: '5000',
        description:
          "how long an instance takes a grant it checked as not revoked, an account as active and a user as a member before asking the database again: another instance refuses a revoked grant's access tokens, a suspended account's tokens, a removed member's and a user's tokens issued before a password reset within this time (at once with `REDIS_URL`)",
      },
      {
        name: 'OAUTH_REQUIRE_PKCE',
        default: 'false',
        description:
          '`true`: `/v1/auth/oauth/authorize` requires a PKCE `code_challenge` (S256) of every app, confidential ones too (RFC 9700 2.1.1), else redirects with `invalid_request` `code_challenge is required`; `false`: only public apps must send one',
      },
      {
        name: 'APP_WEBHOOK_ALLOWED_CIDRS',
        description:
          'in production app webhooks (`webhook_url`) go to public addresses only: a URL on a private, loopback, link-local (cloud metadata), unique-local, CGNAT, unspecified, multicast or reserved address is refused at registration (400) and at delivery, after DNS resolution (the attempt fails, naming the address). This lists the ranges still allowed, comma-separated (`10.1.0.0/16,fd00:1::/64`), for receivers inside the network. Outside production any address is allowed',
      },
      {
        name: 'APP_WEBHOOK_CONCURRENCY_PER_APP',
        default: '8',
        description:
          "an app's webhook deliveries in flight at once, across every instance (1 to 100): an app that answers slowly or not at all holds this many sends, never more; its other deliveries wait in the database",
      },
      {
        name: 'APP_WEBHOOK_CONCURRENCY',
        default: '100',
        description: 'webhook deliveries in flight at once in one instance, every app together (1 to 1,000)',
      },
      {
        name: 'APP_WEBHOOK_TIMEOUT_MS',
        default: '5000',
        description:
          "how long an app's receiver has to answer an attempt (100 to 60,000); no answer by then is a failed attempt",
      },
      {
        name: 'APP_WEBHOOK_RETRY_SCHEDULE',
        default: '5s,5m,30m,2h,5h,10h,10h',
        description:
          "the waits before each retry of a failed delivery (Standard Webhooks' schedule: 27.6 hours in all); each wait is drawn between half the step and the step (jitter). After the last the delivery is `dead`, and its app's developer may replay it",
      },
      {
        name: 'APP_WEBHOOK_POLL_MS',
        default: '500',
        description:
          'how often an instance looks for app webhook deliveries that are due (10 to 60,000); it also looks each time an attempt ends',
      },
    ],
  },
  {
    title: 'Outside providers',
    intro:
      'Every call to SendGrid, Twilio, Graph, the edge, Square, the listings API and the conversation socket service.',
    variables: [
      {
        name: 'PROVIDER_TIMEOUT_MS',
        default: '10000',
        description:
          "how long a call to an outside provider (SendGrid, Twilio, Graph, the edge's purge API, Square, the listings API, the conversation socket service) may take before it counts as failed (50 to 300,000); SendGrid's mail send, which uploads attachments, gets three times this",
      },
      {
        name: 'PROVIDER_CIRCUIT_FAILURES',
        default: '5',
        description:
          "consecutive failures (5xx, timeouts, network errors; never a 4xx) after which a provider's circuit opens and this instance refuses calls to it at once (1 to 1,000)",
      },
      {
        name: 'PROVIDER_CIRCUIT_HALF_OPEN_AFTER_MS',
        default: '30000',
        description:
          'how long an open circuit refuses before one call tests the provider again (100 to 3,600,000); that call succeeding closes it, failing opens it for as long again',
      },
      {
        name: 'PROVIDER_CONCURRENCY',
        default: '20',
        description:
          'calls in flight at once to one provider from one instance (1 to 10,000); one more is refused at once (503 `Retry-After: 1` to the API, a job runs again a second or two later)',
      },
    ],
  },
  {
    title: 'Object storage',
    intro: 'Attachments and uploaded files: in S3 when `S3_BUCKET` is set, else under `DATA_DIR/objects`.',
    variables: [
      {
        name: 'S3_BUCKET',
        description: 'object storage in this S3 bucket; unset keeps files under `DATA_DIR/objects`',
      },
      { name: 'S3_ENDPOINT', description: 'an S3-compatible server (MinIO, R2); unset, AWS' },
      { name: 'S3_REGION', default: 'us-east-1', description: "the bucket's region" },
      {
        name: 'S3_ACCESS_KEY_ID',
        description: "the key's id; unset with its secret, the AWS SDK's default credential chain",
      },
      { name: 'S3_SECRET_ACCESS_KEY', description: "the key's secret" },
    ],
  },
  {
    title: 'Email',
    variables: [
      {
        name: 'MAIL_PROVIDER',
        default: 'outbox',
        description:
          '`sendgrid` sends through SendGrid; `outbox` keeps sent mail in the database only (module `OUTBOX`)',
      },
      {
        name: 'SENDGRID_API_KEY',
        description:
          'the parent SendGrid key; with `sendgrid` and neither it nor a subuser key, sending answers 403 `Sendgrid api key is misconfigured.`',
      },
      {
        name: 'SENDGRID_BASE_URL',
        default: 'https://api.sendgrid.com',
        description: "SendGrid's API (tests point it at a fake)",
      },
      {
        name: 'SENDGRID_WEBHOOK_PUBLIC_KEY',
        description:
          "the Signed Event Webhook verification key (base64 DER or PEM, P-256); set, event posts unsigned, wrongly signed or signed more than 300 s from now (either way) get 403. Required in production with `MAIL_PROVIDER=sendgrid`: unsigned, anyone could post events (an `unsubscribe` lists an address on an account's do-not-disturb list). Production without it and without `SENDGRID_WEBHOOK_UNSIGNED_UNSAFE=true` (not sending through SendGrid) refuses every event post with 403",
      },
      {
        name: 'SENDGRID_WEBHOOK_UNSIGNED_UNSAFE',
        default: 'false',
        description:
          '`true` lets production start without `SENDGRID_WEBHOOK_PUBLIC_KEY` and accept unsigned delivery events from anyone (a warning is logged at start); unsafe, for a deployment that shields the webhook some other way',
      },
      {
        name: 'EMAIL_SEND_MAINTENANCE',
        default: 'false',
        description: '`true` makes the send endpoint answer 503',
      },
    ],
  },
  {
    title: 'Chat rooms',
    variables: [
      {
        name: 'CONVERSATION_SOCKET_URL',
        description:
          'conversation socket service; events are POSTed to `{url}/emit` by jobs. Unset: none are queued (the built-in Socket.IO gateway still delivers room events)',
      },
    ],
  },
  {
    title: 'Funnels and edge delivery',
    variables: [
      {
        name: 'EDGE_PURGE_URL',
        description: `the edge's cache purge API, called by \`DELETE /v1/funnels/:id/cache\` with \`{ "tags": [...] }\` (Cloudflare's \`purge_cache\` body): the edge worker's \`/__edge/purge\`, see [edge/README.md](../edge/README.md). Unset: purges stay local`,
      },
      { name: 'EDGE_API_TOKEN', description: 'sent to `EDGE_PURGE_URL` as `Authorization: Bearer`' },
    ],
  },
  {
    title: 'Listings',
    variables: [
      {
        name: 'LISTINGS_API_URL',
        default: 'https://api.yextapis.com',
        description: 'the external listings API',
      },
      { name: 'LISTINGS_API_KEY', description: 'its key, sent as the `api-key` header' },
      {
        name: 'LISTINGS_API_VERSION',
        default: '20200525',
        description: 'the `v` query parameter of listings calls',
      },
    ],
  },
  {
    title: 'Reviews',
    variables: [
      {
        name: 'STRIPE_WEBHOOK_SECRET',
        description:
          "Stripe's endpoint secret (`whsec_…`) verifying `Stripe-Signature` on the reviews payment webhook; unset, every post there gets 400",
      },
      {
        name: 'SMS_PROVIDER',
        default: 'outbox',
        description:
          "`outbox` keeps review request SMS in the database only; `twilio` sends them through Twilio's Messages API",
      },
      { name: 'TWILIO_ACCOUNT_SID', description: "Twilio's account; required with `SMS_PROVIDER=twilio`" },
      {
        name: 'TWILIO_AUTH_TOKEN',
        description:
          "Twilio's auth token, required with `SMS_PROVIDER=twilio`. It also verifies `X-Twilio-Signature` on `POST /reviews/webhook/sms/inbound` (set it with the outbox too if Twilio receives the replies; unset, that webhook answers 403). Twilio signs the URL it called: point the number's messaging webhook at `PUBLIC_BASE_URL/reviews/webhook/sms/inbound` exactly",
      },
      {
        name: 'TWILIO_FROM',
        description: 'the number SMS are sent from when the configuration names no `from_phone`',
      },
      {
        name: 'TWILIO_BASE_URL',
        default: 'https://api.twilio.com',
        description: "Twilio's API (a fake in tests)",
      },
      {
        name: 'SQUARE_WEBHOOK_SIGNATURE_KEY',
        description: "the Square webhook subscription's signature key; unset, every order webhook gets 400",
      },
      {
        name: 'SQUARE_WEBHOOK_URL',
        shown: '`PUBLIC_BASE_URL/reviews/webhook/orderprovider/order`',
        description: 'the notification URL exactly as registered with Square (Square signs it with the body)',
      },
      {
        name: 'SQUARE_ACCESS_TOKEN',
        description:
          'reads orders and customers (`ORDERS_READ`, `CUSTOMERS_READ`); unset, the order carried by the event is used, with no customer lookup',
      },
      {
        name: 'SQUARE_BASE_URL',
        default: 'https://connect.squareup.com',
        description: "Square's API (`https://connect.squareupsandbox.com` for the sandbox; a fake in tests)",
      },
    ],
  },
  {
    title: 'Social lead ads',
    variables: [
      {
        name: 'SOCIALNET_APP_ID',
        description:
          'the Meta app of lead ads: with its secret, gets the app token for webhook registration; unset, registration answers 400 `ERROR_CREATING_WEBHOOK` naming it',
      },
      {
        name: 'SOCIALNET_APP_SECRET',
        description:
          "the Meta app's secret: gets the app token with `SOCIALNET_APP_ID`, and verifies `X-Hub-Signature` and `X-Hub-Signature-256` (each when sent, at least one) on `POST /webhooks/socialnet/leads`; unset, every lead event gets 403",
      },
      {
        name: 'SOCIALNET_VERIFY_TOKEN',
        description:
          'what Meta must send as `hub.verify_token` when it checks `GET /webhooks/socialnet/leads` (given to Meta at registration); unset, the check gets 403',
      },
      {
        name: 'GRAPH_API_URL',
        default: 'https://graph.facebook.com',
        description: "Meta's Graph API: every call goes to `{url}/{version}/…` (a fake in tests)",
      },
      {
        name: 'GRAPH_API_VERSION',
        default: 'v18.0',
        description: "the Graph API version in every call's path (`v<major>.<minor>`)",
      },
      {
        name: 'LEADS_SYNC_INTERVAL_MINUTES',
        default: '15',
        description:
          'how often each live lead campaign is reconciled with Graph (leads the webhook missed) and its page subscription checked',
      },
    ],
  },
  {
    title: 'Tracing',
    intro: 'OpenTelemetry, off unless an OTLP endpoint is set.',
    variables: [
      {
        name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
        description:
          "OpenTelemetry tracing, off while this and `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` are unset (no OpenTelemetry SDK code is then loaded): the collector's OTLP/HTTP address; spans go to `{endpoint}/v1/traces`. Spans: each request (`{method} {route}`, status, `platform.account_id`), database query (the statement, never its parameters), Redis command (its name only), job (continuing the trace of the request or job that queued it) and provider call (URL with secrets redacted). The SDK reads the other standard variables itself: `OTEL_SERVICE_NAME` (default `platform-backend`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_TRACES_SAMPLER`/`_ARG`, `OTEL_BSP_*`",
      },
      {
        name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
        description: 'the traces URL itself, instead of `OTEL_EXPORTER_OTLP_ENDPOINT`',
      },
      {
        name: 'OTEL_EXPORTER_OTLP_PROTOCOL',
        default: 'http/protobuf',
        description:
          '`http/protobuf` or `http/json`; `grpc` is refused at start (every collector also takes OTLP over HTTP, port 4318)',
      },
      {
        name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
        description: 'the same, for traces only; wins over `OTEL_EXPORTER_OTLP_PROTOCOL`',
      },
      {
        name: 'OTEL_SDK_DISABLED',
        default: 'false',
        description: '`true` keeps tracing off with an endpoint set',
      },
      {
        name: 'OTEL_TRACES_EXPORTER',
        default: 'otlp',
        description: '`none` keeps tracing off with an endpoint set',
      },
    ],
  },
  {
    title: 'The command line',
    intro: 'Read by `npm run cli` besides `ADMIN_TOKEN`, `DATA_DIR`, `PORT` and `HOST`.',
    variables: [
      {
        name: 'PLATFORM_URL',
        shown: '`http://127.0.0.1:PORT` (`HOST` when it is not `0.0.0.0` or `::`)',
        description: 'the server the CLI talks to (read by the CLI only)',
      },
    ],
  },
]

/** The line after which docs/configuration.md is generated; what comes before it is written by hand. */
export const GENERATED_MARK =
  '<!-- Generated from src/config-reference.ts by `npx tsx scripts/configuration-docs.ts`: edit there, not below. -->'

/** docs/configuration.md with its generated part (everything after GENERATED_MARK) made anew. */
export function withGeneratedTables(page: string, sections: VariableSection[] = CONFIG_REFERENCE): string {
  const at = page.indexOf(GENERATED_MARK)
  if (at === -1) throw new Error(`docs/configuration.md lost its line ${GENERATED_MARK}`)
  return `${page.slice(0, at + GENERATED_MARK.length)}\n\n${configurationTables(sections)}`
}

/** A section's heading as a link target, as GitHub makes it. */
const anchor = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-')

const defaultCell = (variable: VariableReference) =>
  variable.shown ?? (variable.default === undefined ? 'unset' : `\`${variable.default}\``)

/** The generated part of docs/configuration.md: a list of the sections, then one table each. */
export function configurationTables(sections: VariableSection[] = CONFIG_REFERENCE): string {
  const contents = sections.map((section) => `- [${section.title}](#${anchor(section.title)})`)
  const tables = sections.map((section) =>
    [
      `## ${section.title}`,
      ...(section.intro ? ['', section.intro] : []),
      '',
      '| variable | default | what it does |',
      '|---|---|---|',
      ...section.variables.map(
        (variable) => `| \`${variable.name}\` | ${defaultCell(variable)} | ${variable.description} |`,
      ),
    ].join('\n'),
  )
  return [...contents, '', ...tables.flatMap((table) => [table, ''])].join('\n')
}
