import { parse } from 'csv-parse/sync'
import { eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import { FUNNELS, funnelCall, seedFunnel } from '../../../test/helpers/funnels.js'
import {
  expectCappedTotal,
  expectCursorWalk,
  expectListRefusals,
  walkWithCursors,
} from '../../../test/helpers/lists.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { LIST_TOTAL_CAP } from '../../platform/db/page.js'
import { EXPORT_BATCH } from './forms.service.js'
import { funnelFormSubmissions, funnelSteps } from './tables.js'

interface Seeded {
  at: string
  fields: Record<string, string>
  stepId?: string
  ip?: string
}

/** Submissions written straight into the table, each at a chosen time. */
async function seedSubmissions(t: TestApp, tenant: Tenant, funnelId: string, stepId: string, rows: Seeded[]) {
  const values = rows.map((row) => ({
    id: newId(),
    accountId: tenant.accountId,
    funnelId,
    stepId: row.stepId ?? stepId,
    formId: 'contact-form',
    fields: row.fields,
    ipAddress: row.ip ?? '192.0.2.1',
    userAgent: 'Mozilla/5.0',
    submittedAt: new Date(row.at),
  }))
  await t.app.platform.db.insert(funnelFormSubmissions).values(values)
  return values.map((value) => value.id)
}

const list = (t: TestApp, tenant: Tenant, funnelId: string, query = '') =>
  funnelCall(t.app, tenant, 'GET', `/${funnelId}/forms${query}`)
const exportCsv = (t: TestApp, tenant: Tenant, funnelId: string, query = '') =>
  funnelCall(t.app, tenant, 'GET', `/${funnelId}/forms/export${query}`)

describe('form submissions list', () => {
  test('newest first, with step names and pagination of 10 by default', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      steps: [{ name: 'Opt-in' }, { name: 'Thank you' }],
    })
    const [optIn, thanks] = stepIds as [string, string]
    const ids = await seedSubmissions(
      t,
      owner,
      funnelId,
      optIn,
      Array.from({ length: 12 }, (_, i) => ({
        at: `2025-03-${String(i + 1).padStart(2, '0')}T10:00:00.000Z`,
        fields: { email: `p${i}@example.com` },
        ...(i === 11 && { stepId: thanks }),
      })),
    )
    const first = await list(t, owner, funnelId)
    expect(first.statusCode).toBe(200)
    const body = first.json()
    expect(body.pagination).toEqual({ total: 12, page: 1, limit: 10, pages: 2 })
    expect(body.data).toHaveLength(10)
    expect(body.data[0]).toEqual({
      _id: ids[11],
      funnel_id: funnelId,
      step_id: thanks,
      step_name: 'Thank you',
      form_id: 'contact-form',
      fields: { email: 'p11@example.com' },
      ip_address: '192.0.2.1',
      user_agent: 'Mozilla/5.0',
      contact_id: null,
      submitted_at: '2025-03-12T10:00:00.000Z',
    })
    expect(body.data[1]).toMatchObject({ _id: ids[10], step_name: 'Opt-in' })
    const second = (await list(t, owner, funnelId, '?page=2')).json()
    expect(second.data.map((row: { _id: string }) => row._id)).toEqual([ids[1], ids[0]])

    // A deleted step leaves its submissions, without a name.
    await t.app.platform.db.delete(funnelSteps).where(eq(funnelSteps.id, thanks))
    expect((await list(t, owner, funnelId, '?limit=1')).json().data[0]).toMatchObject({
      step_id: thanks,
      step_name: null,
    })
  })

  test('search looks in field values, not names, in any case', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const [ada] = await seedSubmissions(t, owner, funnelId, stepIds[0] as string, [
      { at: '2025-01-01T00:00:00Z', fields: { name: 'Ada Lovelace', note: '100% sure' } },
      { at: '2025-01-02T00:00:00Z', fields: { name: 'Grace Hopper', lovelace: 'no' } },
    ])
    const found = async (search: string) =>
      (await list(t, owner, funnelId, `?search=${encodeURIComponent(search)}`))
        .json()
        .data.map((row: { _id: string }) => row._id)
    expect(await found('LOVELACE')).toEqual([ada])
    expect(await found('100%')).toEqual([ada])
    expect(await found('0% s')).toEqual([ada])
    expect(await found('_')).toEqual([])
  })

  test('filters by ISO 8601 dates, a date being its whole day, and names a bad date', async ({
    t,
    owner,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const ids = await seedSubmissions(t, owner, funnelId, stepIds[0] as string, [
      { at: '2025-02-28T23:59:59.999Z', fields: { a: '1' } },
      { at: '2025-03-01T00:00:00.000Z', fields: { a: '2' } },
      { at: '2025-03-31T23:59:59.999Z', fields: { a: '3' } },
      { at: '2025-04-01T00:00:00.000Z', fields: { a: '4' } },
    ])
    const within = async (query: string) =>
      (await list(t, owner, funnelId, query)).json().data.map((row: { _id: string }) => row._id)
    expect(await within('?start_date=2025-03-01&end_date=2025-03-31')).toEqual([ids[2], ids[1]])
    expect(await within('?start_date=2025-03-01T00:00:00.001Z')).toEqual([ids[3], ids[2]])
    expect(await within('?end_date=2025-03-01T01:00:00%2B01:00')).toEqual([ids[1], ids[0]])
    expect(await within('?end_date=2025-02-28T23:59:59.999')).toEqual([ids[0]])

    for (const [query, field] of [
      ['?start_date=yesterday', 'start_date'],
      ['?end_date=2025-02-30', 'end_date'],
      ['?start_date=2025-03-01T25:00Z', 'start_date'],
      ['?start_date=2025-04-01&end_date=2025-03-01', 'start_date'],
    ] as const) {
      const response = await list(t, owner, funnelId, query)
      expect(response.statusCode, query).toBe(400)
      expect(response.json().message, query).toMatch(new RegExp(`^${field} `))
      expect((await exportCsv(t, owner, funnelId, query)).statusCode, query).toBe(400)
    }
  })

  test('walks the submissions with cursors, ties in time included, the search kept; counts up to the cap', async ({
    t,
    owner,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    // Pairs share a microsecond-precise time, which a millisecond date would round.
    const insert = (prefix: string, count: number) =>
      t.app.platform.db.execute(
        `insert into funnel_form_submissions (id, account_id, funnel_id, step_id, form_id, fields, submitted_at)
         select '${prefix}' || lpad(to_hex(g), 20, '0'), '${owner.accountId}', '${funnelId}', '${stepIds[0]}', 'f',
                jsonb_build_object('email', case when g % 4 = 0 then 'four' else 'p' end || g || '@example.com'),
                timestamptz '2025-01-01' + (g / 2) * interval '1.2345 ms'
         from generate_series(1, ${count}) as g`,
      )
    await insert('00f0', 25)
    const newestFirst = Array.from({ length: 25 }, (_, i) => 25 - i)
    const idOf = (g: number) => `00f0${g.toString(16).padStart(20, '0')}`
    const url = `${FUNNELS}/${funnelId}/forms`
    await expectCursorWalk(t.app, url, owner.headers, newestFirst.map(idOf), async () => {
      await seedSubmissions(t, owner, funnelId, stepIds[0] as string, [
        { at: new Date().toISOString(), fields: {} },
      ])
    })
    expect(await walkWithCursors(t.app, `${url}?search=four`, owner.headers, 2)).toEqual(
      newestFirst.filter((g) => g % 4 === 0).map(idOf),
    )
    await expectListRefusals(t.app, url, owner.headers, 100)
    await insert('00f1', LIST_TOTAL_CAP)
    await expectCappedTotal(t.app, url, owner.headers, 100)
  })

  test("another account's funnel is not found; a malformed id is refused", async ({ t, owner, stranger }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}/${funnelId}/forms` },
      owner,
      stranger,
    )
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}/${funnelId}/forms/export` },
      owner,
      stranger,
    )
    for (const response of [await list(t, owner, 'nope'), await exportCsv(t, owner, 'nope')]) {
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual({ success: false, errno: 400, message: 'Invalid funnel ID' })
    }
    expect((await list(t, owner, newId())).json()).toEqual({
      success: false,
      errno: 404,
      message: 'Funnel not found',
    })
  })
})

