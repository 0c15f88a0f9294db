import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { LIST_TOTAL_CAP, PAGE_REACH } from '../../src/platform/db/page.js'

/**
 * A cursor as the service writes one (base64url JSON of the list's name, the sort key and the id; a list by
 * id alone has no key): for the refusals of a cursor of another list, which a client cannot otherwise make.
 */
export const cursorFor = (list: string, ...place: string[]) =>
  Buffer.from(JSON.stringify([list, ...place])).toString('base64url')

const withQuery = (url: string, query: string) => `${url}${url.includes('?') ? '&' : '?'}${query}`

/**
 * Reads a list from its start with `cursor`, `limit` rows a page, to the page whose `next_cursor` is null,
 * checking each answer; `onPage` runs after each page (numbered from 1), to change the list meanwhile.
 * Returns the `_id` of every row, in order.
 */
export async function walkWithCursors(
  app: FastifyInstance,
  url: string,
  headers: Record<string, string>,
  limit: number,
  onPage?: (page: number) => Promise<void>,
): Promise<string[]> {
  const ids: string[] = []
  let cursor = ''
  for (let page = 1; ; page++) {
    const response = await app.inject({ url: withQuery(url, `limit=${limit}&cursor=${cursor}`), headers })
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json()
    expect(Object.keys(body.pagination)).toEqual(['limit', 'next_cursor'])
    expect(body.data.length).toBeLessThanOrEqual(limit)
    ids.push(...body.data.map((row: { _id: string }) => row._id))
    await onPage?.(page)
    if (body.pagination.next_cursor === null) return ids
    expect(body.data).toHaveLength(limit)
    cursor = body.pagination.next_cursor
  }
}

/**
 * Walks `url` with cursors (about three pages) and finds exactly `expected`, the ids in the list's order,
 * though `addNewer`, run after the first page, adds a row that sorts before them all: none is seen twice,
 * none is missed, and the new one is not seen (it is before the walk's start).
 */
export async function expectCursorWalk(
  app: FastifyInstance,
  url: string,
  headers: Record<string, string>,
  expected: string[],
  addNewer: () => Promise<void>,
) {
  const limit = Math.max(1, Math.floor(expected.length / 3))
  const walked = await walkWithCursors(app, url, headers, limit, async (page) => {
    if (page === 1) await addNewer()
  })
  expect(walked).toEqual(expected)
  expect(new Set(walked).size).toBe(walked.length)
}

/**
 * The 400s of a list with cursors: a cursor malformed, not one the service made, of another list, or sent
 * with `page`, each naming `cursor`; and a page starting PAGE_REACH rows deep at the largest limit,
 * naming `page` and its bound (the page before it is answered).
 */
export async function expectListRefusals(
  app: FastifyInstance,
  url: string,
  headers: Record<string, string>,
  maxLimit: number,
) {
  const messageOf = async (query: string) => {
    const response = await app.inject({ url: withQuery(url, query), headers })
    return response.statusCode === 200 ? '200' : `${response.statusCode} ${response.json().message}`
  }
  const foreign = cursorFor('another_list', '2025-01-01T00:00:00.000000Z', '0123456789abcdef01234567')
  const lastPage = Math.ceil(PAGE_REACH / maxLimit)
  expect({
    malformed: await messageOf('cursor=not%2Ba%2Bcursor'),
    garbage: await messageOf(`cursor=${Buffer.from('{"a":').toString('base64url')}`),
    foreign: await messageOf(`cursor=${foreign}`),
    withPage: await messageOf('cursor=&page=1'),
    beyond: await messageOf(`limit=${maxLimit}&page=${lastPage + 1}`),
  }).toEqual({
    malformed: '400 cursor must match ^[A-Za-z0-9_-]*$',
    garbage: '400 cursor is not a cursor of this list',
    foreign: '400 cursor is not a cursor of this list',
    withPage: '400 cursor must not be sent with page',
    beyond: `400 page must be <= ${lastPage} with limit ${maxLimit} (pages reach the first ${PAGE_REACH} rows; read further with cursor)`,
  })
  expect(await messageOf(`limit=${maxLimit}&page=${lastPage}`)).toBe('200')
}

/**
 * A cursor of the list `name` itself, naming a time PostgreSQL does not have (year 0000, which JavaScript
 * has): refused 400 naming `cursor`, not passed on to the database to fail as a 500.
 */
export async function expectYearZeroCursorRefused(
  app: FastifyInstance,
  url: string,
  headers: Record<string, string>,
  name: string,
) {
  const cursor = cursorFor(name, '0000-01-01T00:00:00.000000Z', '0123456789abcdef01234567')
  const response = await app.inject({ url: withQuery(url, `cursor=${cursor}`), headers })
  expect(`${response.statusCode} ${response.json().message}`).toBe('400 cursor is not a cursor of this list')
}

/** A list holding more than LIST_TOTAL_CAP rows answers the cap as its total, labelled not exact. */
export async function expectCappedTotal(
  app: FastifyInstance,
  url: string,
  headers: Record<string, string>,
  limit: number,
) {
  const response = await app.inject({ url: withQuery(url, `limit=${limit}`), headers })
  expect(response.statusCode, response.body).toBe(200)
  expect(response.json().pagination).toStrictEqual({
    total: LIST_TOTAL_CAP,
    page: 1,
    limit,
    pages: Math.ceil(LIST_TOTAL_CAP / limit),
    total_exact: false,
  })
}
