import { describe, expect } from 'vitest'
import { test } from '../../../test/helpers/tenant-test.js'

interface Operation {
  operationId?: string
  responses?: Record<string, unknown>
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

describe('the OpenAPI document', () => {
  test('names every operation once and documents at least one 4xx answer of each', async ({ t }) => {
    const spec = (await t.app.inject({ url: '/docs/json' })).json()
    const operations = Object.entries(spec.paths as Record<string, Record<string, Operation>>).flatMap(
      ([path, item]) =>
        Object.entries(item)
          .filter(([method]) => METHODS.includes(method))
          .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
    )
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

  test('documents error answers with the one shared error envelope', async ({ t }) => {
    const spec = (await t.app.inject({ url: '/docs/json' })).json()
    const answer = spec.paths['/v1/e/mailprovider/dnd/{id}'].delete.responses['404']
    expect(JSON.stringify(answer)).toContain('#/components/schemas/ErrorEnvelope')
    expect(spec.components.schemas.ErrorEnvelope).toMatchObject({
      properties: { errno: { type: 'integer' } },
    })
  })
})
