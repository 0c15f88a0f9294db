import { type Static, type TSchema, type TUnsafe, Type } from '@sinclair/typebox'
import { LIST_TOTAL_CAP, PAGE_REACH } from '../db/page.js'
import { Id, Nullable } from './schemas.js'

export interface Pagination {
  total: number
  page: number
  limit: number
  pages: number
  /** Only when more rows match than the count reads (LIST_TOTAL_CAP): `total` is then that cap. */
  total_exact?: false
}

/** A page read with `cursor`: uncounted, with the cursor of the next page (null on the last). */
export interface CursorPagination {
  limit: number
  next_cursor: string | null
}

export function ok<T>(data: T): { success: true; message: 'SUCCESS'; data: T } {
  return { success: true, message: 'SUCCESS', data }
}

export function okPage<T, P extends Pagination | CursorPagination>(data: T[], pagination: P) {
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

/** Pagination's flag of a capped total, for the areas that write their pagination's fields in another order. */
export const TotalExact = Type.Optional(
  Type.Literal(false, {
    description: `Present only when more than ${LIST_TOTAL_CAP} rows match: \`total\` is then ${LIST_TOTAL_CAP}, and \`pages\` follows it; later pages are read on, by offset up to the first ${PAGE_REACH} rows`,
  }),
)

export const PaginationSchema = Type.Object(
  {
    total: Type.Integer({ description: `Rows matching, counted up to ${LIST_TOTAL_CAP}` }),
    page: Type.Integer(),
    limit: Type.Integer(),
    pages: Type.Integer(),
    total_exact: TotalExact,
  },
  { title: 'Pagination', description: 'A page read by `page` and `limit`, with the total' },
)

export const CursorPaginationSchema = Type.Object(
  {
    limit: Type.Integer(),
    next_cursor: Nullable(
      Type.String({ description: 'The `cursor` of the next page; null on the last page' }),
    ),
  },
  { title: 'CursorPagination', description: 'A page read by `cursor`: uncounted' },
)

/** The answer of a removal: the id removed. */
export const Removed = Type.Object({ _id: Id(), deleted: Type.Boolean() }, { title: 'Removed' })

/** The success envelope without data: an answer that only says it is done. */
export const Acknowledged = Type.Object(
  { success: Type.Literal(true), message: Type.Literal('SUCCESS') },
  { title: 'Acknowledged' },
)

/**
 * The OpenAPI component name of an envelope around `data` (openapi.ts names every schema with a `title`):
 * its data's title and `suffix`, `Contact` + `Envelope`, `ContactArray` + `Envelope` for an array of them;
 * none, so anonymous, when the data has no name.
 */
function nameAfter(data: TSchema, suffix: string): { title?: string } {
  const name: unknown = data.type === 'array' ? data.items?.title && `${data.items.title}Array` : data.title
  if (typeof name !== 'string') return {}
  return { title: `${name}${data.nullable ? 'OrNull' : ''}${suffix}` }
}

/** Response schema of the success envelope: feeds serialization and the OpenAPI document. */
export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({ success: Type.Literal(true), message: Type.String(), data }, nameAfter(data, 'Envelope'))

export const PageEnvelope = <T extends TSchema>(item: T) =>
  Type.Object(
    {
      success: Type.Literal(true),
      message: Type.String(),
      data: Type.Array(item),
      pagination: PaginationSchema,
    },
    nameAfter(item, 'PageEnvelope'),
  )

/**
 * A list that grows without end: `pagination` is the page's (`page`) or, for a request with `cursor`, the
 * cursor of the next page.
 */
export const ListEnvelope = <T extends TSchema>(item: T) =>
  Type.Object(
    {
      success: Type.Literal(true),
      message: Type.String(),
      data: Type.Array(item),
      pagination: Type.Union([PaginationSchema, CursorPaginationSchema], {
        description: 'With `page`: the page and the total; with `cursor`: the cursor of the next page',
      }),
    },
    nameAfter(item, 'ListEnvelope'),
  )

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
  {
    $id: 'ErrorEnvelope',
    description: 'The error envelope of every area but the changelog: `errno` is the HTTP status',
    examples: [{ success: false, errno: 404, message: 'Contact not found' }],
  },
)
export type ErrorEnvelope = Static<typeof ErrorEnvelope>

export const StatusErrorEnvelope = Type.Object(
  { status: Type.Literal(false), ...errorFields },
  {
    $id: 'StatusErrorEnvelope',
    description: "The changelog feed's error envelope, flagged `status`: `errno` is the HTTP status",
    examples: [{ status: false, errno: 400, message: 'querystring/per_page must be <= 100' }],
  },
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
