import { generateKeyPairSync } from 'node:crypto'
import { TEST_ADMIN_TOKEN, TEST_JWT_SECRET } from './app.js'

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
}
