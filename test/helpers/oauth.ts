import type { FastifyInstance } from 'fastify'
import { adminHeaders, type TestApp } from './app.js'

export const AUTHORIZE = '/v1/auth/oauth/authorize'
export const TOKEN = '/v1/auth/oauth/token'
export const PASSWORD = 'correct horse battery'
/** The redirect URI registerApp registers by default. */
export const CALLBACK = 'https://hub.example.com/callback'

export interface RegisteredApp {
  _id: string
  client_secret: string
  redirect_uris: string[]
}

/** An app registered through the admin API (active unless said). */
export async function registerApp(app: FastifyInstance, overrides: Record<string, unknown> = {}) {
  const response = await app.inject({
    method: 'POST',
    url: '/v1/admin/oauth/apps',
    headers: adminHeaders,
    payload: {
      name: 'Reporting Hub',
      redirect_uris: [CALLBACK],
      scopes: ['crm.contacts.read', 'analytics.read', 'sites.read'],
      active: true,
      ...overrides,
    },
  })
  if (response.statusCode !== 201)
    throw new Error(`app create answered ${response.statusCode}: ${response.body}`)
  return response.json().data as RegisteredApp
}

/** A user with PASSWORD, member of the accounts (the first one main). */
export async function createUser(app: FastifyInstance, email: string, accountIds: string[]) {
  const [main, ...others] = accountIds
  const response = await app.inject({
    method: 'POST',
    url: '/v1/admin/users',
    headers: adminHeaders,
    payload: { email, password: PASSWORD, name: 'Ada Lovelace', account_id: main, main: true },
  })
  const user = response.json().data as { _id: string }
  for (const accountId of others) {
    await app.inject({
      method: 'POST',
      url: `/v1/admin/users/${user._id}/memberships`,
      headers: adminHeaders,
      payload: { account_id: accountId },
    })
  }
  return user
}

/** A page of the flow: its status, HTML, the flow token of its form and the CSRF cookie it set. */
export interface FlowPage {
  status: number
  html: string
  token: string
  headers: Record<string, unknown>
}

const tokenOf = (html: string) => /name="token" value="([^"]+)"/.exec(html)?.[1] ?? ''

/** Form fields or query parameters: a URLSearchParams can give a name twice. */
type Fields = Record<string, string> | URLSearchParams

/** A browser on the flow's pages, from 127.0.0.1 unless `remoteAddress` says another address. */
export function browser(app: FastifyInstance, { remoteAddress }: { remoteAddress?: string } = {}) {
  let cookie = ''
  const page = (response: Awaited<ReturnType<FastifyInstance['inject']>>): FlowPage => {
    const set = response.headers['set-cookie']
    const first = Array.isArray(set) ? set[0] : set
    if (first) cookie = first.split(';')[0] as string
    return {
      status: response.statusCode,
      html: response.body,
      token: tokenOf(response.body),
      headers: response.headers,
    }
  }
  return {
    async open(query: Fields) {
      const url = `${AUTHORIZE}?${new URLSearchParams(query)}`
      return page(await app.inject({ method: 'GET', url, remoteAddress, headers: cookie ? { cookie } : {} }))
    },
    /** The sign-in page of a code request by `client` to its first redirect URI, with `extra` in the query. */
    openFor(client: RegisteredApp, extra: Record<string, string> = {}) {
      const redirect_uri = client.redirect_uris[0] as string
      return this.open({ response_type: 'code', client_id: client._id, redirect_uri, ...extra })
    },
    async post(path: string, fields: Fields) {
      return page(
        await app.inject({
          method: 'POST',
          url: `${AUTHORIZE}${path}`,
          remoteAddress,
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
          payload: new URLSearchParams(fields).toString(),
        }),
      )
    },
    forgetCookie() {
      cookie = ''
    },
  }
}

/** Allows on the consent page, or takes the redirect when consent was remembered and no page came. */
export async function allowIfAsked(b: ReturnType<typeof browser>, page: FlowPage): Promise<FlowPage> {
  return page.status === 303 ? page : b.post('/consent', { token: page.token, decision: 'allow' })
}

