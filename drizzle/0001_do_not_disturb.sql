CREATE TABLE "do_not_disturb_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"value" text NOT NULL,
	"type" text NOT NULL,
	"reason" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "do_not_disturb_entries_id_format" CHECK ("do_not_disturb_entries"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "do_not_disturb_entries_type_valid" CHECK ("do_not_disturb_entries"."type" in ('permanent', 'temporary'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "do_not_disturb_entries_account_value" ON "do_not_disturb_entries" USING btree ("account_id",lower("value"));--> statement-breakpoint
CREATE INDEX "do_not_disturb_entries_account_created" ON "do_not_disturb_entries" USING btree ("account_id","created_at");