CREATE TABLE "oauth_webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"account_id" text NOT NULL,
	"event" text NOT NULL,
	"notification" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"series_attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now(),
	"leased_until" timestamp with time zone,
	"dropped_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oauth_webhook_deliveries_id_format" CHECK ("oauth_webhook_deliveries"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "oauth_webhook_deliveries_status_valid" CHECK ("oauth_webhook_deliveries"."status" in ('pending', 'retrying', 'succeeded', 'dead', 'dropped'))
);
--> statement-breakpoint
CREATE INDEX "oauth_webhook_deliveries_client" ON "oauth_webhook_deliveries" USING btree ("client_id","id");--> statement-breakpoint
CREATE INDEX "oauth_webhook_deliveries_client_status" ON "oauth_webhook_deliveries" USING btree ("client_id","status","id");--> statement-breakpoint
CREATE INDEX "oauth_webhook_deliveries_waiting" ON "oauth_webhook_deliveries" USING btree ("client_id","next_attempt_at") WHERE "oauth_webhook_deliveries"."status" in ('pending', 'retrying');--> statement-breakpoint
CREATE INDEX "oauth_webhook_deliveries_leased" ON "oauth_webhook_deliveries" USING btree ("client_id","leased_until") WHERE "oauth_webhook_deliveries"."leased_until" is not null;--> statement-breakpoint
CREATE INDEX "oauth_webhook_deliveries_account" ON "oauth_webhook_deliveries" USING btree ("account_id","id");--> statement-breakpoint
-- Notifications still queued as pg-boss jobs (before this table) become deliveries under their own webhook-id.
DO $$
BEGIN
  IF to_regclass('pgboss.job') IS NOT NULL THEN
    INSERT INTO "oauth_webhook_deliveries" ("id", "client_id", "account_id", "event", "notification")
    SELECT substr("data" ->> 'message_id', 5), "data" ->> 'client_id', "data" -> 'notification' ->> 'account_id',
      "data" -> 'notification' ->> 'event', "data" -> 'notification'
    FROM pgboss.job
    WHERE "name" = 'oauth.app-webhook' AND "state" IN ('created', 'retry')
      AND "data" ->> 'message_id' ~ '^msg_[0-9a-f]{24}$'
    ON CONFLICT ("id") DO NOTHING;
    DELETE FROM pgboss.job WHERE "name" = 'oauth.app-webhook' AND "state" IN ('created', 'retry');
  END IF;
END $$;
