-- A bench fixture (bench/README.md, "Migrations under load"), not a migration of the service: a column added to
-- a large table by expand and contract. Nullable and without a default, it changes the catalog only (no
-- rewrite); the check is added NOT VALID, so the existing rows are not read while the lock is held.
ALTER TABLE "room_messages" ADD COLUMN "pinned_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "room_messages" ADD CONSTRAINT "room_messages_pinned_after_created" CHECK ("pinned_at" IS NULL OR "pinned_at" >= "created_at") NOT VALID;
