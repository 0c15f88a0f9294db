-- Ordered by hand: the rooms' (account_id, id) key is made before the reference that names it, and each
-- membership takes its room's last activity before the index that orders a member's rooms by it.
ALTER TABLE "room_members" DROP CONSTRAINT "room_members_room_id_rooms_id_fk";--> statement-breakpoint
DROP INDEX "room_members_account_identity";--> statement-breakpoint
ALTER TABLE "room_members" DROP CONSTRAINT "room_members_room_id_conversation_id_pk";--> statement-breakpoint
ALTER TABLE "room_members" ADD CONSTRAINT "room_members_account_id_room_id_conversation_id_pk" PRIMARY KEY("account_id","room_id","conversation_id");--> statement-breakpoint
CREATE UNIQUE INDEX "rooms_account_id" ON "rooms" USING btree ("account_id","id");--> statement-breakpoint
ALTER TABLE "room_members" ADD CONSTRAINT "room_members_room_fk" FOREIGN KEY ("account_id","room_id") REFERENCES "public"."rooms"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "room_members" ADD COLUMN "last_activity" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
UPDATE "room_members" SET "last_activity" = "rooms"."last_activity" FROM "rooms" WHERE "rooms"."id" = "room_members"."room_id";--> statement-breakpoint
CREATE INDEX "room_members_account_identity_activity" ON "room_members" USING btree ("account_id","conversation_id","last_activity","room_id");
