import { describe, expect } from 'vitest'
import { inlineRefs } from './helpers/openapi-document.js'
import type { Operation, Schema } from './helpers/openapi-inputs.js'
import { test } from './helpers/tenant-test.js'

/**
 * Every string a request may carry (body fields at any depth, array items, record keys and values, query
 * parameters) has a documented maxLength, and every record a maxProperties: an unbounded field let 100
 * contacts with 1 MB names make a list page of 104 MB. A field bounded another way is allowed
 * only by a reason below.
 */

type BoundedSchema = Schema & {
  additionalProperties?: boolean | BoundedSchema
  /** OpenAPI 3.0 has no propertyNames: the document writes it as this extension (src/platform/http/openapi.ts). */
  'x-propertyNames'?: BoundedSchema
  patternProperties?: Record<string, BoundedSchema>
  maxProperties?: number
}

/** Anchored at both ends, and no unbounded repeat (`*`, `+`, `{n,}`) outside an escape such as `\\+`. */
function isBoundedPattern(pattern: string): boolean {
  const unescaped = pattern.replace(/\\./g, '')
  return unescaped.startsWith('^') && unescaped.endsWith('$') && !/[*+]|\{\d*,\}/.test(unescaped)
}

/** Strings bounded without maxLength, each by what it is. */
const BOUNDED_OTHERWISE: { reason: string; holds: (schema: BoundedSchema) => boolean }[] = [
  {
    reason: 'an enum or a constant takes only its listed values',
    holds: (s) => !!s.enum || s.const !== undefined,
  },
  {
    reason: 'a date or a date-time is a fixed-format value Ajv checks before storing',
    holds: (s) => s.format === 'date' || s.format === 'date-time',
  },
  {
    reason:
      'a pattern anchored at both ends with only bounded repeats (an id, a slug, a provider id of digits)',
    holds: (s) => !!s.pattern && isBoundedPattern(s.pattern),
  },
]

/**
 * Bodies the schema documents without refusing (the route sets `attachValidation` or reads the raw body), so a
 * maxLength there would promise a 400 that never comes: each is bounded by its route's body limit instead.
 */
const DOCUMENTED_NOT_REFUSED: { place: RegExp; reason: string }[] = [
  {
    place: /^POST \/v1\/(e|integrations)\/mailprovider\/webhook body/,
    reason: "SendGrid's event batch: the spec answers 200 to any body; the job keeps what it can use",
  },
  {
    place: /^POST \/webhooks\/socialnet\/leads body/,
    reason:
      "Meta's lead event, read from the raw body once its signature holds; ids are looked up, not kept as sent",
  },
  {
    place: /^POST \/(v1\/)?reviews\/webhook\/(paymentprovider|orderprovider)\//,
    reason: 'Stripe and Square events: signed by the provider, judged by the service, not by the schema',
  },
  {
    place: /^POST \/v1\/auth\/oauth\/(token|introspect|revoke) body/,
    reason:
      'RFC 6749 forms: the services read each parameter to answer its errors; credentials are hashed, not kept',
  },
  {
    place: /builderComponents\.components\[\]/,
    reason:
      "a page builder's document: any JSON per component, bounded by the builder's body limit and 5,000 items",
  },
]

const isDocumentedNotRefused = (place: string) => DOCUMENTED_NOT_REFUSED.some(({ place: p }) => p.test(place))

const isBoundedOtherwise = (schema: BoundedSchema) => BOUNDED_OTHERWISE.some(({ holds }) => holds(schema))

const isString = (schema: BoundedSchema) =>
  schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'))

/** The places under `where` whose strings have no bound, and the records with no bound on their count. */
function unboundedIn(schema: BoundedSchema | undefined, where: string): string[] {
  if (!schema || typeof schema !== 'object') return []
  const own = isString(schema) && schema.maxLength === undefined && !isBoundedOtherwise(schema) ? [where] : []
  const variants = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]
  const properties = Object.entries(schema.properties ?? {})
  const record = recordProblems(schema, where)
  return [
    ...own,
    ...variants.flatMap((variant) => unboundedIn(variant, where)),
    ...properties.flatMap(([name, property]) => unboundedIn(property, `${where}.${name}`)),
    ...unboundedIn(schema.items as BoundedSchema | undefined, `${where}[]`),
    ...record,
  ]
}

/** A record (an object taking keys it does not list) needs bounded keys, bounded values and a bounded count. */
function recordProblems(schema: BoundedSchema, where: string): string[] {
  const values = [
    ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : []),
    ...Object.values(schema.patternProperties ?? {}),
  ]
  const takesAnyKey = values.length > 0 || schema.additionalProperties === true
  if (!takesAnyKey) return []
  // patternProperties bound the keys only where their pattern bounds the length; TypeBox writes `^.*$`.
  const keysBounded = !!schema['x-propertyNames']?.maxLength
  return [
    ...(keysBounded ? [] : [`${where}{key}`]),
    ...(schema.maxProperties === undefined ? [`${where}{count}`] : []),
    ...values.flatMap((value) => unboundedIn(value, `${where}{value}`)),
  ]
}

function unboundedInOperation(route: string, operation: Operation): string[] {
  const bodies = Object.entries(operation.requestBody?.content ?? {}).flatMap(([contentType, { schema }]) =>
    unboundedIn(schema as BoundedSchema, `${route} body(${contentType})`),
  )
  const parameters = (operation.parameters ?? [])
    .filter((parameter) => parameter.in === 'query')
    .flatMap((parameter) => unboundedIn(parameter.schema as BoundedSchema, `${route} ?${parameter.name}`))
  return [...bodies, ...parameters]
}

describe('request bounds', () => {
  test('every string a request carries has a maxLength, and every record a bounded count', async ({ t }) => {
    const document = (await t.app.inject({ url: '/docs/json' })).json()
    // Named bodies and schemas are references: their strings are read where a client sends them.
    const paths = inlineRefs(document, document.paths) as Record<string, Record<string, Operation>>
    const bodies = Object.values(paths).flatMap((item) => Object.values(item).filter((o) => o.requestBody))
    expect(bodies.length, 'operations with a body read').toBeGreaterThanOrEqual(80)
    const unbounded = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        unboundedInOperation(`${method.toUpperCase()} ${path}`, operation),
      ),
    )
    expect(unbounded.filter((place) => !isDocumentedNotRefused(place))).toEqual([])
  })
})
