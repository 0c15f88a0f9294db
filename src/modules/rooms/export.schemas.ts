import { type Static, Type } from '@sinclair/typebox'
import { Id, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { MESSAGE_KINDS, ROOM_TYPES } from './tables.js'

export const EXPORT_FORMATS = ['json', 'csv', 'txt'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

export const ExportQuery = Type.Object({
  format: StringEnum(EXPORT_FORMATS, {
    default: 'json',
    description: 'json: the spec body; csv and txt: a file download. All three are streamed.',
  }),
})

/** One exported message: `sender` is the sender's name (their conversation id when no name is known). */
export const ExportedMessage = Type.Object(
  {
    sender: Type.String(),
    sender_id: Id(),
    kind: StringEnum(MESSAGE_KINDS),
    content: Type.String(),
    timestamp: Timestamp(),
  },
  { title: 'RoomExportedMessage' },
)
export type ExportedMessage = Static<typeof ExportedMessage>

export const ExportedRoom = Type.Object(
  {
    _id: Id(),
    name: Type.Union([Type.String(), Type.Null()]),
    type: StringEnum(ROOM_TYPES),
  },
  { title: 'RoomExportedRoom' },
)
export type ExportedRoom = Static<typeof ExportedRoom>

/** The spec's export body (#13), oldest message first. */
export const RoomExport = Type.Object(
  {
    success: Type.Literal(true),
    data: Type.Object({
      room: ExportedRoom,
      messages: Type.Array(ExportedMessage),
      export_date: Timestamp(),
      total_messages: Type.Integer(),
    }),
  },
  { title: 'RoomExport' },
)
