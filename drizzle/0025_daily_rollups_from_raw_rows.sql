-- The daily roll-ups start from the rows already stored; from here on every write keeps them.
INSERT INTO "review_request_daily_counts" ("account_id", "day", "platform", "status", "reason", "requests", "sent", "clicked")
SELECT "account_id", ("created_at" AT TIME ZONE 'UTC')::date, "platform", "status",
  CASE WHEN "status" = 'skipped' THEN coalesce("reason", 'unknown') ELSE '' END,
  count(*), count("sent_at"), count("clicked_at")
FROM "review_requests"
GROUP BY 1, 2, 3, 4, 5;--> statement-breakpoint
INSERT INTO "funnel_short_link_daily_clicks" ("account_id", "link_id", "day", "clicks", "unique_clicks", "bots")
SELECT "account_id", "link_id", ("clicked_at" AT TIME ZONE 'UTC')::date, count(*),
  count(*) FILTER (WHERE NOT "is_bot" AND NOT "is_repeat"), count(*) FILTER (WHERE "is_bot")
FROM "funnel_short_link_clicks"
GROUP BY 1, 2, 3;
