import { generateKeyPairSync } from 'node:crypto'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { eventWebhookKeys } from '../fakes/sendgrid.js'
import { TEST_ADMIN_TOKEN, TEST_JWT_SECRET } from './app.js'

/** The Signed Event Webhook key pair whose public half PRODUCTION_ENV sets: sign event posts with the other. */
export const PRODUCTION_EVENT_KEYS = eventWebhookKeys()

/**
 * Everything NODE_ENV=production needs set, as an operator would set it (config.ts refuses to start
 * without): the test app's admin token and JWT secret, so that the helpers' admin calls and tokens work.
 */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  JWT_SECRET: TEST_JWT_SECRET,
  SECRETS_ENCRYPTION_KEY: 'f'.repeat(64),
  OAUTH_SIGNING_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString(),
  EDGE_SIGNING_SECRET: 'e'.repeat(32),
  PUBLIC_BASE_URL: 'https://platform.example.com',
  SENDGRID_WEBHOOK_PUBLIC_KEY: PRODUCTION_EVENT_KEYS.publicKeyBase64,
  // The TLS proxy's network, which the tests' requests (from 127.0.0.1) are not from: a test behind the
  // proxy sets TRUST_PROXY to 127.0.0.1 itself.
  TRUST_PROXY: '10.0.0.0/8',
}

/** What a TLS-terminating proxy adds to a request that came over HTTPS. */
export const FROM_A_PROXY = { 'x-forwarded-proto': 'https' }

/**
 * The app as a TLS-terminating proxy on this host reaches it (the app trusting 127.0.0.1 in TRUST_PROXY):
 * each request says `X-Forwarded-Proto: https`.
 */
export function behindTlsProxy(app: FastifyInstance): FastifyInstance {
  return new Proxy(app, {
    get(target, property, receiver) {
      if (property !== 'inject') return Reflect.get(target, property, receiver)
      return (options: InjectOptions) =>
        target.inject({ ...options, headers: { ...options.headers, ...FROM_A_PROXY } })
    },
  })
}
