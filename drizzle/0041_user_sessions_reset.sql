-- migration: no-transaction
-- squawk-disable-assume-in-transaction
-- A password reset ends the user's sessions (POST /v1/admin/users/:id/password): platform JWTs issued before
-- it are refused. A nullable column without a default changes the catalog only (no rewrite of users); its
-- ACCESS EXCLUSIVE lock is held for an instant, under the runner's lock_timeout, and the statement is safe to
-- run again. The release before this one does not read it.
ALTER TABLE "users" ADD COLUMN IF NOT EXISTS "sessions_valid_after" timestamp with time zone;
