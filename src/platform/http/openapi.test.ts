import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { test } from '../../../test/helpers/tenant-test.js'
import { registerApiReference } from './api-reference.js'
import { Envelope, ok } from './envelope.js'
import { Nullable } from './schemas.js'

interface Operation {
  operationId?: string
  parameters?: { in: string; name: string }[]
  responses?: Record<string, unknown>
  security?: Record<string, string[]>[]
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

/** Every operation of the app's OpenAPI document, with its method and path; and the document. */
async function operationsOf(app: FastifyInstance) {
  const spec = (await app.inject({ url: '/docs/json' })).json()
  const operations = Object.entries(spec.paths as Record<string, Record<string, Operation>>).flatMap(
    ([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, operation]) => ({
          method: method.toUpperCase(),
          path,
          route: `${method.toUpperCase()} ${path}`,
          operation,
        })),
  )
  return { spec, operations }
}

/** A schema of the document, its named component when it refers to one (directly, or nullable). */
function named(spec: { components: { schemas: Record<string, unknown> } }, schema: Schema): Schema {
  const ref = schema.$ref ?? schema.anyOf?.[0]?.$ref
  return ref ? (spec.components.schemas[ref.replace('#/components/schemas/', '')] as Schema) : schema
}
/** The JSON schema of an operation's request body, through its named request body when it refers to one. */
function bodyOf(
  spec: { components: { requestBodies?: Record<string, Body> } },
  operation: { requestBody: Body },
): Schema {
  const { $ref, content } = operation.requestBody
  const body = $ref
    ? spec.components.requestBodies?.[$ref.replace('#/components/requestBodies/', '')]
    : undefined
  return ((body?.content ?? content) as Record<string, { schema: Schema }>)['application/json']
    ?.schema as Schema
}
interface Body {
  $ref?: string
  content?: unknown
}
interface Schema {
  $ref?: string
  anyOf?: Schema[]
  properties: Record<string, Schema>
  required?: string[]
}

describe('the OpenAPI document', () => {
  test('names every operation once and documents at least one 4xx answer of each', async ({ t }) => {
    const { operations } = await operationsOf(t.app)
    expect(operations.length).toBeGreaterThan(0)
    const unnamed = operations.filter(({ operation }) => !operation.operationId).map(({ route }) => route)
    const ids = operations.flatMap(({ operation }) => operation.operationId ?? [])
    const repeated = ids.filter((id, index) => ids.indexOf(id) !== index)
    const without4xx = operations
      .filter(
        ({ operation }) => !Object.keys(operation.responses ?? {}).some((status) => /^4\d\d$/.test(status)),
      )
      .map(({ route }) => route)
    // All three lists at once, so that one run names every operation still lacking something.
    expect({ unnamed, repeated, without4xx }).toEqual({ unnamed: [], repeated: [], without4xx: [] })
  })

  test('says who may call each operation, and refuses a call without the token it names', async ({ t }) => {
    const { spec, operations } = await operationsOf(t.app)
    const undeclared = operations.filter(({ operation }) => !operation.security).map(({ route }) => route)
    expect(undeclared).toEqual([])
    const guarded = operations.filter(({ operation }) => operation.security?.length)
    expect(guarded.length).toBeGreaterThan(100)
    const answered = await Promise.all(
      guarded.map(async ({ method, path }) => {
        const url = path.replace(/\{[^}]+\}/g, '0123456789abcdef01234567')
        const response = await t.app.inject({ method: method as 'GET', url })
        return `${method} ${path} ${response.statusCode}`
      }),
    )
    expect(answered.filter((line) => !line.endsWith(' 401'))).toEqual([])
    expect(spec.paths['/v1/funnels/'].get.security).toEqual([{ bearer: [] }, { oauth2: ['sites.read'] }])
    expect(spec.paths['/v1/admin/accounts'].post.security).toEqual([{ admin: [] }])
    expect(spec.paths['/v1/funnels/forms/submit'].post.security).toEqual([])
  })

  test('says which routes are public, how the edge signs, and what signs each webhook', async ({ t }) => {
    const { spec, operations } = await operationsOf(t.app)
    const operationOf = (route: string) =>
      operations.find((operation) => operation.route === route)?.operation
    const publicRoutes = [
      'GET /status',
      'GET /v1/funnels/preview',
      'POST /v1/funnels/forms/submit',
      'GET /s/{code}',
      'GET /r/{code}',
    ]
    const signatureHeaders = {
      'POST /reviews/webhook/paymentprovider/charge': ['stripe-signature'],
      'POST /v1/reviews/webhook/orderprovider/order': [
        'x-square-hmacsha256-signature',
        'x-orderprovider-signature',
      ],
      'POST /v1/reviews/webhook/sms/inbound': ['x-twilio-signature'],
      'POST /v1/e/mailprovider/webhook': [
        'x-twilio-email-event-webhook-signature',
        'x-twilio-email-event-webhook-timestamp',
      ],
      'POST /webhooks/socialnet/leads': ['x-hub-signature', 'x-hub-signature-256'],
    }
    for (const route of [...publicRoutes, ...Object.keys(signatureHeaders)]) {
      expect({ route, security: operationOf(route)?.security }).toEqual({ route, security: [] })
    }
    const headersOf = (route: string) =>
      operationOf(route)
        ?.parameters?.filter((parameter) => parameter.in === 'header')
        .map((parameter) => parameter.name)
    expect(
      Object.fromEntries(Object.keys(signatureHeaders).map((route) => [route, headersOf(route)])),
    ).toEqual(signatureHeaders)
    const edge = spec.paths['/v1/funnels/cloudflare/step']
    expect([edge.get.security, edge.post.security]).toEqual([
      [{ edgeSignature: [] }],
      [{ edgeSignature: [] }],
    ])
    expect(spec.components.securitySchemes.edgeSignature).toMatchObject({
      type: 'apiKey',
      in: 'query',
      name: '_sig',
    })
  })

  test('says what a client may leave out, in the terms of OpenAPI 3.0', async ({ t }) => {
    const spec = (await t.app.inject({ url: '/docs/json' })).json()
    // The query every route is validated with, though it reads none, is no parameter.
    expect(spec.paths['/status'].get.parameters).toBeUndefined()
    // Defaults are filled in by the validator: a caller need not send them.
    const page = spec.paths['/v1/contacts'].get.parameters.find(
      ({ name }: { name: string }) => name === 'page',
    )
    expect(page).toMatchObject({ required: false, schema: { default: 1 } })
    expect(named(spec, bodyOf(spec, spec.paths['/v1/admin/tokens'].post)).required).not.toContain('ttl')
    // JSON Schema's numeric exclusiveMinimum, as 3.0 writes it.
    const configuration = named(spec, bodyOf(spec, spec.paths['/v1/reviews/auto-review-request'].put))
    expect(named(spec, configuration.properties.follow_up as Schema).properties.delay_hours).toMatchObject({
      minimum: 0,
      exclusiveMinimum: true,
    })
  })

  test('documents error answers with the one shared error envelope', async ({ t }) => {
    const spec = (await t.app.inject({ url: '/docs/json' })).json()
    const answer = spec.paths['/v1/e/mailprovider/dnd/{id}'].delete.responses['404']
    expect(JSON.stringify(answer)).toContain('#/components/schemas/ErrorEnvelope')
    expect(spec.components.schemas.ErrorEnvelope).toMatchObject({
      properties: { errno: { type: 'integer' } },
    })
  })
})

