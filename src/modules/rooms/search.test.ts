import { describe, expect } from 'vitest'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { addUser, createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { fourByteText, randomText } from '../../../test/helpers/long-strings.js'
import { createRoomWithMembers, postMessage, removeMember } from '../../../test/helpers/rooms.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { MAX_MESSAGE_LENGTH } from './messages.schemas.js'
import { WALK_PER_RANKED_HIT } from './search.repository.js'

const ROOMS = '/api/conversation-v2/room'

const post = (t: TestApp, member: Tenant, roomId: string, content: string) =>
  postMessage(t.app, member, roomId, content)

const search = (t: TestApp, member: Tenant, query: string) =>
  t.app.inject({ url: `${ROOMS}/search?${query}`, headers: member.headers })

async function found(t: TestApp, member: Tenant, q: string) {
  const response = await search(t, member, new URLSearchParams({ q }).toString())
  expect(response.statusCode, response.body).toBe(200)
  return (response.json().results as { message: { content: string } }[]).map((hit) => hit.message.content)
}

describe('message search', () => {
  test('finds words in the rooms the caller is a member of, each hit with its room', async ({ t, owner }) => {
    const ada = await addUser(t.app, owner.accountId, 'Ada')
    const roomId = await createRoomWithMembers(t.app, 'group', [owner, ada], 'Launch plans')
    const direct = await createRoomWithMembers(t.app, 'direct', [owner, ada])
    const message = await post(t, ada, roomId, 'The rocket launch is on Friday')
    await post(t, owner, direct, 'Is the ROCKET ready?')
    await post(t, owner, roomId, 'Lunch at noon')

    const response = await search(t, owner, 'q=rocket')
    expect(response.json()).toEqual({
      results: expect.arrayContaining([
        {
          room: { _id: roomId, name: 'Launch plans', type: 'group' },
          message: expect.objectContaining({ _id: message._id, content: 'The rocket launch is on Friday' }),
        },
        {
          room: { _id: direct, name: null, type: 'direct' },
          message: expect.objectContaining({ content: 'Is the ROCKET ready?' }),
        },
      ]),
      pagination: { page: 1, limit: 20, total: 2, pages: 1 },
    })
    expect(await found(t, ada, 'friday')).toEqual(['The rocket launch is on Friday'])
  })

  test('ranks better matches first, then newer; takes phrases and exclusions', async ({ t, owner }) => {
    const roomId = await createRoomWithMembers(t.app, 'group', [owner])
    await post(t, owner, roomId, 'zebra once among many other words here')
    await post(t, owner, roomId, 'zebra zebra zebra')
    await post(t, owner, roomId, 'a zebra crossing')
    expect(await found(t, owner, 'zebra')).toEqual([
      'zebra zebra zebra',
      'a zebra crossing',
      'zebra once among many other words here',
    ])
    expect(await found(t, owner, '"zebra crossing"')).toEqual(['a zebra crossing'])
    expect(await found(t, owner, 'zebra -crossing -once')).toEqual(['zebra zebra zebra'])
    expect(await found(t, owner, 'zebra or walrus')).toHaveLength(3)
    // Only punctuation or stop characters: nothing to search for, nothing found.
    expect(await found(t, owner, '!!!')).toEqual([])
  })

  // The search index has limits of its own: a tsvector holds 1 MB, a word 2,047 bytes.
  test('indexes the longest messages: of the most words, and of one word too long to index', async ({
    t,
    owner,
  }) => {
    const roomId = await createRoomWithMembers(t.app, 'group', [owner], 'Long messages')
    const words = [...fourByteText((MAX_MESSAGE_LENGTH - 10) / 2)].join(' ')
    const manyWords = await post(t, owner, roomId, `manywords ${words}`)
    expect([...manyWords.content]).toHaveLength(MAX_MESSAGE_LENGTH - 1)
    await post(t, owner, roomId, `longword ${randomText(MAX_MESSAGE_LENGTH - 9)}`)
    // A word that a tsvector holds, but not once behind the account's search prefix: left out of the index.
    await post(t, owner, roomId, `nearlimit ${'x'.repeat(2_045)} it's C:\\temp example.com/a?b=c`)
    expect(await found(t, owner, 'manywords')).toHaveLength(1)
    expect(await found(t, owner, 'longword')).toHaveLength(1)
    for (const word of ['nearlimit', "it's", 'C:\\temp', 'example.com/a?b=c'])
      expect(await found(t, owner, word), word).toHaveLength(1)
  })

  test('pages through hits', async ({ t, owner }) => {
    const roomId = await createRoomWithMembers(t.app, 'group', [owner])
    for (let n = 1; n <= 5; n++) await post(t, owner, roomId, `pagination probe ${n}`)
    const page = (await search(t, owner, 'q=probe&limit=2&page=3')).json()
    expect(page.pagination).toEqual({ page: 3, limit: 2, total: 5, pages: 3 })
    expect(page.results.map((hit: { message: { content: string } }) => hit.message.content)).toEqual([
      'pagination probe 1',
    ])
    // Past the last page: no hit, the total still told.
    expect((await search(t, owner, 'q=probe&limit=2&page=4')).json()).toEqual({
      results: [],
      pagination: { page: 4, limit: 2, total: 5, pages: 3 },
    })
  })

  test('never finds deleted messages, rooms the caller is not (or no longer) in, other accounts', async ({
    t,
    owner,
    stranger,
  }) => {
    const ada = await addUser(t.app, owner.accountId, 'Ada')
    const shared = await createRoomWithMembers(t.app, 'group', [owner, ada])
    const adaOnly = await createRoomWithMembers(t.app, 'group', [ada])
    const strangers = await createRoomWithMembers(t.app, 'group', [stranger])
    const deleted = await post(t, owner, shared, 'secret plan deleted')
    await t.app.inject({
      method: 'DELETE',
      url: `${ROOMS}/${shared}/messages/${deleted._id}`,
      headers: owner.headers,
    })
    await post(t, owner, shared, 'secret plan shared')
    await post(t, ada, adaOnly, 'secret plan of Ada alone')
    await post(t, stranger, strangers, 'secret plan of another account')

    expect(await found(t, owner, 'secret')).toEqual(['secret plan shared'])
    expect((await found(t, ada, 'secret')).sort()).toEqual(['secret plan of Ada alone', 'secret plan shared'])
    expect(await found(t, stranger, 'secret')).toEqual(['secret plan of another account'])
    await removeMember(t.app, shared, owner)
    expect(await found(t, owner, 'secret')).toEqual([])
  })

  test('refuses a missing or empty query and limits beyond 100; needs a chat identity', async ({
    t,
    owner,
  }) => {
    for (const query of ['', 'q=', 'q=%20%20', 'q=a%00b', 'q=x&limit=101', `q=${'x'.repeat(201)}`]) {
      const response = await search(t, owner, query)
      expect(response.statusCode, query).toBe(400)
      expect(response.json().message).toMatch(/^(q|limit) /)
    }
    const token = await t.app.platform.tokens.sign(
      { uid: owner.userId, account_id: owner.accountId, parent_account: null },
      300,
    )
    const response = await t.app.inject({
      url: `${ROOMS}/search?q=x`,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(response.statusCode).toBe(401)
  })

  test('refuses a page starting 10000 hits deep or more, naming the bound', async ({ t, owner }) => {
    const response = await search(t, owner, 'q=x&limit=50&page=201')
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toBe(
      'page must be <= 200 with limit 50 (pages reach the first 10000 rows)',
    )
    expect((await search(t, owner, 'q=x&limit=50&page=200')).statusCode).toBe(200)
  })

  test('ranks only the newest ROOM_SEARCH_RANKED_HITS hits: with one more, the total is at least that many', async () => {
    const bounded = await buildTestApp({ ROOM_SEARCH_RANKED_HITS: '3' })
    try {
      const member = await createTenant(bounded.app, { name: 'Bounded search' })
      const roomId = await createRoomWithMembers(bounded.app, 'group', [member])
      const send = (content: string) => postMessage(bounded.app, member, roomId, content)
      const searchFor = async (query: string) => {
        const response = await bounded.app.inject({
          url: `${ROOMS}/search?${query}`,
          headers: member.headers,
        })
        expect(response.statusCode, response.body).toBe(200)
        const body = response.json()
        return {
          contents: body.results.map((hit: { message: { content: string } }) => hit.message.content),
          pagination: body.pagination,
        }
      }
      // The oldest hit ranks first while it is among the newest three; the others tie, newest first.
      await send('heron heron heron heron')
      await send('heron one')
      await send('heron two words')
      expect(await searchFor('q=heron')).toEqual({
        contents: ['heron heron heron heron', 'heron two words', 'heron one'],
        pagination: { page: 1, limit: 20, total: 3, pages: 1 },
      })
      await send('heron three more words')
      expect(await searchFor('q=heron')).toEqual({
        contents: ['heron three more words', 'heron two words', 'heron one'],
        pagination: { page: 1, limit: 20, total: 3, pages: 1, total_exact: false },
      })
      // By pages, and past the last one (counted apart), the same bound.
      expect(await searchFor('q=heron&limit=2&page=2')).toEqual({
        contents: ['heron one'],
        pagination: { page: 2, limit: 2, total: 3, pages: 2, total_exact: false },
      })
      expect(await searchFor('q=heron&limit=2&page=3')).toEqual({
        contents: [],
        pagination: { page: 3, limit: 2, total: 3, pages: 2, total_exact: false },
      })
      // Exclusions narrow the hits before they are bounded: the oldest is among the newest three again (a query
      // with an exclusion ranks every hit alike, so newest first).
      expect(await searchFor(`q=${encodeURIComponent('heron -three')}`)).toEqual({
        contents: ['heron two words', 'heron one', 'heron heron heron heron'],
        pagination: { page: 1, limit: 20, total: 3, pages: 1 },
      })
      // The same once the hits are older than the messages a search walks (WALK_PER_RANKED_HIT per hit
      // ranked): found through the index of the account's words.
      for (let n = 0; n < 3 * WALK_PER_RANKED_HIT; n++) await send(`filler ${n}`)
      expect(await searchFor('q=heron')).toEqual({
        contents: ['heron three more words', 'heron two words', 'heron one'],
        pagination: { page: 1, limit: 20, total: 3, pages: 1, total_exact: false },
      })
      await send('heron newest')
      expect(await searchFor(`q=${encodeURIComponent('heron -three -newest')}`)).toEqual({
        contents: ['heron two words', 'heron one', 'heron heron heron heron'],
        pagination: { page: 1, limit: 20, total: 3, pages: 1 },
      })
      expect(await searchFor('q=heron&limit=2&page=2')).toEqual({
        contents: ['heron two words'],
        pagination: { page: 2, limit: 2, total: 3, pages: 2, total_exact: false },
      })
    } finally {
      await bounded.close()
    }
  })
})
