CREATE TABLE "review_configurations" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"parent_account" text NOT NULL,
	"name" text NOT NULL,
	"enabled" boolean NOT NULL,
	"trigger" text NOT NULL,
	"delay_hours" double precision NOT NULL,
	"platforms" text[] NOT NULL,
	"template_id" text,
	"conditions" jsonb,
	"send_method" text NOT NULL,
	"from_email" text,
	"from_phone" text,
	"follow_up" jsonb,
	"send_window" jsonb,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_configurations_id_format" CHECK ("review_configurations"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "review_configurations_delay_not_negative" CHECK ("review_configurations"."delay_hours" >= 0)
);
--> statement-breakpoint
CREATE TABLE "review_links" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"platform" text NOT NULL,
	"url" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_links_id_format" CHECK ("review_links"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "review_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"parent_account" text NOT NULL,
	"event_id" text NOT NULL,
	"source_ref" text NOT NULL,
	"customer_key" text NOT NULL,
	"customer_name" text DEFAULT '' NOT NULL,
	"customer_email" text,
	"customer_phone" text,
	"platform" text NOT NULL,
	"send_method" text NOT NULL,
	"status" text DEFAULT 'scheduled' NOT NULL,
	"reason" text,
	"order_value" bigint,
	"currency" text,
	"code" text NOT NULL,
	"scheduled_for" timestamp with time zone NOT NULL,
	"sent_at" timestamp with time zone,
	"clicked_at" timestamp with time zone,
	"follow_up_sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_requests_id_format" CHECK ("review_requests"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "review_sms_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"request_id" text NOT NULL,
	"to" text NOT NULL,
	"from" text,
	"body" text NOT NULL,
	"provider" text NOT NULL,
	"provider_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_sms_messages_id_format" CHECK ("review_sms_messages"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "review_templates" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"channel" text NOT NULL,
	"subject" text DEFAULT '' NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_templates_id_format" CHECK ("review_templates"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "review_webhook_events" (
	"id" text PRIMARY KEY NOT NULL,
	"source" text NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"account_id" text,
	"customer_key" text,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'received' NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp with time zone,
	CONSTRAINT "review_webhook_events_id_format" CHECK ("review_webhook_events"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
ALTER TABLE "review_configurations" ADD CONSTRAINT "review_configurations_template_id_review_templates_id_fk" FOREIGN KEY ("template_id") REFERENCES "public"."review_templates"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_requests" ADD CONSTRAINT "review_requests_event_id_review_webhook_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."review_webhook_events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_sms_messages" ADD CONSTRAINT "review_sms_messages_request_id_review_requests_id_fk" FOREIGN KEY ("request_id") REFERENCES "public"."review_requests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "review_configurations_account" ON "review_configurations" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "review_links_account_platform" ON "review_links" USING btree ("account_id","platform");--> statement-breakpoint
CREATE UNIQUE INDEX "review_requests_code" ON "review_requests" USING btree ("code");--> statement-breakpoint
CREATE UNIQUE INDEX "review_requests_source_platform" ON "review_requests" USING btree ("account_id","source_ref","platform");--> statement-breakpoint
CREATE INDEX "review_requests_account_created" ON "review_requests" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "review_requests_limit" ON "review_requests" USING btree ("parent_account","customer_key","platform","created_at");--> statement-breakpoint
CREATE INDEX "review_requests_event" ON "review_requests" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "review_sms_messages_account_created" ON "review_sms_messages" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "review_sms_messages_request" ON "review_sms_messages" USING btree ("request_id");--> statement-breakpoint
CREATE INDEX "review_templates_account_created" ON "review_templates" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "review_webhook_events_source_event" ON "review_webhook_events" USING btree ("source","event_id");--> statement-breakpoint
CREATE INDEX "review_webhook_events_status_created" ON "review_webhook_events" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "review_webhook_events_customer" ON "review_webhook_events" USING btree ("account_id","customer_key","created_at");--> statement-breakpoint
INSERT INTO "oauth_scopes" ("scope", "description", "category") VALUES
	('reviews.read', 'See your review requests and their settings', 'Reviews'),
	('reviews.write', 'Change how and when your customers are asked for reviews', 'Reviews')
ON CONFLICT ("scope") DO NOTHING;