describe('named schemas (a title names a component)', () => {
  const Thing = Type.Object({ id: Type.String(), size: Type.Integer() }, { title: 'Thing' })

  /** A bare app with the API reference and the given routes: its document, and the app to call. */
  async function referenceOf(routes: (app: FastifyInstance) => void) {
    const app = Fastify()
    await registerApiReference(app, {})
    routes(app)
    await app.ready()
    return app
  }

  it('writes a titled schema once, refers to it, and changes no byte of an answer', async () => {
    const app = await referenceOf((app) => {
      const answer = { id: 'a', size: 2, extra: 'dropped' }
      app.get('/named', { schema: { response: { 200: Envelope(Thing) } } }, async () => ok(answer))
      app.get(
        '/maybe',
        { schema: { response: { 200: Type.Object({ thing: Nullable(Thing) }) } } },
        async () => ({
          thing: null,
        }),
      )
      const { title: _, ...untitled } = Thing
      app.get('/anonymous', { schema: { response: { 200: Envelope(untitled) } } }, async () => ok(answer))
    })
    const spec = (await app.inject({ url: '/docs/json' })).json()
    expect(spec.components.schemas.Thing).toMatchObject({ title: 'Thing', required: ['id', 'size'] })
    expect(spec.components.schemas.ThingEnvelope.properties.data).toEqual({
      $ref: '#/components/schemas/Thing',
    })
    expect(spec.paths['/named'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ThingEnvelope',
    })
    // Nullable: it or null, as OpenAPI 3.0 validators and generators read it.
    expect(
      spec.paths['/maybe'].get.responses['200'].content['application/json'].schema.properties.thing,
    ).toEqual({
      anyOf: [{ $ref: '#/components/schemas/Thing' }, { type: 'object', nullable: true, enum: [null] }],
    })
    const [named, anonymous] = await Promise.all([
      app.inject({ url: '/named' }),
      app.inject({ url: '/anonymous' }),
    ])
    expect(named.body).toBe('{"success":true,"message":"SUCCESS","data":{"id":"a","size":2}}')
    expect(named.body).toBe(anonymous.body)
    await app.close()
  })

  it('refuses two different shapes under one title, naming it', async () => {
    const app = await referenceOf((app) => {
      app.get('/one', { schema: { response: { 200: Thing } } }, async () => ({ id: 'a', size: 1 }))
      app.get('/other', { schema: { response: { 200: Type.Partial(Thing) } } }, async () => ({}))
    })
    const answer = await app.inject({ url: '/docs/json' })
    expect(answer.statusCode).toBe(500)
    expect(() => app.swagger()).toThrow('Two different schemas are named Thing')
    await app.close()
  })
})
