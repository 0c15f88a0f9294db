CREATE TABLE "oauth_apps" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"client_secret_hash" text NOT NULL,
	"redirect_uris" text[] NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"active" boolean DEFAULT false NOT NULL,
	"is_public" boolean DEFAULT false NOT NULL,
	"created_by" text,
	"webhook_url" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oauth_apps_id_format" CHECK ("oauth_apps"."id" ~ '^[0-9a-f]{24}$')
);
--> statement-breakpoint
CREATE TABLE "oauth_scopes" (
	"scope" text PRIMARY KEY NOT NULL,
	"description" text NOT NULL,
	"category" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "oauth_apps_created" ON "oauth_apps" USING btree ("created_at");--> statement-breakpoint
INSERT INTO "oauth_scopes" ("scope", "description", "category") VALUES
	('crm.contacts.read', 'See your contacts', 'CRM'),
	('crm.contacts.write', 'Create and change your contacts', 'CRM'),
	('crm.deals.read', 'See your deals', 'CRM'),
	('crm.deals.write', 'Create and change your deals', 'CRM'),
	('billing.read', 'See your billing details and invoices', 'Billing'),
	('projects.tasks.read', 'See your project tasks', 'Projects'),
	('analytics.read', 'See your analytics and reports', 'Analytics'),
	('sites.read', 'See your sites and funnels', 'Sites'),
	('sites.write', 'Create and change your sites and funnels', 'Sites')
ON CONFLICT ("scope") DO NOTHING;
