import { and, desc, eq, inArray, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { selectPage } from '../../platform/db/page.js'
import { rowsOf } from '../../platform/db/rows.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { AppRow } from './apps.repository.js'
import {
  oauthWebhookDeliveries as deliveries,
  type WebhookAttempt,
  type WebhookDeliveryStatus,
} from './tables.js'

export type DeliveryRow = typeof deliveries.$inferSelect
export type NewDelivery = Pick<DeliveryRow, 'clientId' | 'accountId' | 'event' | 'notification'>

/**
 * A delivery an instance has claimed, with where its app is told as the claim read it: its lease is the
 * fence of what it writes back.
 */
export type ClaimedDelivery = Pick<
  DeliveryRow,
  'id' | 'clientId' | 'accountId' | 'event' | 'notification' | 'seriesAttempts' | 'createdAt'
> & { leasedUntil: Date; app: Pick<AppRow, 'webhookUrl' | 'webhookSecretSealed'> }

/** The statuses a delivery ends in: replayed from, and let go by retention. */
export const SETTLED: WebhookDeliveryStatus[] = ['succeeded', 'dead', 'dropped']

/** Deliveries waiting for an attempt, as the claim's partial index (`oauth_webhook_deliveries_waiting`) holds them. */
const waiting = (table = sql`oauth_webhook_deliveries`) => sql`${table}.status in ('pending', 'retrying')`

/** The app's deliveries in flight, across every instance: those leased, read from their partial index. */
const inFlight = (clientId: SQL) => sql`(select count(*)::int from oauth_webhook_deliveries l
  where l.client_id = ${clientId} and l.leased_until > now())`

/** Advisory lock namespace of the claims: one lock per app (its id's hash), held to the claim's commit. */
const CLAIM_LOCKS = 72_616_033

export async function insertDeliveries(db: Database, rows: NewDelivery[]): Promise<void> {
  if (rows.length > 0) await db.insert(deliveries).values(rows)
}

/**
 * The apps with a delivery due now and a slot free, of which this transaction took the claim lock: another
 * instance claiming the same app at the same moment skips it. Found by skipping through the waiting
 * deliveries' index one app at a time, so the cost follows the apps waiting, not their deliveries. An app
 * at its bound is passed over before any lock (its slots are counted again, exactly, under the lock).
 */
async function lockAppsWithDueDeliveries(tx: Database, perApp: number): Promise<string[]> {
  const result = await tx.execute(sql`
    with recursive apps(client_id) as (
      (select client_id from oauth_webhook_deliveries where ${waiting()} order by client_id limit 1)
      union all
      select (select d.client_id from oauth_webhook_deliveries d
              where ${waiting(sql`d`)} and d.client_id > apps.client_id order by d.client_id limit 1)
      from apps where apps.client_id is not null
    )
    select client_id from (
      select client_id from apps
      where client_id is not null and exists (
        select 1 from oauth_webhook_deliveries d
        where d.client_id = apps.client_id and ${waiting(sql`d`)} and d.next_attempt_at <= now())
      and ${inFlight(sql`apps.client_id`)} < ${perApp}
      offset 0
    ) due
    where pg_try_advisory_xact_lock(${CLAIM_LOCKS}, hashtext(client_id))`)
  return rowsOf<{ client_id: string }>(result).map((row) => row.client_id)
}

/**
 * Leases up to `limit` due deliveries, oldest due first, each app's up to its free slots: `perApp` less its
 * deliveries in flight (leased, across every instance). A leased delivery is not due again until its lease
 * ends, so a delivery whose instance died is retried then.
 */
async function leaseDueDeliveries(
  tx: Database,
  clientIds: string[],
  options: { perApp: number; limit: number; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  const apps = sql.join(
    clientIds.map((id) => sql`${id}`),
    sql`, `,
  )
  const lease = sql`date_trunc('milliseconds', now() + ${options.leaseMs} * interval '1 millisecond')`
  const result = await tx.execute(sql`
    with candidates as (
      select due.id, apps.client_id, due.next_attempt_at,
        row_number() over (partition by apps.client_id order by due.next_attempt_at) as place,
        in_flight.count as in_flight
      from unnest(array[${apps}]::text[]) as apps(client_id)
      cross join lateral (select ${inFlight(sql`apps.client_id`)} as count) in_flight
      cross join lateral (
        select d.id, d.next_attempt_at from oauth_webhook_deliveries d
        where d.client_id = apps.client_id and ${waiting(sql`d`)} and d.next_attempt_at <= now()
        order by d.next_attempt_at limit ${options.perApp}
        for update skip locked
      ) due
    ), claimed as (
      select id, client_id from candidates where place <= ${options.perApp} - in_flight
      order by next_attempt_at limit ${options.limit}
    )
    update oauth_webhook_deliveries d set leased_until = ${lease}, next_attempt_at = ${lease}
    from claimed left join oauth_apps a on a.id = claimed.client_id
    where d.client_id = claimed.client_id and d.id = claimed.id
    returning d.id, d.client_id, d.account_id, d.event, d.notification, d.series_attempts, d.leased_until,
      d.created_at, a.webhook_url, a.webhook_secret_sealed`)
  return rowsOf<{
    id: string
    client_id: string
    account_id: string
    event: string
    notification: object
    series_attempts: number
    leased_until: Date | string
    created_at: Date | string
    webhook_url: string | null
    webhook_secret_sealed: string | null
  }>(result).map((row) => ({
    id: row.id,
    clientId: row.client_id,
    accountId: row.account_id,
    event: row.event,
    notification: row.notification,
    seriesAttempts: row.series_attempts,
    leasedUntil: new Date(row.leased_until),
    createdAt: new Date(row.created_at),
    app: { webhookUrl: row.webhook_url, webhookSecretSealed: row.webhook_secret_sealed },
  }))
}

/** Claims due deliveries for this instance: the apps' locks first, then, seeing every lease they fence, the leases. */
export function claimDueDeliveries(
  db: Database,
  options: { perApp: number; limit: number; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  return inTransaction(db, async (tx) => {
    const clientIds = await lockAppsWithDueDeliveries(tx, options.perApp)
    return clientIds.length === 0 ? [] : leaseDueDeliveries(tx, clientIds, options)
  })
}

/** What an attempt, or the decision not to make one, leaves of a delivery. */
export type Settlement =
  | { status: 'succeeded' | 'dead'; attempt: WebhookAttempt }
  | { status: 'retrying'; attempt: WebhookAttempt; nextAttemptAt: Date }
  | { status: 'dropped'; reason: string }

/**
 * Writes the outcome, if the lease is still the one claimed (else it ran out, and another instance holds the
 * delivery now); whether it was written.
 */
export async function settleDelivery(
  db: Database,
  claimed: Pick<ClaimedDelivery, 'accountId' | 'id' | 'leasedUntil'>,
  settlement: Settlement,
): Promise<boolean> {
  const attempted =
    'attempt' in settlement
      ? {
          attempts: sql`${deliveries.attempts} || ${JSON.stringify([settlement.attempt])}::jsonb`,
          seriesAttempts: sql`${deliveries.seriesAttempts} + 1`,
        }
      : { droppedReason: settlement.reason }
  const rows = await db
    .update(deliveries)
    .set({
      status: settlement.status,
      nextAttemptAt: settlement.status === 'retrying' ? settlement.nextAttemptAt : null,
      leasedUntil: null,
      ...attempted,
    })
    .where(
      and(
        eq(deliveries.accountId, claimed.accountId),
        eq(deliveries.id, claimed.id),
        eq(deliveries.leasedUntil, claimed.leasedUntil),
      ),
    )
    .returning({ id: deliveries.id })
  return rows.length === 1
}

export function findDelivery(db: Database, clientId: string, id: string): Promise<DeliveryRow | undefined> {
  return db
    .select()
    .from(deliveries)
    .where(and(eq(deliveries.clientId, clientId), eq(deliveries.id, id)))
    .then(([row]) => row)
}

/** The app's deliveries, newest first, of one status or all. */
export function listDeliveries(
  db: Database,
  clientId: string,
  page: { status?: WebhookDeliveryStatus; offset: number; limit: number },
) {
  const where = and(
    eq(deliveries.clientId, clientId),
    page.status ? eq(deliveries.status, page.status) : undefined,
  )
  return selectPage(
    db,
    db.select().from(deliveries).where(where).orderBy(desc(deliveries.id)).$dynamic(),
    { from: deliveries, where },
    page,
  )
}

/**
 * Queues a settled delivery again, due now, as a new series of attempts under the same `webhook-id`. A
 * delivery still waiting (a replay repeated, or not settled yet) is left as it is: no second send is queued.
 */
export async function replaySettledDelivery(
  db: Database,
  clientId: string,
  id: string,
): Promise<DeliveryRow | undefined> {
  const [row] = await db
    .update(deliveries)
    .set({ status: 'pending', seriesAttempts: 0, nextAttemptAt: sql`now()`, droppedReason: null })
    .where(and(eq(deliveries.clientId, clientId), eq(deliveries.id, id), inArray(deliveries.status, SETTLED)))
    .returning()
  return row
}
