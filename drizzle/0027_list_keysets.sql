DROP INDEX "communications_account_created";--> statement-breakpoint
DROP INDEX "funnel_form_submissions_funnel_time";--> statement-breakpoint
DROP INDEX "leads_campaign_created";--> statement-breakpoint
DROP INDEX "oauth_audit_events_client";--> statement-breakpoint
DROP INDEX "oauth_audit_events_account";--> statement-breakpoint
DROP INDEX "review_requests_account_created";--> statement-breakpoint
DROP INDEX "review_sms_messages_account_created";--> statement-breakpoint
DROP INDEX "review_webhook_events_status_created";--> statement-breakpoint
CREATE INDEX "communications_outgoing_created" ON "communications" USING btree ("created_at","id") WHERE "communications"."type" = 'OUTGOING';--> statement-breakpoint
CREATE INDEX "review_sms_messages_created" ON "review_sms_messages" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "communications_account_created" ON "communications" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "funnel_form_submissions_funnel_time" ON "funnel_form_submissions" USING btree ("account_id","funnel_id","submitted_at","id");--> statement-breakpoint
CREATE INDEX "leads_campaign_created" ON "leads" USING btree ("account_id","campaign_id","created_time","id");--> statement-breakpoint
CREATE INDEX "oauth_audit_events_client" ON "oauth_audit_events" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "oauth_audit_events_account" ON "oauth_audit_events" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "review_requests_account_created" ON "review_requests" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "review_sms_messages_account_created" ON "review_sms_messages" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "review_webhook_events_status_created" ON "review_webhook_events" USING btree ("status","created_at","id");