import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

/*
 * Fastify compiles every route's validators and serializers while it starts: for 131 operations about
 * 0.4 s of CPU, and garbage that grows V8's young generation to its full size and leaves 15 MB in the old
 * one until the memory reducer runs. Compiling each on its first use keeps that out of the start, and out
 * of memory for the routes an instance never serves (docs/decisions.md, "Schemas compiled on first use").
 */

/** Receives every compilation put off, so that a test can run them all: a schema that cannot compile fails it. */
export type DeferredCompilations = (compile: () => unknown) => void

/** `compile()`'s function, compiled when it is first called. */
export function compiledOnFirstUse<F extends (...args: never[]) => unknown>(
  compile: () => F,
  deferred?: DeferredCompilations,
): F {
  deferred?.(compile)
  let compiled: F | undefined
  return ((...args: Parameters<F>) => {
    compiled ??= compile()
    return compiled(...args)
  }) as F
}

type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown }

/** A validator compiled when it is first called; Fastify reads its `errors` after each call. */
export function validatorCompiledOnFirstUse(
  compile: () => Validate,
  deferred?: DeferredCompilations,
): Validate {
  deferred?.(compile)
  let compiled: Validate | undefined
  const validate: Validate = (data, context) => {
    compiled ??= compile()
    const valid = compiled(data, context)
    validate.errors = compiled.errors
    return valid
  }
  // Fastify passes the parent object (so that Ajv can replace a coerced root) only to validators that have
  // one, and every validator Ajv compiles has it.
  validate.schemaEnv = true
  return validate
}

type SerializerFactory = ReturnType<typeof SerializerSelector>

/** Fastify's `schemaController.compilersFactory.buildSerializer`: fast-json-stringify, compiled on first use. */
export function serializersCompiledOnFirstUse(deferred?: DeferredCompilations): SerializerFactory {
  const build = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options)
    return (route) => compiledOnFirstUse(() => compile(route), deferred)
  }
}
