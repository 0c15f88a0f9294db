import { describe, expect } from 'vitest'
import { anId, expectHiddenFromOtherAccounts } from '../../../test/helpers/fixtures.js'
import { expectWrittenToCallerOnly, setReviewLink } from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'

describe('review links', () => {
  test('sets one URL per platform, lists, changes and removes it', async ({ t, owner }) => {
    const create = (payload: object) =>
      t.app.inject({ method: 'POST', url: '/v1/reviews/links', headers: owner.headers, payload })
    const created = await create({ platform: 'yelp', url: 'https://www.yelp.com/writeareview/biz/shop' })
    expect(created.statusCode).toBe(201)
    expect(created.json().data).toMatchObject({ _id: anId, account_id: owner.accountId, platform: 'yelp' })
    const again = await create({ platform: 'yelp', url: 'https://www.yelp.com/other' })
    expect(again.statusCode).toBe(409)
    expect(again.json().message).toBe('A review link for yelp already exists')
    const url = `/reviews/links/${created.json().data._id}`
    const changed = await t.app.inject({
      method: 'PATCH',
      url,
      headers: owner.headers,
      payload: { url: 'https://www.yelp.com/new' },
    })
    expect(changed.json().data.url).toBe('https://www.yelp.com/new')
    const listed = await t.app.inject({ url: '/reviews/links', headers: owner.headers })
    expect(listed.json().data).toEqual([changed.json().data])
    expect((await t.app.inject({ method: 'DELETE', url, headers: owner.headers })).statusCode).toBe(200)
    expect((await t.app.inject({ method: 'DELETE', url, headers: owner.headers })).statusCode).toBe(404)
  })

  test('refuses unknown platforms and anything but web addresses', async ({ t, owner }) => {
    const create = (payload: object) =>
      t.app.inject({ method: 'POST', url: '/reviews/links', headers: owner.headers, payload })
    const cases: [object, RegExp][] = [
      [{ platform: 'myspace', url: 'https://myspace.com' }, /^platform must be one of/],
      [{ platform: 'google', url: 'javascript:alert(1)' }, /^url must be an http or https URL/],
      [{ platform: 'google', url: 'not a url' }, /^url must be a valid uri/],
    ]
    for (const [payload, message] of cases) {
      const response = await create(payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().message).toMatch(message)
    }
  })

  test('hides a link from other accounts', async ({ t, owner, stranger }) => {
    const id = await setReviewLink(t, owner, 'trustpilot', 'https://www.trustpilot.com/evaluate/shop.example')
    const url = `/reviews/links/${id}`
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'PATCH', url, payload: { url: 'https://www.trustpilot.com/x' } },
      owner,
      stranger,
    )
    await expectHiddenFromOtherAccounts(t.app, { method: 'DELETE', url }, owner, stranger)
  })

  test("sets and lists the account's own links only", async ({ t, owner, stranger }) => {
    const payload = { platform: 'facebook', url: 'https://www.facebook.com/owner.shop/reviews' }
    await expectWrittenToCallerOnly(
      t,
      { method: 'POST', url: '/reviews/links', payload },
      { method: 'GET', url: '/v1/reviews/links' },
      owner,
      stranger,
      'owner.shop',
    )
  })
})
