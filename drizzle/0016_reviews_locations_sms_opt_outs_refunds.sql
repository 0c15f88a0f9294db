CREATE TABLE "review_order_locations" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"location_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_order_locations_id_format" CHECK ("review_order_locations"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "review_refunds" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"source_ref" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_refunds_id_format" CHECK ("review_refunds"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "review_sms_opt_outs" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"phone" text NOT NULL,
	"keyword" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_sms_opt_outs_id_format" CHECK ("review_sms_opt_outs"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE UNIQUE INDEX "review_order_locations_location" ON "review_order_locations" USING btree ("location_id");--> statement-breakpoint
CREATE INDEX "review_order_locations_account_created" ON "review_order_locations" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "review_refunds_account_source" ON "review_refunds" USING btree ("account_id","source_ref");--> statement-breakpoint
CREATE UNIQUE INDEX "review_sms_opt_outs_account_phone" ON "review_sms_opt_outs" USING btree ("account_id","phone");--> statement-breakpoint
CREATE INDEX "review_sms_messages_to" ON "review_sms_messages" USING btree ("to");