/** The parameters of a redirect's Location. */
export function redirected(headers: Record<string, unknown>): URL {
  return new URL(String(headers.location))
}

export function tokenRequest(app: FastifyInstance, fields: Record<string, string>, basic?: [string, string]) {
  return app.inject({
    method: 'POST',
    url: TOKEN,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(basic && {
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(basic[0])}:${encodeURIComponent(basic[1])}`).toString('base64')}`,
      }),
    },
    payload: new URLSearchParams(fields).toString(),
  })
}

/** A code for the user in their only account, through the real pages (the app's first redirect URI). */
export async function obtainCode(
  app: FastifyInstance,
  client: RegisteredApp,
  email: string,
  scope?: string,
): Promise<string> {
  const b = browser(app)
  const signIn = await b.openFor(client, scope ? { scope } : {})
  const decided = await allowIfAsked(b, await b.post('', { token: signIn.token, email, password: PASSWORD }))
  return redirected(decided.headers).searchParams.get('code') as string
}

/** Tokens for the user in their only account, through the real pages and /token (the app's first redirect URI). */
export async function obtainTokens(
  app: FastifyInstance,
  client: RegisteredApp,
  email: string,
  scope?: string,
) {
  const redirectUri = client.redirect_uris[0] as string
  const code = await obtainCode(app, client, email, scope)
  const response = await tokenRequest(
    app,
    { grant_type: 'authorization_code', code, redirect_uri: redirectUri },
    [client._id, client.client_secret],
  )
  return response.json() as { access_token: string; refresh_token: string; scope: string }
}

/** A form POST to an endpoint of the authorization server, the client authenticating in the body. */
export function postAsClient(
  app: FastifyInstance,
  endpoint: 'revoke' | 'introspect',
  fields: Record<string, string>,
  client: RegisteredApp,
) {
  return app.inject({
    method: 'POST',
    url: `/v1/auth/oauth/${endpoint}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      ...fields,
      client_id: client._id,
      client_secret: client.client_secret,
    }).toString(),
  })
}

/**
 * The test's calls to the pages and /token, as `client`: `authorizeQuery` asks for a code to CALLBACK (three
 * scopes, one the default app may not have, and a state), `authorize` signs in as `email` through the pages
 * and allows (choosing `accountId` when given), `exchange` trades the code at /token.
 */
export function flowOf(t: TestApp, client: RegisteredApp) {
  const authorizeQuery = (overrides: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: client._id,
    redirect_uri: CALLBACK,
    scope: 'crm.contacts.read sites.read billing.read',
    state: 'xyz-123',
    ...overrides,
  })

  /** Signs in as `email` through the pages and allows; the code and the redirect it came in. */
  async function authorize(
    email: string,
    query: Record<string, string> = authorizeQuery(),
    accountId?: string,
  ) {
    const b = browser(t.app)
    const signIn = await b.open(query)
    let page = await b.post('', { token: signIn.token, email, password: PASSWORD })
    if (accountId) page = await b.post('/account', { token: page.token, account_id: accountId })
    const decided = await allowIfAsked(b, page)
    const location = redirected(decided.headers)
    return { code: location.searchParams.get('code') as string, location, status: decided.status }
  }

  const exchange = (code: string, extra: Record<string, string> = {}) =>
    tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...extra }, [
      client._id,
      client.client_secret,
    ])
  return { authorizeQuery, authorize, exchange }
}

/** The user takes back the app's grant in the account (`DELETE /v1/auth/oauth/grants/:client_id`), as a member would. */
export async function revokeGrant(
  app: FastifyInstance,
  grant: { userId: string; accountId: string; clientId: string },
) {
  const minted = await app.inject({
    method: 'POST',
    url: '/v1/admin/tokens',
    headers: adminHeaders,
    payload: { user_id: grant.userId, account_id: grant.accountId },
  })
  return app.inject({
    method: 'DELETE',
    url: `/v1/auth/oauth/grants/${grant.clientId}`,
    headers: { authorization: `Bearer ${minted.json().data.token}` },
  })
}
