CREATE TABLE "identity_flows" (
	"id" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_providers" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"logo" text DEFAULT '' NOT NULL,
	"category_id" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"settings" jsonb NOT NULL,
	"rules" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"unmatched" text DEFAULT 'refuse' NOT NULL,
	"update_on_signin" boolean DEFAULT false NOT NULL,
	"max_role" text DEFAULT 'advanced' NOT NULL,
	"secret" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "pending_registrations" ALTER COLUMN "password_hash" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "pending_registrations" ADD COLUMN "uid" text;--> statement-breakpoint
ALTER TABLE "pending_registrations" ADD COLUMN "photo" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "pending_registrations" ADD COLUMN "identity_provider_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "external" jsonb;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "identity_provider_id" text;--> statement-breakpoint
ALTER TABLE "identity_providers" ADD CONSTRAINT "identity_providers_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "identity_flows_expires_idx" ON "identity_flows" USING btree ("expires_at");