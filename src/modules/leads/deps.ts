import type { Platform } from '../../platform/context.js'
import type { Database } from '../../platform/db/connection.js'
import type { Logger } from '../../platform/log/logger.js'
import type { GraphSettings } from './graph.js'
import type { Notifier } from './notifications.service.js'

/** What the leads module's features are given: the database, Graph, the sealing key and the notifier. */
export interface LeadsDeps extends Notifier {
  db: Database
  log: Logger
  graph: GraphSettings
  /** SECRETS_ENCRYPTION_KEY, which seals the stored user and page tokens. */
  secretsKey: Buffer | undefined
}

/** The leads module's dependencies from the platform's. */
export const leadsDepsOf = (platform: Platform): LeadsDeps => ({
  db: platform.db,
  log: platform.log,
  graph: platform.config.leads,
  secretsKey: platform.config.secretsKey,
  events: platform.events,
  changes: platform.changes,
})
