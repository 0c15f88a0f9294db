/**
 * pg-boss 10's schema (version 24) cannot be migrated by pg-boss 12: its oldest starting version is 25,
 * pg-boss 11's rewrite of the schema, which shipped without a migration from 10. So the upgrade is a cutover
 * (issue 44): the first instance of this release to start moves pg-boss 10's schema aside (`pgboss` →
 * `pgboss_v10`, one catalog update), pg-boss 12 installs itself afresh in `pgboss`, and the jobs still to run
 * are copied over once its queues exist: waiting ones as they were, running ones as retries (their run may
 * have died with the instance that held it; every job here is safe to run again, as after a lock's expiry).
 * Finished jobs stay behind. The old schema is left for the operator to drop once no instance of the
 * previous release runs (`drop schema pgboss_v10 cascade`): until then such an instance's job calls fail.
 */

type Execute = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>

/** Where pg-boss 10's schema goes aside. */
export const V10_SCHEMA = 'pgboss_v10'

/** pg-boss's schema version that pg-boss 12 cannot migrate from. */
const V10_VERSION = 24

/**
 * Moves pg-boss 10's schema aside if `pgboss` holds it; true when it did. Under an advisory lock, so that of
 * several instances starting at once one moves it, and with a lock timeout: the rename waits for no long
 * transaction of an old instance.
 */
export async function moveV10SchemaAside(execute: Execute): Promise<boolean> {
  // pg-boss's version table is named only once it is known to exist: a fresh database has none.
  const { rows } = await execute(
    `select to_regclass('pgboss.version') is not null and to_regnamespace('${V10_SCHEMA}') is null as candidate`,
  )
  if (!rows.some((row) => (row as { candidate?: boolean }).candidate === true)) return false
  const versions = await execute('select max(version) as version from pgboss.version')
  if ((versions.rows[0] as { version?: number } | undefined)?.version !== V10_VERSION) return false
  await execute(`
    begin;
    set local lock_timeout = '10s';
    select pg_advisory_xact_lock(hashtext('pgboss v10 cutover'));
    do $$ begin
      if to_regnamespace('${V10_SCHEMA}') is null and (select max(version) from pgboss.version) = ${V10_VERSION}
      then alter schema pgboss rename to ${V10_SCHEMA}; end if;
    end $$;
    commit;`)
  return true
}

/**
 * Copies the jobs still to run from pg-boss 10's schema into pg-boss 12's queues of the same names (those
 * defined here), each with its account as its group (its data's `account_id`); a job already copied is
 * skipped. Returns how many were copied.
 */
export async function copyV10Jobs(execute: Execute): Promise<number> {
  const { rows } = await execute(`
    with copied as (
      insert into pgboss.job (id, name, priority, data, state, retry_limit, retry_count, retry_delay,
        retry_backoff, expire_seconds, singleton_key, start_after, created_on, keep_until, group_id)
      select j.id, j.name, j.priority, j.data,
        (case when j.state = 'active' then 'retry' else j.state::text end)::pgboss.job_state,
        j.retry_limit, j.retry_count, j.retry_delay, j.retry_backoff,
        greatest(1, extract(epoch from j.expire_in))::int, j.singleton_key,
        j.start_after, j.created_on, greatest(j.keep_until, now() + interval '1 day'),
        case when j.data ->> 'account_id' ~ '^[0-9a-f]{24}$' then j.data ->> 'account_id' end
      from ${V10_SCHEMA}.job j join pgboss.queue q on q.name = j.name
      where j.state in ('created', 'retry', 'active')
      on conflict do nothing
      returning 1
    )
    select count(*)::int as copied from copied`)
  return (rows[0] as { copied: number } | undefined)?.copied ?? 0
}
