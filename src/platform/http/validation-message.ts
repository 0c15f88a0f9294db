import type { FastifySchemaValidationError } from 'fastify'
import { ID_PATTERN } from '../db/ids.js'

/** `/recipients/0/email` -> `recipients[0].email` */
function fieldName(error: FastifySchemaValidationError, context: string | undefined): string {
  const segments = error.instancePath.split('/').filter(Boolean)
  const missing = (error.params as { missingProperty?: string }).missingProperty
  if (missing) segments.push(missing)
  const path = segments.reduce(
    (name, s) => (/^\d+$/.test(s) ? `${name}[${s}]` : name ? `${name}.${s}` : s),
    '',
  )
  return path || context || 'request'
}

function describe(error: FastifySchemaValidationError): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required':
      return 'is required'
    case 'minItems':
      return `must contain at least ${params.limit} items`
    case 'maxItems':
      return `must contain at most ${params.limit} items`
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters long`
    case 'maxLength':
      return `must be at most ${params.limit} characters long`
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${params.comparison} ${params.limit}`
    case 'type':
      return `must be ${params.type}`
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`
    case 'format':
      return `must be a valid ${params.format}`
    case 'pattern':
      return params.pattern === ID_PATTERN ? 'must be a 24-character hex id' : `must match ${params.pattern}`
    case 'additionalProperties':
      return `must not have the property ${params.additionalProperty}`
    default:
      return error.message ?? 'is invalid'
  }
}

/** A 400 message that names the field, e.g. "recipients must contain at least 1 items". */
export function validationMessage(errors: FastifySchemaValidationError[], context: string | undefined) {
  const details = errors.map((error) => ({ field: fieldName(error, context), message: describe(error) }))
  const first = details[0] ?? { field: context ?? 'request', message: 'is invalid' }
  return { message: `${first.field} ${first.message}`, details }
}
