import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seedVolume } from '../bench/seed-volume.js'
import { recordStatementsOf } from '../bench/sql-recorder.mjs'
import type { RecordedStatement, WireValue } from '../bench/sql-recording.js'
import { adminHeaders, bearer, buildTestApp, type TestApp } from './helpers/app.js'

/** Enough rows that PostgreSQL's statistics tell an account's few rows from a walk of the whole table. */
const SCALE = 0.01
const ACCOUNT_COLUMN = 'account_id'

/**
 * Indexes that read an account-owned table without starting with the account, allowed only where their
 * scan has an index condition (the rows of one parent the statement has already found in its account,
 * never a walk of the index), each with its reason. A unique index matched on every column needs no
 * entry: it reads one row, whose account the statement checks.
 */
const LOOKUPS_WITHOUT_ACCOUNT: Record<string, string> = {
  room_messages_room_sender_seq: "a room's unread messages of one sender, the room found in the account",
  room_messages_room_deleted_seq:
    "a room's deleted messages past a read marker, the room found in the account",
  funnel_steps_funnel_order: "the steps of the page's funnels, found in the account by the same request",
  // Plain indexes on ids kept for the lookups made before the account is known (migration 0037): an id is
  // generated unique, so its condition reads one row, whose account the statement checks.
  funnels_id: 'one funnel by its id (the key is (account_id, id)); the statement checks its account',
  funnel_steps_id: 'one step by its id (the key is (account_id, id)); the statement checks its account',
}

/**
 * Indexes that read an account-owned table across accounts, by design, each with its reason: the operator's
 * lists of every account's rows. Their plans may walk the index from its newest entry, as far as a page
 * (or a capped count) reads.
 */
const ACROSS_ACCOUNTS: Record<string, string> = {
  communications_outgoing_created: "the operator's outbox, every account's sent mail newest first",
}

/** Account-owned tables the volume seed leaves empty: planned without statistics, their plans say nothing. */
const NOT_SEEDED = new Set(['funnel_tags', 'funnel_tag_links'])

/** One node of `EXPLAIN (format json)`, with what this test reads of it. */
interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Index Cond'?: string
  Plans?: PlanNode[]
}

interface IndexInfo {
  table: string
  /** Key columns in order, comma-separated ('an expression' for one). */
  columns: string
  /** The first key as PostgreSQL writes it: a column's name or an expression. */
  firstKey: string
  /** What the first key is computed from: its expression, or a generated column's. */
  firstKeyOf: string
  unique: boolean
}

/** Whether an index condition compares `column` with `=` (or `= ANY`), as EXPLAIN writes it. */
const compares = (condition: string, column: string) => condition.includes(`(${column} = `)

/** A value as pg sent it, as pg sends it again. */
const parameter = (value: WireValue) =>
  value !== null && typeof value === 'object' ? Buffer.from(value.base64, 'base64') : value

function* nodesOf(plan: PlanNode): Generator<PlanNode> {
  yield plan
  for (const child of plan.Plans ?? []) yield* nodesOf(child)
}

