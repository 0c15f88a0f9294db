CREATE TABLE "outbox_sessions" (
	"session_hash" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "outbox_sessions_expires_at" ON "outbox_sessions" USING btree ("expires_at");