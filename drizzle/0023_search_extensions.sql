-- Contrib extensions of the account-led search indexes (PGlite loads them in connection.ts): btree_gin puts
-- account_id in a GIN index, pg_trgm indexes ILIKE. Both are trusted: the database owner may create them.
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS pg_trgm;
