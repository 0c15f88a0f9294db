import { Readable } from 'node:stream'
import type { Database } from '../../platform/db/connection.js'
import { csvStream } from '../../platform/http/csv.js'
import { findChatIdentities } from '../accounts/chat-identities.service.js'
import type { ExportedMessage, ExportedRoom, ExportFormat } from './export.schemas.js'
import { listMessages } from './messages.repository.js'
import { type RoomCaller, requireRoomMember } from './room-access.service.js'

/** Messages read per query: what the export holds in memory at once, whatever the room's size. */
export const EXPORT_BATCH = 1_000

/**
 * The room's messages not deleted, oldest first, up to the last one there when the export began (later
 * ones wait for the next export), read in keyset batches on the sequence; each batch is yielded once the
 * consumer wants more, so a slow download holds no more than a batch and no database connection.
 * `sender` is the sender's name, looked up once per identity; an identity without one shows its id.
 */
async function* exportedBatches(
  db: Database,
  accountId: string,
  room: { id: string; lastSeq: number },
): AsyncGenerator<ExportedMessage[]> {
  const names = new Map<string, string>()
  const beforeSeq = room.lastSeq + 1
  let afterSeq = 0
  for (;;) {
    const rows = await listMessages(db, accountId, room.id, { afterSeq, beforeSeq, limit: EXPORT_BATCH })
    const unnamed = [...new Set(rows.map((row) => row.senderId))].filter((id) => !names.has(id))
    if (unnamed.length > 0) {
      const identities = await findChatIdentities(db, accountId, unnamed)
      for (const id of unnamed) names.set(id, identities.get(id)?.user.name || id)
    }
    if (rows.length > 0)
      yield rows.map((row) => ({
        sender: names.get(row.senderId) ?? row.senderId,
        sender_id: row.senderId,
        kind: row.kind,
        content: row.content,
        timestamp: row.createdAt.toISOString(),
      }))
    const last = rows.at(-1)
    if (!last || rows.length < EXPORT_BATCH) return
    afterSeq = last.seq
  }
}

type Batches = AsyncIterable<ExportedMessage[]>

/** The spec's JSON body, written as it is read: `total_messages` comes last, once counted. */
async function* jsonExport(room: ExportedRoom, exportDate: string, batches: Batches) {
  yield `{"success":true,"data":{"room":${JSON.stringify(room)},"export_date":"${exportDate}","messages":[`
  let total = 0
  for await (const batch of batches) {
    yield (total > 0 ? ',' : '') + batch.map((message) => JSON.stringify(message)).join(',')
    total += batch.length
  }
  yield `],"total_messages":${total}}}`
}

const CSV_COLUMNS = ['timestamp', 'sender', 'sender_id', 'kind', 'content'] as const

/** A message's lines after the first are indented, so that no content can pass for another message. */
const txtLine = (message: ExportedMessage) =>
  `[${message.timestamp}] ${message.kind === 'system' ? '* ' : ''}${message.sender}: ${message.content.replace(/\r\n?|\n/g, '\n    ')}\n`

async function* txtExport(room: ExportedRoom, exportDate: string, batches: Batches) {
  yield `Chat export: ${room.name ?? 'Direct message'} (${room.type} room ${room._id})\nExported: ${exportDate}\n\n`
  let total = 0
  for await (const batch of batches) {
    yield batch.map(txtLine).join('')
    total += batch.length
  }
  yield `\n${total} message${total === 1 ? '' : 's'}\n`
}

export interface RoomExportFile {
  contentType: string
  /** A download's file name; none for the JSON body. */
  fileName?: string
  body: Readable
}

/** The file name of a download: the room's name (or the room id), the export date, the extension. */
function exportFileName(room: ExportedRoom, exportDate: string, format: ExportFormat): string {
  const label = (room.name ?? `direct-${room._id}`).replace(/[\\/:*?"<>|\p{Cc}]+/gu, '_').trim()
  return `chat-${label || room._id}-${exportDate.slice(0, 10)}.${format}`
}

/**
 * A member's export of the room (#13): JSON (the spec's body), CSV or plain text, every one streamed from
 * the database in batches, so that a room of any size exports in constant memory.
 */
export async function exportRoom(
  db: Database,
  caller: RoomCaller,
  roomId: string,
  format: ExportFormat,
): Promise<RoomExportFile> {
  const { room } = await requireRoomMember(db, caller, roomId)
  const exported: ExportedRoom = { _id: room.id, name: room.name, type: room.type }
  const exportDate = new Date().toISOString()
  const batches = exportedBatches(db, caller.accountId, room)
  const fileName = exportFileName(exported, exportDate, format)
  switch (format) {
    case 'json':
      return {
        contentType: 'application/json; charset=utf-8',
        body: Readable.from(jsonExport(exported, exportDate, batches)),
      }
    case 'csv':
      // A BOM, so that spreadsheets read the messages as UTF-8.
      return {
        contentType: 'text/csv; charset=utf-8',
        fileName,
        body: csvStream(batches, { columns: CSV_COLUMNS, bom: true }),
      }
    case 'txt':
      return {
        contentType: 'text/plain; charset=utf-8',
        fileName,
        body: Readable.from(txtExport(exported, exportDate, batches)),
      }
  }
}
