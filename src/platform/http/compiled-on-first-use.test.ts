import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../../../test/helpers/app.js'
import { compiledOnFirstUse, validatorCompiledOnFirstUse } from './compiled-on-first-use.js'

describe('compiledOnFirstUse', () => {
  it('compiles at the first call and only then, once', () => {
    let compilations = 0
    const deferred: Array<() => unknown> = []
    const double = compiledOnFirstUse(
      () => {
        compilations += 1
        return (n: number) => n * 2
      },
      (compile) => deferred.push(compile),
    )
    expect(compilations).toBe(0)
    expect(deferred).toHaveLength(1)
    expect([double(2), double(3)]).toEqual([4, 6])
    expect(compilations).toBe(1)
  })
})

describe('validatorCompiledOnFirstUse', () => {
  it("answers each call as the validator does, with that call's errors", () => {
    const positive = Object.assign(
      (data: unknown) => {
        positive.errors = typeof data === 'number' && data > 0 ? null : [{ message: 'must be positive' }]
        return positive.errors === null
      },
      { errors: null as unknown },
    )
    const validate = validatorCompiledOnFirstUse(() => positive)
    expect(validate(-1)).toBe(false)
    expect(validate.errors).toEqual([{ message: 'must be positive' }])
    expect(validate(1)).toBe(true)
    expect(validate.errors).toBeNull()
    // Fastify gives the parent object only to a validator that has a schema environment, as Ajv's have.
    expect(validate.schemaEnv).toBeTruthy()
  })
})

describe("the service's route schemas", () => {
  it('are compiled on first use, and every one of them compiles', async () => {
    const compilations: Array<() => unknown> = []
    const { app, close } = await buildTestApp(
      {},
      { onDeferredCompilation: (compile) => compilations.push(compile) },
    )
    try {
      const operations = Object.values(app.swagger().paths ?? {}).flatMap((path) => Object.keys(path ?? {}))
      // Every route validates at least its query string; most also a body or parameters, and their answers.
      expect(compilations.length).toBeGreaterThan(operations.length)
      for (const compile of compilations) expect(compile()).toBeTypeOf('function')
    } finally {
      await close()
    }
  })
})
