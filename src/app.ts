import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Config } from './config.js'
import { accountDirectoryAdminRoutes } from './modules/accounts/account-directory.routes.js'
import { accountExportAdminRoutes } from './modules/accounts/account-export.routes.js'
import { accountRemovalAdminRoutes } from './modules/accounts/account-removal.routes.js'
import { createAccountTiers } from './modules/accounts/account-tiers.service.js'
import { accountsAdminRoutes } from './modules/accounts/accounts.routes.js'
import { accountStanding, apiRequestsPerHour, getAccountStatus } from './modules/accounts/accounts.service.js'
import { contactsAdminRoutes, contactsRoutes } from './modules/accounts/contacts.routes.js'
import { creditsAdminRoutes } from './modules/accounts/credits.routes.js'
import { jobQueuesAdminRoutes } from './modules/accounts/job-queues.routes.js'
import { defineAccountsJobs } from './modules/accounts/jobs.js'
import { requestBudgetAdminRoutes } from './modules/accounts/request-budget.routes.js'
import { tokensAdminRoutes } from './modules/accounts/tokens.routes.js'
import { userAdminRoutes } from './modules/accounts/user-admin.routes.js'
import { variableSourcesAdminRoutes } from './modules/accounts/variable-sources.routes.js'
import { changelogRoutes } from './modules/changelog/changelog.routes.js'
import { communicationsRoutes } from './modules/email/communications.routes.js'
import { deliveryEventsRoutes } from './modules/email/delivery-events.routes.js'
import { doNotDisturbRoutes } from './modules/email/do-not-disturb.routes.js'
import { inboundRoutes } from './modules/email/inbound.routes.js'
import { defineEmailJobs } from './modules/email/jobs.js'
import { emailAdminRoutes } from './modules/email/mail-subusers.routes.js'
import { providerSetupRoutes } from './modules/email/provider-setup.routes.js'
import { sendRoutes } from './modules/email/send.routes.js'
import { unsubscribeRoutes } from './modules/email/unsubscribe.routes.js'
import { componentsRoutes } from './modules/funnels/components.routes.js'
import { domainsRoutes } from './modules/funnels/domains.routes.js'
import { edgeCacheRoutes } from './modules/funnels/edge-cache.routes.js'
import { edgeDeliveryRoutes } from './modules/funnels/edge-delivery.routes.js'
import { formSubmitRoutes, formsRoutes } from './modules/funnels/forms.routes.js'
import { funnelsRoutes } from './modules/funnels/funnels.routes.js'
import { defineFunnelsJobs } from './modules/funnels/jobs.js'
import { previewRoutes } from './modules/funnels/preview.routes.js'
import { shortLinkRedirectRoutes, shortLinksRoutes } from './modules/funnels/short-links.routes.js'
import { stepsRoutes } from './modules/funnels/steps.routes.js'
import { tagsRoutes } from './modules/funnels/tags.routes.js'
import { campaignsRoutes } from './modules/leads/campaigns.routes.js'
import { connectionRoutes } from './modules/leads/connection.routes.js'
import { defineLeadsJobs } from './modules/leads/jobs.js'
import { leadCaptureRoutes } from './modules/leads/lead-capture.routes.js'
import { leadFormsRoutes } from './modules/leads/lead-forms.routes.js'
import { leadSyncRoutes } from './modules/leads/lead-sync.routes.js'
import { leadWebhookRoutes } from './modules/leads/lead-webhook.routes.js'
import { registrationRoutes } from './modules/leads/registration.routes.js'
import { listingsRoutes } from './modules/listings/listings.routes.js'
import { appsRoutes } from './modules/oauth/apps.routes.js'
import { auditRoutes } from './modules/oauth/audit.routes.js'
import { authorizeRoutes } from './modules/oauth/authorize.routes.js'
import { findUsersRoutes } from './modules/oauth/find-users.routes.js'
import { grantsRoutes } from './modules/oauth/grants.routes.js'
import { isGrantRevoked } from './modules/oauth/grants.service.js'
import { defineOAuthJobs } from './modules/oauth/jobs.js'
import { metadataRoutes } from './modules/oauth/metadata.routes.js'
import { scopesRoutes } from './modules/oauth/scopes.routes.js'
import { SEEDED_SCOPES } from './modules/oauth/scopes.schemas.js'
import { tokenRoutes } from './modules/oauth/token.routes.js'
import { ACCESS_TOKEN_SECONDS } from './modules/oauth/token.service.js'
import { webhookDeliveriesRoutes } from './modules/oauth/webhook-deliveries.routes.js'
import { outboxPageRoutes } from './modules/outbox/outbox-page.routes.js'
import { accountEventsRoutes } from './modules/reviews/account-events.routes.js'
import { configurationRoutes } from './modules/reviews/configuration.routes.js'
import { defineReviewsJobs } from './modules/reviews/jobs.js'
import { orderLocationsRoutes } from './modules/reviews/order-locations.routes.js'
import { orderWebhookRoutes } from './modules/reviews/order-webhook.routes.js'
import { paymentWebhookRoutes } from './modules/reviews/payment-webhook.routes.js'
import { requestsRoutes } from './modules/reviews/requests.routes.js'
import { reviewLinksRoutes } from './modules/reviews/review-links.routes.js'
import { smsOptOutsRoutes } from './modules/reviews/sms-opt-outs.routes.js'
import { statsRoutes } from './modules/reviews/stats.routes.js'
import { templatesRoutes } from './modules/reviews/templates.routes.js'
import { trackedLinksRoutes } from './modules/reviews/tracked-links.routes.js'
import { reviewsAdminRoutes } from './modules/reviews/webhook-events.routes.js'
import { roomExportRoutes } from './modules/rooms/export.routes.js'
import { messagesRoutes } from './modules/rooms/messages.routes.js'
import { roomsRoutes } from './modules/rooms/rooms.routes.js'
import { messageSearchRoutes } from './modules/rooms/search.routes.js'
import { supportAdminRoutes } from './modules/support/support.routes.js'
import { createAccessTokenVerifier } from './platform/auth/access-tokens.js'
import { createAccountAccess } from './platform/auth/account-access.js'
import { loadOAuthKeys } from './platform/auth/oauth-keys.js'
import { createPlatformTokens } from './platform/auth/platform-jwt.js'
import { registerAuth } from './platform/auth/plugin.js'
import { createRevokedGrants } from './platform/auth/revoked-grants.js'
import type { Platform } from './platform/context.js'
import { type DatabaseHandle, openDatabase } from './platform/db/connection.js'
import { newId } from './platform/db/ids.js'
import { replicaStates } from './platform/db/replicas.js'
import { vacuumsItself } from './platform/db/vacuum.js'
import { createWritePositions } from './platform/db/write-positions.js'
import { createChanges } from './platform/events/changes.js'
import { createEvents } from './platform/events/emit.js'
import { createAccountBudget } from './platform/http/account-budget.js'
import { registerAccountConcurrency } from './platform/http/account-concurrency.js'
import { registerApiReference } from './platform/http/api-reference.js'
import {
  type DeferredCompilations,
  serializersCompiledOnFirstUse,
} from './platform/http/compiled-on-first-use.js'
import { clientErrors, frameworkErrors, registerErrorHandling } from './platform/http/error-handler.js'
import { requireHttpsWhereDeclared } from './platform/http/https-required.js'
import { registerIntegrationRoutes, registerReviewsRoutes } from './platform/http/integration.js'
import { createHourlyLimit } from './platform/http/limits.js'
import { registerMetrics } from './platform/http/metrics.js'
import { refuseCursorWithPage } from './platform/http/pagination.js'
import { registerRateLimit } from './platform/http/rate-limit.js'
import { createReplicaReads } from './platform/http/replica-reads.js'
import {
  boundFormFields,
  guardEveryQuery,
  guardedValidatorBuilder,
  registerJsonParser,
} from './platform/http/request-guards.js'
import { registerResponseHeaders } from './platform/http/response-headers.js'
import { type Readiness, statusRoutes } from './platform/http/status.js'
import { createJobQueue } from './platform/jobs/queue.js'
import { createRetention, defineRetentionJob } from './platform/jobs/retention.js'
import { serializeError } from './platform/log/error-serializer.js'
import { OneLinePerRequest } from './platform/log/request-line.js'
import { requestLogger } from './platform/log/request-logger.js'
import { configureProviderCircuits, providerCircuitStates } from './platform/providers/provider-circuits.js'
import { createRealtimeGateway } from './platform/realtime/gateway.js'
import { closeRedis, createRedis } from './platform/redis.js'
import { createObjectStorage } from './platform/storage/storage.js'
import { registerRequestSpans } from './platform/tracing/request-spans.js'
import { startTracing, stopTracing, traceLogFields, tracingEnabled } from './platform/tracing/tracing.js'
import { prepareSchema } from './start-checks.js'

