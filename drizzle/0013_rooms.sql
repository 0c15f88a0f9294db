CREATE TABLE "room_member_history" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"room_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"joined_at" timestamp with time zone DEFAULT now() NOT NULL,
	"left_at" timestamp with time zone,
	CONSTRAINT "room_member_history_id_format" CHECK ("room_member_history"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "room_members" (
	"account_id" text NOT NULL,
	"room_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"role" text DEFAULT 'member' NOT NULL,
	"joined_at" timestamp with time zone DEFAULT now() NOT NULL,
	"is_favorite" boolean DEFAULT false NOT NULL,
	"snoozed_until" timestamp with time zone,
	"read_seq" bigint DEFAULT 0 NOT NULL,
	"read_message_id" text,
	"read_at" timestamp with time zone,
	CONSTRAINT "room_members_room_id_conversation_id_pk" PRIMARY KEY("room_id","conversation_id"),
	CONSTRAINT "room_members_role_valid" CHECK ("room_members"."role" in ('owner', 'admin', 'member'))
);
--> statement-breakpoint
CREATE TABLE "room_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"room_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"kind" text DEFAULT 'user' NOT NULL,
	"sender_id" text NOT NULL,
	"content" text NOT NULL,
	"search_vector" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"edited_at" timestamp with time zone,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "room_messages_id_format" CHECK ("room_messages"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "room_messages_kind_valid" CHECK ("room_messages"."kind" in ('user', 'system'))
);
--> statement-breakpoint
CREATE TABLE "rooms" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"type" text NOT NULL,
	"name" text,
	"owner_id" text NOT NULL,
	"direct_pair" text,
	"last_seq" bigint DEFAULT 0 NOT NULL,
	"last_message_id" text,
	"last_activity" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "rooms_id_format" CHECK ("rooms"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "rooms_type_valid" CHECK ("rooms"."type" in ('direct', 'group')),
	CONSTRAINT "rooms_direct_pair_for_direct_rooms" CHECK (("rooms"."type" = 'direct') = ("rooms"."direct_pair" is not null))
);
--> statement-breakpoint
ALTER TABLE "room_member_history" ADD CONSTRAINT "room_member_history_room_id_rooms_id_fk" FOREIGN KEY ("room_id") REFERENCES "public"."rooms"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "room_members" ADD CONSTRAINT "room_members_room_id_rooms_id_fk" FOREIGN KEY ("room_id") REFERENCES "public"."rooms"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "room_messages" ADD CONSTRAINT "room_messages_room_id_rooms_id_fk" FOREIGN KEY ("room_id") REFERENCES "public"."rooms"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "room_member_history_room" ON "room_member_history" USING btree ("room_id","joined_at");--> statement-breakpoint
CREATE UNIQUE INDEX "room_member_history_one_open_stay" ON "room_member_history" USING btree ("room_id","conversation_id") WHERE "room_member_history"."left_at" is null;--> statement-breakpoint
CREATE INDEX "room_members_account_identity" ON "room_members" USING btree ("account_id","conversation_id");--> statement-breakpoint
CREATE UNIQUE INDEX "room_messages_room_seq" ON "room_messages" USING btree ("room_id","seq");--> statement-breakpoint
CREATE INDEX "room_messages_room_sender_seq" ON "room_messages" USING btree ("room_id","sender_id","seq");--> statement-breakpoint
CREATE INDEX "room_messages_room_deleted_seq" ON "room_messages" USING btree ("room_id","seq") WHERE "room_messages"."deleted_at" is not null;--> statement-breakpoint
CREATE INDEX "room_messages_search" ON "room_messages" USING gin ("search_vector");--> statement-breakpoint
CREATE UNIQUE INDEX "rooms_account_direct_pair" ON "rooms" USING btree ("account_id","direct_pair");--> statement-breakpoint
CREATE INDEX "rooms_account_activity" ON "rooms" USING btree ("account_id","last_activity");