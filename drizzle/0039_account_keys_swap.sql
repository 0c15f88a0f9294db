-- migration: no-transaction
-- squawk-disable-assume-in-transaction
-- A schema that shards by account (issue 45, docs/decisions.md), 3 of 3, outside a transaction: each statement
-- alone, with the runner's lock_timeout and retries, so that no lock is held past its own statement; each is
-- safe to run again.

-- The old rows checked against the references 0038 added: a scan of each child under a lock that lets reads and
-- writes go on (SHARE UPDATE EXCLUSIVE). squawk's prefer-robust-stmts asks a statement outside a transaction to be
-- safe to run again, which VALIDATE CONSTRAINT is (validating a valid constraint does nothing): it is told so on each.
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "prospect_conversation_members" VALIDATE CONSTRAINT "prospect_conversation_members_conversation_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "prospect_conversations" VALIDATE CONSTRAINT "prospect_conversations_contact_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "funnel_short_link_clicks" VALIDATE CONSTRAINT "funnel_short_link_clicks_link_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "funnel_step_backups" VALIDATE CONSTRAINT "funnel_step_backups_step_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "funnel_step_components" VALIDATE CONSTRAINT "funnel_step_components_step_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "funnel_steps" VALIDATE CONSTRAINT "funnel_steps_funnel_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "funnel_tag_links" VALIDATE CONSTRAINT "funnel_tag_links_funnel_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "funnel_tag_links" VALIDATE CONSTRAINT "funnel_tag_links_tag_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "funnels" VALIDATE CONSTRAINT "funnels_domain_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "lead_webhook_registrations" VALIDATE CONSTRAINT "lead_webhook_registrations_campaign_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "review_configurations" VALIDATE CONSTRAINT "review_configurations_template_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "review_sms_messages" VALIDATE CONSTRAINT "review_sms_messages_request_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "room_member_history" VALIDATE CONSTRAINT "room_member_history_room_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "room_messages" VALIDATE CONSTRAINT "room_messages_room_fk";
--> statement-breakpoint
-- squawk-ignore prefer-robust-stmts
ALTER TABLE "support_rooms" VALIDATE CONSTRAINT "support_rooms_inbox_fk";
--> statement-breakpoint
-- The references on the id alone, now doubled by the ones above: they stand on the old primary keys.
ALTER TABLE "prospect_conversation_members" DROP CONSTRAINT IF EXISTS "prospect_conversation_members_conversation_id_prospect_conversa";
--> statement-breakpoint
ALTER TABLE "prospect_conversations" DROP CONSTRAINT IF EXISTS "prospect_conversations_contact_id_contacts_id_fk";
--> statement-breakpoint
ALTER TABLE "funnel_short_link_clicks" DROP CONSTRAINT IF EXISTS "funnel_short_link_clicks_link_id_funnel_short_links_id_fk";
--> statement-breakpoint
ALTER TABLE "funnel_step_backups" DROP CONSTRAINT IF EXISTS "funnel_step_backups_step_id_funnel_steps_id_fk";
--> statement-breakpoint
ALTER TABLE "funnel_step_components" DROP CONSTRAINT IF EXISTS "funnel_step_components_step_id_funnel_steps_id_fk";
--> statement-breakpoint
ALTER TABLE "funnel_steps" DROP CONSTRAINT IF EXISTS "funnel_steps_funnel_id_funnels_id_fk";
--> statement-breakpoint
ALTER TABLE "funnel_tag_links" DROP CONSTRAINT IF EXISTS "funnel_tag_links_funnel_id_funnels_id_fk";
--> statement-breakpoint
ALTER TABLE "funnel_tag_links" DROP CONSTRAINT IF EXISTS "funnel_tag_links_tag_id_funnel_tags_id_fk";
--> statement-breakpoint
ALTER TABLE "funnels" DROP CONSTRAINT IF EXISTS "funnels_domain_id_funnel_domains_id_fk";
--> statement-breakpoint
ALTER TABLE "lead_webhook_registrations" DROP CONSTRAINT IF EXISTS "lead_webhook_registrations_campaign_id_lead_campaigns_id_fk";
--> statement-breakpoint
ALTER TABLE "review_configurations" DROP CONSTRAINT IF EXISTS "review_configurations_template_id_review_templates_id_fk";
--> statement-breakpoint
ALTER TABLE "review_sms_messages" DROP CONSTRAINT IF EXISTS "review_sms_messages_request_id_review_requests_id_fk";
--> statement-breakpoint
ALTER TABLE "room_member_history" DROP CONSTRAINT IF EXISTS "room_member_history_room_id_rooms_id_fk";
--> statement-breakpoint
ALTER TABLE "room_messages" DROP CONSTRAINT IF EXISTS "room_messages_room_id_rooms_id_fk";
--> statement-breakpoint
ALTER TABLE "support_rooms" DROP CONSTRAINT IF EXISTS "support_rooms_inbox_id_support_inboxes_id_fk";
--> statement-breakpoint
-- Each primary key swapped for (account_id, id) in one ALTER TABLE, so that the table is never without one: the
-- unique index of 0037 becomes the key (USING INDEX: no build, no scan; its columns are NOT NULL already), under the
-- name the old key had. The ALTER takes the table's ACCESS EXCLUSIVE lock for a change of the catalog only, waits
-- at most the runner's lock_timeout for it, and is retried alone. In a DO block so that it runs once: once swapped,
-- the index of 0037 bears the key's name, and the block does nothing.
DO $$ BEGIN
  IF to_regclass('"businesses_account_key"') IS NOT NULL THEN
    ALTER TABLE "businesses" DROP CONSTRAINT "businesses_pkey", ADD CONSTRAINT "businesses_pkey" PRIMARY KEY USING INDEX "businesses_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"chat_identities_account_key"') IS NOT NULL THEN
    ALTER TABLE "chat_identities" DROP CONSTRAINT "chat_identities_pkey", ADD CONSTRAINT "chat_identities_pkey" PRIMARY KEY USING INDEX "chat_identities_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"contacts_account_key"') IS NOT NULL THEN
    ALTER TABLE "contacts" DROP CONSTRAINT "contacts_pkey", ADD CONSTRAINT "contacts_pkey" PRIMARY KEY USING INDEX "contacts_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"credit_ledger_account_key"') IS NOT NULL THEN
    ALTER TABLE "credit_ledger" DROP CONSTRAINT "credit_ledger_pkey", ADD CONSTRAINT "credit_ledger_pkey" PRIMARY KEY USING INDEX "credit_ledger_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"instareports_account_key"') IS NOT NULL THEN
    ALTER TABLE "instareports" DROP CONSTRAINT "instareports_pkey", ADD CONSTRAINT "instareports_pkey" PRIMARY KEY USING INDEX "instareports_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"instasites_account_key"') IS NOT NULL THEN
    ALTER TABLE "instasites" DROP CONSTRAINT "instasites_pkey", ADD CONSTRAINT "instasites_pkey" PRIMARY KEY USING INDEX "instasites_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"persons_account_key"') IS NOT NULL THEN
    ALTER TABLE "persons" DROP CONSTRAINT "persons_pkey", ADD CONSTRAINT "persons_pkey" PRIMARY KEY USING INDEX "persons_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"prospect_conversations_account_key"') IS NOT NULL THEN
    ALTER TABLE "prospect_conversations" DROP CONSTRAINT "prospect_conversations_pkey", ADD CONSTRAINT "prospect_conversations_pkey" PRIMARY KEY USING INDEX "prospect_conversations_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"communications_account_id"') IS NOT NULL THEN
    ALTER TABLE "communications" DROP CONSTRAINT "communications_pkey", ADD CONSTRAINT "communications_pkey" PRIMARY KEY USING INDEX "communications_account_id";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"do_not_disturb_entries_account_key"') IS NOT NULL THEN
    ALTER TABLE "do_not_disturb_entries" DROP CONSTRAINT "do_not_disturb_entries_pkey", ADD CONSTRAINT "do_not_disturb_entries_pkey" PRIMARY KEY USING INDEX "do_not_disturb_entries_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"funnel_domains_account_key"') IS NOT NULL THEN
    ALTER TABLE "funnel_domains" DROP CONSTRAINT "funnel_domains_pkey", ADD CONSTRAINT "funnel_domains_pkey" PRIMARY KEY USING INDEX "funnel_domains_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"funnels_account_id"') IS NOT NULL THEN
    ALTER TABLE "funnels" DROP CONSTRAINT "funnels_pkey", ADD CONSTRAINT "funnels_pkey" PRIMARY KEY USING INDEX "funnels_account_id";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"funnel_steps_account_key"') IS NOT NULL THEN
    ALTER TABLE "funnel_steps" DROP CONSTRAINT "funnel_steps_pkey", ADD CONSTRAINT "funnel_steps_pkey" PRIMARY KEY USING INDEX "funnel_steps_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"funnel_step_components_account_key"') IS NOT NULL THEN
    ALTER TABLE "funnel_step_components" DROP CONSTRAINT "funnel_step_components_pkey", ADD CONSTRAINT "funnel_step_components_pkey" PRIMARY KEY USING INDEX "funnel_step_components_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"funnel_step_backups_account_key"') IS NOT NULL THEN
    ALTER TABLE "funnel_step_backups" DROP CONSTRAINT "funnel_step_backups_pkey", ADD CONSTRAINT "funnel_step_backups_pkey" PRIMARY KEY USING INDEX "funnel_step_backups_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"funnel_form_submissions_account_key"') IS NOT NULL THEN
    ALTER TABLE "funnel_form_submissions" DROP CONSTRAINT "funnel_form_submissions_pkey", ADD CONSTRAINT "funnel_form_submissions_pkey" PRIMARY KEY USING INDEX "funnel_form_submissions_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"funnel_short_links_account_id"') IS NOT NULL THEN
    ALTER TABLE "funnel_short_links" DROP CONSTRAINT "funnel_short_links_pkey", ADD CONSTRAINT "funnel_short_links_pkey" PRIMARY KEY USING INDEX "funnel_short_links_account_id";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"funnel_short_link_clicks_account_key"') IS NOT NULL THEN
    ALTER TABLE "funnel_short_link_clicks" DROP CONSTRAINT "funnel_short_link_clicks_pkey", ADD CONSTRAINT "funnel_short_link_clicks_pkey" PRIMARY KEY USING INDEX "funnel_short_link_clicks_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"funnel_tag_links_account_key"') IS NOT NULL THEN
    ALTER TABLE "funnel_tag_links" DROP CONSTRAINT "funnel_tag_links_funnel_id_tag_id_pk", ADD CONSTRAINT "funnel_tag_links_pkey" PRIMARY KEY USING INDEX "funnel_tag_links_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"socialnet_tokens_account_key"') IS NOT NULL THEN
    ALTER TABLE "socialnet_tokens" DROP CONSTRAINT "socialnet_tokens_pkey", ADD CONSTRAINT "socialnet_tokens_pkey" PRIMARY KEY USING INDEX "socialnet_tokens_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"lead_campaigns_account_id"') IS NOT NULL THEN
    ALTER TABLE "lead_campaigns" DROP CONSTRAINT "lead_campaigns_pkey", ADD CONSTRAINT "lead_campaigns_pkey" PRIMARY KEY USING INDEX "lead_campaigns_account_id";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"lead_webhook_registrations_account_key"') IS NOT NULL THEN
    ALTER TABLE "lead_webhook_registrations" DROP CONSTRAINT "lead_webhook_registrations_pkey", ADD CONSTRAINT "lead_webhook_registrations_pkey" PRIMARY KEY USING INDEX "lead_webhook_registrations_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"oauth_codes_account_key"') IS NOT NULL THEN
    ALTER TABLE "oauth_codes" DROP CONSTRAINT "oauth_codes_pkey", ADD CONSTRAINT "oauth_codes_pkey" PRIMARY KEY USING INDEX "oauth_codes_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"oauth_refresh_tokens_account_key"') IS NOT NULL THEN
    ALTER TABLE "oauth_refresh_tokens" DROP CONSTRAINT "oauth_refresh_tokens_pkey", ADD CONSTRAINT "oauth_refresh_tokens_pkey" PRIMARY KEY USING INDEX "oauth_refresh_tokens_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"oauth_webhook_deliveries_account_key"') IS NOT NULL THEN
    ALTER TABLE "oauth_webhook_deliveries" DROP CONSTRAINT "oauth_webhook_deliveries_pkey", ADD CONSTRAINT "oauth_webhook_deliveries_pkey" PRIMARY KEY USING INDEX "oauth_webhook_deliveries_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"review_templates_account_key"') IS NOT NULL THEN
    ALTER TABLE "review_templates" DROP CONSTRAINT "review_templates_pkey", ADD CONSTRAINT "review_templates_pkey" PRIMARY KEY USING INDEX "review_templates_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"review_configurations_account_key"') IS NOT NULL THEN
    ALTER TABLE "review_configurations" DROP CONSTRAINT "review_configurations_pkey", ADD CONSTRAINT "review_configurations_pkey" PRIMARY KEY USING INDEX "review_configurations_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"review_links_account_key"') IS NOT NULL THEN
    ALTER TABLE "review_links" DROP CONSTRAINT "review_links_pkey", ADD CONSTRAINT "review_links_pkey" PRIMARY KEY USING INDEX "review_links_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"review_requests_account_key"') IS NOT NULL THEN
    ALTER TABLE "review_requests" DROP CONSTRAINT "review_requests_pkey", ADD CONSTRAINT "review_requests_pkey" PRIMARY KEY USING INDEX "review_requests_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"review_sms_messages_account_key"') IS NOT NULL THEN
    ALTER TABLE "review_sms_messages" DROP CONSTRAINT "review_sms_messages_pkey", ADD CONSTRAINT "review_sms_messages_pkey" PRIMARY KEY USING INDEX "review_sms_messages_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"review_order_locations_account_key"') IS NOT NULL THEN
    ALTER TABLE "review_order_locations" DROP CONSTRAINT "review_order_locations_pkey", ADD CONSTRAINT "review_order_locations_pkey" PRIMARY KEY USING INDEX "review_order_locations_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"review_sms_opt_outs_account_key"') IS NOT NULL THEN
    ALTER TABLE "review_sms_opt_outs" DROP CONSTRAINT "review_sms_opt_outs_pkey", ADD CONSTRAINT "review_sms_opt_outs_pkey" PRIMARY KEY USING INDEX "review_sms_opt_outs_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"review_refunds_account_key"') IS NOT NULL THEN
    ALTER TABLE "review_refunds" DROP CONSTRAINT "review_refunds_pkey", ADD CONSTRAINT "review_refunds_pkey" PRIMARY KEY USING INDEX "review_refunds_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"rooms_account_id"') IS NOT NULL THEN
    ALTER TABLE "rooms" DROP CONSTRAINT "rooms_pkey", ADD CONSTRAINT "rooms_pkey" PRIMARY KEY USING INDEX "rooms_account_id";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"room_member_history_account_key"') IS NOT NULL THEN
    ALTER TABLE "room_member_history" DROP CONSTRAINT "room_member_history_pkey", ADD CONSTRAINT "room_member_history_pkey" PRIMARY KEY USING INDEX "room_member_history_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"room_messages_account_key"') IS NOT NULL THEN
    ALTER TABLE "room_messages" DROP CONSTRAINT "room_messages_pkey", ADD CONSTRAINT "room_messages_pkey" PRIMARY KEY USING INDEX "room_messages_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"support_inboxes_account_key"') IS NOT NULL THEN
    ALTER TABLE "support_inboxes" DROP CONSTRAINT "support_inboxes_pkey", ADD CONSTRAINT "support_inboxes_pkey" PRIMARY KEY USING INDEX "support_inboxes_account_key";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"support_conversations_account_id"') IS NOT NULL THEN
    ALTER TABLE "support_conversations" DROP CONSTRAINT "support_conversations_pkey", ADD CONSTRAINT "support_conversations_pkey" PRIMARY KEY USING INDEX "support_conversations_account_id";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"support_rooms_account_id"') IS NOT NULL THEN
    ALTER TABLE "support_rooms" DROP CONSTRAINT "support_rooms_pkey", ADD CONSTRAINT "support_rooms_pkey" PRIMARY KEY USING INDEX "support_rooms_account_id";
  END IF;
END $$;
--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('"support_messages_account_key"') IS NOT NULL THEN
    ALTER TABLE "support_messages" DROP CONSTRAINT "support_messages_pkey", ADD CONSTRAINT "support_messages_pkey" PRIMARY KEY USING INDEX "support_messages_account_key";
  END IF;
END $$;
--> statement-breakpoint
-- Indexes whose successor leads with the account (0037), and two that the new primary keys repeat.
DROP INDEX CONCURRENTLY IF EXISTS "funnel_short_link_clicks_link_time";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "funnel_step_backups_step_date";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "funnel_steps_funnel_path";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "funnel_tag_links_tag";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "review_sms_messages_request";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "room_member_history_room";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "room_member_history_one_open_stay";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "room_messages_room_seq";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "contacts_account_id";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "oauth_webhook_deliveries_account";
