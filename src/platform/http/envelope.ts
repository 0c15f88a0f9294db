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

/**
 * The one error envelope schema: registered once (`registerErrorHandling`) and referenced by every route's
 * error responses, so the OpenAPI document holds it once as `#/components/schemas/ErrorEnvelope`.
 */
export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    errno: Type.Integer(),
    message: Type.String(),
    additional_info: Type.Optional(Type.Unknown()),
  },
  { $id: 'ErrorEnvelope', description: 'Error envelope' },
)
export type ErrorEnvelope = Static<typeof ErrorEnvelope>

/** A route's documented error answers: the shared error envelope under each status it can give. */
export function errorResponses<S extends number>(...statuses: S[]): Record<S, TUnsafe<ErrorEnvelope>> {
  const ref = Type.Unsafe<ErrorEnvelope>(Type.Ref('ErrorEnvelope'))
  return Object.fromEntries(statuses.map((status) => [status, ref])) as Record<S, TUnsafe<ErrorEnvelope>>
}
