import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import { tokenRequest } from '../../../test/helpers/oauth.js'
import { inlineRefs } from '../../../test/helpers/openapi-document.js'
import { test } from '../../../test/helpers/tenant-test.js'

interface Operation {
  operationId?: string
  tags?: string[]
  summary?: string
  security?: Record<string, string[]>[]
  'x-requires-https'?: boolean
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> }
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>
}
type Document = {
  paths: Record<string, Record<string, Operation>>
  components: { securitySchemes: Record<string, Record<string, unknown>> }
}

const operations = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
  )

const isOAuthPath = (path: string) =>
  path.startsWith('/v1/auth/oauth/') ||
  path.startsWith('/v1/admin/oauth/') ||
  path.startsWith('/.well-known/')

describe('the OAuth operations in /docs/json', () => {
  // Every operation's operationId and 4xx answers: src/platform/http/openapi.test.ts.
  test('each has tags, a summary and its success answer', async ({ t }) => {
    const doc = (await t.app.inject({ url: '/docs/json' })).json() as Document
    const all = operations(doc)
    const oauth = all.filter(({ path }) => isOAuthPath(path))
    expect(oauth.length).toBeGreaterThanOrEqual(20)
    for (const { path, method, operation } of oauth) {
      const name = `${method.toUpperCase()} ${path}`
      expect(operation.operationId, name).toMatch(/^[a-z][A-Za-z]+$/)
      expect(operation.tags?.length, name).toBeGreaterThan(0)
      expect(operation.summary, name).toBeTruthy()
      const statuses = Object.keys(operation.responses)
      expect(
        statuses.some((status) => /^[23]/.test(status)),
        name,
      ).toBe(true)
    }
  })

  test('documents the form and the answers of /token, /introspect and /revoke, errors in the RFC 6749 form', async ({
    t,
  }) => {
    const named = (await t.app.inject({ url: '/docs/json' })).json()
    // Named forms and answers are references: read in place, as a client generator sees them.
    const doc = { ...named, paths: inlineRefs(named, named.paths) } as Document
    const fields = (path: string) =>
      Object.keys(
        doc.paths[path]?.post?.requestBody?.content['application/x-www-form-urlencoded']?.schema.properties ??
          {},
      )
    expect(fields('/v1/auth/oauth/token')).toEqual(
      expect.arrayContaining([
        'grant_type',
        'code',
        'redirect_uri',
        'code_verifier',
        'refresh_token',
        'client_id',
        'client_secret',
      ]),
    )
    for (const path of ['/v1/auth/oauth/introspect', '/v1/auth/oauth/revoke']) {
      expect(fields(path)).toEqual(expect.arrayContaining(['token', 'token_type_hint', 'client_id']))
    }
    for (const path of ['/v1/auth/oauth/token', '/v1/auth/oauth/introspect', '/v1/auth/oauth/revoke']) {
      const error = doc.paths[path]?.post?.responses['400']?.content?.['application/json']?.schema
      expect(error, path).toMatchObject({ properties: { error: {}, error_description: {} } })
    }
    const tokens = doc.paths['/v1/auth/oauth/token']?.post?.responses['200']?.content?.['application/json']
    expect(tokens?.schema).toMatchObject({
      properties: { access_token: {}, token_type: {}, expires_in: {}, refresh_token: {}, scope: {} },
    })
  })

  test('still answers a form the schema does not describe in the RFC 6749 form, not the error envelope', async ({
    t,
  }) => {
    const password = await tokenRequest(t.app, { grant_type: 'password', client_id: 'x' })
    expect(password.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) })
    const client = (
      await t.app.inject({
        method: 'POST',
        url: '/v1/admin/oauth/apps',
        headers: adminHeaders,
        payload: {
          name: 'Form Hub',
          redirect_uris: ['https://form.example.com/cb'],
          scopes: [],
          active: true,
        },
      })
    ).json().data as { _id: string; client_secret: string }
    const unsupported = await tokenRequest(t.app, { grant_type: 'password' }, [
      client._id,
      client.client_secret,
    ])
    expect(unsupported.statusCode).toBe(400)
    expect(unsupported.json()).toEqual({
      error: 'unsupported_grant_type',
      error_description: 'Only authorization_code and refresh_token are supported',
    })
  })

  test('marks the authorization server, not its discovery documents or the admin API, as requiring HTTPS, and serves it over plain HTTP outside production', async ({
    t,
  }) => {
    const doc = (await t.app.inject({ url: '/docs/json' })).json() as Document
    const marked = ({ path }: { path: string }) => path.startsWith('/v1/auth/oauth/')
    const oauth = operations(doc).filter(({ path }) => isOAuthPath(path))
    const requiring = oauth.filter(({ operation }) => operation['x-requires-https'])
    expect(requiring.length).toBe(10)
    expect(oauth.filter((operation) => marked(operation) !== requiring.includes(operation))).toEqual([])
    // NODE_ENV=test here: plain HTTP is served (test/https-in-production.test.ts has production).
    expect((await t.app.inject({ url: '/v1/auth/oauth/findUsers?email=x' })).statusCode).toBe(401)
    expect((await tokenRequest(t.app, { grant_type: 'password', client_id: 'x' })).json()).toMatchObject({
      error: 'invalid_client',
    })
  })

  test("declares the oauth2 scheme with the scope table's scopes, and the routes that take access tokens", async ({
    t,
  }) => {
    const doc = (await t.app.inject({ url: '/docs/json' })).json() as Document
    const scopes = (await t.app.inject({ url: '/v1/admin/oauth/scopes', headers: adminHeaders })).json()
      .data as { scope: string; description: string }[]
    expect(scopes).toHaveLength(13)
    expect(doc.components.securitySchemes.oauth2).toEqual({
      type: 'oauth2',
      description: expect.any(String),
      flows: {
        authorizationCode: {
          authorizationUrl: '/v1/auth/oauth/authorize',
          tokenUrl: '/v1/auth/oauth/token',
          refreshUrl: '/v1/auth/oauth/token',
          scopes: Object.fromEntries(scopes.map((s) => [s.scope, s.description])),
        },
      },
    })
    const contacts = doc.paths['/v1/contacts']
    expect(contacts?.get?.security).toEqual([{ bearer: [] }, { oauth2: ['crm.contacts.read'] }])
    expect(contacts?.post?.security).toEqual([{ bearer: [] }, { oauth2: ['crm.contacts.write'] }])
    expect(doc.paths['/v1/contacts/{id}']?.patch?.security).toEqual([
      { bearer: [] },
      { oauth2: ['crm.contacts.write'] },
    ])
  })
})
