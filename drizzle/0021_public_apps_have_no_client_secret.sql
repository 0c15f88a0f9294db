ALTER TABLE "oauth_apps" ALTER COLUMN "client_secret_hash" DROP NOT NULL;--> statement-breakpoint
-- A public client has no secret (RFC 6749 2.1): the hashes public apps were given before are never checked.
UPDATE "oauth_apps" SET "client_secret_hash" = NULL WHERE "is_public";
