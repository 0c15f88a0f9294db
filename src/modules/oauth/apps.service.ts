import { createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { isSameSecret } from '../../platform/crypto/constant-time.js'
import { openSecret, sealSecret } from '../../platform/crypto/secret-box.js'
import type { Database } from '../../platform/db/connection.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Invalid, NotFound, Unavailable } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import { forgetApp } from './app-cache.js'
import {
  type AppRow,
  findApp,
  insertApp,
  listApps as listAppRows,
  updateApp as updateAppRow,
} from './apps.repository.js'
import type {
  AppView,
  CreateAppBody,
  Credentials,
  NewApp,
  UpdateAppBody,
  WebhookCredentials,
} from './apps.schemas.js'
import { assertKnownScopes } from './scopes.service.js'

const appView = (row: AppRow): AppView => ({
  _id: row.id,
  name: row.name,
  redirect_uris: row.redirectUris,
  scopes: row.scopes,
  active: row.active,
  public: row.isPublic,
  created_by: row.createdBy,
  webhook_url: row.webhookUrl,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

/**
 * The key client secrets are hashed under, derived from SECRETS_ENCRYPTION_KEY. A keyed hash, not a slow
 * one: secrets are server-generated with 256 bits, so guessing is hopeless anyway, and argon2 on every
 * token request would cap throughput for nothing.
 */
const clientSecretKeys = new WeakMap<Buffer, Buffer>()

/** Derived once per key: every token request checks a client secret. */
function clientSecretKey(secretsKey: Buffer | undefined): Buffer {
  const key = requireSecretsKey(secretsKey)
  let derived = clientSecretKeys.get(key)
  if (!derived) {
    derived = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'oauth client secret', 32))
    clientSecretKeys.set(key, derived)
  }
  return derived
}

const hashClientSecret = (secretsKey: Buffer | undefined, secret: string): string =>
  createHmac('sha256', clientSecretKey(secretsKey)).update(secret).digest('hex')

/** Whether `secret` is the app's current client secret (compared as keyed hashes, in constant time). */
export function clientSecretMatches(secretsKey: Buffer | undefined, app: AppRow, secret: string): boolean {
  return (
    app.clientSecretHash !== null && isSameSecret(hashClientSecret(secretsKey, secret), app.clientSecretHash)
  )
}

/** A new secret and its hash: 256 random bits, shown to the caller once and kept only as the hash. */
function newClientSecret(secretsKey: Buffer | undefined): { secret: string; hash: string } {
  const secret = randomBytes(32).toString('base64url')
  return { secret, hash: hashClientSecret(secretsKey, secret) }
}

function requireSecretsKey(secretsKey: Buffer | undefined): Buffer {
  if (!secretsKey) throw new Unavailable('SECRETS_ENCRYPTION_KEY is not set: app secrets cannot be kept')
  return secretsKey
}

/**
 * A webhook signing secret in the Standard Webhooks form (`whsec_` and 256 random bits in base64), shown
 * once and kept sealed: signing needs the secret itself, so a hash would not do.
 */
function newWebhookSecret(secretsKey: Buffer | undefined): { secret: string; sealed: string } {
  const secret = `whsec_${randomBytes(32).toString('base64')}`
  return { secret, sealed: sealSecret(requireSecretsKey(secretsKey), secret) }
}

/** The secret the app's notifications are signed with; undefined for apps registered before there was one. */
export function webhookSecretOf(
  secretsKey: Buffer | undefined,
  app: Pick<AppRow, 'webhookSecretSealed'>,
): string | undefined {
  return app.webhookSecretSealed
    ? openSecret(requireSecretsKey(secretsKey), app.webhookSecretSealed)
    : undefined
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/** RFC 9700 2.1: https, or http only on the loopback interface (native apps); no fragment. */
function assertRedirectUri(uri: string, field: string): void {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    throw new Invalid(`${field} must be an absolute URL`)
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))
  if (!secure) throw new Invalid(`${field} must use https, or http on a loopback address`)
  if (url.hash) throw new Invalid(`${field} must not have a fragment`)
}

function assertWebhookUrl(uri: string): void {
  let url: URL | undefined
  try {
    url = new URL(uri)
  } catch {}
  if (!url || !['https:', 'http:'].includes(url.protocol))
    throw new Invalid('webhook_url must be an http(s) URL')
}

