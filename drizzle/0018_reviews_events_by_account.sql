DROP INDEX "review_requests_event";--> statement-breakpoint
ALTER TABLE "review_webhook_events" ADD COLUMN "trigger" text;--> statement-breakpoint
ALTER TABLE "review_webhook_events" ADD COLUMN "reason_text" text;--> statement-breakpoint
CREATE INDEX "review_requests_account_event" ON "review_requests" USING btree ("account_id","event_id");--> statement-breakpoint
CREATE INDEX "review_webhook_events_account_created" ON "review_webhook_events" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "review_webhook_events_account_trigger" ON "review_webhook_events" USING btree ("account_id","trigger","created_at");--> statement-breakpoint
UPDATE "review_webhook_events" SET "trigger" = "type" WHERE "source" = 'account';--> statement-breakpoint
UPDATE "review_webhook_events" SET "trigger" = 'order_completed'
  WHERE ("source" = 'paymentprovider' AND "type" IN ('charge', 'charge.succeeded', 'payment_intent.succeeded'))
    OR ("source" = 'orderprovider' AND "type" IN ('order.created', 'order.updated'));--> statement-breakpoint
UPDATE "review_webhook_events" AS e SET "account_id" = r."account_id"
  FROM "review_requests" AS r WHERE e."account_id" IS NULL AND r."event_id" = e."id";--> statement-breakpoint
DO $$
BEGIN
  -- Send and follow-up jobs queued before their data named the request's account.
  IF to_regclass('pgboss.job') IS NOT NULL THEN
    UPDATE pgboss.job AS j SET data = j.data || jsonb_build_object('account_id', r."account_id")
      FROM "review_requests" AS r
      WHERE j.name IN ('reviews.send-request', 'reviews.follow-up') AND j.state IN ('created', 'retry')
        AND NOT (j.data ? 'account_id') AND r."id" = j.data ->> 'request_id';
  END IF;
END $$;
