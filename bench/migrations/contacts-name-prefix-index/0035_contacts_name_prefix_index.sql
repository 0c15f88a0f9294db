-- migration: no-transaction
-- squawk-disable-assume-in-transaction
-- A bench fixture (bench/README.md, "Migrations under load"), not a migration of the service: an index on a
-- large table, as a feature would add one (contacts whose name starts with what the user typed, in an account),
-- built CONCURRENTLY so that reads and writes of contacts go on while it is built.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "contacts_account_name_prefix" ON "contacts" USING btree ("account_id", lower("name") text_pattern_ops);
