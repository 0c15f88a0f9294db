import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../src/platform/db/ids.js'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { createAccount } from './helpers/fixtures.js'
import { seedFunnel } from './helpers/funnels.js'
import { rowsOf } from './helpers/jobs.js'

/**
 * References whose check on a delete of the parent row has no index starting with their columns, each with
 * its reason. Without one, PostgreSQL reads the whole child table for every parent row deleted (1.15 s per
 * email at --scale 1 before the delivery events' reference named the account: docs/decisions.md).
 */
const EXCEPTIONS: Record<string, string> = {
  funnels_domain_fk:
    "set null on delete, of the domain's column alone: the funnels of a domain are few, and the account's are read along funnels_account_updated",
  support_rooms_inbox_fk:
    "set null on delete, of the inbox's column alone: a few inboxes per account, and the account's rooms along support_rooms_account_conversation",
  review_configurations_template_fk: 'one configuration per account',
  chat_identities_user_id_users_id_fk:
    'a user deleted (by a removal) is checked against one row per user and account: about 1 ms at 10,000',
  prospect_conversation_members_user_id_users_id_fk: 'as chat identities, a row per user and conversation',
}

interface Reference {
  name: string
  served: boolean
}

describe('references between the rows of an account', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it("have the check a parent row's delete makes served by an index starting with their columns", async () => {
    const references = rowsOf<Reference>(
      await t.app.platform.db.execute(sql`
        select c.conname::text as name,
          exists(select from pg_index i where i.indrelid = c.conrelid and i.indpred is null
                 and (select array_agg(x order by x) from unnest(i.indkey[0:cardinality(c.conkey) - 1]) x)
                   = (select array_agg(x order by x) from unnest(c.conkey) x)) as served
        from pg_constraint c
        where c.contype = 'f' and c.connamespace = current_schema()::regnamespace
          and exists(select from pg_attribute a where a.attrelid = c.conrelid and a.attname = 'account_id'
                     and not a.attisdropped)
        order by 1`),
    )
    // Account-owned children of account-owned parents: a few dozen references in all.
    expect(references.length).toBeGreaterThan(20)
    const astray = references.filter((reference) => !reference.served).map((reference) => reference.name)
    expect(astray).toEqual(Object.keys(EXCEPTIONS).sort())
  })

  it("refuse a row that points at another account's row", async () => {
    const owner = await createAccount(t.app, { name: 'Owner of the funnel' })
    const stranger = await createAccount(t.app, { name: 'Stranger' })
    const { funnelId } = await seedFunnel(t.app, { accountId: owner })
    const link = (accountId: string) =>
      t.app.platform.db.execute(
        sql`insert into funnel_short_links (id, account_id, funnel_id, code)
          values (${newId()}, ${accountId}, ${funnelId}, ${`c${newId().slice(-5)}`})`,
      )
    await link(owner)
    await expect(link(stranger)).rejects.toMatchObject({ cause: { code: '23503' } })
  })
})
