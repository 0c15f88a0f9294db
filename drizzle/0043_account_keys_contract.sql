-- migration: no-transaction
-- squawk-disable-assume-in-transaction
-- The contract of the account keys (docs/decisions.md, "A schema that shards by account"): what 0037-0039 kept
-- one release for the code of the release before, which the release since has not used. Outside a transaction,
-- each statement alone with the runner's lock_timeout and retries, and safe to run again.

-- The previous arbiter of ON CONFLICT (step_id): the code names (account_id, step_id), served by
-- funnel_step_components_account_step.
DROP INDEX CONCURRENTLY IF EXISTS "funnel_step_components_step";
--> statement-breakpoint
-- A domain's base path without the account: funnels_account_domain_base_path keeps the same rows unique (a domain
-- is one account's), and is the one the code maps to 409.
DROP INDEX CONCURRENTLY IF EXISTS "funnels_domain_base_path";
--> statement-breakpoint
-- The tags' key swapped for (account_id, id) as 0039 swapped the others': the unique index of 0037, which the tag
-- links' reference already stands on, becomes the key (USING INDEX: no build, no scan; the reference keeps it)
-- under the old key's name. The ALTER takes the table's ACCESS EXCLUSIVE lock for a change of the catalog only,
-- waits at most the runner's lock_timeout for it, and is retried alone. In a DO block so that it runs once.
DO $$ BEGIN
  IF to_regclass('"funnel_tags_account_key"') IS NOT NULL THEN
    ALTER TABLE "funnel_tags" DROP CONSTRAINT "funnel_tags_pkey", ADD CONSTRAINT "funnel_tags_pkey" PRIMARY KEY USING INDEX "funnel_tags_account_key";
  END IF;
END $$;