// The planner of PostgreSQL is what is checked, on a database the volume seed fills; the embedded database
// is neither seeded nor the one a platform's volume runs on.
describe.runIf(process.env.DATABASE_URL)("the daily routes' queries on PostgreSQL", () => {
  let t: TestApp
  let db: pg.Client
  /** Tables with an account column, from the catalog: a table added later is checked too. */
  let accountOwned: Set<string>
  let indexes: Map<string, IndexInfo>

  const one = async <Row = { value: string }>(statement: string, values: unknown[]) =>
    (await db.query(statement, values)).rows[0] as Row | undefined

  /** The main member of the account named `name` (its first user, in every room), as a platform token. */
  async function memberOf(name: string) {
    const member = await one<{ account_id: string; user_id: string }>(
      `select m.account_id, m.user_id from memberships m join accounts a on a.id = m.account_id
       join users u on u.id = m.user_id where a.name = $1 order by length(u.email), u.email limit 1`,
      [name],
    )
    if (!member) throw new Error(`the seed has no account named ${name}`)
    const minted = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/tokens',
      headers: adminHeaders,
      payload: { user_id: member.user_id, account_id: member.account_id },
    })
    return { accountId: member.account_id, headers: bearer(minted.json().data.token) }
  }

  /** The statements each daily read sends for the account, with the URL that sent them. */
  async function dailyReads(accountId: string, headers: Record<string, string>) {
    const sent: { url: string; statements: RecordedStatement[] }[] = []
    const get = async (url: string, extraHeaders: Record<string, string> = {}) => {
      let status = 0
      let body = ''
      const statements = await recordStatementsOf(async () => {
        const response = await t.app.inject({ url, headers: { ...headers, ...extraHeaders } })
        status = response.statusCode
        body = response.body
      })
      expect(status, `GET ${url}: ${body.slice(0, 300)}`).toBe(200)
      sent.push({ url, statements })
      return body
    }
    /**
     * A list read by page, then with cursors: its first page and the one after (a keyset's condition), as a
     * client reading on past the pages an offset reaches does.
     */
    const getWithCursors = async (url: string, extraHeaders: Record<string, string> = {}) => {
      await get(url, extraHeaders)
      const withCursor = (cursor: string) => `${url}${url.includes('?') ? '&' : '?'}cursor=${cursor}`
      const first = await get(withCursor(''), extraHeaders)
      // JSON lists name the next cursor; the outbox's pages link to it.
      const next = first.startsWith('{')
        ? JSON.parse(first).pagination.next_cursor
        : first.match(/[?&;]cursor=([\w-]+)">Older</)?.[1]
      if (next) await get(withCursor(next), extraHeaders)
    }
    /** Some row of the account's in `table` (the seed may give a small account none). */
    const some = async (table: string, column = 'id') =>
      (
        await one(`select ${column} as value from ${table} where account_id = $1 order by 1 limit 1`, [
          accountId,
        ])
      )?.value

    await get('/api/conversation-v2/room')
    const room = await some('rooms')
    if (room) {
      await get(`/api/conversation-v2/room/${room}/messages?limit=50`)
      const word = (
        await one(
          `select split_part(content, ' ', 1) as value from room_messages where room_id = $1 and content like '___%' limit 1`,
          [room],
        )
      )?.value
      if (word) await get(`/api/conversation-v2/room/search?q=${encodeURIComponent(word)}`)
    }
    await getWithCursors('/v1/contacts?limit=100')
    await get('/v1/contacts?limit=100&search=contact-1')
    const contact = await some('contacts')
    if (contact) {
      await get(`/v1/contacts/${contact}`)
      await get(`/v1/e/mailprovider/communications?contact_id=${contact}`)
    }
    await getWithCursors('/v1/e/mailprovider/communications')
    const communication = await some('communications')
    if (communication) await get(`/v1/e/mailprovider/communications/${communication}`)
    await get('/v1/funnels?limit=100')
    const funnel = await some('funnels')
    if (funnel) await getWithCursors(`/v1/funnels/${funnel}/forms`)
    const code = await some('funnel_short_links', 'code')
    if (code) await get(`/v1/funnels/shorten/${code}`)
    await getWithCursors('/reviews/requests')
    await get('/reviews/stats')
    const campaign = await some('lead_campaigns')
    if (campaign) await getWithCursors(`/v1/integrations/socialnet/campaigns/${campaign}/leads`)
    await get('/v1/auth/oauth/grants')
    const page = { ...adminHeaders, accept: 'text/html' }
    await getWithCursors(`/v1/admin/outbox?account_id=${accountId}`, page)
    // The operator's list of every account's mail: across accounts, by its own index (ACROSS_ACCOUNTS).
    await getWithCursors('/v1/admin/outbox', page)
    return sent
  }

  const checked = (table: string) => accountOwned.has(table) && !NOT_SEEDED.has(table)
  /**
   * The index leads with the account, and its condition compares it: its first column is the account, or
   * its first key is a function of the account first (`contact_search_keys(account_id, …)`, or the column
   * that `room_search_vector(account_id, …)` generates: each key behind the account's prefix).
   */
  const readsAccount = (index: IndexInfo, condition: string) =>
    index.columns.split(',')[0] === ACCOUNT_COLUMN
      ? compares(condition, ACCOUNT_COLUMN)
      : new RegExp(`^\\w+\\(${ACCOUNT_COLUMN},`).test(index.firstKeyOf) &&
        condition.includes(`(${index.firstKey} `)
  /** A unique index matched on every column: one row (per value of an `= ANY` list). */
  const readsOneRow = (index: IndexInfo, condition: string) =>
    index.unique && index.columns.split(',').every((column) => compares(condition, column))

  /**
   * What is wrong with a statement's plan: a sequential scan of an account-owned table, a walk of one of
   * its indexes (what a sequential scan becomes once disabled), or an index whose condition does not
   * start with the account.
   */
  function problemsOf(plan: PlanNode): string[] {
    const problems: string[] = []
    for (const node of nodesOf(plan)) {
      const table = node['Relation Name']
      if (node['Node Type'] === 'Seq Scan' && table && checked(table))
        problems.push(`a sequential scan of ${table}`)
      const indexName = node['Index Name']
      const index = indexName ? indexes.get(indexName) : undefined
      if (!indexName || !index || !checked(index.table) || ACROSS_ACCOUNTS[indexName]) continue
      const condition = node['Index Cond']
      const read = `${index.table} read through ${indexName} (${index.columns})`
      if (!condition) {
        problems.push(`${read}, the whole index`)
      } else if (!(readsAccount(index, condition) || readsOneRow(index, condition))) {
        if (!LOOKUPS_WITHOUT_ACCOUNT[indexName]) problems.push(`${read} where ${condition}`)
      }
    }
    return problems
  }

  beforeAll(async () => {
    t = await buildTestApp()
    const url = t.database.url as string
    await seedVolume(url, { scale: SCALE })
    db = new pg.Client({ connectionString: url })
    await db.connect()
    await db.query('analyze')
    // A plan that still reads a table whole is then one no index can serve.
    await db.query('set enable_seqscan = off')
    const columns = await db.query(
      `select table_name from information_schema.columns
       where table_schema = current_schema() and column_name = $1`,
      [ACCOUNT_COLUMN],
    )
    accountOwned = new Set(columns.rows.map((row: { table_name: string }) => row.table_name))
    const found = await db.query(
      `select i.relname as index, t.relname as table,
         (select string_agg(coalesce(a.attname, 'an expression'), ',' order by k.n)
          from unnest(x.indkey) with ordinality k(attnum, n)
          left join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
          where k.n <= x.indnkeyatts) as columns, pg_get_indexdef(x.indexrelid, 1, true) as "firstKey",
         coalesce((select pg_get_expr(d.adbin, d.adrelid) from pg_attribute a
           join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
           where a.attrelid = t.oid and a.attnum = x.indkey[0] and a.attgenerated = 's'),
           pg_get_indexdef(x.indexrelid, 1, true)) as "firstKeyOf",
         x.indisunique as unique
       from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
       where t.relnamespace = current_schema()::regnamespace`,
    )
    indexes = new Map(found.rows.map(({ index, ...info }: { index: string } & IndexInfo) => [index, info]))
  }, 120_000)

  afterAll(async () => {
    await db?.end()
    await t?.close()
  })

  it('read account-owned tables through indexes that start with the account, for the largest account and a small one', async () => {
    expect(accountOwned).toContain('contacts')
    const largest = await memberOf('Agency 0')
    const { rows } = await db.query(
      `select a.name from accounts a left join contacts c on c.account_id = a.id
       group by a.id order by count(c.id), a.id limit 1`,
    )
    const small = await memberOf(rows[0].name)
    const problems = new Set<string>()
    let explained = 0
    for (const member of [largest, small]) {
      for (const { url, statements } of await dailyReads(member.accountId, member.headers)) {
        for (const statement of statements) {
          if (!/^\s*(select|with|insert|update|delete)\b/i.test(statement.text)) continue
          const { rows: explainedRows } = await db.query(
            `explain (format json) ${statement.text}`,
            statement.values.map(parameter),
          )
          explained++
          for (const problem of problemsOf(explainedRows[0]['QUERY PLAN'][0].Plan))
            problems.add(`GET ${url}: ${problem}, in ${statement.text.replace(/\s+/g, ' ').slice(0, 200)}`)
        }
      }
    }
    expect(explained).toBeGreaterThan(30)
    expect([...problems]).toEqual([])
  }, 60_000)
})
