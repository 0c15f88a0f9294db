import { randomBytes } from 'node:crypto'
import { adminPost } from '../admin.js'
import { type BenchRequest, type Scenario, type Target, VIA_TLS_PROXY } from '../scenario.js'

const REDIRECT_URI = 'https://bench.example/callback'
const SCOPE = 'crm.contacts.read'
// Each app may call an account 10,000 times an hour on the enterprise tier (accounts.service.ts); the
// connections take the apps' tokens in turn, so that the run's 50,000 or so requests stay within it.
const APPS = 8
const FORM = 'application/x-www-form-urlencoded'

const tokenOf = (html: string) => {
  const token = /name="token" value="([^"]+)"/.exec(html)?.[1]
  if (!token) throw new Error('no flow token on the page')
  return token
}

async function send(target: Target, path: string, init: RequestInit): Promise<Response> {
  const response = await fetch(new URL(path, target.baseUrl), {
    redirect: 'manual',
    ...init,
    headers: { ...VIA_TLS_PROXY, ...(init.headers as Record<string, string> | undefined) },
  })
  if (response.status >= 400) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
  return response
}

async function enterpriseUser(target: Target, password: string): Promise<string> {
  const suffix = randomBytes(4).toString('hex')
  const account = await adminPost<{ _id: string }>(target, '/v1/admin/accounts', { name: `bench ${suffix}` })
  await send(target, `/v1/admin/accounts/${account._id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${target.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'enterprise' }),
  })
  const email = `bench-${suffix}@example.com`
  await adminPost(target, '/v1/admin/users', {
    email,
    password,
    name: `Bench ${suffix}`,
    account_id: account._id,
    main: true,
  })
  return email
}

/** An access token of a new app, through the pages a person goes through: sign-in, consent, code exchange. */
async function accessToken(target: Target, user: { email: string; password: string }): Promise<string> {
  const app = await adminPost<{ client_id: string; client_secret: string }>(target, '/v1/admin/oauth/apps', {
    name: `Bench reader ${randomBytes(2).toString('hex')}`,
    redirect_uris: [REDIRECT_URI],
    scopes: [SCOPE],
    active: true,
  })
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: app.client_id,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
  })
  const signInPage = await send(target, `/v1/auth/oauth/authorize?${query}`, {})
  const cookie = (signInPage.headers.getSetCookie()[0] ?? '').split(';')[0] as string
  const post = (path: string, fields: Record<string, string>) =>
    send(target, `/v1/auth/oauth/authorize${path}`, {
      method: 'POST',
      headers: { cookie, 'content-type': FORM },
      body: new URLSearchParams(fields).toString(),
    })
  const consentPage = await post('', { token: tokenOf(await signInPage.text()), ...user })
  const allowed = await post('/consent', { token: tokenOf(await consentPage.text()), decision: 'allow' })
  const code = new URL(allowed.headers.get('location') ?? '').searchParams.get('code') ?? ''
  const basic = Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')
  const tokens = await send(target, '/v1/auth/oauth/token', {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': FORM },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
    }).toString(),
  })
  return ((await tokens.json()) as { access_token: string }).access_token
}

/** An API call made by a third-party app: what verifying its access token, the scope and its allowance cost. */
export const contactsOAuth: Scenario = {
  description: `authenticated GET /v1/contacts (Bearer OAuth access token with ${SCOPE}, empty list)`,
  // The ratio measured when the scenario was added (0.03-0.04 on PostgreSQL, docs/decisions.md): a floor
  // that tells a regression, not a goal; the database reads of the route dominate it.
  target: 0.03,
  serverEnv: { RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000' },
  async prepare(target): Promise<BenchRequest> {
    const user = { email: '', password: randomBytes(12).toString('hex') }
    user.email = await enterpriseUser(target, user.password)
    const headersInTurn: Record<string, string>[] = []
    for (let i = 0; i < APPS; i++) {
      headersInTurn.push({ authorization: `Bearer ${await accessToken(target, user)}` })
    }
    return { method: 'GET', path: '/v1/contacts', headers: headersInTurn[0], headersInTurn }
  },
}
