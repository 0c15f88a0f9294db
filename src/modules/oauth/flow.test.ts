import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, captureLogs, type TestApp } from '../../../test/helpers/app.js'
import { AUTHORIZE, browser, createUser, PASSWORD, registerApp } from '../../../test/helpers/oauth.js'

/**
 * The pages of the flow post back where they were served from, and a page refused as expired says why in
 * the log (a user only sees "This page has expired").
 */
describe('authorization flow pages', () => {
  let t: TestApp
  let app: FastifyInstance
  const logs = captureLogs()
  const logLines = logs.lines

  beforeAll(async () => {
    t = await buildTestApp(
      {
        LOG_LEVEL: 'info',
        // Not where the tests call it from: the forms must not post there.
        PUBLIC_BASE_URL: 'https://platform.example.com',
        RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
      },
      { logStream: logs.stream },
    )
    app = t.app
  })
  afterAll(() => t.close())

  const actions = (html: string) =>
    [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1])

  it('gives every form an action relative to its page, whatever PUBLIC_BASE_URL is', async () => {
    const [first, second] = await Promise.all(
      ['Flow One', 'Flow Two'].map(
        async (name) =>
          (
            await app.inject({
              method: 'POST',
              url: '/v1/admin/accounts',
              headers: adminHeaders,
              payload: { name },
            })
          ).json().data._id as string,
      ),
    )
    await createUser(app, 'two-accounts@flow.example', [first as string, second as string])
    const client = await registerApp(app)
    const b = browser(app)
    const signIn = await b.open({
      response_type: 'code',
      client_id: client._id,
      redirect_uri: client.redirect_uris[0] as string,
    })
    // Served at /v1/auth/oauth/authorize: "authorize" is /v1/auth/oauth/authorize.
    expect(actions(signIn.html)).toEqual(['authorize'])
    const choose = await b.post('', {
      token: signIn.token,
      email: 'two-accounts@flow.example',
      password: PASSWORD,
    })
    expect(actions(choose.html)).toEqual(['authorize/account'])
    const consent = await b.post('/account', { token: choose.token, account_id: second as string })
    // Served at /v1/auth/oauth/authorize/account: "consent" is /v1/auth/oauth/authorize/consent.
    expect(actions(consent.html)).toEqual(['consent'])
    expect(consent.html).not.toContain('platform.example.com')
  })

  it('logs why a posted page is refused as expired, without the token or the cookie', async () => {
    const client = await registerApp(app)
    const b = browser(app)
    const signIn = await b.open({
      response_type: 'code',
      client_id: client._id,
      redirect_uri: client.redirect_uris[0] as string,
    })
    const refusals = () => logLines.filter((line) => line.msg === 'oauth page refused as expired')
    const post = (cookie: string | undefined) =>
      app.inject({
        method: 'POST',
        url: AUTHORIZE,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie && { cookie }) },
        payload: new URLSearchParams({
          token: signIn.token,
          email: 'nobody@flow.example',
          password: 'x',
        }).toString(),
      })

    const withoutCookie = await post(undefined)
    expect(withoutCookie.statusCode).toBe(400)
    expect(withoutCookie.body).toContain('This page has expired')
    const forged = 'oauth_csrf=not-the-cookie-of-this-flow'
    expect((await post(forged)).statusCode).toBe(400)

    expect(refusals().map((line) => [line.level, line.reason])).toEqual([
      [40, 'no CSRF cookie: cookies blocked, or posted to another host'],
      [40, 'CSRF cookie does not match the flow'],
    ])
    const logged = JSON.stringify(logLines)
    expect(logged).not.toContain(signIn.token)
    expect(logged).not.toContain('not-the-cookie-of-this-flow')
  })
})
