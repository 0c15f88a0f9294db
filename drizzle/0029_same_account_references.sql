-- Ordered by hand: the (account_id, id) keys are made before the references that name them. The review
-- requests' is checked at commit: an event of an unclaimed location gets its account in the transaction that
-- schedules its request, after the request (webhook-events.service.ts), which drizzle's schema cannot say.
ALTER TABLE "communication_events" DROP CONSTRAINT "communication_events_communication_id_communications_id_fk";--> statement-breakpoint
ALTER TABLE "funnel_form_submissions" DROP CONSTRAINT "funnel_form_submissions_funnel_id_funnels_id_fk";--> statement-breakpoint
ALTER TABLE "funnel_short_link_daily_clicks" DROP CONSTRAINT "funnel_short_link_daily_clicks_link_id_funnel_short_links_id_fk";--> statement-breakpoint
ALTER TABLE "funnel_short_links" DROP CONSTRAINT "funnel_short_links_funnel_id_funnels_id_fk";--> statement-breakpoint
ALTER TABLE "leads" DROP CONSTRAINT "leads_campaign_id_lead_campaigns_id_fk";--> statement-breakpoint
ALTER TABLE "review_requests" DROP CONSTRAINT "review_requests_event_id_review_webhook_events_id_fk";--> statement-breakpoint
ALTER TABLE "support_messages" DROP CONSTRAINT "support_messages_room_id_support_rooms_id_fk";--> statement-breakpoint
ALTER TABLE "support_rooms" DROP CONSTRAINT "support_rooms_conversation_id_support_conversations_id_fk";--> statement-breakpoint
CREATE UNIQUE INDEX "communications_account_id" ON "communications" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "funnel_short_links_account_id" ON "funnel_short_links" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "funnels_account_id" ON "funnels" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "lead_campaigns_account_id" ON "lead_campaigns" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "review_webhook_events_account_id" ON "review_webhook_events" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "support_conversations_account_id" ON "support_conversations" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "support_rooms_account_id" ON "support_rooms" USING btree ("account_id","id");--> statement-breakpoint
ALTER TABLE "communication_events" ADD CONSTRAINT "communication_events_communication_fk" FOREIGN KEY ("account_id","communication_id") REFERENCES "public"."communications"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_form_submissions" ADD CONSTRAINT "funnel_form_submissions_funnel_fk" FOREIGN KEY ("account_id","funnel_id") REFERENCES "public"."funnels"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_short_link_daily_clicks" ADD CONSTRAINT "funnel_short_link_daily_clicks_link_fk" FOREIGN KEY ("account_id","link_id") REFERENCES "public"."funnel_short_links"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_short_links" ADD CONSTRAINT "funnel_short_links_funnel_fk" FOREIGN KEY ("account_id","funnel_id") REFERENCES "public"."funnels"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "leads" ADD CONSTRAINT "leads_campaign_fk" FOREIGN KEY ("account_id","campaign_id") REFERENCES "public"."lead_campaigns"("account_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_requests" ADD CONSTRAINT "review_requests_event_fk" FOREIGN KEY ("account_id","event_id") REFERENCES "public"."review_webhook_events"("account_id","id") ON DELETE no action ON UPDATE no action DEFERRABLE INITIALLY DEFERRED;--> statement-breakpoint
ALTER TABLE "support_messages" ADD CONSTRAINT "support_messages_room_fk" FOREIGN KEY ("account_id","room_id") REFERENCES "public"."support_rooms"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "support_rooms" ADD CONSTRAINT "support_rooms_conversation_fk" FOREIGN KEY ("account_id","conversation_id") REFERENCES "public"."support_conversations"("account_id","id") ON DELETE cascade ON UPDATE no action;
