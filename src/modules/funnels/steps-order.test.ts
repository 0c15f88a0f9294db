import { eq, sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { anId, expectHiddenFromOtherAccounts } from '../../../test/helpers/fixtures.js'
import {
  builderDocument,
  cacheProbe,
  FUNNELS,
  funnelCall,
  seedFunnel,
} from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { funnelStepBackups, funnelStepComponents, funnelSteps } from './tables.js'

describe('the order of funnel steps: reorder, duplicate, delete', () => {
  test('reorders steps in one bulk write and answers the funnel id with its steps in order', async ({
    t,
    owner,
    stranger,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      steps: [{ name: 'A' }, { name: 'B' }, { name: 'C' }],
    })
    const [a, b, c] = stepIds as [string, string, string]
    const { db } = t.app.platform
    const run = async (...statements: string[]) => {
      for (const statement of statements) await db.execute(sql.raw(statement))
    }
    // Counts the UPDATE statements on funnel_steps (not rows) while the reorder runs.
    await run(
      'create table step_update_statements (at timestamptz default now())',
      `create function count_step_update() returns trigger language plpgsql as
        'begin insert into step_update_statements default values; return null; end'`,
      `create trigger count_step_updates after update on funnel_steps
        for each statement execute function count_step_update()`,
    )
    const forgotten = cacheProbe(t.app, funnelId)
    let response: Awaited<ReturnType<typeof funnelCall>>
    try {
      response = await funnelCall(t.app, owner, 'PUT', `/${funnelId}/steps/orders`, {
        orders: [
          { step_id: c, order: 0 },
          { step_id: a, order: 1 },
          { step_id: b, order: 2 },
        ],
      })
      const counted = await db.execute(sql.raw('select count(*)::int as n from step_update_statements'))
      expect((counted as unknown as { rows: { n: number }[] }).rows[0]?.n).toBe(1)
    } finally {
      await run(
        'drop trigger count_step_updates on funnel_steps',
        'drop function count_step_update()',
        'drop table step_update_statements',
      )
    }
    expect(response.statusCode).toBe(200)
    expect(response.json().data).toEqual({
      _id: funnelId,
      steps: [
        { _id: c, name: 'C', order: 0 },
        { _id: a, name: 'A', order: 1 },
        { _id: b, name: 'B', order: 2 },
      ],
    })
    expect(forgotten()).toBe(true)
    await expectHiddenFromOtherAccounts(
      t.app,
      {
        method: 'PUT',
        url: `${FUNNELS}/${funnelId}/steps/orders`,
        payload: { orders: [{ step_id: a, order: 1 }] },
      },
      owner,
      stranger,
    )
  })

  test('refuses a reorder naming a step outside the funnel, changing nothing', async ({
    t,
    owner,
    stranger,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, { steps: [{ name: 'A' }, { name: 'B' }] })
    const [a, b] = stepIds as [string, string]
    const sibling = (await seedFunnel(t.app, owner)).stepIds[0] as string
    const foreign = (await seedFunnel(t.app, stranger)).stepIds[0] as string
    for (const outsider of [sibling, foreign, newId()]) {
      const response = await funnelCall(t.app, owner, 'PUT', `/${funnelId}/steps/orders`, {
        orders: [
          { step_id: b, order: 0 },
          { step_id: outsider, order: 1 },
        ],
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().message).toBe(`orders[1].step_id ${outsider} is not a step of this funnel`)
    }
    const repeated = await funnelCall(t.app, owner, 'PUT', `/${funnelId}/steps/orders`, {
      orders: [
        { step_id: a, order: 1 },
        { step_id: a, order: 0 },
      ],
    })
    expect(repeated.json()).toMatchObject({ errno: 400, message: `orders[1].step_id repeats ${a}` })
    const orders = await t.app.platform.db
      .select({ id: funnelSteps.id, order: funnelSteps.order })
      .from(funnelSteps)
      .where(eq(funnelSteps.funnelId, funnelId))
    expect(Object.fromEntries(orders.map((s) => [s.id, s.order]))).toEqual({ [a]: 0, [b]: 1 })
  })

  test("duplicates a step with ' (Copy)', a free -copy path, its components, after the last step", async ({
    t,
    owner,
    stranger,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      steps: [{ name: 'Checkout', path: '/checkout', html: '<form></form>' }, { name: 'Upsell' }],
    })
    const url = `/${funnelId}/steps/${stepIds[0]}`
    await funnelCall(t.app, owner, 'POST', `${url}/components`, { builderComponents: builderDocument('pay') })
    const forgotten = cacheProbe(t.app, funnelId)
    const first = await funnelCall(t.app, owner, 'POST', `${url}/duplicate`)
    expect(first.statusCode).toBe(201)
    expect(first.json().data).toMatchObject({
      _id: anId,
      funnel_id: funnelId,
      name: 'Checkout (Copy)',
      path: '/checkout-copy',
      order: 2,
      html: '<form></form>',
    })
    expect(forgotten()).toBe(true)
    const second = (await funnelCall(t.app, owner, 'POST', `${url}/duplicate`)).json().data
    expect(second).toMatchObject({ path: '/checkout-copy-2', order: 3 })
    const copied = await funnelCall(t.app, owner, 'GET', `/${funnelId}/steps/${second._id}/components`)
    expect(copied.json().data).toMatchObject({ step_id: second._id, components: builderDocument('pay') })
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'POST', url: `${FUNNELS}${url}/duplicate` },
      owner,
      stranger,
    )
  })

  test('deletes a step for good with its components and backups, renumbering the rest from 0', async ({
    t,
    owner,
    stranger,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, { steps: [{}, {}, {}, {}] })
    const [first, doomed, third, fourth] = stepIds as [string, string, string, string]
    const url = `/${funnelId}/steps/${doomed}`
    for (const text of ['one', 'two'])
      await funnelCall(t.app, owner, 'POST', `${url}/components`, {
        builderComponents: builderDocument(text),
      })
    await expectHiddenFromOtherAccounts(t.app, { method: 'GET', url: `${FUNNELS}${url}` }, owner, stranger)
    expect((await funnelCall(t.app, stranger, 'DELETE', url)).statusCode).toBe(404)
    const forgotten = cacheProbe(t.app, funnelId)
    const response = await funnelCall(t.app, owner, 'DELETE', url)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    expect(forgotten()).toBe(true)
    expect((await funnelCall(t.app, owner, 'GET', url)).json()).toMatchObject({
      errno: 404,
      message: 'Step not found',
    })
    const { db } = t.app.platform
    expect(
      await db.select().from(funnelStepComponents).where(eq(funnelStepComponents.stepId, doomed)),
    ).toEqual([])
    expect(await db.select().from(funnelStepBackups).where(eq(funnelStepBackups.stepId, doomed))).toEqual([])
    const rest = await db
      .select({ id: funnelSteps.id, order: funnelSteps.order })
      .from(funnelSteps)
      .where(eq(funnelSteps.funnelId, funnelId))
      .orderBy(funnelSteps.order)
    expect(rest).toEqual([
      { id: first, order: 0 },
      { id: third, order: 1 },
      { id: fourth, order: 2 },
    ])
    expect((await funnelCall(t.app, owner, 'DELETE', url)).json()).toMatchObject({ errno: 404 })
  })
})
