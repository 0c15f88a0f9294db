import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import { expectWrittenToCallerOnly } from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'

const LOCATIONS = '/reviews/orderprovider/locations'

const claim = (t: TestApp, tenant: Tenant, payload: object, prefix = '/reviews') =>
  t.app.inject({
    method: 'POST',
    url: `${prefix}/orderprovider/locations`,
    headers: tenant.headers,
    payload,
  })

const listOf = async (t: TestApp, tenant: Tenant, query = '') => {
  const response = await t.app.inject({ url: `${LOCATIONS}?${query}`, headers: tenant.headers })
  expect(response.statusCode).toBe(200)
  return response.json() as {
    data: { _id: string; account_id: string; location_id: string; created_at: string }[]
    pagination: { total: number; page: number; limit: number; pages: number }
  }
}

describe('Square locations an account claims', () => {
  test('a claim answers 201; the same account again 200 with it; another account 409', async ({
    t,
    owner,
    stranger,
  }) => {
    const first = await claim(t, owner, { location_id: 'L8ZP4RWN7A5TX' })
    expect(first.statusCode).toBe(201)
    const location = first.json().data
    expect(location).toMatchObject({ account_id: owner.accountId, location_id: 'L8ZP4RWN7A5TX' })
    const again = await claim(t, owner, { location_id: 'L8ZP4RWN7A5TX' }, '/v1/reviews')
    expect(again.statusCode).toBe(200)
    expect(again.json().data).toEqual(location)
    const taken = await claim(t, stranger, { location_id: 'L8ZP4RWN7A5TX' })
    expect(taken.statusCode).toBe(409)
    expect(taken.json()).toMatchObject({
      success: false,
      message: 'This location is claimed by another account',
    })
    expect((await listOf(t, stranger)).data).toEqual([])
  })

  test("claims for and lists the account's own locations only", async ({ t, owner, stranger }) => {
    await expectWrittenToCallerOnly(
      t,
      { method: 'POST', url: LOCATIONS, payload: { location_id: 'OWNERS_ONLY' } },
      { method: 'GET', url: `/v1${LOCATIONS}` },
      owner,
      stranger,
      'OWNERS_ONLY',
    )
  })

  test("lists the account's claims, newest first, paginated", async ({ t, bystander }) => {
    for (const id of ['LIST_A', 'LIST_B', 'LIST_C']) {
      expect((await claim(t, bystander, { location_id: id })).statusCode).toBe(201)
    }
    const all = await listOf(t, bystander)
    expect(all.data.map((l) => l.location_id)).toEqual(['LIST_C', 'LIST_B', 'LIST_A'])
    expect(all.pagination).toEqual({ total: 3, page: 1, limit: 20, pages: 1 })
    const second = await listOf(t, bystander, 'limit=2&page=2')
    expect(second.data.map((l) => l.location_id)).toEqual(['LIST_A'])
    expect(second.pagination).toEqual({ total: 3, page: 2, limit: 2, pages: 2 })
  })

  test("another account cannot delete the owner's claim (404); once released, it may be claimed", async ({
    t,
    owner,
    stranger,
  }) => {
    expect((await claim(t, owner, { location_id: 'RELEASE-ME' })).statusCode).toBe(201)
    const remove = { method: 'DELETE' as const, url: `${LOCATIONS}/RELEASE-ME` }
    await expectHiddenFromOtherAccounts(t.app, remove, owner, stranger)
    const gone = await t.app.inject({ ...remove, headers: owner.headers })
    expect(gone.statusCode).toBe(404)
    expect(gone.json().message).toBe('Location not found')
    expect((await listOf(t, owner)).data.map((l) => l.location_id)).not.toContain('RELEASE-ME')
    expect((await claim(t, stranger, { location_id: 'RELEASE-ME' })).statusCode).toBe(201)
  })

  test('refuses a bad location_id with a 400 naming it, storing nothing', async ({ t, subAccount }) => {
    const cases: [object, string][] = [
      [{}, 'location_id is required'],
      [{ location_id: '' }, 'location_id must not be empty'],
      [{ location_id: 'L'.repeat(65) }, 'location_id must be at most 64 characters long'],
      [{ location_id: 'not a location' }, 'location_id must match ^[A-Za-z0-9_-]+$'],
    ]
    for (const [payload, message] of cases) {
      const response = await claim(t, subAccount, payload)
      expect(response.statusCode).toBe(400)
      expect(response.json().message).toContain(message)
    }
    const badParam = await t.app.inject({
      method: 'DELETE',
      url: `${LOCATIONS}/${'x'.repeat(65)}`,
      headers: subAccount.headers,
    })
    expect(badParam.statusCode).toBe(400)
    expect((await listOf(t, subAccount)).pagination.total).toBe(0)
  })

  test('needs a platform token', async ({ t }) => {
    expect((await t.app.inject({ url: LOCATIONS })).statusCode).toBe(401)
    expect(
      (await t.app.inject({ method: 'POST', url: LOCATIONS, payload: { location_id: 'L1' } })).statusCode,
    ).toBe(401)
  })
})
