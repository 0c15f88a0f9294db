import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { asc, desc, eq, sql } from 'drizzle-orm'
import { index, pgTable, text } from 'drizzle-orm/pg-core'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.js'
import { cursorFor, walkWithCursors } from '../../../test/helpers/lists.js'
import { timestampColumn } from '../db/columns.js'
import type { Database } from '../db/connection.js'
import {
  keysetList,
  LIST_TOTAL_CAP,
  type ListWindow,
  PAGE_REACH,
  placeField,
  selectListPage,
  selectPage,
} from '../db/page.js'
import { ListEnvelope, okPage, PageEnvelope } from './envelope.js'
import { registerErrorHandling } from './error-handler.js'
import { CursorPageQuery, PageQuery, paginate, paginateList, refuseCursorWithPage } from './pagination.js'

/** A list of the test's own, in a table made for it: the helpers alone, without any module. */
const items = pgTable(
  'pagination_test_items',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    createdAt: timestampColumn('created_at').notNull(),
  },
  (t) => [index('pagination_test_items_account_created').on(t.accountId, t.createdAt, t.id)],
)
const newestFirst = keysetList('test_items', items.createdAt, items.id)
const oldestFirst = keysetList('test_items_ascending', items.createdAt, items.id, 'asc')
const byId = keysetList('test_items_by_id', items.id, items.id)

const ItemQuery = Type.Composite([CursorPageQuery(10, 100), Type.Object({ account: Type.String() })])
const Item = Type.Object({ _id: Type.String(), created_at: Type.String() })

function listOf(db: Database, list: typeof newestFirst, account: string, window: ListWindow) {
  return selectListPage(
    db,
    db
      .select({ id: items.id, createdAt: items.createdAt, ...placeField(list) })
      .from(items)
      .$dynamic(),
    { ...list, from: items, where: eq(items.accountId, account) },
    window,
  )
}

const view = (row: { id: string; createdAt: Date }) => ({
  _id: row.id,
  created_at: row.createdAt.toISOString(),
})

function buildApp(db: Database): FastifyInstance {
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>()
  registerErrorHandling(app)
  refuseCursorWithPage(app)
  for (const [path, list] of [
    ['/items', newestFirst],
    ['/items/ascending', oldestFirst],
    ['/items/by-id', byId],
  ] as const) {
    app.get(
      path,
      { schema: { querystring: ItemQuery, response: { 200: ListEnvelope(Item) } } },
      async (request) => {
        const { data, pagination } = await paginateList(
          list,
          request.query,
          (window) => listOf(db, list, request.query.account, window),
          view,
        )
        return okPage(data, pagination)
      },
    )
  }
  app.get(
    '/plain',
    {
      schema: {
        querystring: Type.Composite([PageQuery(10, 100), Type.Object({ account: Type.String() })]),
        response: { 200: PageEnvelope(Item) },
      },
    },
    async (request) => {
      const where = eq(items.accountId, request.query.account)
      const { data, pagination } = await paginate(
        request.query,
        (window) =>
          selectPage(
            db,
            db.select().from(items).where(where).orderBy(items.id).$dynamic(),
            { from: items, where },
            window,
          ),
        view,
      )
      return okPage(data, pagination)
    },
  )
  return app
}

