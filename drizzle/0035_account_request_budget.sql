-- The per-account request budget (issue 44): a nullable column without a default changes the catalog only
-- (no rewrite of accounts); its ACCESS EXCLUSIVE lock is held for an instant, under the runner's lock_timeout.
ALTER TABLE "accounts" ADD COLUMN "request_budget" bigint;