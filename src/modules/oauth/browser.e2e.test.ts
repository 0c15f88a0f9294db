import { createServer, type Server } from 'node:http'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { adminHeaders, listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import { launchChromium } from '../../../test/helpers/browser.js'
import {
  AUTHORIZE,
  createUser,
  PASSWORD,
  type RegisteredApp,
  registerApp,
} from '../../../test/helpers/oauth.js'

/** The app's side of the redirect: a loopback server that keeps the query of every callback it gets. */
async function startCallbackServer(): Promise<{ server: Server; uri: string; received: URLSearchParams[] }> {
  const received: URLSearchParams[] = []
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1')
    if (url.pathname === '/callback') received.push(url.searchParams)
    response.writeHead(url.pathname === '/callback' ? 200 : 404, { 'content-type': 'text/html' })
    response.end('<!doctype html><title>Back in the app</title><h1>Back in the app</h1>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return { server, uri: `http://127.0.0.1:${port}/callback`, received }
}

describe('authorization pages in a real browser (headless Chromium)', () => {
  let t: TestApp & { baseUrl: string }
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let callback: Awaited<ReturnType<typeof startCallbackServer>>
  let client: RegisteredApp
  let agencyId: string
  let clientCoId: string
  let branchId: string

  beforeAll(async () => {
    browser = await launchChromium()
    callback = await startCallbackServer()
    t = await listenTestApp({ RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000' })
    const account = async (name: string) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/admin/accounts',
          headers: adminHeaders,
          payload: { name },
        })
      ).json().data._id as string
    agencyId = await account('Agency')
    clientCoId = await account('Client Co')
    branchId = await account('Branch')
    await createUser(t.app, 'multi@browser.example', [agencyId, clientCoId])
    await createUser(t.app, 'solo@browser.example', [branchId])
    await createUser(t.app, 'denier@browser.example', [branchId])
    client = await registerApp(t.app, { redirect_uris: [callback.uri] })
  })

  afterAll(async () => {
    await browser?.close()
    await t?.close()
    await new Promise((resolve) => (callback ? callback.server.close(resolve) : resolve(undefined)))
  })

  beforeEach(async () => {
    context = await browser.newContext()
    // Well inside the test's own timeout, so that a missing element fails with its locator named.
    context.setDefaultTimeout(10_000)
    page = await context.newPage()
  })
  afterEach(() => context.close())

  const authorizeUrl = (state: string) =>
    `${t.baseUrl}${AUTHORIZE}?${new URLSearchParams({
      response_type: 'code',
      client_id: client._id,
      redirect_uri: callback.uri,
      scope: 'crm.contacts.read sites.read',
      state,
    })}`

  /** Opens the authorization URL and signs in through the form, as a person would. */
  async function signIn(email: string, state: string) {
    await page.goto(authorizeUrl(state))
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    expect(await page.getByText('Reporting Hub wants to access your account.').isVisible()).toBe(true)
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
  }

  /** Waits for the browser to land on the app's callback; the query the app's server received. */
  async function landedOnCallback(): Promise<URLSearchParams> {
    await page.waitForURL((url) => url.href.startsWith(callback.uri))
    expect(await page.getByRole('heading', { name: 'Back in the app' }).isVisible()).toBe(true)
    const query = callback.received.at(-1) as URLSearchParams
    expect(query.toString()).toBe(new URL(page.url()).searchParams.toString())
    return query
  }

  async function exchange(code: string) {
    const response = await fetch(`${t.baseUrl}/v1/auth/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client._id}:${client.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callback.uri }),
    })
    expect(response.status).toBe(200)
    const tokens = (await response.json()) as { access_token: string; scope: string }
    const jwks = createRemoteJWKSet(new URL(`${t.baseUrl}/.well-known/jwks.json`))
    const { payload } = await jwtVerify(tokens.access_token, jwks, {
      issuer: t.baseUrl,
      audience: t.baseUrl,
      typ: 'at+jwt',
    })
    return { tokens, claims: payload }
  }

  it('lets a user of two accounts sign in, choose one, allow, and land on the app with a code for that account', async () => {
    await signIn('multi@browser.example', 'state-multi')

    const accounts = page.getByRole('group', { name: 'Which account may Reporting Hub access?' })
    await accounts.waitFor()
    expect(await page.getByRole('heading', { name: 'Choose an account' }).isVisible()).toBe(true)
    expect(await accounts.getByRole('radio').count()).toBe(2)
    expect(await accounts.getByRole('radio', { name: 'Agency (main)' }).isChecked()).toBe(true)
    await accounts.getByRole('radio', { name: 'Client Co' }).check()
    await page.getByRole('button', { name: 'Continue' }).click()

    await page.getByRole('heading', { name: 'Allow access' }).waitFor()
    const scopes = await page.getByRole('listitem').allInnerTexts()
    expect(scopes).toEqual([
      'See your contacts (crm.contacts.read)',
      'See your sites and funnels (sites.read)',
    ])
    expect(await page.getByText('in the account Client Co').isVisible()).toBe(true)
    await page.getByRole('button', { name: 'Allow' }).click()

    const query = await landedOnCallback()
    expect([...query.keys()].sort()).toEqual(['code', 'iss', 'state'])
    expect(query.get('state')).toBe('state-multi')
    expect(query.get('iss')).toBe(t.baseUrl)
    const { tokens, claims } = await exchange(query.get('code') as string)
    expect(tokens.scope).toBe('crm.contacts.read sites.read')
    expect(claims).toMatchObject({ type: 'access_token', account_id: clientCoId, client_id: client._id })
  })

  it('sends the user back to the app with access_denied, the state and the issuer when they deny', async () => {
    await signIn('denier@browser.example', 'state-deny')
    await page.getByRole('heading', { name: 'Allow access' }).waitFor()
    await page.getByRole('button', { name: 'Deny' }).click()

    const query = await landedOnCallback()
    expect(query.get('code')).toBeNull()
    expect(query.get('error')).toBe('access_denied')
    expect(query.get('state')).toBe('state-deny')
    expect(query.get('iss')).toBe(t.baseUrl)
  })

  it('takes a user of one account from sign-in straight to consent, without an account choice', async () => {
    await signIn('solo@browser.example', 'state-solo')
    await page.getByRole('heading', { name: 'Allow access' }).waitFor()
    expect(await page.getByRole('heading', { name: 'Choose an account' }).count()).toBe(0)
    expect(await page.getByRole('radio').count()).toBe(0)
    expect(await page.getByText('in the account Branch').isVisible()).toBe(true)
    await page.getByRole('button', { name: 'Allow' }).click()

    const query = await landedOnCallback()
    expect(query.get('state')).toBe('state-solo')
    const { claims } = await exchange(query.get('code') as string)
    expect(claims.account_id).toBe(branchId)
  })

  it('completes the README walkthrough on the default PUBLIC_BASE_URL, opened at 127.0.0.1 or at localhost', async () => {
    // As `npm start` runs it: no PUBLIC_BASE_URL, so the default, which main.ts prints.
    const walkthrough = await listenTestApp({
      PUBLIC_BASE_URL: '',
      RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
    })
    try {
      expect(walkthrough.config.publicBaseUrl).toBe(walkthrough.baseUrl)
      expect(walkthrough.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const reader = await registerApp(walkthrough.app, { redirect_uris: [callback.uri] })
      const branch = (
        await walkthrough.app.inject({
          method: 'POST',
          url: '/v1/admin/accounts',
          headers: adminHeaders,
          payload: { name: 'Walkthrough' },
        })
      ).json().data._id as string
      await createUser(walkthrough.app, 'walker@browser.example', [branch])
      // At the printed address, then at another name of the same server: the forms post back to the host
      // the page came from, which holds the CSRF cookie, whatever PUBLIC_BASE_URL names.
      for (const origin of [walkthrough.baseUrl, walkthrough.baseUrl.replace('127.0.0.1', 'localhost')]) {
        const state = `walkthrough ${origin}`
        await page.goto(
          `${origin}${AUTHORIZE}?${new URLSearchParams({
            response_type: 'code',
            client_id: reader._id,
            redirect_uri: callback.uri,
            scope: 'crm.contacts.read',
            state,
          })}`,
        )
        await page.getByLabel('Email').fill('walker@browser.example')
        await page.getByLabel('Password').fill(PASSWORD)
        await page.getByRole('button', { name: 'Sign in' }).click()
        // Consent is asked the first time only; then the sign-in leads straight back to the app.
        if (origin === walkthrough.baseUrl) await page.getByRole('button', { name: 'Allow' }).click()
        const query = await landedOnCallback()
        expect(query.get('state')).toBe(state)
        expect(query.get('code')).toMatch(/.+/)
      }
    } finally {
      await walkthrough.close()
    }
  })

  it('announces a wrong password as an alert and keeps the email typed', async () => {
    await page.goto(authorizeUrl('state-wrong'))
    await page.getByLabel('Email').fill('solo@browser.example')
    await page.getByLabel('Password').fill('not the password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toBe('The email or password is not right.')
    expect(await page.getByLabel('Email').inputValue()).toBe('solo@browser.example')
    expect(await page.getByLabel('Password').inputValue()).toBe('')
    expect(callback.received.filter((query) => query.get('state') === 'state-wrong')).toEqual([])
  })
})
