CREATE TABLE "oauth_audit_events" (
	"id" text PRIMARY KEY NOT NULL,
	"event" text NOT NULL,
	"client_id" text,
	"user_id" text,
	"account_id" text,
	"ip" text,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oauth_audit_events_id_format" CHECK ("oauth_audit_events"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE INDEX "oauth_audit_events_client" ON "oauth_audit_events" USING btree ("client_id","created_at");--> statement-breakpoint
CREATE INDEX "oauth_audit_events_account" ON "oauth_audit_events" USING btree ("account_id","created_at");