CREATE TABLE "review_sms_send_keys" (
	"account_id" text NOT NULL,
	"key" text NOT NULL,
	"sms_message_id" text NOT NULL,
	"claimed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"recorded_at" timestamp with time zone,
	CONSTRAINT "review_sms_send_keys_pkey" PRIMARY KEY("account_id","key")
);
--> statement-breakpoint
ALTER TABLE "email_send_keys" ADD COLUMN "recorded_at" timestamp with time zone;--> statement-breakpoint
-- Until now a claim's communication_id was set only once the send was recorded.
UPDATE "email_send_keys" SET "recorded_at" = "claimed_at" WHERE "communication_id" IS NOT NULL;
