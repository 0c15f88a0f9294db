import type { Platform } from '../../platform/context.js'
import { clicksRetention } from './retention.repository.js'

/** The funnels module's jobs: none of its own yet, only its tables' retention. */
export function defineFunnelsJobs(platform: Platform): void {
  platform.retention.register(clicksRetention(platform.config.retention.shortLinkClicks))
}
