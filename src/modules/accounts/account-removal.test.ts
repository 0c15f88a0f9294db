import type { AddressInfo } from 'node:net'
import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { FAKE_PURGE_PATH, startFakeEdgePurgeApi } from '../../../test/fakes/edge-purge-api.js'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { addUser, createAccount, createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { createFunnel } from '../../../test/helpers/funnels.js'
import { eventually, jobsSettled, rowsOf } from '../../../test/helpers/jobs.js'
import {
  createLeadCampaign,
  graphId,
  LEADS_APP,
  leadsEnv,
  seller,
  storeLeadsToken,
} from '../../../test/helpers/leads.js'
import { realtimeClients } from '../../../test/helpers/realtime.js'
import { createGroup, postMessage } from '../../../test/helpers/rooms.js'
import { test as base } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { EXPORT_OF_REMOVED } from './account-export.service.js'
import { ACCOUNT_REMOVED_MESSAGE } from './accounts.service.js'

const PARENT_KEY = 'SG.parent-key-for-removal-tests'
const EDGE_TOKEN = 'edge-api-token-for-removal-tests'
const BATCH = 2

const test = base.extend(
  'edgePurge',
  { scope: 'file' },
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a fixture needs from its pattern
  async ({}, { onCleanup }) => {
    const fake = await startFakeEdgePurgeApi({ apiToken: EDGE_TOKEN })
    onCleanup(() => fake.close())
    return fake
  },
)
test.override('sendgridOptions', { apiKeys: [PARENT_KEY], subusers: ['removed-mail', 'kept-mail'] })
test.override('appEnv', ({ sendgrid, graph, edgePurge }) => ({
  ...leadsEnv(graph.url),
  MAIL_PROVIDER: 'sendgrid',
  SENDGRID_API_KEY: PARENT_KEY,
  SENDGRID_BASE_URL: sendgrid.url,
  SECRETS_ENCRYPTION_KEY: 'e'.repeat(64),
  EDGE_PURGE_URL: `${edgePurge.url}${FAKE_PURGE_PATH}`,
  EDGE_API_TOKEN: EDGE_TOKEN,
  ACCOUNT_REMOVAL_BATCH_SIZE: String(BATCH),
  ACCOUNT_REMOVAL_PAUSE_MS: '20',
}))

const accountUrl = (accountId: string) => `/v1/admin/accounts/${accountId}`

const remove = (t: TestApp, accountId: string) =>
  t.app.inject({ method: 'DELETE', url: accountUrl(accountId), headers: adminHeaders })

async function removalOf(t: TestApp, accountId: string) {
  const response = await t.app.inject({ url: `${accountUrl(accountId)}/removal`, headers: adminHeaders })
  expect(response.statusCode, response.body).toBe(200)
  return response.json().data
}

const removed = (t: TestApp, accountId: string) =>
  eventually(async () => expect((await removalOf(t, accountId)).status).toBe('done'), { timeout: 60_000 })

/** Runs each statement on its own (a prepared statement holds one). */
async function run(t: TestApp, ...statements: string[]) {
  for (const statement of statements) await t.app.platform.db.execute(sql.raw(statement))
}

const execute = async <T>(t: TestApp, query: ReturnType<typeof sql>) =>
  rowsOf<T>(await t.app.platform.db.execute(query))

/** Every table of the schema with an `account_id` column, from PostgreSQL's own catalog. */
const tablesWithAccountId = async (t: TestApp) =>
  (
    await execute<{ name: string }>(
      t,
      sql`select c.relname::text as name from pg_class c
        join pg_namespace n on n.oid = c.relnamespace
        join pg_attribute a on a.attrelid = c.oid and a.attname = 'account_id' and not a.attisdropped
        where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
        order by 1`,
    )
  ).map((row) => row.name)

/** Per table, how many rows the accounts hold in it. */
async function rowsByTable(t: TestApp, tables: string[], accountIds: string[]) {
  const counts: Record<string, number> = {}
  const ids = sql.join(
    accountIds.map((id) => sql`${id}`),
    sql`, `,
  )
  for (const table of tables) {
    const [row] = await execute<{ count: number }>(
      t,
      sql`select count(*)::int as count from ${sql.identifier(table)} where account_id in (${ids})`,
    )
    counts[table] = row?.count ?? 0
  }
  return counts
}

const admin = (t: TestApp, method: 'POST' | 'PATCH' | 'PUT', url: string, payload: object) =>
  t.app.inject({ method, url: `/v1/admin${url}`, headers: adminHeaders, payload })

/** Rows in several modules of the tenant's account, written through the API. */
async function fillAccount(t: TestApp, tenant: Tenant, label: string) {
  const colleague = await addUser(t.app, tenant.accountId, `${label} colleague`)
  const room = await createGroup(t.app, tenant, [colleague], { name: `${label} room` })
  await postMessage(t.app, tenant, room._id, `${label} message`)
  const contact = await t.app.inject({
    method: 'POST',
    url: '/v1/contacts',
    headers: tenant.headers,
    payload: { email: `${label}-client@example.com`, name: 'Client' },
  })
  expect(contact.statusCode, contact.body).toBe(201)
  await createFunnel(t.app, tenant)
  const credits = await admin(t, 'POST', `/accounts/${tenant.accountId}/credits`, { amount: 5 })
  expect(credits.statusCode, credits.body).toBe(200)
  const person = await admin(t, 'POST', `/accounts/${tenant.accountId}/persons`, { first_name: label })
  expect(person.statusCode, person.body).toBe(201)
  return { colleague }
}

describe('DELETE /v1/admin/accounts/:id', () => {
  test("removes every row of the account and its sub-accounts from every table with an account column, and no other account's", {
    timeout: 180_000,
  }, async ({ t, sendgrid, graph, edgePurge }) => {
    const agency = await createTenant(t.app, { name: 'Agency removed' })
    const client = await createTenant(t.app, { name: 'Client removed', parent_account: agency.accountId })
    const grandchild = await createAccount(t.app, { name: 'Below', parent_account: client.accountId })
    const other = await createTenant(t.app, { name: 'Kept' })
    const otherClient = await createTenant(t.app, { name: 'Kept client', parent_account: other.accountId })
    await fillAccount(t, agency, 'agency')
    await fillAccount(t, client, 'client')
    await fillAccount(t, other, 'other')
    await fillAccount(t, otherClient, 'other-client')
    // A user of both families stays, with the kept account's membership only.
    const shared = await addUser(t.app, other.accountId, 'Member of both')
    const joined = await admin(t, 'POST', `/users/${shared.userId}/memberships`, {
      account_id: agency.accountId,
    })
    expect(joined.statusCode, joined.body).toBe(201)
    // Provider state: a SendGrid subuser with an Inbound Parse setting, a page subscription, a funnel.
    for (const [tenant, username] of [
      [agency, 'removed-mail'],
      [other, 'kept-mail'],
    ] as const) {
      const set = await admin(t, 'PUT', `/accounts/${tenant.accountId}/mail-subuser`, {
        username,
        api_key: `SG.${username}`,
      })
      expect(set.statusCode, set.body).toBe(200)
      const parse = await t.app.inject({
        method: 'POST',
        url: '/v1/e/mailprovider/webhook/inbound/create',
        headers: tenant.headers,
        payload: { hostname: `reply.${username}.example.com` },
      })
      expect(parse.statusCode, parse.body).toBe(200)
    }
    const removedPage = await seller(t, graph, client)
    const keptPage = await seller(t, graph, other)
    for (const { pageId } of [removedPage, keptPage])
      graph.pageSubscriptions.set(pageId, [
        { id: LEADS_APP.appId, name: 'Leads app', subscribed_fields: ['leadgen'] },
        { id: 'another-app', name: 'Another app', subscribed_fields: ['leadgen'] },
      ])
    const funnel = await createFunnel(t.app, client)
    // A table a later migration adds is found in the catalog and removed too.
    await t.app.platform.db.execute(
      sql`create table removal_probe (id text primary key, account_id text not null)`,
    )
    await t.app.platform.db.execute(
      sql`insert into removal_probe values (${newId()}, ${grandchild}), (${newId()}, ${other.accountId})`,
    )

    const tables = await tablesWithAccountId(t)
    const family = [agency.accountId, client.accountId, grandchild]
    const kept = [other.accountId, otherClient.accountId]
    const keptBefore = await rowsByTable(t, tables, kept)
    const familyBefore = await rowsByTable(t, tables, family)
    const otherUsers = await execute<{ id: string }>(t, sql`select id from users order by id`)

    const response = await remove(t, agency.accountId)

    expect(response.statusCode, response.body).toBe(202)
    expect(response.headers.location).toBe(`/v1/admin/accounts/${agency.accountId}/removal`)
    expect(response.json().data).toMatchObject({
      account_id: agency.accountId,
      sub_account_ids: [client.accountId, grandchild],
      status: 'queued',
      rows_deleted: 0,
    })
    await removed(t, agency.accountId)
    const removal = await removalOf(t, agency.accountId)
    // Every table with an account column is one the removal went through, the one added above too.
    const covered = removal.tables.map((table: { table: string }) => table.table)
    expect(tables.filter((table) => !covered.includes(table))).toEqual([])
    expect(covered).toContain('removal_probe')
    // Children before parents: no table comes after a table it references; the accounts last.
    expect(covered.at(-1)).toBe('accounts')
    expect(covered.indexOf('funnel_steps')).toBeLessThan(covered.indexOf('funnels'))
    expect(covered.indexOf('room_messages')).toBeLessThan(covered.indexOf('rooms'))
    expect(covered.indexOf('memberships')).toBeLessThan(covered.indexOf('users'))

    const familyAfter = await rowsByTable(t, tables, family)
    expect(Object.entries(familyAfter).filter(([, count]) => count > 0)).toEqual([])
    expect(await rowsByTable(t, tables, kept)).toEqual(keptBefore)
    const deletedByTable = Object.fromEntries(
      removal.tables.map((table: { table: string; rows_deleted: number }) => [
        table.table,
        table.rows_deleted,
      ]),
    )
    for (const table of tables) expect(deletedByTable[table], table).toBe(familyBefore[table])
    expect(deletedByTable.accounts).toBe(3)
    const accountsLeft = await execute(
      t,
      sql`select id from accounts where id in (${sql.join(
        family.map((id) => sql`${id}`),
        sql`, `,
      )})`,
    )
    expect(accountsLeft).toEqual([])
    // The family's own users went; the one of both stays.
    const usersAfter = (await execute<{ id: string }>(t, sql`select id from users`)).map((row) => row.id)
    expect(usersAfter).toContain(shared.userId)
    expect(usersAfter).not.toContain(agency.userId)
    expect(usersAfter).not.toContain(client.userId)
    expect(usersAfter).toEqual(
      otherUsers
        .map((row) => row.id)
        .filter((id) => ![agency.userId, client.userId].includes(id) && usersAfter.includes(id)),
    )
    expect(deletedByTable.users).toBe(otherUsers.length - usersAfter.length)

    // The provider state went through jobs of their own; the kept account's stayed.
    await jobsSettled(t, 'account_id', agency.accountId)
    await jobsSettled(t, 'account_id', client.accountId)
    expect(sendgrid.hasSubuser('removed-mail')).toBe(false)
    expect(sendgrid.hasSubuser('kept-mail')).toBe(true)
    expect(sendgrid.parseSettingsOf('kept-mail')).toHaveLength(1)
    const calls = sendgrid.received.map((request) => `${request.method} ${request.path}`)
    expect(calls).toContain('DELETE /v3/user/webhooks/parse/settings/reply.removed-mail.example.com')
    expect(calls).toContain('DELETE /v3/subusers/removed-mail')
    const subuserDelete = sendgrid.received.find((request) => request.path === '/v3/subusers/removed-mail')
    expect(subuserDelete?.headers.authorization).toBe(`Bearer ${PARENT_KEY}`)
    expect(subuserDelete?.headers['on-behalf-of']).toBeUndefined()
    const ours = (pageId: string) =>
      (graph.pageSubscriptions.get(pageId) ?? []).filter((app) => app.id === LEADS_APP.appId)
    expect(ours(removedPage.pageId)).toEqual([])
    expect(graph.pageSubscriptions.get(removedPage.pageId)).toHaveLength(1)
    expect(ours(keptPage.pageId)).toHaveLength(1)
    const unsubscribed = graph.requests.filter((request) => request.method === 'DELETE')
    expect(unsubscribed.map((request) => new URL(request.url, graph.url).pathname)).toEqual([
      `/v18.0/${removedPage.pageId}/subscribed_apps`,
    ])
    expect(new URLSearchParams(unsubscribed[0]?.body).get('access_token')).toBe(removedPage.pageToken)
    expect(edgePurge.purges.flatMap((purge) => purge.tags ?? [])).toContain(`funnel-${funnel._id}`)
    await t.app.platform.db.execute(sql`drop table removal_probe`)
  })

  test("takes what a provider no longer has as done, and keeps the subscription of a page another account's campaign uses", async ({
    t,
    sendgrid,
    graph,
  }) => {
    const gone = await createTenant(t.app, { name: 'Gone at SendGrid' })
    const neighbour = await createTenant(t.app, { name: 'Same page' })
    sendgrid.addSubuser('gone-mail')
    const set = await admin(t, 'PUT', `/accounts/${gone.accountId}/mail-subuser`, {
      username: 'gone-mail',
      api_key: 'SG.gone-mail',
    })
    expect(set.statusCode, set.body).toBe(200)
    // Deleted in SendGrid's console since: its settings are refused, its delete answers 404.
    const deletedThere = await fetch(`${sendgrid.url}/v3/subusers/gone-mail`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${PARENT_KEY}` },
    })
    expect(deletedThere.status).toBe(204)
    // One page whose leads both accounts' campaigns read, each of its own form.
    const page = await seller(t, graph, gone)
    const otherForm = graphId()
    graph.addForm(page.pageId, { id: otherForm, name: 'Autumn offer' })
    await storeLeadsToken(t, neighbour, page.userToken)
    await createLeadCampaign(t, neighbour, page.pageId, otherForm)
    const ours = { id: LEADS_APP.appId, name: 'Leads app', subscribed_fields: ['leadgen'] }
    graph.pageSubscriptions.set(page.pageId, [ours])

    expect((await remove(t, gone.accountId)).statusCode).toBe(202)
    await removed(t, gone.accountId)
    await jobsSettled(t, 'account_id', gone.accountId)

    // The email and leads modules' clean-up jobs, done (not waiting to be retried).
    const cleanUps = await execute<{ name: string; state: string }>(
      t,
      sql`select name, state from jobs.job where data ->> 'account_id' = ${gone.accountId}
        and name in ('email.remove-subuser', 'leads.unsubscribe-removed-page') order by name`,
    )
    expect(cleanUps).toEqual([
      { name: 'email.remove-subuser', state: 'completed' },
      { name: 'leads.unsubscribe-removed-page', state: 'completed' },
    ])
    expect(sendgrid.received.map((request) => `${request.method} ${request.path}`)).toContain(
      'DELETE /v3/subusers/gone-mail',
    )
    expect(graph.pageSubscriptions.get(page.pageId)).toEqual([ours])
    expect(
      graph.requests.filter((request) => request.method === 'DELETE' && request.url.includes(page.pageId)),
    ).toEqual([])
  })

  test('goes on where it stopped after a failure mid-way, and completes on the retry', async ({ t }) => {
    const tenant = await createTenant(t.app, { name: 'Failing once' })
    const emails = Array.from({ length: 5 }, (_, i) => `client-${i}-${newId()}@example.com`)
    for (const email of emails) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/v1/contacts',
        headers: tenant.headers,
        payload: { email },
      })
      expect(response.statusCode, response.body).toBe(201)
    }
    // The third contact deleted fails its batch (the second): the first batch is committed by then.
    await run(
      t,
      'create sequence removal_fail_seq',
      'create table removal_fail (on_row int not null)',
      'insert into removal_fail values (3)',
      `create function removal_fail() returns trigger language plpgsql as $$
        begin
          if nextval('removal_fail_seq') >= (select coalesce(max(on_row), 1000000) from removal_fail) then
            raise exception 'injected failure';
          end if;
          return old;
        end $$`,
      'create trigger removal_fail before delete on contacts for each row execute function removal_fail()',
    )
    try {
      expect((await remove(t, tenant.accountId)).statusCode).toBe(202)
      await eventually(
        async () => {
          const failed = await removalOf(t, tenant.accountId)
          expect(failed).toMatchObject({ status: 'failed', last_error: 'contacts: database error P0001' })
          return failed
        },
        { timeout: 30_000 },
      )
      const midway = await removalOf(t, tenant.accountId)
      const contacts = midway.tables.find((table: { table: string }) => table.table === 'contacts')
      expect(contacts).toEqual({ table: 'contacts', rows_deleted: BATCH, done: false })
      // Tables before it are done; the accounts, after it, untouched.
      expect(midway.tables.find((table: { table: string }) => table.table === 'chat_identities').done).toBe(
        true,
      )
      expect(midway.tables.find((table: { table: string }) => table.table === 'accounts')).toMatchObject({
        rows_deleted: 0,
        done: false,
      })
      await t.app.platform.db.execute(sql`delete from removal_fail`)

      await removed(t, tenant.accountId)
      const done = await removalOf(t, tenant.accountId)
      expect(done.tables.find((table: { table: string }) => table.table === 'contacts')).toEqual({
        table: 'contacts',
        rows_deleted: emails.length,
        done: true,
      })
      expect(done.attempts).toBeGreaterThanOrEqual(2)
      expect(done.finished_at).not.toBeNull()
    } finally {
      await run(
        t,
        'drop trigger removal_fail on contacts',
        'drop function removal_fail()',
        'drop table removal_fail',
        'drop sequence removal_fail_seq',
      )
    }
  })

  test('shows its progress while it runs', async ({ t }) => {
    const tenant = await createTenant(t.app, { name: 'Slow to remove' })
    for (let i = 0; i < 6; i++)
      await t.app.inject({
        method: 'POST',
        url: '/v1/contacts',
        headers: tenant.headers,
        payload: { email: `slow-${i}-${newId()}@example.com` },
      })
    // Each contact takes a moment to delete: the removal is caught between its batches.
    await run(
      t,
      `create function removal_slow() returns trigger language plpgsql as $$
        declare started timestamptz := clock_timestamp();
        begin
          -- A busy wait: the embedded database's pg_sleep does not wait.
          while clock_timestamp() < started + interval '200 milliseconds' loop end loop;
          return old;
        end $$`,
      'create trigger removal_slow before delete on contacts for each row execute function removal_slow()',
    )
    try {
      expect((await remove(t, tenant.accountId)).statusCode).toBe(202)
      const running = await eventually(
        async () => {
          const removal = await removalOf(t, tenant.accountId)
          const contacts = removal.tables.find((table: { table: string }) => table.table === 'contacts')
          expect(removal.status).toBe('running')
          expect(contacts.rows_deleted).toBeGreaterThan(0)
          return removal
        },
        { timeout: 30_000, interval: 50 },
      )
      expect(running.started_at).not.toBeNull()
      expect(running.finished_at).toBeNull()
      expect(running.rows_deleted).toBeGreaterThan(0)
      expect(running.tables_done).toBeLessThan(running.tables.length)
      await removed(t, tenant.accountId)
    } finally {
      await run(t, 'drop trigger removal_slow on contacts', 'drop function removal_slow()')
    }
  })

  test("refuses the removed accounts' tokens and sockets at once, and after their rows are gone", async ({
    t,
  }) => {
    const tenant = await createTenant(t.app, { name: 'Connected' })
    const client = await createTenant(t.app, { name: 'Connected client', parent_account: tenant.accountId })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const connect = realtimeClients()
    const sockets = await Promise.all([tenant, client].map((caller) => connect(url, { token: caller.token })))
    const disconnected = sockets.map(
      ({ socket }) => new Promise<void>((resolve) => socket.once('disconnect', () => resolve())),
    )
    const before = await t.app.inject({ url: '/v1/contacts', headers: client.headers })
    expect(before.statusCode).toBe(200)

    expect((await remove(t, tenant.accountId)).statusCode).toBe(202)

    await Promise.all(disconnected)
    for (const caller of [tenant, client]) {
      const refused = await t.app.inject({ url: '/v1/contacts', headers: caller.headers })
      expect(refused.statusCode).toBe(403)
      expect(refused.json().message).toBe('Account is removed')
      await expect(connect(url, { token: caller.token })).rejects.toMatchObject({
        message: 'Unauthorized',
        data: { reason: 'Account is removed' },
      })
    }
    await removed(t, tenant.accountId)
    const gone = await t.app.inject({ url: '/v1/contacts', headers: client.headers })
    expect(gone.statusCode).toBe(403)
    expect(gone.json().message).toBe('Account is removed')
  })

  test('answers the same removal when asked again, 404 for an unknown account, and 409 to admin changes', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app, { name: 'Removed twice' })
    const user = await createTenant(t.app, { name: 'Elsewhere' })
    const first = await remove(t, tenant.accountId)
    const second = await remove(t, tenant.accountId)
    expect(first.statusCode).toBe(202)
    expect(second.statusCode).toBe(202)
    expect(second.headers.location).toBe(first.headers.location)
    expect(second.json().data.requested_at).toBe(first.json().data.requested_at)
    const jobs = await execute(
      t,
      sql`select id from jobs.job where name = 'accounts.removal' and data ->> 'account_id' = ${tenant.accountId}`,
    )
    expect(jobs).toHaveLength(1)

    const unknown = newId()
    for (const response of [
      await remove(t, unknown),
      await t.app.inject({ url: `${accountUrl(unknown)}/removal`, headers: adminHeaders }),
    ])
      expect(response.json()).toMatchObject({ success: false, errno: 404 })
    const notRemoved = await t.app.inject({
      url: `${accountUrl(user.accountId)}/removal`,
      headers: adminHeaders,
    })
    expect(notRemoved.json()).toEqual({ success: false, errno: 404, message: 'No removal of this account' })

    const changes = [
      () => admin(t, 'PATCH', `/accounts/${tenant.accountId}`, { status: 'active' }),
      () => admin(t, 'POST', `/accounts/${tenant.accountId}/credits`, { amount: 1 }),
      () => admin(t, 'POST', `/users/${user.userId}/memberships`, { account_id: tenant.accountId }),
      () => admin(t, 'POST', '/tokens', { user_id: tenant.userId, account_id: tenant.accountId }),
      () => admin(t, 'POST', `/accounts/${tenant.accountId}/contacts`, { email: 'late@example.com' }),
      () => admin(t, 'POST', '/accounts', { name: 'Late child', parent_account: tenant.accountId }),
    ]
    for (const change of changes) {
      const refused = await change()
      expect(refused.statusCode, refused.body).toBe(409)
      expect(refused.json().message).toBe(ACCOUNT_REMOVED_MESSAGE)
    }
    const exported = await t.app.inject({
      url: `${accountUrl(tenant.accountId)}/export`,
      headers: adminHeaders,
    })
    expect(exported.statusCode).toBe(409)
    expect(exported.json().message).toBe(EXPORT_OF_REMOVED)
    const removedStatus = await admin(t, 'PATCH', `/accounts/${user.accountId}`, { status: 'removed' })
    expect(removedStatus.statusCode).toBe(400)

    await removed(t, tenant.accountId)
    // Once its rows are gone too: still 409, and the removal still answers.
    const late = await changes[1]?.()
    expect(late?.statusCode).toBe(409)
    expect((await remove(t, tenant.accountId)).json().data.status).toBe('done')
  })
})
