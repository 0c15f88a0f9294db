import { describe, expect } from 'vitest'
import { anId, expectHiddenFromOtherAccounts } from '../../../test/helpers/fixtures.js'
import {
  createReviewTemplate,
  expectWrittenToCallerOnly,
  putConfiguration,
  REVIEW_CONFIGURATION,
} from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'

describe('review request templates', () => {
  test('creates, reads, lists, changes and deletes a template', async ({ t, owner }) => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/reviews/templates',
      headers: owner.headers,
      payload: { name: 'Ask', channel: 'sms', body: 'Hi {{customer.name}}: {{review.link}}' },
    })
    expect(created.statusCode).toBe(201)
    const template = created.json().data
    expect(template).toMatchObject({ _id: anId, account_id: owner.accountId, channel: 'sms', subject: '' })
    const url = `/reviews/templates/${template._id}`
    expect((await t.app.inject({ url, headers: owner.headers })).json().data).toEqual(template)
    const listed = await t.app.inject({ url: '/reviews/templates', headers: owner.headers })
    expect(listed.json()).toMatchObject({ data: [template], pagination: { total: 1, page: 1, limit: 10 } })
    const changed = await t.app.inject({
      method: 'PATCH',
      url,
      headers: owner.headers,
      payload: { name: 'Ask nicely' },
    })
    expect(changed.json().data).toMatchObject({ name: 'Ask nicely', body: template.body })
    expect((await t.app.inject({ method: 'DELETE', url, headers: owner.headers })).json().data).toEqual({
      _id: template._id,
      deleted: true,
    })
    expect((await t.app.inject({ url, headers: owner.headers })).statusCode).toBe(404)
  })

  test('validates each field by channel', async ({ t, owner }) => {
    const create = (payload: object) =>
      t.app.inject({ method: 'POST', url: '/reviews/templates', headers: owner.headers, payload })
    const cases: [object, RegExp][] = [
      [{ name: 'x', channel: 'email', body: 'b' }, /^subject is required/],
      [{ name: 'x', channel: 'pigeon', body: 'b' }, /^channel must be one of/],
      [{ name: 'x', channel: 'sms', body: 'b'.repeat(1601) }, /^body must be at most 1600/],
      [{ name: '', channel: 'sms', body: 'b' }, /^name must not be empty/],
      [{ name: 'x', channel: 'sms' }, /^body is required/],
    ]
    for (const [payload, message] of cases) {
      const response = await create(payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().message).toMatch(message)
    }
  })

  test('cannot delete a template the configuration uses (409)', async ({ t, owner }) => {
    const id = await createReviewTemplate(t, owner)
    await putConfiguration(t, owner, { ...REVIEW_CONFIGURATION, template_id: id })
    const url = `/reviews/templates/${id}`
    const refused = await t.app.inject({ method: 'DELETE', url, headers: owner.headers })
    expect(refused.statusCode).toBe(409)
    expect(refused.json().message).toBe('Template is in use by the auto review request configuration')
    await putConfiguration(t, owner, REVIEW_CONFIGURATION)
    expect((await t.app.inject({ method: 'DELETE', url, headers: owner.headers })).statusCode).toBe(200)
  })

  test('hides a template from other accounts', async ({ t, owner, stranger }) => {
    const id = await createReviewTemplate(t, owner)
    const url = `/reviews/templates/${id}`
    await expectHiddenFromOtherAccounts(t.app, { method: 'GET', url }, owner, stranger)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'PATCH', url, payload: { name: 'mine' } },
      owner,
      stranger,
    )
    await expectHiddenFromOtherAccounts(t.app, { method: 'DELETE', url }, owner, stranger)
  })

  test("creates and lists the account's own templates only", async ({ t, owner, stranger }) => {
    const payload = { name: 'Owner only', channel: 'sms', body: 'Thanks! {{review.link}}' }
    await expectWrittenToCallerOnly(
      t,
      { method: 'POST', url: '/reviews/templates', payload },
      { method: 'GET', url: '/v1/reviews/templates' },
      owner,
      stranger,
      'Owner only',
    )
  })
})
