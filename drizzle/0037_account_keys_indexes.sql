-- migration: no-transaction
-- squawk-disable-assume-in-transaction
-- A schema that shards by account (issue 45, docs/decisions.md), 1 of 3: the indexes the new keys stand on, built
-- CONCURRENTLY on tables that exist, outside a transaction, each statement alone and safe to run again (the
-- runner drops an INVALID index left by a failed build before building it again). Nothing needs them yet:
-- 0038 adds the references that stand on them, 0039 makes the primary keys of them.

-- The primary key every account-owned table gets in 0039, (account_id, id) (funnel_tag_links: account, funnel,
-- tag). Tables that already had a unique (account_id, id) index, for same-account references, use that one.
-- funnel_tags' stays a unique index in this release (the previous release's GROUP BY needs its key on id alone).
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "businesses_account_key" ON "businesses" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "chat_identities_account_key" ON "chat_identities" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "contacts_account_key" ON "contacts" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "credit_ledger_account_key" ON "credit_ledger" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "instareports_account_key" ON "instareports" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "instasites_account_key" ON "instasites" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "persons_account_key" ON "persons" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "prospect_conversations_account_key" ON "prospect_conversations" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "do_not_disturb_entries_account_key" ON "do_not_disturb_entries" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_domains_account_key" ON "funnel_domains" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_steps_account_key" ON "funnel_steps" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_step_components_account_key" ON "funnel_step_components" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_step_backups_account_key" ON "funnel_step_backups" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_form_submissions_account_key" ON "funnel_form_submissions" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_short_link_clicks_account_key" ON "funnel_short_link_clicks" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_tag_links_account_key" ON "funnel_tag_links" USING btree ("account_id","funnel_id","tag_id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "socialnet_tokens_account_key" ON "socialnet_tokens" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "lead_webhook_registrations_account_key" ON "lead_webhook_registrations" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "oauth_codes_account_key" ON "oauth_codes" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "oauth_refresh_tokens_account_key" ON "oauth_refresh_tokens" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "oauth_webhook_deliveries_account_key" ON "oauth_webhook_deliveries" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "review_templates_account_key" ON "review_templates" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "review_configurations_account_key" ON "review_configurations" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "review_links_account_key" ON "review_links" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "review_requests_account_key" ON "review_requests" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "review_sms_messages_account_key" ON "review_sms_messages" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "review_order_locations_account_key" ON "review_order_locations" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "review_sms_opt_outs_account_key" ON "review_sms_opt_outs" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "review_refunds_account_key" ON "review_refunds" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "room_member_history_account_key" ON "room_member_history" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "room_messages_account_key" ON "room_messages" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "support_inboxes_account_key" ON "support_inboxes" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "support_messages_account_key" ON "support_messages" USING btree ("account_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_tags_account_key" ON "funnel_tags" USING btree ("account_id","id");
--> statement-breakpoint
-- Keys and lookups that now lead with the account: their predecessors without it go in 0039 (or, for the two
-- that the previous release's code names, in the next release's migration).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "funnel_short_link_clicks_account_link_time" ON "funnel_short_link_clicks" USING btree ("account_id","link_id","clicked_at");
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "funnel_step_backups_account_step_date" ON "funnel_step_backups" USING btree ("account_id","step_id","backup_date");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_step_components_account_step" ON "funnel_step_components" USING btree ("account_id","step_id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnel_steps_account_funnel_path" ON "funnel_steps" USING btree ("account_id","funnel_id","path");
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "funnel_tag_links_account_tag" ON "funnel_tag_links" USING btree ("account_id","tag_id");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "funnels_account_domain_base_path" ON "funnels" USING btree ("account_id","domain_id","base_path") WHERE not "funnels"."deleted" and "funnels"."domain_id" is not null;
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "review_sms_messages_account_request" ON "review_sms_messages" USING btree ("account_id","request_id");
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "room_member_history_account_room" ON "room_member_history" USING btree ("account_id","room_id","joined_at");
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "room_member_history_account_open_stay" ON "room_member_history" USING btree ("account_id","room_id","conversation_id") WHERE "room_member_history"."left_at" is null;
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "room_messages_account_room_seq" ON "room_messages" USING btree ("account_id","room_id","seq");
--> statement-breakpoint
-- Funnels and steps are found by their id alone before their account is known (a public preview, a published
-- page's form post, the edge worker's page and HTML sync): a plain index on the id, once the key is (account_id, id).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "funnels_id" ON "funnels" USING btree ("id");
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "funnel_steps_id" ON "funnel_steps" USING btree ("id");
--> statement-breakpoint
-- Retention deletes old rows across accounts, found along the id (ids start with their time: platform/jobs/
-- retention.ts): the tables whose key was (id) and that retention empties keep a plain index on it.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "funnel_short_link_clicks_id" ON "funnel_short_link_clicks" USING btree ("id");
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "oauth_codes_id" ON "oauth_codes" USING btree ("id");
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "oauth_webhook_deliveries_id" ON "oauth_webhook_deliveries" USING btree ("id");
