CREATE TABLE "funnel_domains" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"ssl_enabled" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "funnel_domains_id_format" CHECK ("funnel_domains"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "funnel_form_submissions" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"funnel_id" text NOT NULL,
	"step_id" text NOT NULL,
	"form_id" text NOT NULL,
	"fields" jsonb NOT NULL,
	"visitor_id" text,
	"ip_address" text,
	"user_agent" text,
	"contact_id" text,
	"submitted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "funnel_form_submissions_id_format" CHECK ("funnel_form_submissions"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "funnel_short_link_clicks" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"link_id" text NOT NULL,
	"clicked_at" timestamp with time zone DEFAULT now() NOT NULL,
	"referrer" text,
	"user_agent" text,
	"visitor_hash" text NOT NULL,
	"is_bot" boolean NOT NULL,
	"is_repeat" boolean NOT NULL,
	CONSTRAINT "funnel_short_link_clicks_id_format" CHECK ("funnel_short_link_clicks"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "funnel_short_links" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"funnel_id" text NOT NULL,
	"code" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "funnel_short_links_id_format" CHECK ("funnel_short_links"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "funnel_short_links_code_format" CHECK ("funnel_short_links"."code" ~ '^[0-9A-Za-z]{6}$')
);
--> statement-breakpoint
CREATE TABLE "funnel_step_backups" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"step_id" text NOT NULL,
	"funnel_id" text NOT NULL,
	"backup_date" timestamp with time zone DEFAULT now() NOT NULL,
	"description" text NOT NULL,
	"components_checksum" text NOT NULL,
	"components" jsonb NOT NULL,
	CONSTRAINT "funnel_step_backups_id_format" CHECK ("funnel_step_backups"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "funnel_step_components" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"step_id" text NOT NULL,
	"funnel_id" text NOT NULL,
	"components" jsonb NOT NULL,
	"checksum" text,
	"saved_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "funnel_step_components_id_format" CHECK ("funnel_step_components"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "funnel_steps" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"funnel_id" text NOT NULL,
	"name" text NOT NULL,
	"path" text NOT NULL,
	"type" text DEFAULT 'page' NOT NULL,
	"order" integer NOT NULL,
	"html" text,
	"seo" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tracking_code" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"css" text,
	"external_fonts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"checksum" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "funnel_steps_id_format" CHECK ("funnel_steps"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "funnel_steps_type_valid" CHECK ("funnel_steps"."type" in ('page', 'redirect'))
);
--> statement-breakpoint
CREATE TABLE "funnel_tag_links" (
	"account_id" text NOT NULL,
	"funnel_id" text NOT NULL,
	"tag_id" text NOT NULL,
	CONSTRAINT "funnel_tag_links_funnel_id_tag_id_pk" PRIMARY KEY("funnel_id","tag_id")
);
--> statement-breakpoint
CREATE TABLE "funnel_tags" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "funnel_tags_id_format" CHECK ("funnel_tags"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "funnels" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"domain_id" text,
	"base_path" text NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"favicon" text,
	"header_tracking_code" text,
	"footer_tracking_code" text,
	"live_chat_widget" jsonb,
	"category" text,
	"deleted" boolean DEFAULT false NOT NULL,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" text,
	CONSTRAINT "funnels_id_format" CHECK ("funnels"."id" ~ '^[0-9a-f]{24}$'),
	CONSTRAINT "funnels_status_valid" CHECK ("funnels"."status" in ('active', 'inactive', 'draft'))
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "permissions" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "funnel_form_submissions" ADD CONSTRAINT "funnel_form_submissions_funnel_id_funnels_id_fk" FOREIGN KEY ("funnel_id") REFERENCES "public"."funnels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_short_link_clicks" ADD CONSTRAINT "funnel_short_link_clicks_link_id_funnel_short_links_id_fk" FOREIGN KEY ("link_id") REFERENCES "public"."funnel_short_links"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_short_links" ADD CONSTRAINT "funnel_short_links_funnel_id_funnels_id_fk" FOREIGN KEY ("funnel_id") REFERENCES "public"."funnels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_step_backups" ADD CONSTRAINT "funnel_step_backups_step_id_funnel_steps_id_fk" FOREIGN KEY ("step_id") REFERENCES "public"."funnel_steps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_step_components" ADD CONSTRAINT "funnel_step_components_step_id_funnel_steps_id_fk" FOREIGN KEY ("step_id") REFERENCES "public"."funnel_steps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_steps" ADD CONSTRAINT "funnel_steps_funnel_id_funnels_id_fk" FOREIGN KEY ("funnel_id") REFERENCES "public"."funnels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_tag_links" ADD CONSTRAINT "funnel_tag_links_funnel_id_funnels_id_fk" FOREIGN KEY ("funnel_id") REFERENCES "public"."funnels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnel_tag_links" ADD CONSTRAINT "funnel_tag_links_tag_id_funnel_tags_id_fk" FOREIGN KEY ("tag_id") REFERENCES "public"."funnel_tags"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funnels" ADD CONSTRAINT "funnels_domain_id_funnel_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."funnel_domains"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "funnel_domains_name_unique" ON "funnel_domains" USING btree (lower("name"));--> statement-breakpoint
CREATE INDEX "funnel_domains_account" ON "funnel_domains" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "funnel_form_submissions_funnel_time" ON "funnel_form_submissions" USING btree ("account_id","funnel_id","submitted_at");--> statement-breakpoint
CREATE INDEX "funnel_short_link_clicks_link_time" ON "funnel_short_link_clicks" USING btree ("link_id","clicked_at");--> statement-breakpoint
CREATE UNIQUE INDEX "funnel_short_links_code" ON "funnel_short_links" USING btree ("code");--> statement-breakpoint
CREATE INDEX "funnel_short_links_funnel" ON "funnel_short_links" USING btree ("account_id","funnel_id");--> statement-breakpoint
CREATE INDEX "funnel_step_backups_step_date" ON "funnel_step_backups" USING btree ("step_id","backup_date");--> statement-breakpoint
CREATE UNIQUE INDEX "funnel_step_components_step" ON "funnel_step_components" USING btree ("step_id");--> statement-breakpoint
CREATE UNIQUE INDEX "funnel_steps_funnel_path" ON "funnel_steps" USING btree ("funnel_id","path");--> statement-breakpoint
CREATE INDEX "funnel_steps_funnel_order" ON "funnel_steps" USING btree ("funnel_id","order");--> statement-breakpoint
CREATE INDEX "funnel_tag_links_tag" ON "funnel_tag_links" USING btree ("tag_id");--> statement-breakpoint
CREATE UNIQUE INDEX "funnel_tags_account_name" ON "funnel_tags" USING btree ("account_id",lower("name"));--> statement-breakpoint
CREATE UNIQUE INDEX "funnels_domain_base_path" ON "funnels" USING btree ("domain_id","base_path") WHERE not "funnels"."deleted" and "funnels"."domain_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "funnels_default_host_base_path" ON "funnels" USING btree ("account_id","base_path") WHERE not "funnels"."deleted" and "funnels"."domain_id" is null;--> statement-breakpoint
CREATE INDEX "funnels_account_updated" ON "funnels" USING btree ("account_id","updated_at");