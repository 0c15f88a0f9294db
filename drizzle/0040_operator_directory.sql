-- migration: no-transaction
-- squawk-disable-assume-in-transaction
-- The operator's tools (README, "The command line"): the account directory's indexes, built CONCURRENTLY on a
-- table that exists, each statement alone and safe to run again; and the mark of a removed user, a nullable
-- column without a default (no rewrite, the lock for a moment). The release before this one reads neither.

-- A removed user's row stays, emptied of the person's data, so that every token naming them is refused.
ALTER TABLE "users" ADD COLUMN IF NOT EXISTS "removed_at" timestamp with time zone;
--> statement-breakpoint
-- The account directory by name, then of one status or one parent by name: lowercased in the "C" collation,
-- so that a name prefix is a range of the same index that gives the order. The parent's holds sub-accounts only.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "accounts_directory_name" ON "accounts" USING btree (lower("name") collate "C","id");
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "accounts_directory_status_name" ON "accounts" USING btree ("status",lower("name") collate "C","id");
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "accounts_directory_parent_name" ON "accounts" USING btree ("parent_account",lower("name") collate "C","id") WHERE "accounts"."parent_account" is not null;
