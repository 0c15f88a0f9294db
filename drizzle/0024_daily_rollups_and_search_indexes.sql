CREATE TABLE "funnel_short_link_daily_clicks" (
	"account_id" text NOT NULL,
	"link_id" text NOT NULL,
	"day" date NOT NULL,
	"clicks" integer NOT NULL,
	"unique_clicks" integer NOT NULL,
	"bots" integer NOT NULL,
	CONSTRAINT "funnel_short_link_daily_clicks_pk" PRIMARY KEY("account_id","link_id","day")
);
--> statement-breakpoint
CREATE TABLE "review_request_daily_counts" (
	"account_id" text NOT NULL,
	"day" date NOT NULL,
	"platform" text NOT NULL,
	"status" text NOT NULL,
	"reason" text NOT NULL,
	"requests" integer NOT NULL,
	"sent" integer NOT NULL,
	"clicked" integer NOT NULL,
	CONSTRAINT "review_request_daily_counts_pk" PRIMARY KEY("account_id","day","platform","status","reason")
);
--> statement-breakpoint
DROP INDEX "room_messages_search";--> statement-breakpoint
ALTER TABLE "funnel_short_link_daily_clicks" ADD CONSTRAINT "funnel_short_link_daily_clicks_link_id_funnel_short_links_id_fk" FOREIGN KEY ("link_id") REFERENCES "public"."funnel_short_links"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "contacts_account_search" ON "contacts" USING gin ("account_id","name" gin_trgm_ops,"email" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "communications_account_contacts" ON "communications" USING gin ("account_id","contact_ids","conversation_ids");--> statement-breakpoint
CREATE INDEX "room_messages_account_search" ON "room_messages" USING gin ("account_id","search_vector");