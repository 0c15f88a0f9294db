import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import type { AccountAccess } from './auth/account-access.js'
import type { OAuthKeys } from './auth/oauth-keys.js'
import type { PlatformTokens } from './auth/platform-jwt.js'
import type { RevokedGrants } from './auth/revoked-grants.js'
import type { Database } from './db/connection.js'
import type { Changes } from './events/changes.js'
import type { Events } from './events/emit.js'
import type { JobQueue } from './jobs/queue.js'
import type { Retention } from './jobs/retention.js'
import type { Logger } from './log/logger.js'
import type { Realtime } from './realtime/gateway.js'
import type { ObjectStorage } from './storage/object-storage.js'

/** What every module is given: the platform services, passed explicitly (no container). */
export interface Platform {
  config: Config
  db: Database
  /** Shared counters across instances, when REDIS_URL is set. */
  redis: Redis | undefined
  queue: JobQueue
  events: Events
  /** The built-in Socket.IO gateway: events to chat identities' sockets, events from clients. */
  realtime: Realtime
  /** Record changes one module announces and others act on (app webhooks, …). */
  changes: Changes
  /** The event tables' retention: each module registers its tables' rules where it defines its jobs. */
  retention: Retention
  tokens: PlatformTokens
  oauthKeys: OAuthKeys
  /** The OAuth grants revoked, whose access tokens are refused. */
  revokedGrants: RevokedGrants
  /** Who may still use an account: tokens of suspended accounts and of removed members are refused. */
  accountAccess: AccountAccess
  storage: ObjectStorage
  log: Logger
}

export interface ModuleOptions {
  platform: Platform
}
