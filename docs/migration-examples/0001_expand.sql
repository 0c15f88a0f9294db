-- Migrations that touch a table which exists (and may be large) take their locks for a moment only. These are
-- the safe forms, applied by a test (src/platform/db/migrations.test.ts) and linted by `npm run lint` with
-- the project's .squawk.toml, as every migration from 0035 on is. README's Deploying says how a rename or a
-- drop is split over two releases.

-- Expand: a new column is nullable, without a volatile default (no rewrite); the release that writes it comes
-- with it, and a job fills the old rows in batches.
ALTER TABLE "contacts" ADD COLUMN "preferred_name" text;
--> statement-breakpoint
-- A constraint is added NOT VALID: new writes are checked at once, existing rows are not read under the lock.
-- A foreign key is added the same way (... REFERENCES ... NOT VALID).
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_preferred_name_length" CHECK (char_length("preferred_name") <= 200) NOT VALID;
