ALTER TABLE "oauth_apps" ADD COLUMN "webhook_secret_sealed" text;--> statement-breakpoint
CREATE INDEX "oauth_refresh_tokens_account" ON "oauth_refresh_tokens" USING btree ("account_id","client_id");