describe('form submissions CSV export', () => {
  test("the spec's header row and file name, person details from the usual fields, newest first", async ({
    t,
    owner,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    await seedSubmissions(t, owner, funnelId, stepIds[0] as string, [
      {
        at: '2025-03-01T09:00:00.000Z',
        fields: {
          first_name: 'Ada',
          'Last Name': 'Lovelace',
          email: 'ada@example.com',
          comments: 'a, "b"\nc',
        },
        ip: '198.51.100.1',
      },
      {
        at: '2025-03-02T09:00:00.000Z',
        fields: { name: 'Grace', phone: '+1 555 0100', message: 'Hi' },
        ip: '198.51.100.2',
      },
    ])
    const response = await exportCsv(t, owner, funnelId)
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(response.headers['content-disposition']).toMatch(
      /^attachment; filename="Forms-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.csv"$/,
    )
    expect(response.body.split('\n')[0]).toBe('Submission Date,Name,Email,Phone,Message,IP Address')
    expect(parse(response.body)).toEqual([
      ['Submission Date', 'Name', 'Email', 'Phone', 'Message', 'IP Address'],
      // A phone's leading + is neutralised like any formula's.
      ['2025-03-02T09:00:00.000Z', 'Grace', '', "'+1 555 0100", 'Hi', '198.51.100.2'],
      ['2025-03-01T09:00:00.000Z', 'Ada Lovelace', 'ada@example.com', '', 'a, "b"\nc', '198.51.100.1'],
    ])
    const march2 = parse((await exportCsv(t, owner, funnelId, '?start_date=2025-03-02')).body)
    expect(march2.map((row: string[]) => row[1])).toEqual(['Name', 'Grace'])
  })

  test('neutralises every cell that a spreadsheet would run as a formula', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const risky = ['=1+1', '+SUM(A1)', '-2+3', '@cmd', '\tTAB', '\rCR']
    await seedSubmissions(
      t,
      owner,
      funnelId,
      stepIds[0] as string,
      risky.map((value, i) => ({
        at: `2025-03-0${i + 1}T00:00:00Z`,
        fields: { name: value, email: value, phone: value, message: value },
      })),
    )
    const rows: string[][] = parse((await exportCsv(t, owner, funnelId)).body, { relax_quotes: true })
    const cells = rows.slice(1).reverse()
    expect(cells).toEqual(
      risky.map((value) => [expect.any(String), ...Array(4).fill(`'${value}`), '192.0.2.1']),
    )
  })

  test('streams every submission once across batches, ties in time included', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const count = EXPORT_BATCH * 2 + 7
    // Pairs share a microsecond-precise time, which a millisecond date would round.
    const { db } = t.app.platform
    await db.execute(
      `insert into funnel_form_submissions (id, account_id, funnel_id, step_id, form_id, fields, submitted_at)
       select lpad(to_hex(g), 24, '0'), '${owner.accountId}', '${funnelId}', '${stepIds[0]}', 'f',
              jsonb_build_object('email', 'p' || g || '@example.com'),
              timestamptz '2025-01-01' + (g / 2) * interval '1.2345 ms'
       from generate_series(1, ${count}) as g`,
    )
    const rows: string[][] = parse((await exportCsv(t, owner, funnelId)).body)
    const emails = rows.slice(1).map((row) => row[2])
    expect(emails).toHaveLength(count)
    expect(new Set(emails).size).toBe(count)
    expect(emails[0]).toBe(`p${count}@example.com`)
  })
})
