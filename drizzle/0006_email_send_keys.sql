CREATE TABLE "email_send_keys" (
	"account_id" text NOT NULL,
	"key" text NOT NULL,
	"communication_id" text,
	"claimed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "email_send_keys_pkey" PRIMARY KEY("account_id","key")
);
