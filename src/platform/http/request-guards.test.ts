import { connect } from 'node:net'
import { describe, expect } from 'vitest'
import { adminHeaders, listenTestApp } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { MAX_FORM_FIELDS, MAX_JSON_DEPTH, MAX_JSON_VALUES } from './request-guards.js'

/** One test per class of bad input the fuzz test (test/fuzz.test.ts) found answered with a 5xx. */
describe('bad input is a 400 naming the field, never a 5xx', () => {
  const refused = (response: { statusCode: number; json(): unknown }, status: number, message: RegExp) => {
    expect(response.statusCode).toBe(status)
    expect(response.json()).toMatchObject({
      success: false,
      errno: status,
      message: expect.stringMatching(message),
    })
  }

  test('a NUL character in a body, a query, a path, or a query the route never reads', async ({
    t,
    owner,
  }) => {
    const nul = /must not contain the NUL character/
    const body = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: owner.headers,
      payload: { name: 'Ada\u0000', email: 'nul@example.com' },
    })
    refused(body, 400, /^name must not contain the NUL character/)
    refused(
      await t.app.inject({ url: '/v1/contacts?search=a%00b', headers: owner.headers }),
      400,
      /^search must not/,
    )
    refused(await t.app.inject({ url: '/v1/contacts/abc%00', headers: owner.headers }), 400, /^id must not/)
    refused(await t.app.inject({ url: '/status?anything=%00' }), 400, nul)
    refused(await t.app.inject({ url: '/.well-known/jwks.json?x=%00' }), 400, nul)
    const list = await t.app.inject({ url: '/v1/contacts?search=nul@example.com', headers: owner.headers })
    expect(list.json().pagination.total).toBe(0)
  })

  test('numbers beyond what a column or an OFFSET holds', async ({ t, owner }) => {
    refused(
      await t.app.inject({ url: '/v1/contacts?page=99999999999999999999999', headers: owner.headers }),
      400,
      /^page must be <= /,
    )
    refused(
      await t.app.inject({
        method: 'POST',
        url: `/v1/admin/accounts/${owner.accountId}/credits`,
        headers: adminHeaders,
        payload: { amount: 2 ** 64 },
      }),
      400,
      /^amount must be <= /,
    )
  })

  test('JSON nested thousands deep, and a PATCH that sets nothing', async ({ t, owner }) => {
    const deep = `{"name":${'['.repeat(5000)}${']'.repeat(5000)}}`
    const nested = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: { ...owner.headers, 'content-type': 'application/json' },
      payload: deep,
    })
    refused(nested, 400, new RegExp(`must not nest deeper than ${MAX_JSON_DEPTH} levels`))
    refused(
      await t.app.inject({
        method: 'PATCH',
        url: `/v1/admin/accounts/${owner.accountId}`,
        headers: adminHeaders,
        payload: {},
      }),
      400,
      /must set at least one of: /,
    )
  })

  test('a JSON body of more values than any request needs, or a form of more fields: 413 before parsing', async ({
    t,
    owner,
  }) => {
    const values = `{"name":"Many","email":"many@example.com","tags":[${'0,'.repeat(MAX_JSON_VALUES)}0]}`
    refused(
      await t.app.inject({
        method: 'POST',
        url: '/v1/contacts',
        headers: { ...owner.headers, 'content-type': 'application/json' },
        payload: values,
      }),
      413,
      new RegExp(`^The JSON body must hold at most ${MAX_JSON_VALUES} values`),
    )
    // A string ending in a backslash ends at its quote all the same (the backslash is escaped): what follows counts.
    refused(
      await t.app.inject({
        method: 'POST',
        url: '/v1/contacts',
        headers: { ...owner.headers, 'content-type': 'application/json' },
        payload: `{"name":"Many \\\\","email":"many@example.com","tags":[${'0,'.repeat(MAX_JSON_VALUES)}0]}`,
      }),
      413,
      new RegExp(`^The JSON body must hold at most ${MAX_JSON_VALUES} values`),
    )
    // Commas and brackets inside strings are text, not values.
    const text = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: owner.headers,
      payload: { name: `[{${',"]'.repeat(MAX_JSON_VALUES)}`.slice(0, 200), email: 'text@example.com' },
    })
    expect(text.statusCode).toBe(201)
    refused(
      await t.app.inject({
        method: 'POST',
        url: '/v1/admin/outbox/sign-in',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `token=x${'&x='.repeat(MAX_FORM_FIELDS)}`,
      }),
      413,
      new RegExp(`^The form must hold at most ${MAX_FORM_FIELDS} fields`),
    )
  })

  test('JSON as deep as allowed is read; one level deeper is named by its path', async ({ t, owner }) => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`
    const post = (name: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/contacts',
        headers: { ...owner.headers, 'content-type': 'application/json' },
        payload: `{"email":"deep@example.com","name":${name}}`,
      })
    // The body is one level: a name of 63 more is as deep as a body may be (and no string: the schema refuses it).
    refused(await post(nested(MAX_JSON_DEPTH - 1)), 400, /^name must be string/)
    refused(
      await post(`[1,"]",${nested(MAX_JSON_DEPTH)}]`),
      400,
      new RegExp(
        `^name\\[2\\]${'\\.a'.repeat(MAX_JSON_DEPTH - 2)} must not nest deeper than ${MAX_JSON_DEPTH} levels`,
      ),
    )
  })

  test('multipart without a boundary', async ({ t, owner }) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/mail',
      headers: { ...owner.headers, 'content-type': 'multipart/form-data' },
      payload: 'subject=x',
    })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ success: false, errno: 400 })
  })

  test('a body starting with a byte-order mark is read as the JSON it holds (RFC 8259 8.1)', async ({
    t,
    owner,
  }) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: { ...owner.headers, 'content-type': 'application/json' },
      payload: '\uFEFF{"name":"Bom","email":"bom@example.com"}',
    })
    expect(response.statusCode).toBe(201)
    expect(response.json().data).toMatchObject({ name: 'Bom', email: 'bom@example.com' })
  })

  test('refusals made by the framework (414, 415, 413) answer in the error envelope', async ({
    t,
    owner,
  }) => {
    refused(
      await t.app.inject({ url: `/v1/contacts/${'a'.repeat(10_000)}`, headers: owner.headers }),
      414,
      /./,
    )
    refused(
      await t.app.inject({
        method: 'POST',
        url: '/v1/contacts',
        headers: { ...owner.headers, 'content-type': 'text/xml' },
        payload: '<contact/>',
      }),
      415,
      /./,
    )
    refused(
      await t.app.inject({
        method: 'POST',
        url: '/v1/contacts',
        headers: { ...owner.headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
      }),
      413,
      /./,
    )
  })

  test('a query value that is not percent-encoded UTF-8, on any route, before authentication', async ({
    t,
    owner,
  }) => {
    const encoding = /must be UTF-8, percent-encoded/
    refused(
      await t.app.inject({ url: '/v1/contacts?page=1&search=%E2%80', headers: owner.headers }),
      400,
      /^search must be UTF-8, percent-encoded/,
    )
    refused(await t.app.inject({ url: '/v1/contacts?search=100%' }), 400, /^search must be UTF-8/)
    refused(await t.app.inject({ url: '/status?a%ZZ=1' }), 400, encoding)
    const decoded = await t.app.inject({ url: '/v1/contacts?search=%C3%A9+x%2B', headers: owner.headers })
    expect(decoded.statusCode).toBe(200)
  })
})

describe('what the HTTP parser refuses answers in the error envelope', () => {
  const rawAnswer = (baseUrl: string, request: Buffer) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1', () => socket.end(request))
      let answer = ''
      socket.on('data', (chunk) => {
        answer += chunk.toString('utf8')
      })
      socket.on('close', () => resolve(answer))
      socket.on('error', reject)
    })

  test('a raw non-ASCII character in the query string', async () => {
    const t = await listenTestApp()
    try {
      const answer = await rawAnswer(
        t.baseUrl,
        Buffer.from('GET /v1/contacts?search=a…b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 'utf8'),
      )
      const [head = '', body = ''] = answer.split('\r\n\r\n')
      expect(head).toMatch(/^HTTP\/1.1 400 Bad Request\r\n/)
      expect(head).toMatch(/\r\nContent-Type: application\/json/)
      expect(JSON.parse(body)).toEqual({
        success: false,
        errno: 400,
        message: 'The URL holds a character it must percent-encode (UTF-8, e.g. … as %E2%80%A6)',
      })
    } finally {
      await t.close()
    }
  })
})
