-- The check of 0035 validated in a migration of its own: VALIDATE CONSTRAINT reads every row under a lock
-- (SHARE UPDATE EXCLUSIVE) that lets reads and writes of room_messages go on.
ALTER TABLE "room_messages" VALIDATE CONSTRAINT "room_messages_pinned_after_created";
