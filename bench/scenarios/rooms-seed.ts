import pg from 'pg'
import { newId } from '../../src/platform/db/ids.js'
import { addMember, createMember, type Member } from '../admin.js'
import type { Measured, Target } from '../scenario.js'

// The chat the room scenarios (rooms.ts) share, seeded with SQL.
export const ROOMS_PATH = '/api/conversation-v2/room'
export const ROOMS = 1_000
export const MESSAGES_PER_ROOM = 200
// Colleagues of the measured member in the account: one direct room with each, and two to four of them in
// every group room.
const COLLEAGUES = 19
const VOCABULARY_SIZE = 5_000
const INSERT_CHUNK = 10_000
const DAY_MS = 86_400_000

// The member sends far more than a person would: the per-user limit (600 a minute) is lifted for the run.
export const serverEnv = { RATE_LIMIT_ROOMS_PER_MINUTE: '1000000000' }

/** Distinct made-up words (three syllables each), none of them a word any search configuration drops. */
function vocabulary(): string[] {
  const syllables = 'ka lo mi ne su ta ri po de gu ba fe zo vi hu ja xe qo wy ce'.split(' ')
  const n = syllables.length
  return Array.from(
    { length: VOCABULARY_SIZE },
    (_, i) =>
      `${syllables[i % n]}${syllables[Math.floor(i / n) % n]}${syllables[Math.floor(i / (n * n)) % n]}`,
  )
}

/** A deterministic pseudo-random sequence (mulberry32), so that runs compare. */
export function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let x = Math.imul(state ^ (state >>> 15), 1 | state)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296
  }
}

export interface Seeded {
  member: Member
  roomIds: string[]
  words: string[]
}

/**
 * One member of 1,000 rooms (19 direct, the rest groups of up to five) holding 200,000 messages of 6 to
 * 14 words drawn from a 5,000-word vocabulary, sent over the last 30 days by the rooms' members, the
 * member's read marker somewhere in each room's last 50 messages: written with SQL, as the routes
 * would have left them, then vacuumed and analysed.
 */
async function seed(target: Target, db: pg.Pool): Promise<Seeded> {
  const member = await createMember(target, 4 * 3600)
  const colleagues: string[] = []
  for (let i = 0; i < COLLEAGUES; i++)
    colleagues.push((await addMember(target, member.accountId)).conversationId)
  const { accountId, conversationId: me } = member
  const words = vocabulary()
  const next = random(42)
  const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)] as T
  const now = Date.now()

  const rooms = Array.from({ length: ROOMS }, (_, r) => {
    const direct = r < COLLEAGUES
    const others = direct
      ? [colleagues[r] as string]
      : [...new Set(Array.from({ length: 2 + (r % 3) }, () => pick(colleagues)))]
    const messageIds = Array.from({ length: MESSAGES_PER_ROOM }, () => newId())
    return { id: newId(), direct, name: direct ? null : `Project ${r}`, members: [me, ...others], messageIds }
  })
  // The room's n-th message, at an even pace over 30 days; each room a little apart from the others.
  const sentAt = (r: number, seq: number) =>
    new Date(now - 30 * DAY_MS + (seq * 30 * DAY_MS) / (MESSAGES_PER_ROOM + 1) - r * 1_000)

  await db.query(
    `insert into rooms (id, account_id, type, name, owner_id, direct_pair, last_seq, last_message_id, last_activity)
     select id, $1, type, name, $2, pair, $3, last_id, last_at
     from unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[])
       as r(id, type, name, pair, last_id, last_at)`,
    [
      accountId,
      me,
      MESSAGES_PER_ROOM,
      rooms.map((room) => room.id),
      rooms.map((room) => (room.direct ? 'direct' : 'group')),
      rooms.map((room) => room.name),
      rooms.map((room) => (room.direct ? [...room.members].sort().join(':') : null)),
      rooms.map((room) => room.messageIds.at(-1)),
      rooms.map((_, r) => sentAt(r, MESSAGES_PER_ROOM)),
    ],
  )
  const memberships = rooms.flatMap((room) =>
    room.members.map((id) => {
      const readSeq = id === me ? MESSAGES_PER_ROOM - Math.floor(next() * 50) : MESSAGES_PER_ROOM
      return {
        roomId: room.id,
        id,
        role: id === me ? 'owner' : 'member',
        readSeq,
        readId: room.messageIds[readSeq - 1],
      }
    }),
  )
  await db.query(
    `insert into room_members (account_id, room_id, conversation_id, role, read_seq, read_message_id, joined_at,
       last_activity)
     select $1, room_id, conversation_id, role, read_seq, read_id, $7, rooms.last_activity
     from unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[])
       as m(room_id, conversation_id, role, read_seq, read_id)
     join rooms on rooms.id = m.room_id`,
    [
      accountId,
      memberships.map((m) => m.roomId),
      memberships.map((m) => m.id),
      memberships.map((m) => m.role),
      memberships.map((m) => m.readSeq),
      memberships.map((m) => m.readId),
      new Date(now - 31 * DAY_MS),
    ],
  )
  await db.query(
    `insert into room_member_history (id, account_id, room_id, conversation_id, joined_at)
     select id, $1, room_id, conversation_id, $5
     from unnest($2::text[], $3::text[], $4::text[]) as h(id, room_id, conversation_id)`,
    [
      accountId,
      memberships.map(() => newId()),
      memberships.map((m) => m.roomId),
      memberships.map((m) => m.id),
      new Date(now - 31 * DAY_MS),
    ],
  )

  const messages = rooms.flatMap((room, r) =>
    room.messageIds.map((id, i) => ({
      id,
      roomId: room.id,
      seq: i + 1,
      sender: pick(room.members),
      content: Array.from({ length: 6 + Math.floor(next() * 9) }, () => pick(words)).join(' '),
      at: sentAt(r, i + 1),
    })),
  )
  for (let start = 0; start < messages.length; start += INSERT_CHUNK) {
    const chunk = messages.slice(start, start + INSERT_CHUNK)
    await db.query(
      `insert into room_messages (id, account_id, room_id, seq, kind, sender_id, content, created_at)
       select id, $1, room_id, seq, 'user', sender_id, content, created_at
       from unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::timestamptz[])
         as m(id, room_id, seq, sender_id, content, created_at)`,
      [
        accountId,
        chunk.map((m) => m.id),
        chunk.map((m) => m.roomId),
        chunk.map((m) => m.seq),
        chunk.map((m) => m.sender),
        chunk.map((m) => m.content),
        chunk.map((m) => m.at),
      ],
    )
  }
  // As autovacuum leaves a table after a bulk insert: statistics taken, the GIN index's pending list merged.
  await db.query('vacuum analyze rooms, room_members, room_member_history, room_messages')
  return { member, roomIds: rooms.map((room) => room.id), words }
}

/** Seeds the server's database, runs `work` with what it holds, and closes the bench's own pool. */
export async function withSeed(
  name: string,
  target: Target,
  work: (seeded: Seeded, db: pg.Pool) => Promise<Measured>,
): Promise<Measured> {
  if (!target.databaseUrl) throw new Error(`${name} needs the server on PostgreSQL (--postgres)`)
  const db = new pg.Pool({ connectionString: target.databaseUrl, max: 2 })
  try {
    const startedAt = performance.now()
    const seeded = await seed(target, db)
    const seedLine = `seeded 1 member of ${ROOMS} rooms, ${(ROOMS * MESSAGES_PER_ROOM).toLocaleString('en')} messages in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`
    const measured = await work(seeded, db)
    return { ...measured, lines: [seedLine, ...measured.lines] }
  } finally {
    await db.end()
  }
}
