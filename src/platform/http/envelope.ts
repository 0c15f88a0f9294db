import { type Static, type TSchema, type TUnsafe, Type } from '@sinclair/typebox'

export interface Pagination {
  total: number
  page: number
  limit: number
  pages: number
}

export function ok<T>(data: T): { success: true; message: 'SUCCESS'; data: T } {
  return { success: true, message: 'SUCCESS', data }
}

export function okPage<T>(data: T[], pagination: Pagination) {
  return { success: true as const, message: 'SUCCESS' as const, data, pagination }
}

export function errorBody(errno: number, message: string, additionalInfo?: unknown) {
  return additionalInfo === undefined
    ? { success: false as const, errno, message }
    : { success: false as const, errno, message, additional_info: additionalInfo }
}

/**
 * The error envelopes of the spec, by the flag they carry: `success`, the general one
 * `{ success: false, errno, message, additional_info? }`; `status`, the same fields under `status: false`,
 * which the spec gives one area (its changelog feed). A route answers in `success` unless its spec names
 * another (`errorEnvelope` in `routeOptions`).
 */
export type ErrorEnvelopeName = 'success' | 'status'

/** `errorBody` in the named envelope. */
export function errorBodyIn(
  envelope: ErrorEnvelopeName,
  errno: number,
  message: string,
  additionalInfo?: unknown,
) {
  const { success, ...fields } = errorBody(errno, message, additionalInfo)
  return envelope === 'status' ? { status: success, ...fields } : { success, ...fields }
}

export const PaginationSchema = Type.Object({
  total: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
  pages: Type.Integer(),
})

/** Response schema of the success envelope: feeds serialization and the OpenAPI document. */
export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({ success: Type.Literal(true), message: Type.String(), data })

export const PageEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({
    success: Type.Literal(true),
    message: Type.String(),
    data: Type.Array(item),
    pagination: PaginationSchema,
  })

const errorFields = {
  errno: Type.Integer(),
  message: Type.String(),
  additional_info: Type.Optional(Type.Unknown()),
}

/**
 * The error envelope schemas: registered once (`registerErrorHandling`) and referenced by every route's
 * error responses, so the OpenAPI document holds each once, as `#/components/schemas/ErrorEnvelope` and
 * `#/components/schemas/StatusErrorEnvelope`.
 */
export const ErrorEnvelope = Type.Object(
  { success: Type.Literal(false), ...errorFields },
  { $id: 'ErrorEnvelope', description: 'Error envelope' },
)
export type ErrorEnvelope = Static<typeof ErrorEnvelope>

export const StatusErrorEnvelope = Type.Object(
  { status: Type.Literal(false), ...errorFields },
  { $id: 'StatusErrorEnvelope', description: 'Error envelope flagged `status`' },
)
export type StatusErrorEnvelope = Static<typeof StatusErrorEnvelope>

/** The type of an error body in the named envelope (`success` when none is named). */
export type ErrorEnvelopeOf<E extends ErrorEnvelopeName | undefined> = E extends 'status'
  ? StatusErrorEnvelope
  : ErrorEnvelope

const envelopeSchemas = { success: ErrorEnvelope, status: StatusErrorEnvelope }

/** A route's documented error answers: its error envelope under each status it can give. */
export function errorResponses<S extends number, E extends ErrorEnvelopeName | undefined>(
  statuses: readonly S[],
  envelope: E,
): Record<S, TUnsafe<ErrorEnvelopeOf<E>>> {
  const ref = Type.Unsafe<ErrorEnvelopeOf<E>>(Type.Ref(envelopeSchemas[envelope ?? 'success'].$id as string))
  return Object.fromEntries(statuses.map((status) => [status, ref])) as Record<S, TUnsafe<ErrorEnvelopeOf<E>>>
}
