CREATE TABLE "support_conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"contact_id" text NOT NULL,
	"subject" text DEFAULT '' NOT NULL,
	"is_open" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "support_conversations_id_format" CHECK ("support_conversations"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "support_inboxes" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"type" text NOT NULL,
	"name" text NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "support_inboxes_id_format" CHECK ("support_inboxes"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "support_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"room_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"direction" text NOT NULL,
	"content" text DEFAULT '' NOT NULL,
	"communication_id" text,
	"msg_id" text,
	"attachments" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "support_messages_id_format" CHECK ("support_messages"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "support_messages_direction_valid" CHECK ("support_messages"."direction" in ('INCOMING', 'OUTGOING'))
);
--> statement-breakpoint
CREATE TABLE "support_rooms" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"inbox_id" text,
	"participants" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "support_rooms_id_format" CHECK ("support_rooms"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
ALTER TABLE "support_messages" ADD CONSTRAINT "support_messages_room_id_support_rooms_id_fk" FOREIGN KEY ("room_id") REFERENCES "public"."support_rooms"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_rooms" ADD CONSTRAINT "support_rooms_conversation_id_support_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."support_conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_rooms" ADD CONSTRAINT "support_rooms_inbox_id_support_inboxes_id_fk" FOREIGN KEY ("inbox_id") REFERENCES "public"."support_inboxes"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "support_conversations_account_contact_open" ON "support_conversations" USING btree ("account_id","contact_id") WHERE "support_conversations"."is_open";--> statement-breakpoint
CREATE UNIQUE INDEX "support_inboxes_account_type_default" ON "support_inboxes" USING btree ("account_id","type") WHERE "support_inboxes"."is_default";--> statement-breakpoint
CREATE INDEX "support_messages_account_room_created" ON "support_messages" USING btree ("account_id","room_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "support_messages_account_communication" ON "support_messages" USING btree ("account_id","communication_id") WHERE "support_messages"."communication_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "support_rooms_account_conversation" ON "support_rooms" USING btree ("account_id","conversation_id");--> statement-breakpoint
CREATE UNIQUE INDEX "communications_account_inbound_msg_id" ON "communications" USING btree ("account_id","module","msg_id") WHERE "communications"."type" = 'INCOMING';