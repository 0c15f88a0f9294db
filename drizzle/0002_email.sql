CREATE TABLE "communication_events" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"communication_id" text,
	"sg_event_id" text NOT NULL,
	"event" text NOT NULL,
	"email" text DEFAULT '' NOT NULL,
	"timestamp" bigint NOT NULL,
	"sg_message_id" text,
	"uid" text,
	"useragent" text,
	"ip" text,
	"url" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "communication_events_id_format" CHECK ("communication_events"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "communications" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"type" text NOT NULL,
	"module" text NOT NULL,
	"message_type" text DEFAULT 'EMAIL' NOT NULL,
	"origin" text DEFAULT '' NOT NULL,
	"sent_by" jsonb,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"body" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"msg_id" text,
	"contact_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"conversation_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"attachments" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"success" boolean NOT NULL,
	"from_address" text,
	"to_addresses" text[],
	"subject" text,
	"html" text,
	"text" text,
	"reference_id" text,
	"delivery_status" text,
	"delivery_status_at" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"modified_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "communications_id_format" CHECK ("communications"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "communications_type_valid" CHECK ("communications"."type" in ('OUTGOING', 'INCOMING'))
);
--> statement-breakpoint
CREATE TABLE "mail_event_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"payload" jsonb NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "mail_subusers" (
	"account_id" text PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"api_key_encrypted" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "communication_events" ADD CONSTRAINT "communication_events_communication_id_communications_id_fk" FOREIGN KEY ("communication_id") REFERENCES "public"."communications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "communication_events_account_sg_event" ON "communication_events" USING btree ("account_id","sg_event_id");--> statement-breakpoint
CREATE INDEX "communication_events_communication" ON "communication_events" USING btree ("account_id","communication_id","timestamp");--> statement-breakpoint
CREATE INDEX "communications_account_created" ON "communications" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "communications_module_msg_id" ON "communications" USING btree ("module","msg_id");