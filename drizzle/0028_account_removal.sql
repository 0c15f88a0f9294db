CREATE TABLE "account_removals" (
	"root_account_id" text PRIMARY KEY NOT NULL,
	"account_ids" text[] NOT NULL,
	"reached_rows" jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"progress" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"providers_queued_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "account_removals_root_format" CHECK ("account_removals"."root_account_id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "account_removals_status_valid" CHECK ("account_removals"."status" in ('queued', 'running', 'done', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "accounts" DROP CONSTRAINT "accounts_status_valid";--> statement-breakpoint
CREATE INDEX "account_removals_account_ids" ON "account_removals" USING gin ("account_ids");--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_status_valid" CHECK ("accounts"."status" in ('active', 'suspended', 'removed'));