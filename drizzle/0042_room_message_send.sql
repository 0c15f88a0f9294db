-- A message's send in one round trip (docs/decisions.md, "Chat: a message's send"). Until now the send took four:
-- BEGIN, the room row's lock, the append, COMMIT, and under load each one waited for the instance's event loop.
-- The lock must come first, in a statement of its own: the append's statement then takes its snapshot after the
-- lock was granted, and so sees every membership change committed before it (membership changes take the same
-- lock). A VOLATILE PL/pgSQL function gives each of its statements a fresh snapshot under READ COMMITTED, so
-- called alone (its own transaction) or inside a caller's transaction, it keeps that order. Creating a function
-- takes no lock on a table; the previous release does not call it.
CREATE OR REPLACE FUNCTION room_message_send(
  message_id text,
  account text,
  room text,
  sender text,
  message_kind text,
  message_content text
) RETURNS TABLE (outcome text, seq float8, created_ms float8, notified text[], snoozed text[])
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- 'no_room': no such room in the account.
  PERFORM 1 FROM rooms r WHERE r.account_id = account AND r.id = room FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'no_room'::text, NULL::float8, NULL::float8, NULL::text[], NULL::text[];
    RETURN;
  END IF;
  -- The room's next sequence number, the message, and every membership's activity (the sender, caught up,
  -- has also read it); a user's message only when its sender is a member ('not_member' otherwise).
  RETURN QUERY
  WITH advanced AS (
    UPDATE rooms r
    SET last_seq = r.last_seq + 1, last_message_id = message_id, last_activity = now(), updated_at = now()
    WHERE r.account_id = account AND r.id = room
      AND (message_kind = 'system' OR EXISTS (
        SELECT 1 FROM room_members m
        WHERE m.account_id = account AND m.room_id = room AND m.conversation_id = sender
      ))
    RETURNING r.last_seq
  ),
  inserted AS (
    INSERT INTO room_messages (id, account_id, room_id, seq, kind, sender_id, content)
    SELECT message_id, account, room, advanced.last_seq, message_kind, sender, message_content
    FROM advanced
    RETURNING room_messages.seq, room_messages.created_at
  ),
  members_updated AS (
    UPDATE room_members m
    SET last_activity = inserted.created_at,
      read_seq = CASE WHEN m.conversation_id = sender AND m.read_seq = inserted.seq - 1
        THEN inserted.seq ELSE m.read_seq END,
      read_message_id = CASE WHEN m.conversation_id = sender AND m.read_seq = inserted.seq - 1
        THEN message_id ELSE m.read_message_id END,
      read_at = CASE WHEN m.conversation_id = sender AND m.read_seq = inserted.seq - 1
        THEN inserted.created_at ELSE m.read_at END
    FROM inserted
    WHERE m.account_id = account AND m.room_id = room
  )
  SELECT 'appended'::text, inserted.seq::float8, (extract(epoch FROM inserted.created_at) * 1000)::float8,
    array(
      SELECT m.conversation_id FROM room_members m
      WHERE m.account_id = account AND m.room_id = room AND coalesce(m.snoozed_until > now(), false) = false
    ),
    array(
      SELECT m.conversation_id FROM room_members m
      WHERE m.account_id = account AND m.room_id = room AND coalesce(m.snoozed_until > now(), false) = true
    )
  FROM inserted;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not_member'::text, NULL::float8, NULL::float8, NULL::text[], NULL::text[];
  END IF;
END
$$;
