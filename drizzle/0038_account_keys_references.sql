-- A schema that shards by account (issue 45, docs/decisions.md), 2 of 3: every reference between two account-owned
-- tables names the account on both sides, so that a row and the row it references are on the same shard. Added
-- NOT VALID: no scan of the tables here, only a short lock on each pair while the constraint is recorded; checked
-- for new rows from now on, and validated for the old ones by 0039, each in a statement of its own. The references
-- on the id alone stay until 0039 (both hold meanwhile). A reference whose column may be null, and whose row is
-- kept when its parent goes, sets that column alone to null (`SET NULL (column)`, PostgreSQL 15), never the account.
ALTER TABLE "prospect_conversation_members" ADD CONSTRAINT "prospect_conversation_members_conversation_fk" FOREIGN KEY ("account_id","conversation_id") REFERENCES "prospect_conversations"("account_id","id") ON DELETE CASCADE NOT VALID;
--> statement-breakpoint
ALTER TABLE "prospect_conversations" ADD CONSTRAINT "prospect_conversations_contact_fk" FOREIGN KEY ("account_id","contact_id") REFERENCES "contacts"("account_id","id") NOT VALID;
--> statement-breakpoint
ALTER TABLE "funnel_short_link_clicks" ADD CONSTRAINT "funnel_short_link_clicks_link_fk" FOREIGN KEY ("account_id","link_id") REFERENCES "funnel_short_links"("account_id","id") ON DELETE CASCADE NOT VALID;
--> statement-breakpoint
ALTER TABLE "funnel_step_backups" ADD CONSTRAINT "funnel_step_backups_step_fk" FOREIGN KEY ("account_id","step_id") REFERENCES "funnel_steps"("account_id","id") ON DELETE CASCADE NOT VALID;
--> statement-breakpoint
ALTER TABLE "funnel_step_components" ADD CONSTRAINT "funnel_step_components_step_fk" FOREIGN KEY ("account_id","step_id") REFERENCES "funnel_steps"("account_id","id") ON DELETE CASCADE NOT VALID;
--> statement-breakpoint
ALTER TABLE "funnel_steps" ADD CONSTRAINT "funnel_steps_funnel_fk" FOREIGN KEY ("account_id","funnel_id") REFERENCES "funnels"("account_id","id") ON DELETE CASCADE NOT VALID;
--> statement-breakpoint
ALTER TABLE "funnel_tag_links" ADD CONSTRAINT "funnel_tag_links_funnel_fk" FOREIGN KEY ("account_id","funnel_id") REFERENCES "funnels"("account_id","id") ON DELETE CASCADE NOT VALID;
--> statement-breakpoint
ALTER TABLE "funnel_tag_links" ADD CONSTRAINT "funnel_tag_links_tag_fk" FOREIGN KEY ("account_id","tag_id") REFERENCES "funnel_tags"("account_id","id") ON DELETE CASCADE NOT VALID;
--> statement-breakpoint
ALTER TABLE "funnels" ADD CONSTRAINT "funnels_domain_fk" FOREIGN KEY ("account_id","domain_id") REFERENCES "funnel_domains"("account_id","id") ON DELETE SET NULL ("domain_id") NOT VALID;
--> statement-breakpoint
ALTER TABLE "lead_webhook_registrations" ADD CONSTRAINT "lead_webhook_registrations_campaign_fk" FOREIGN KEY ("account_id","campaign_id") REFERENCES "lead_campaigns"("account_id","id") NOT VALID;
--> statement-breakpoint
ALTER TABLE "review_configurations" ADD CONSTRAINT "review_configurations_template_fk" FOREIGN KEY ("account_id","template_id") REFERENCES "review_templates"("account_id","id") NOT VALID;
--> statement-breakpoint
ALTER TABLE "review_sms_messages" ADD CONSTRAINT "review_sms_messages_request_fk" FOREIGN KEY ("account_id","request_id") REFERENCES "review_requests"("account_id","id") NOT VALID;
--> statement-breakpoint
ALTER TABLE "room_member_history" ADD CONSTRAINT "room_member_history_room_fk" FOREIGN KEY ("account_id","room_id") REFERENCES "rooms"("account_id","id") ON DELETE CASCADE NOT VALID;
--> statement-breakpoint
ALTER TABLE "room_messages" ADD CONSTRAINT "room_messages_room_fk" FOREIGN KEY ("account_id","room_id") REFERENCES "rooms"("account_id","id") ON DELETE CASCADE NOT VALID;
--> statement-breakpoint
ALTER TABLE "support_rooms" ADD CONSTRAINT "support_rooms_inbox_fk" FOREIGN KEY ("account_id","inbox_id") REFERENCES "support_inboxes"("account_id","id") ON DELETE SET NULL ("inbox_id") NOT VALID;
