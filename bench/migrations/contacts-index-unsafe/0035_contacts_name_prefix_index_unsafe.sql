-- A bench fixture (bench/README.md, "Migrations under load") that squawk refuses (require-concurrent-index-creation),
-- kept to show what the bench catches: the index of contacts-name-prefix-index built in the migration's
-- transaction, without CONCURRENTLY. Its SHARE lock on contacts stops every write of contacts for the build.
CREATE INDEX IF NOT EXISTS "contacts_account_name_prefix" ON "contacts" USING btree ("account_id", lower("name") text_pattern_ops);
