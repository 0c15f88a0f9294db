import helmet from '@fastify/helmet'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import type { Config } from './config.js'
import { accountsAdminRoutes } from './modules/accounts/accounts.routes.js'
import { apiRequestsPerHour, getAccountStatus } from './modules/accounts/accounts.service.js'
import { contactsAdminRoutes, contactsRoutes } from './modules/accounts/contacts.routes.js'
import { creditsAdminRoutes } from './modules/accounts/credits.routes.js'
import { tokensAdminRoutes } from './modules/accounts/tokens.routes.js'
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
import { listingsRoutes } from './modules/listings/listings.routes.js'
import { oauthAdminRoutes } from './modules/oauth/apps.routes.js'
import { authorizeRoutes } from './modules/oauth/authorize.routes.js'
import { grantsRoutes } from './modules/oauth/grants.routes.js'
import { defineOAuthJobs } from './modules/oauth/jobs.js'
import { oauthRoutes } from './modules/oauth/metadata.routes.js'
import { tokenRoutes } from './modules/oauth/token.routes.js'
import { supportAdminRoutes } from './modules/support/support.routes.js'
import { createAccessTokenVerifier } from './platform/auth/access-tokens.js'
import { loadOAuthKeys } from './platform/auth/oauth-keys.js'
import { createPlatformTokens } from './platform/auth/platform-jwt.js'
import { registerAuth } from './platform/auth/plugin.js'
import type { Platform } from './platform/context.js'
import { type DatabaseHandle, migrateDatabase, openDatabase } from './platform/db/connection.js'
import { newId } from './platform/db/ids.js'
import { createChanges } from './platform/events/changes.js'
import { createEvents } from './platform/events/emit.js'
import { registerErrorHandling } from './platform/http/error-handler.js'
import { registerIntegrationRoutes } from './platform/http/integration.js'
import { createHourlyLimit } from './platform/http/limits.js'
import { registerRateLimit } from './platform/http/rate-limit.js'
import { statusRoutes } from './platform/http/status.js'
import { createJobQueue } from './platform/jobs/queue.js'
import { createObjectStorage } from './platform/storage/storage.js'

export interface BuildOptions {
  /** An already open database (tests share one per file); otherwise opened from the config. */
  database?: DatabaseHandle
}

declare module 'fastify' {
  interface FastifyInstance {
    platform: Platform
  }
}

/** The table of contents of the service: platform plugins, then one register line per module. */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers["api-key"]', 'req.headers.cookie'],
    },
    // A hop count is valid at run time though Fastify's types leave numbers out.
    trustProxy: config.trustProxy as boolean | string,
    // A caller's x-request-id is kept when it looks like one, so logs correlate across services.
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && /^[\w.:-]{1,64}$/.test(given) ? given : newId()
    },
    bodyLimit: 1_048_576,
  }).withTypeProvider<TypeBoxTypeProvider>()

  // Before the database opens: a bad key stops the start at once, naming its variable.
  const oauthKeys = await loadOAuthKeys(config.oauth)
  const ownsDatabase = !options.database
  const database =
    options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }))
  if (ownsDatabase) await migrateDatabase(database, { databaseUrl: config.databaseUrl })
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2 }) : undefined

  const tokens = createPlatformTokens(config.jwt)
  const oauthAppLimit = createHourlyLimit(redis, 'oauth-app')
  const queue = createJobQueue(database, {
    pollingIntervalSeconds: config.jobs.pollingIntervalSeconds,
    logger: app.log,
  })
  const events = createEvents({
    queue,
    socketUrl: config.conversationSocketUrl,
    serviceToken: (accountId) => tokens.signService(accountId),
    logger: app.log,
  })
  const storage = createObjectStorage(config)
  const platform: Platform = {
    config,
    db: database.db,
    redis,
    queue,
    events,
    changes: createChanges(),
    tokens,
    oauthKeys,
    storage,
    log: app.log,
  }
  app.decorate('platform', platform)
  defineEmailJobs(platform)
  defineOAuthJobs(platform)

  registerErrorHandling(app)
  await app.register(helmet, { contentSecurityPolicy: false })
  await registerRateLimit(app, redis)
  registerAuth(app, {
    tokens,
    verifyAccessToken: createAccessTokenVerifier(oauthKeys, config.publicBaseUrl),
    limitOAuthApp: async (auth) =>
      oauthAppLimit(
        `${auth.oauth?.client_id}:${auth.account_id}`,
        await apiRequestsPerHour(database.db, auth.account_id),
      ),
    adminToken: config.adminToken,
    accountStatus: (accountId) => getAccountStatus(database.db, accountId),
  })
  await app.register(swagger, {
    // Shared schemas keep their $id as their component name (ErrorEnvelope), not def-N.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      info: { title: 'Platform backend', version: '1.0.0' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
        },
      },
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })

  await app.register(statusRoutes, { ping: database.ping })
  await app.register(accountsAdminRoutes, { platform, prefix: '/v1/admin' })
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
  await app.register(supportAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(oauthAdminRoutes, { platform, prefix: '/v1/admin' })
  await app.register(oauthRoutes, { platform })
  await app.register(authorizeRoutes, { platform, prefix: '/v1/auth/oauth' })
  await app.register(tokenRoutes, { platform, prefix: '/v1/auth/oauth' })
  await app.register(grantsRoutes, { platform, prefix: '/v1/auth/oauth' })

  app.addHook('onReady', () => queue.start({ runWorkers: config.jobs.runWorkers }))
  app.addHook('onClose', async () => {
    await queue.stop()
    await redis?.quit()
    if (ownsDatabase) await database.close()
  })
  return app
}
