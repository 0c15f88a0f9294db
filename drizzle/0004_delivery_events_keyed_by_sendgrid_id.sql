ALTER TABLE "communication_events" DROP CONSTRAINT "communication_events_id_format";--> statement-breakpoint
DROP INDEX "communication_events_account_sg_event";--> statement-breakpoint
ALTER TABLE "communication_events" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "communication_events" ADD CONSTRAINT "communication_events_pkey" PRIMARY KEY("account_id","sg_event_id");--> statement-breakpoint
ALTER TABLE "communications" DROP COLUMN "delivery_status";--> statement-breakpoint
ALTER TABLE "communications" DROP COLUMN "delivery_status_at";