async function assertAppInput(db: Database, input: Partial<CreateAppBody>): Promise<void> {
  for (const [i, uri] of (input.redirect_uris ?? []).entries()) assertRedirectUri(uri, `redirect_uris[${i}]`)
  if (input.webhook_url) assertWebhookUrl(input.webhook_url)
  if (input.scopes) await assertKnownScopes(db, input.scopes)
}

const distinct = (values: string[]) => [...new Set(values)]

/** Every change of an app goes through here, so that client authentication stops using the old row. */
async function changeApp(db: Database, id: string, changes: Parameters<typeof updateAppRow>[2]) {
  const row = await updateAppRow(db, id, changes)
  forgetApp(db, id)
  return row
}

/**
 * Registers an app; the answer carries its `client_secret` (null for a public app, RFC 6749 2.1: it cannot
 * keep one) and `webhook_secret`, never shown again.
 */
export async function createApp(
  db: Database,
  secretsKey: Buffer | undefined,
  input: CreateAppBody,
): Promise<NewApp> {
  await assertAppInput(db, input)
  const client = input.public ? undefined : newClientSecret(secretsKey)
  const webhook = newWebhookSecret(secretsKey)
  const row = await insertApp(db, {
    name: input.name,
    clientSecretHash: client?.hash ?? null,
    webhookSecretSealed: webhook.sealed,
    redirectUris: distinct(input.redirect_uris),
    scopes: distinct(input.scopes),
    active: input.active ?? false,
    isPublic: input.public ?? false,
    createdBy: input.created_by ?? null,
    webhookUrl: input.webhook_url ?? null,
  })
  return {
    ...appView(row),
    client_id: row.id,
    client_secret: client?.secret ?? null,
    webhook_secret: webhook.secret,
  }
}

export async function getApp(db: Database, id: string): Promise<AppView> {
  const row = await findApp(db, id)
  if (!row) throw new NotFound('App not found')
  return appView(row)
}

export function listApps(
  db: Database,
  query: { page: number; limit: number },
): Promise<{ data: AppView[]; pagination: Pagination }> {
  return paginate(query, (window) => listAppRows(db, window), appView)
}

/** The spec's refusal of an app that is not active: `/authorize` redirects with it, `/token` answers it. */
export const APP_IN_DEV_MODE = 'App is in dev mode'

/** Changes what is given; `active: true` takes the app out of development mode. */
export async function updateApp(db: Database, id: string, changes: UpdateAppBody): Promise<AppView> {
  await assertAppInput(db, { ...changes, webhook_url: changes.webhook_url ?? undefined })
  const row = await changeApp(db, id, {
    ...(changes.name !== undefined && { name: changes.name }),
    ...(changes.redirect_uris && { redirectUris: distinct(changes.redirect_uris) }),
    ...(changes.scopes && { scopes: distinct(changes.scopes) }),
    ...(changes.active !== undefined && { active: changes.active }),
    // An app made public loses its secret; made confidential again, it gets one by rotating.
    ...(changes.public !== undefined && { isPublic: changes.public }),
    ...(changes.public && { clientSecretHash: null }),
    ...(changes.webhook_url !== undefined && { webhookUrl: changes.webhook_url }),
  })
  if (!row) throw new NotFound('App not found')
  return appView(row)
}

/** A new secret replaces the old one at once: the old one stops authenticating the app. A public app has none. */
export async function rotateClientSecret(
  db: Database,
  secretsKey: Buffer | undefined,
  id: string,
): Promise<Credentials> {
  const app = await findApp(db, id)
  if (!app) throw new NotFound('App not found')
  if (app.isPublic)
    throw new Invalid('A public app has no client secret: it authenticates by client_id and PKCE')
  const { secret, hash } = newClientSecret(secretsKey)
  const row = await changeApp(db, id, { clientSecretHash: hash })
  if (!row) throw new NotFound('App not found')
  return { client_id: row.id, client_secret: secret }
}

/** A new webhook signing secret replaces the old one at once: notifications are signed with it from now. */
export async function rotateWebhookSecret(
  db: Database,
  secretsKey: Buffer | undefined,
  id: string,
): Promise<WebhookCredentials> {
  const { secret, sealed } = newWebhookSecret(secretsKey)
  const row = await changeApp(db, id, { webhookSecretSealed: sealed })
  if (!row) throw new NotFound('App not found')
  return { client_id: row.id, webhook_secret: secret }
}
