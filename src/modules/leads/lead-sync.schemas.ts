import { type Static, Type } from '@sinclair/typebox'
import { Id, StringEnum } from '../../platform/http/schemas.js'
import { SUBSCRIPTION_STATUSES } from './tables.js'

/** What one reconciliation run found: the leads Graph listed, and what became of them. */
export const SyncOutcome = Type.Object(
  {
    campaign_id: Id(),
    /** Leads Graph listed for the form since the newest stored lead minus an hour. */
    read: Type.Integer(),
    /**
     * Captured by this run: the webhook had missed them, they had failed before, or they arrived before the
     * campaign claimed their form.
     */
    new: Type.Integer(),
    /** Already captured. */
    known: Type.Integer(),
    /** Still failing after this run; each keeps its reason. */
    failed: Type.Integer(),
    subscription_status: StringEnum(SUBSCRIPTION_STATUSES),
  },
  { title: 'LeadSyncOutcome' },
)
export type SyncOutcome = Static<typeof SyncOutcome>