describe('list pages: a capped total, a bounded offset, keyset cursors', () => {
  let database: TestDatabase
  let db: Database
  let app: FastifyInstance
  const get = (url: string) => app.inject({ url })

  let inserted = 0
  /** `count` rows of `account`, `perInstant` at each microsecond-precise instant, ids in insertion order. */
  async function insertItems(account: string, count: number, perInstant = 1) {
    await db.execute(sql`insert into ${items} (id, account_id, created_at)
      select lpad(to_hex(${inserted}::int + g), 24, '0'), ${account},
        timestamptz '2025-01-01' + ((g - 1) / ${perInstant}) * interval '0.3217 ms'
      from generate_series(1, ${count}::int) as g`)
    inserted += count
  }

  /** The account's ids in the list's order, as the database orders them. */
  async function idsInOrder(account: string, direction: 'asc' | 'desc') {
    const by = direction === 'asc' ? asc : desc
    const rows = await db
      .select({ id: items.id })
      .from(items)
      .where(eq(items.accountId, account))
      .orderBy(by(items.createdAt), by(items.id))
    return rows.map((row) => row.id)
  }

  beforeAll(async () => {
    database = await createTestDatabase()
    db = database.handle.db
    await db.execute(sql`create table ${items} (id text primary key, account_id text not null,
      created_at timestamptz not null)`)
    await db.execute(
      sql`create index pagination_test_items_account_created on ${items} (account_id, created_at, id)`,
    )
    app = buildApp(db)
    await app.ready()
  }, 60_000)
  afterAll(async () => {
    await app?.close()
    await database?.drop()
  })

  it('walks every row once with cursors, ties within a microsecond by id, rows added meanwhile left out', async () => {
    // Three rows per microsecond-precise instant: a cursor made of a millisecond date would skip some.
    await insertItems('walk', 47, 3)
    const newer = 'ffffffffffffffffffffffff'
    const expected = await idsInOrder('walk', 'desc')
    const walked = await walkWithCursors(app, '/items?account=walk', {}, 4, async (page) => {
      // Newer rows arriving while the client pages are before its first page: they never show up.
      if (page === 2) await db.execute(sql`insert into ${items} values (${newer}, 'walk', now())`)
    })
    expect(walked).toEqual(expected)

    const ascending = await walkWithCursors(app, '/items/ascending?account=walk', {}, 5)
    expect(ascending).toEqual(await idsInOrder('walk', 'asc'))
    expect(await walkWithCursors(app, '/items/by-id?account=walk', {}, 6)).toEqual(
      [...expected, newer].sort().reverse(),
    )
  })

  it('answers a cursor page with its limit and the next cursor only, null on the last page', async () => {
    await insertItems('short', 3)
    const first = await get('/items?account=short&limit=2&cursor=')
    expect(first.statusCode).toBe(200)
    const { pagination } = first.json()
    expect(Object.keys(pagination)).toEqual(['limit', 'next_cursor'])
    expect(pagination.limit).toBe(2)
    const last = await get(`/items?account=short&limit=2&cursor=${pagination.next_cursor}`)
    expect(last.json()).toMatchObject({ data: [{}], pagination: { limit: 2, next_cursor: null } })
    // Exactly a page's worth: no empty page after it.
    const whole = await get('/items?account=short&limit=3&cursor=')
    expect(whole.json().pagination).toEqual({ limit: 3, next_cursor: null })
    // Another account's cursor is a place, not a right: the list's own filter applies.
    const elsewhere = await get(`/items?account=nobody&limit=2&cursor=${pagination.next_cursor}`)
    expect(elsewhere.json()).toMatchObject({ data: [], pagination: { next_cursor: null } })
  })

  it(`counts up to ${LIST_TOTAL_CAP} rows and says when the total is the cap; pages by offset reach ${PAGE_REACH} rows`, async () => {
    await insertItems('exact', LIST_TOTAL_CAP)
    const exact = (await get('/items?account=exact&limit=100&page=10')).json()
    // Exact: the spec's fields and no other, byte for byte.
    expect(exact.pagination).toStrictEqual({ total: LIST_TOTAL_CAP, page: 10, limit: 100, pages: 10 })
    expect(JSON.stringify(exact.pagination)).toBe('{"total":1000,"page":10,"limit":100,"pages":10}')
    expect(exact.data).toHaveLength(100)

    await insertItems('capped', LIST_TOTAL_CAP + 1)
    for (const url of ['/items?account=capped&limit=30', '/plain?account=capped&limit=30']) {
      expect((await get(url)).json().pagination).toStrictEqual({
        total: LIST_TOTAL_CAP,
        page: 1,
        limit: 30,
        pages: 34,
        total_exact: false,
      })
    }
    // The last page the count tells of reads on past the cap, and the pages after it are answered too.
    const last = (await get('/items?account=capped&limit=30&page=34')).json()
    expect(last.data).toHaveLength(11)
    const after = (await get('/items?account=capped&limit=30&page=300')).json()
    expect(after.data).toHaveLength(0)
    expect(after.pagination).toMatchObject({ total: LIST_TOTAL_CAP, page: 300, total_exact: false })

    const beyond = await get('/items?account=capped&limit=30&page=335')
    expect(beyond.statusCode).toBe(400)
    expect(beyond.json()).toEqual({
      success: false,
      errno: 400,
      message:
        'page must be <= 334 with limit 30 (pages reach the first 10000 rows; read further with cursor)',
      additional_info: [
        {
          field: 'page',
          message:
            'must be <= 334 with limit 30 (pages reach the first 10000 rows; read further with cursor)',
        },
      ],
    })
    const plain = await get('/plain?account=capped&limit=100&page=101')
    expect(plain.json().message).toBe('page must be <= 100 with limit 100 (pages reach the first 10000 rows)')
  })

  it('refuses a cursor that is malformed, of another list, or sent with page, naming cursor', async () => {
    await insertItems('refusals', 2)
    const refused = async (url: string, message: string) => {
      const response = await get(url)
      expect({ url, status: response.statusCode, message: response.json().message }).toEqual({
        url,
        status: 400,
        message,
      })
    }
    const notOfThisList = 'cursor is not a cursor of this list'
    const id = '0123456789abcdef01234567'
    const at = '2025-01-01T00:00:00.123456Z'
    await refused('/items?account=refusals&cursor=a%2Bb', 'cursor must match ^[A-Za-z0-9_-]*$')
    await refused(
      `/items?account=refusals&cursor=${'A'.repeat(201)}`,
      'cursor must be at most 200 characters long',
    )
    for (const fields of [
      'not json',
      ['test_items_by_id', id],
      ['test_items', at],
      ['test_items', at, id, 'more'],
      ['test_items', '2025-02-30T00:00:00.000000Z', id],
      ['test_items', '0000-01-01T00:00:00.000000Z', id],
      ['test_items', '2025-01-01T00:00:00.123Z', id],
      ['test_items', at, 'not-an-id'],
      ['test_items', 1, id],
      { list: 'test_items' },
    ]) {
      const text = typeof fields === 'string' ? fields : JSON.stringify(fields)
      await refused(
        `/items?account=refusals&cursor=${Buffer.from(text).toString('base64url')}`,
        notOfThisList,
      )
    }
    // A cursor must be exactly what the service wrote: no padding, no stray bits.
    const valid = cursorFor('test_items', at, id)
    await refused(`/items?account=refusals&cursor=${valid}=`, 'cursor must match ^[A-Za-z0-9_-]*$')
    const bytes = Buffer.from(valid, 'base64url')
    const strayBits = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_']
      .map((last) => valid.slice(0, -1) + last)
      .find((other) => other !== valid && Buffer.from(other, 'base64url').equals(bytes))
    expect(strayBits).toBeDefined()
    await refused(`/items?account=refusals&cursor=${strayBits}`, notOfThisList)
    expect((await get(`/items?account=refusals&cursor=${valid}`)).statusCode).toBe(200)
    await refused(`/items/by-id?account=refusals&cursor=${valid}`, notOfThisList)
    await refused('/items?account=refusals&cursor=&page=1', 'cursor must not be sent with page')
    await refused(`/items?account=refusals&page=2&cursor=${valid}`, 'cursor must not be sent with page')
  })
})
