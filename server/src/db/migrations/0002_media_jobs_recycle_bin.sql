CREATE TABLE "domain_media" (
	"domain_id" text NOT NULL,
	"media_id" text NOT NULL,
	"kind" text NOT NULL,
	CONSTRAINT "domain_media_domain_id_media_id_pk" PRIMARY KEY("domain_id","media_id")
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"user_id" text NOT NULL,
	"target_id" text NOT NULL,
	"progress" integer DEFAULT 0 NOT NULL,
	"params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"url" text NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"user_id" text NOT NULL,
	"category_id" text NOT NULL,
	"group_id" text NOT NULL,
	"allowed" jsonb DEFAULT '{"roles":false,"categories":false,"groups":false,"users":false}'::jsonb NOT NULL,
	"path" text,
	"size" bigint DEFAULT 0 NOT NULL,
	"progress" jsonb,
	"detail" text DEFAULT '' NOT NULL,
	"icon" text DEFAULT 'fa-circle-o' NOT NULL,
	"accessed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "recycle_bin" (
	"id" text PRIMARY KEY NOT NULL,
	"item_type" text NOT NULL,
	"item_name" text NOT NULL,
	"status" text DEFAULT 'recycled' NOT NULL,
	"owner_id" text NOT NULL,
	"owner_category_id" text NOT NULL,
	"owner_group_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"agent_name" text NOT NULL,
	"size" bigint DEFAULT 0 NOT NULL,
	"items" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"accessed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "duplicate_of_id" text;--> statement-breakpoint
ALTER TABLE "domain_media" ADD CONSTRAINT "domain_media_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domain_media" ADD CONSTRAINT "domain_media_media_id_media_id_fk" FOREIGN KEY ("media_id") REFERENCES "public"."media"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "jobs_target_idx" ON "jobs" USING btree ("target_id");--> statement-breakpoint
CREATE INDEX "jobs_status_idx" ON "jobs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "media_user_idx" ON "media" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "recycle_bin_owner_idx" ON "recycle_bin" USING btree ("owner_id");--> statement-breakpoint
CREATE INDEX "recycle_bin_status_idx" ON "recycle_bin" USING btree ("status");