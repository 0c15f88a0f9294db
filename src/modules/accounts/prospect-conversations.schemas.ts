import { type Static, Type } from '@sinclair/typebox'
import { Id, Timestamp } from '../../platform/http/schemas.js'

/** A thread with a contact on a channel (email, sms, …), with the account's users who follow it. */
export const ProspectConversation = Type.Object({
  _id: Id(),
  account_id: Id(),
  contact_id: Id(),
  channel: Type.String(),
  title: Type.String(),
  is_open: Type.Boolean(),
  last_activity: Timestamp(),
  members: Type.Array(Type.Object({ user_id: Id(), unread_count: Type.Integer() })),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type ProspectConversation = Static<typeof ProspectConversation>
