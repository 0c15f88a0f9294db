import { describe, expect } from 'vitest'
import { captureLogs } from '../../../test/helpers/app.js'
import { AUTHORIZE, browser, createUser, PASSWORD, registerApp } from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'

/**
 * The pages of the flow post back where they were served from, and a page refused as expired says why in
 * the log (a user only sees "This page has expired").
 */
const logs = captureLogs()
test.override('appOptions', { logStream: logs.stream })
test.override('appEnv', {
  LOG_LEVEL: 'info',
  // Not where the tests call it from: the forms must not post there.
  PUBLIC_BASE_URL: 'https://platform.example.com',
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
})

const actions = (html: string) => [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1])

describe('authorization flow pages', () => {
  test('gives every form an action relative to its page, whatever PUBLIC_BASE_URL is', async ({
    t: { app },
    owner,
    stranger,
  }) => {
    await createUser(app, 'two-accounts@flow.example', [owner.accountId, stranger.accountId])
    const client = await registerApp(app)
    const b = browser(app)
    const signIn = await b.openFor(client)
    // Served at /v1/auth/oauth/authorize: "authorize" is /v1/auth/oauth/authorize.
    expect(actions(signIn.html)).toEqual(['authorize'])
    const choose = await b.post('', {
      token: signIn.token,
      email: 'two-accounts@flow.example',
      password: PASSWORD,
    })
    expect(actions(choose.html)).toEqual(['authorize/account'])
    const consent = await b.post('/account', { token: choose.token, account_id: stranger.accountId })
    // Served at /v1/auth/oauth/authorize/account: "consent" is /v1/auth/oauth/authorize/consent.
    expect(actions(consent.html)).toEqual(['consent'])
    expect(consent.html).not.toContain('platform.example.com')
  })

  test('logs why a posted page is refused as expired, without the token or the cookie', async ({
    t: { app },
  }) => {
    const client = await registerApp(app)
    const b = browser(app)
    const signIn = await b.openFor(client)
    const refusals = () => logs.lines.filter((line) => line.msg === 'oauth page refused as expired')
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
    const logged = JSON.stringify(logs.lines)
    expect(logged).not.toContain(signIn.token)
    expect(logged).not.toContain('not-the-cookie-of-this-flow')
  })
})
