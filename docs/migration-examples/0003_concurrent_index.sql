-- migration: no-transaction
-- squawk-disable-assume-in-transaction
-- An index on a table that exists is built (and dropped) CONCURRENTLY, which PostgreSQL runs only outside a
-- transaction. The first line makes the runner apply each statement alone, with lock_timeout and retries; the
-- second tells squawk so (.squawk.toml assumes a transaction otherwise). Each statement must be safe to run
-- again after a failure: IF NOT EXISTS, IF EXISTS. A build that failed leaves an INVALID index behind, which
-- the runner drops before building it again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "contacts_account_preferred_name" ON "contacts" USING btree ("account_id", "preferred_name");
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "contacts_account_preferred_name_old";
