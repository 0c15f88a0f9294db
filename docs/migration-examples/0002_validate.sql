-- A later migration (once the backfill is done) validates the constraint: VALIDATE CONSTRAINT reads the whole
-- table under a lock that lets reads and writes go on.
ALTER TABLE "contacts" VALIDATE CONSTRAINT "contacts_preferred_name_length";
