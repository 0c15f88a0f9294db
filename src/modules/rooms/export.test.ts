import { parse } from 'csv-parse/sync'
import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { addUser, expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import { createRoomWithMembers, postMessage } from '../../../test/helpers/rooms.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { EXPORT_BATCH } from './export.service.js'
import { appendSystemMessage } from './messages.repository.js'

const ROOMS = '/api/conversation-v2/room'

const post = (t: TestApp, member: Tenant, roomId: string, content: string) =>
  postMessage(t.app, member, roomId, content)

const exportRoom = (t: TestApp, member: Tenant, roomId: string, query = '') =>
  t.app.inject({ url: `${ROOMS}/${roomId}/export${query}`, headers: member.headers })

/** A room of the owner (Ada Lovelace) and Grace Hopper (`ada`) with a deleted message and a system message. */
async function conversation(t: TestApp, owner: Tenant) {
  const ada = await addUser(t.app, owner.accountId, 'Grace Hopper')
  const roomId = await createRoomWithMembers(t.app, 'group', [owner, ada], 'Engines')
  const first = await post(t, owner, roomId, 'Hello Ada')
  const gone = await post(t, ada, roomId, 'oops, wrong room')
  await t.app.inject({
    method: 'DELETE',
    url: `${ROOMS}/${roomId}/messages/${gone._id}`,
    headers: ada.headers,
  })
  await appendSystemMessage(t.app.platform.db, owner.accountId, {
    roomId,
    senderId: owner.conversationId,
    content: 'Grace Hopper was made an admin',
  })
  const last = await post(t, ada, roomId, 'Line one\nLine two')
  return { ada, roomId, first, last }
}

describe('room export', () => {
  test("JSON: the spec's body, oldest first, deleted messages left out", async ({ t, owner }) => {
    const { ada, roomId, first, last } = await conversation(t, owner)
    const response = await exportRoom(t, ada, roomId)
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.headers['content-disposition']).toBeUndefined()
    const body = response.json()
    expect(body).toEqual({
      success: true,
      data: {
        room: { _id: roomId, name: 'Engines', type: 'group' },
        messages: [
          {
            sender: 'Ada Lovelace',
            sender_id: owner.conversationId,
            kind: 'user',
            content: 'Hello Ada',
            timestamp: first.created_at,
          },
          {
            sender: 'Ada Lovelace',
            sender_id: owner.conversationId,
            kind: 'system',
            content: 'Grace Hopper was made an admin',
            timestamp: expect.any(String),
          },
          {
            sender: 'Grace Hopper',
            sender_id: ada.conversationId,
            kind: 'user',
            content: 'Line one\nLine two',
            timestamp: last.created_at,
          },
        ],
        export_date: expect.any(String),
        total_messages: 3,
      },
    })
    expect(Date.parse(body.data.export_date)).toBeGreaterThanOrEqual(Date.parse(last.created_at))
    expect((await exportRoom(t, ada, roomId, '?format=json')).json()).toMatchObject({
      data: { total_messages: 3 },
    })
  })

  test('CSV: a download with a header row, every cell that could run as a formula neutralised', async ({
    t,
    owner,
  }) => {
    const { roomId } = await conversation(t, owner)
    const risky = [
      '=1+1',
      '+SUM(A1)',
      '-2+3',
      '@cmd',
      '\tTAB',
      '\rCR',
      '＝HYPERLINK("x")',
      'a, "quoted"\nvalue',
    ]
    for (const content of risky) await post(t, owner, roomId, content)
    const response = await exportRoom(t, owner, roomId, '?format=csv')
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(response.headers['content-disposition']).toMatch(
      /^attachment; filename="chat-Engines-\d{4}-\d{2}-\d{2}\.csv"$/,
    )
    expect(response.body.startsWith('\uFEFFtimestamp,sender,sender_id,kind,content\n')).toBe(true)
    const rows: Record<string, string>[] = parse(response.body, { bom: true, columns: true })
    expect(rows.map((row) => row.content)).toEqual([
      'Hello Ada',
      'Grace Hopper was made an admin',
      'Line one\nLine two',
      "'=1+1",
      "'+SUM(A1)",
      "'-2+3",
      "'@cmd",
      "'\tTAB",
      "'\rCR",
      '\'＝HYPERLINK("x")',
      'a, "quoted"\nvalue',
    ])
    expect(rows[0]).toEqual({
      timestamp: expect.stringMatching(/^\d{4}-/),
      sender: 'Ada Lovelace',
      sender_id: owner.conversationId,
      kind: 'user',
      content: 'Hello Ada',
    })
  })

  test('plain text: one line per message, continuation lines indented', async ({ t, owner }) => {
    const { ada, roomId, last } = await conversation(t, owner)
    const response = await exportRoom(t, ada, roomId, '?format=txt')
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(response.headers['content-disposition']).toMatch(
      /^attachment; filename="chat-Engines-[\d-]+\.txt"$/,
    )
    const lines = response.body.split('\n')
    expect(lines.slice(0, 3)).toEqual([
      `Chat export: Engines (group room ${roomId})`,
      expect.stringMatching(/^Exported: \d{4}-/),
      '',
    ])
    expect(lines.slice(3)).toEqual([
      expect.stringMatching(/^\[[^\]]+\] Ada Lovelace: Hello Ada$/),
      expect.stringMatching(/^\[[^\]]+\] \* Ada Lovelace: Grace Hopper was made an admin$/),
      `[${last.created_at}] Grace Hopper: Line one`,
      '    Line two',
      '',
      '3 messages',
      '',
    ])
  })

  test('a direct room exports under a file name of its id; names outside ASCII are kept', async ({
    t,
    owner,
  }) => {
    const ada = await addUser(t.app, owner.accountId, 'Zoë')
    const direct = await createRoomWithMembers(t.app, 'direct', [owner, ada])
    await post(t, ada, direct, 'hi')
    const txt = await exportRoom(t, owner, direct, '?format=txt')
    expect(txt.headers['content-disposition']).toMatch(new RegExp(`filename="chat-direct-${direct}-`))
    expect(txt.body).toContain('Chat export: Direct message (direct room')
    expect(txt.body).toContain('Zoë: hi')
    const named = await createRoomWithMembers(t.app, 'group', [owner], 'Café / ops')
    const csv = await exportRoom(t, owner, named, '?format=csv')
    expect(csv.headers['content-disposition']).toMatch(
      /^attachment; filename="chat-Caf_ _ ops-[\d-]+\.csv"; filename\*=UTF-8''chat-Caf%C3%A9%20_%20ops-/,
    )
    expect(parse(csv.body, { bom: true, columns: true })).toEqual([])
  })

  test('reads the room in batches: every message once, in order, past batch boundaries', async ({
    t,
    owner,
  }) => {
    const roomId = await createRoomWithMembers(t.app, 'group', [owner], 'Busy')
    const count = EXPORT_BATCH * 2 + 5
    // Written in one statement: the export reads what appendMessage would have left.
    await t.app.platform.db.execute(sql`
      with numbered as (
        select n, lpad(to_hex(n), 24, '0') as id from generate_series(1, ${count}) as n
      )
      insert into room_messages (id, account_id, room_id, seq, kind, sender_id, content, deleted_at)
      select id, ${owner.accountId}, ${roomId}, n, 'user', ${owner.conversationId}, 'message ' || n,
        case when n = ${EXPORT_BATCH} then now() end
      from numbered`)
    await t.app.platform.db.execute(sql`update rooms set last_seq = ${count} where id = ${roomId}`)
    const json = (await exportRoom(t, owner, roomId)).json()
    expect(json.data.total_messages).toBe(count - 1)
    const expected = Array.from({ length: count }, (_, i) => `message ${i + 1}`).filter(
      (content) => content !== `message ${EXPORT_BATCH}`,
    )
    expect(json.data.messages.map((m: { content: string }) => m.content)).toEqual(expected)
    const csv: { content: string }[] = parse((await exportRoom(t, owner, roomId, '?format=csv')).body, {
      bom: true,
      columns: true,
    })
    expect(csv.map((row) => row.content)).toEqual(expected)
    const txt = (await exportRoom(t, owner, roomId, '?format=txt')).body
    expect(txt.trimEnd().endsWith(`${count - 1} messages`)).toBe(true)
  })

  test('members only; another account is answered 404; formats are checked', async ({
    t,
    owner,
    stranger,
  }) => {
    const { roomId } = await conversation(t, owner)
    const outsider = await addUser(t.app, owner.accountId, 'Outsider')
    expect((await exportRoom(t, outsider, roomId)).json()).toMatchObject({
      errno: 400,
      message: 'Cannot access this room',
    })
    for (const query of ['', '?format=csv', '?format=txt'])
      await expectHiddenFromOtherAccounts(
        t.app,
        { method: 'GET', url: `${ROOMS}/${roomId}/export${query}` },
        owner,
        stranger,
      )
    expect((await exportRoom(t, owner, roomId, '?format=pdf')).json()).toMatchObject({
      errno: 400,
      message: 'format must be one of: json, csv, txt',
    })
    expect((await exportRoom(t, owner, 'nope')).json()).toMatchObject({
      errno: 404,
      message: 'Room does not exist',
    })
  })
})
