import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import type { LightMyRequestResponse } from 'fastify'
import { describe, expect } from 'vitest'
import { runRemoval } from '../src/modules/accounts/account-removal.service.js'
import { removalDepsOf } from '../src/modules/accounts/jobs.js'
import { funnelFormSubmissions, funnelShortLinkClicks } from '../src/modules/funnels/tables.js'
import { newId } from '../src/platform/db/ids.js'
import { adminHeaders, type TestApp } from './helpers/app.js'
import { createTenant, type Tenant } from './helpers/fixtures.js'
import { FUNNELS, funnelCall, seedFunnel } from './helpers/funnels.js'
import { createUser, obtainTokens, postAsClient, registerApp } from './helpers/oauth.js'
import { test } from './helpers/tenant-test.js'

// No job runs: a removal stays where its DELETE leaves it, every row of the account still in place, as it
// is for minutes while the job works through a large account.
test.override('appEnv', { RUN_WORKERS: 'false' })

const freshIp = () => `2001:db8::${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`
const UNKNOWN_CODE = 'zZ9zZ9'

const answerOf = (response: LightMyRequestResponse) => ({
  status: response.statusCode,
  body: response.json(),
})

const preview = (t: TestApp, funnelId: string) =>
  t.app.inject({ url: `${FUNNELS}/preview?funnel_id=${funnelId}`, remoteAddress: freshIp() })

const submit = (t: TestApp, funnelId: string, stepId: string) =>
  t.app.inject({
    method: 'POST',
    url: `${FUNNELS}/forms/submit`,
    remoteAddress: freshIp(),
    payload: {
      funnel_id: funnelId,
      step_id: stepId,
      form_id: 'optin',
      fields: { name: 'Ada Visitor', email: 'ada@visitor.example' },
    },
  })

const follow = (t: TestApp, code: string) =>
  t.app.inject({ url: `/s/${code}`, headers: { 'user-agent': 'Mozilla/5.0 (Test)' } })

const submissionsOf = async (t: TestApp, funnelId: string) =>
  (
    await t.app.platform.db
      .select()
      .from(funnelFormSubmissions)
      .where(eq(funnelFormSubmissions.funnelId, funnelId))
  ).length

const clicksOf = async (t: TestApp) => (await t.app.platform.db.select().from(funnelShortLinkClicks)).length

const admin = (t: TestApp, method: 'DELETE' | 'PATCH', accountId: string, payload?: object) =>
  t.app.inject({ method, url: `/v1/admin/accounts/${accountId}`, headers: adminHeaders, payload })

/** An account with a funnel whose form took a post (its step now in the step cache) and a followed short link. */
async function servingAccount(t: TestApp, name: string) {
  const tenant = await createTenant(t.app, { name })
  const { funnelId, stepIds } = await seedFunnel(t.app, tenant)
  const stepId = stepIds[0] as string
  expect((await submit(t, funnelId, stepId)).statusCode).toBe(201)
  const shortened = await funnelCall(t.app, tenant, 'POST', `/shorten?funnel_id=${funnelId}`)
  const code = (shortened.json().data as string).split('/s/')[1] as string
  expect((await follow(t, code)).statusCode).toBe(302)
  return { tenant, funnelId, stepId, code }
}

const remove = async (t: TestApp, tenant: Tenant) =>
  expect((await admin(t, 'DELETE', tenant.accountId)).statusCode).toBe(202)

const unknownPost = (t: TestApp) => submit(t, newId(), newId())

describe("a closed account's public routes", () => {
  test('a removed account’s preview, form posts and short links answer as unknown ones, from the DELETE on, and record nothing', async ({
    t,
  }) => {
    const { tenant, funnelId, stepId, code } = await servingAccount(t, 'Leaving')
    const clicks = await clicksOf(t)
    await remove(t, tenant)

    expect(answerOf(await preview(t, funnelId))).toEqual(answerOf(await preview(t, newId())))
    expect(answerOf(await preview(t, funnelId)).status).toBe(404)
    expect(answerOf(await submit(t, funnelId, stepId))).toEqual(answerOf(await unknownPost(t)))
    expect(answerOf(await follow(t, code))).toEqual(answerOf(await follow(t, UNKNOWN_CODE)))
    expect(await submissionsOf(t, funnelId)).toBe(1)
    expect(await clicksOf(t)).toBe(clicks)
  })

  test('once the removal has deleted its rows, a form post to a page whose step is cached answers 404, not 500', async ({
    t,
  }) => {
    const { tenant, funnelId, stepId } = await servingAccount(t, 'Gone')
    await remove(t, tenant)
    await runRemoval(removalDepsOf(t.app.platform), tenant.accountId, 'in-test')

    const answer = answerOf(await submit(t, funnelId, stepId))
    expect(answer).toEqual(answerOf(await unknownPost(t)))
    expect(answer.status).toBe(404)
  })

  test('a suspended account’s form posts, which would hand the visitor to its apps, answer as an unknown funnel’s; its pages and links still serve', async ({
    t,
  }) => {
    const { tenant, funnelId, stepId, code } = await servingAccount(t, 'Paused')
    expect((await admin(t, 'PATCH', tenant.accountId, { status: 'suspended' })).statusCode).toBe(200)

    expect(answerOf(await submit(t, funnelId, stepId))).toEqual(answerOf(await unknownPost(t)))
    expect(await submissionsOf(t, funnelId)).toBe(1)
    expect((await preview(t, funnelId)).statusCode).toBe(200)
    expect((await follow(t, code)).statusCode).toBe(302)
  })

  test('a removed account’s grants stop being live at its DELETE: its apps’ refresh tokens introspect as unknown ones', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app, { name: 'Granting' })
    await createUser(t.app, 'owner@granting.example', [tenant.accountId])
    const client = await registerApp(t.app, { scopes: ['crm.contacts.read'] })
    const { refresh_token } = await obtainTokens(t.app, client, 'owner@granting.example')
    const introspect = async (token: string) =>
      answerOf(await postAsClient(t.app, 'introspect', { token }, client))
    expect((await introspect(refresh_token)).body).toMatchObject({ active: true })
    await remove(t, tenant)

    expect(await introspect(refresh_token)).toEqual(await introspect('unknown-refresh-token'))
  })
})