export interface BuildOptions {
  /** An already open database (tests share one per file); otherwise opened from the config. */
  database?: DatabaseHandle
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: { write(line: string): void }
  /** Receives every route schema's compilation, put off to its first use (tests run them all). */
  onDeferredCompilation?: DeferredCompilations
}

declare module 'fastify' {
  interface FastifyInstance {
    platform: Platform
    /** Turned to shutting down on SIGTERM (lifecycle.ts), so that `/status/ready` answers 503. */
    readiness: Readiness
  }
}

/** The table of contents of the service: platform plugins, then one register line per module. */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers["api-key"]', 'req.headers.cookie'],
      // Database errors by SQL state and constraint, never their parameters; long messages cut.
      serializers: { err: serializeError },
      // With tracing on, each line names the span it was written in (trace_id, span_id).
      ...(config.tracing.enabled && { mixin: traceLogFields }),
      ...(options.logStream && { stream: options.logStream }),
    },
    childLoggerFactory: requestLogger,
    logController: new OneLinePerRequest(config.logLevel),
    trustProxy: config.trustProxy,
    // A caller's x-request-id is kept when it looks like one, so logs correlate across services.
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && /^[\w.:-]{1,64}$/.test(given) ? given : newId()
    },
    bodyLimit: 1_048_576,
    // A client trickling its headers or body is cut off with a 408, so that slow clients cannot hold every
    // socket. Node checks every tenth of the headers' timeout (its own 30 s would let a cut come that late),
    // and refuses headers given longer than the request unless it is told the request's timeout too.
    requestTimeout: config.httpTimeouts.requestMs,
    keepAliveTimeout: config.httpTimeouts.keepAliveMs,
    http: {
      requestTimeout: config.httpTimeouts.requestMs,
      headersTimeout: config.httpTimeouts.headersMs,
      connectionsCheckingInterval: Math.ceil(config.httpTimeouts.headersMs / 10),
    },
    // Refusals made before routing (414, a bad URL) and validation (NUL, a PATCH setting nothing) answer
    // in the error envelope; see request-guards.ts.
    frameworkErrors,
    clientErrorHandler: clientErrors,
    schemaController: {
      compilersFactory: {
        buildValidator: guardedValidatorBuilder(options.onDeferredCompilation),
        buildSerializer: serializersCompiledOnFirstUse(options.onDeferredCompilation),
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>()
  // Before the Redis client is made and any hook is added: both are traced only when tracing is on.
  await startTracing(config.tracing)
  if (tracingEnabled()) registerRequestSpans(app)
  configureProviderCircuits(config.providers, app.log)

  // Before the database opens: a bad key stops the start at once, naming its variable.
  const oauthKeys = await loadOAuthKeys(config.oauth)
  const ownsDatabase = !options.database
  const database =
    options.database ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
      replicaUrls: config.databaseReplicas.urls,
      replicaMaxLagMs: config.databaseReplicas.maxLagMs,
      waits: config.databaseWaits,
      log: app.log,
    }))
  if (ownsDatabase) await prepareSchema(config, database, app.log)
  const redis = config.redisUrl
    ? createRedis(config.redisUrl, app.log, config.redisCommandTimeoutMs)
    : undefined

  const replicaReads =
    database.replicas &&
    createReplicaReads(
      database.replicas,
      createWritePositions({ redis, maxLagMs: config.databaseReplicas.maxLagMs, log: app.log }),
    )
  const tokens = createPlatformTokens(config.jwt)
  const revokedGrants = await createRevokedGrants({
    lookUp: (grantId) => isGrantRevoked(database.db, grantId),
    redis,
    liveForMs: config.oauth.revocationCacheMs,
    revokedForMs: ACCESS_TOKEN_SECONDS * 1000,
    logger: app.log,
  })
  const accountAccess = await createAccountAccess({
    lookUp: (accountId, userId) => accountStanding(database.db, accountId, userId),
    redis,
    liveForMs: config.oauth.revocationCacheMs,
    logger: app.log,
  })
  const oauthAppLimit = createHourlyLimit(redis, 'oauth-app')
  const vacuum = !(await vacuumsItself(database))
  const queue = createJobQueue(database, {
    pollingIntervalSeconds: config.jobs.pollingIntervalSeconds,
    lockSeconds: config.jobs.lockSeconds,
    keepFinishedMs: config.retention.jobsCompleted,
    shares: config.jobs.shares,
    tierOf: createAccountTiers(),
    vacuumAfterMaintenance: vacuum,
    logger: app.log,
  })
  // The embedded database's one connection serves requests between batches: smaller ones wait less.
  const retention = createRetention({
    db: database.db,
    log: app.log,
    vacuum,
    batchSize: database.kind === 'pglite' ? 200 : 1000,
  })
  const events = createEvents({
    queue,
    socketUrl: config.conversationSocketUrl,
    serviceToken: (accountId) => tokens.signService(accountId),
    logger: app.log,
  })
  const realtime = createRealtimeGateway({
    server: app.server,
    tokens,
    accountAccess,
    redis,
    readAs: replicaReads?.readAs,
    logger: app.log,
  })
  // A client connected before its account was suspended, or its user removed, is disconnected then.
  accountAccess.onChange((accountId, userId) => {
    realtime.recheckAccess(accountId, userId).catch((error: unknown) => {
      app.log.warn({ err: error }, 'could not recheck the realtime clients of an account')
    })
  })
  const storage = createObjectStorage(config)
  const platform: Platform = {
    config,
    db: database.db,
    redis,
    queue,
    events,
    realtime,
    changes: createChanges(),
    retention,
    tokens,
    oauthKeys,
    revokedGrants,
    accountAccess,
    storage,
    log: app.log,
  }
  app.decorate('platform', platform)
  const readiness: Readiness = {
    shuttingDown: false,
    checks: {
      database: database.ping,
      jobs: queue.ping,
      ...(redis && { redis: async () => void (await redis.ping()) }),
    },
    replicas: database.replicas && replicaStates(database.replicas),
  }
  app.decorate('readiness', readiness)
  defineRetentionJob(queue, retention)
  defineAccountsJobs(platform)
  defineEmailJobs(platform)
  const appWebhookSender = defineOAuthJobs(platform)
  defineReviewsJobs(platform)
  defineLeadsJobs(platform)
  defineFunnelsJobs(platform)

  registerErrorHandling(app)
  registerJsonParser(app)
  boundFormFields(app)
  guardEveryQuery(app)
  refuseCursorWithPage(app)
  registerResponseHeaders(app)
  if (config.nodeEnv === 'production') requireHttpsWhereDeclared(app)
  await registerRateLimit(app, redis)
  // Before the account's turns: a request chooses its replica once it has its turn, not while it waits.
  replicaReads?.register(app)
  registerAccountConcurrency(app, config.accountConcurrency)
  registerAuth(app, {
    tokens,
    verifyAccessToken: createAccessTokenVerifier(
      oauthKeys,
      config.publicBaseUrl,
      revokedGrants,
      accountAccess,
    ),
    limitOAuthApp: async (auth) =>
      oauthAppLimit(
        `${auth.oauth?.client_id}:${auth.account_id}`,
        await apiRequestsPerHour(database.db, auth.account_id),
      ),
    adminToken: config.adminToken,
    redis,
    accountStatus: (accountId) => getAccountStatus(database.db, accountId),
    accountAccess,
    budget: createAccountBudget({ ...config.accountBudget, redis, logger: app.log }),
  })
  await registerApiReference(app, SEEDED_SCOPES)

  registerMetrics(
    app,
    { ...config.metrics, host: config.host },
    {
      jobCounts: queue.countByState,
      databasePool: () => database.poolStats?.(),
      databaseReplicas: database.replicas && replicaStates(database.replicas),
      providerCircuits: providerCircuitStates,
    },
  )
  await app.register(statusRoutes, { readiness })
  await app.register(accountsAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(requestBudgetAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(accountExportAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(accountDirectoryAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(userAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(accountRemovalAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(jobQueuesAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(contactsAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(variableSourcesAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(creditsAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(tokensAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(contactsRoutes, { platform, prefix: '/v1' })
  await registerIntegrationRoutes(app, changelogRoutes, { platform })
  await registerIntegrationRoutes(app, listingsRoutes, { platform })
  await registerIntegrationRoutes(app, doNotDisturbRoutes, { platform })
  await registerIntegrationRoutes(app, communicationsRoutes, { platform })
  await registerIntegrationRoutes(app, deliveryEventsRoutes, { platform })
  await registerIntegrationRoutes(app, sendRoutes, { platform })
  await registerIntegrationRoutes(app, inboundRoutes, { platform })
  await registerIntegrationRoutes(app, providerSetupRoutes, { platform })
  await registerIntegrationRoutes(app, unsubscribeRoutes, { platform })
  await app.register(emailAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(outboxPageRoutes, { platform, prefix: '/v1/admin' })
  await app.register(supportAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(scopesRoutes, { platform, prefix: '/v1/admin' })
  await app.register(appsRoutes, { platform, prefix: '/v1/admin' })
  await app.register(webhookDeliveriesRoutes, { platform, prefix: '/v1/admin' })
  await app.register(auditRoutes, { platform, prefix: '/v1/admin' })
  await app.register(metadataRoutes, { platform })
  await app.register(findUsersRoutes, { platform, prefix: '/v1/auth/oauth' })
  await app.register(authorizeRoutes, { platform, prefix: '/v1/auth/oauth' })
  await app.register(tokenRoutes, { platform, prefix: '/v1/auth/oauth' })
  await app.register(grantsRoutes, { platform, prefix: '/v1/auth/oauth' })
  await registerReviewsRoutes(app, configurationRoutes, { platform })
  await registerReviewsRoutes(app, templatesRoutes, { platform })
  await registerReviewsRoutes(app, reviewLinksRoutes, { platform })
  await registerReviewsRoutes(app, requestsRoutes, { platform })
  await registerReviewsRoutes(app, statsRoutes, { platform })
  await registerReviewsRoutes(app, paymentWebhookRoutes, { platform })
  await registerReviewsRoutes(app, orderWebhookRoutes, { platform })
  await registerReviewsRoutes(app, orderLocationsRoutes, { platform })
  await registerReviewsRoutes(app, smsOptOutsRoutes, { platform })
  await registerReviewsRoutes(app, accountEventsRoutes, { platform })
  await app.register(trackedLinksRoutes, { platform })
  await app.register(reviewsAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(roomsRoutes, { platform, prefix: '/api/conversation-v2/room' })
  await app.register(messagesRoutes, { platform, prefix: '/api/conversation-v2/room' })
  await app.register(messageSearchRoutes, { platform, prefix: '/api/conversation-v2/room' })
  await app.register(roomExportRoutes, { platform, prefix: '/api/conversation-v2/room' })
  await app.register(funnelsRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(domainsRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(tagsRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(stepsRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(componentsRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(previewRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(formSubmitRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(formsRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(shortLinksRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(shortLinkRedirectRoutes, { platform })
  await app.register(edgeDeliveryRoutes, { platform, prefix: '/v1/funnels' })
  await app.register(edgeCacheRoutes, { platform, prefix: '/v1/funnels' })
  await registerIntegrationRoutes(app, connectionRoutes, { platform })
  await registerIntegrationRoutes(app, campaignsRoutes, { platform })
  await registerIntegrationRoutes(app, leadCaptureRoutes, { platform })
  await registerIntegrationRoutes(app, leadSyncRoutes, { platform })
  await registerIntegrationRoutes(app, registrationRoutes, { platform })
  await registerIntegrationRoutes(app, leadFormsRoutes, { platform })
  await app.register(leadWebhookRoutes, { platform })

  app.addHook('onReady', () => queue.start({ runWorkers: config.jobs.runWorkers }))
  app.addHook('onReady', async () => {
    if (config.jobs.runWorkers) appWebhookSender.start()
  })
  // Before Fastify closes the HTTP server, which waits for the clients' open WebSocket connections.
  app.addHook('preClose', () => {
    retention.stop()
    return realtime.close()
  })
  app.addHook('onClose', async () => {
    await appWebhookSender.stop(config.shutdown.timeoutMs)
    await queue.stop({ timeoutMs: config.shutdown.timeoutMs })
    await revokedGrants.close()
    await accountAccess.close()
    if (redis) await closeRedis(redis)
    if (ownsDatabase) await database.close()
    await stopTracing(config.tracing)
  })
  return app
}
