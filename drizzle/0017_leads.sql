CREATE TABLE "lead_campaigns" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"integration" text DEFAULT 'socialnet_ads' NOT NULL,
	"page_id" text NOT NULL,
	"form_id" text NOT NULL,
	"is_deleted" boolean DEFAULT false NOT NULL,
	"page_access_token" text,
	"subscription_status" text DEFAULT 'unknown' NOT NULL,
	"subscription_error" text,
	"subscription_checked_at" timestamp with time zone,
	"sync_started_at" timestamp with time zone,
	"synced_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "lead_campaigns_id_format" CHECK ("lead_campaigns"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "lead_webhook_events" (
	"id" text PRIMARY KEY NOT NULL,
	"payload" jsonb NOT NULL,
	"processed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "lead_webhook_events_id_format" CHECK ("lead_webhook_events"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "lead_webhook_registrations" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"owner" text NOT NULL,
	"campaign_id" text NOT NULL,
	"page_id" text NOT NULL,
	"webhook_url" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "lead_webhook_registrations_id_format" CHECK ("lead_webhook_registrations"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "leads" (
	"id" text PRIMARY KEY NOT NULL,
	"leadgen_id" text NOT NULL,
	"page_id" text NOT NULL,
	"form_id" text NOT NULL,
	"ad_id" text,
	"adgroup_id" text,
	"account_id" text,
	"campaign_id" text,
	"status" text NOT NULL,
	"reason" text,
	"source" text NOT NULL,
	"created_time" timestamp with time zone NOT NULL,
	"field_data" jsonb,
	"fields" jsonb,
	"contact_id" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"captured_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "leads_id_format" CHECK ("leads"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "leads_claimed_have_account" CHECK ("leads"."status" = 'unclaimed' or ("leads"."account_id" is not null and "leads"."campaign_id" is not null))
);
--> statement-breakpoint
CREATE TABLE "socialnet_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"created_by" text,
	"source" text NOT NULL,
	"access_token" text NOT NULL,
	"token_type" text DEFAULT 'bearer' NOT NULL,
	"expires_in" integer NOT NULL,
	"expires_at" timestamp with time zone,
	"status" text DEFAULT 'valid' NOT NULL,
	"invalid_reason" text,
	"invalid_at" timestamp with time zone,
	"deleted" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "socialnet_tokens_id_format" CHECK ("socialnet_tokens"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
ALTER TABLE "lead_webhook_registrations" ADD CONSTRAINT "lead_webhook_registrations_campaign_id_lead_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."lead_campaigns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "leads" ADD CONSTRAINT "leads_campaign_id_lead_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."lead_campaigns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "lead_campaigns_page_form_live" ON "lead_campaigns" USING btree ("page_id","form_id") WHERE not "lead_campaigns"."is_deleted";--> statement-breakpoint
CREATE INDEX "lead_campaigns_account_created" ON "lead_campaigns" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "lead_webhook_events_unprocessed" ON "lead_webhook_events" USING btree ("created_at") WHERE "lead_webhook_events"."processed_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "lead_webhook_registrations_campaign" ON "lead_webhook_registrations" USING btree ("account_id","campaign_id");--> statement-breakpoint
CREATE UNIQUE INDEX "leads_leadgen_id" ON "leads" USING btree ("leadgen_id");--> statement-breakpoint
CREATE INDEX "leads_campaign_created" ON "leads" USING btree ("account_id","campaign_id","created_time");--> statement-breakpoint
CREATE INDEX "leads_unclaimed_form" ON "leads" USING btree ("page_id","form_id") WHERE "leads"."status" = 'unclaimed';--> statement-breakpoint
CREATE INDEX "leads_account_failed" ON "leads" USING btree ("account_id","reason") WHERE "leads"."status" = 'failed';--> statement-breakpoint
CREATE UNIQUE INDEX "socialnet_tokens_account_source_live" ON "socialnet_tokens" USING btree ("account_id","source") WHERE "socialnet_tokens"."deleted" is null;--> statement-breakpoint
INSERT INTO "oauth_scopes" ("scope", "description", "category") VALUES
	('leads.read', 'See your ad lead campaigns and the leads they captured', 'Leads'),
	('leads.write', 'Change your ad lead campaigns and your lead ads connection', 'Leads')
ON CONFLICT ("scope") DO NOTHING;
