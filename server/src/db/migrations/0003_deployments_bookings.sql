CREATE TABLE "booking_priorities" (
	"id" text PRIMARY KEY NOT NULL,
	"rule_id" text NOT NULL,
	"name" text NOT NULL,
	"allowed" jsonb NOT NULL,
	"priority" integer NOT NULL,
	"forbid_time" integer DEFAULT 0 NOT NULL,
	"max_time" integer,
	"max_items" integer
);
--> statement-breakpoint
CREATE TABLE "bookings" (
	"id" text PRIMARY KEY NOT NULL,
	"item_type" text NOT NULL,
	"item_id" text NOT NULL,
	"user_id" text NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"units" integer DEFAULT 1 NOT NULL,
	"reservables" jsonb NOT NULL,
	"start" timestamp with time zone NOT NULL,
	"end" timestamp with time zone NOT NULL,
	"plans" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deployments" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"desktop_name" text NOT NULL,
	"user_id" text NOT NULL,
	"category_id" text NOT NULL,
	"group_id" text NOT NULL,
	"template_id" text NOT NULL,
	"co_owners" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"allowed" jsonb NOT NULL,
	"visible" boolean DEFAULT false NOT NULL,
	"user_permissions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"create_dict" jsonb NOT NULL,
	"booking_id" text,
	"status" text DEFAULT 'ready' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reservable_items" (
	"id" text PRIMARY KEY NOT NULL,
	"item_type" text DEFAULT 'gpus' NOT NULL,
	"name" text NOT NULL,
	"brand" text DEFAULT '' NOT NULL,
	"model" text DEFAULT '' NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"subitem_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reservable_plans" (
	"id" text PRIMARY KEY NOT NULL,
	"item_type" text DEFAULT 'gpus' NOT NULL,
	"item_id" text NOT NULL,
	"subitem_id" text NOT NULL,
	"start" timestamp with time zone NOT NULL,
	"end" timestamp with time zone NOT NULL,
	"units" integer NOT NULL,
	"user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reservable_subitems" (
	"id" text PRIMARY KEY NOT NULL,
	"item_type" text DEFAULT 'vgpus' NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"brand" text DEFAULT '' NOT NULL,
	"model" text DEFAULT '' NOT NULL,
	"profile" text NOT NULL,
	"units" integer NOT NULL,
	"priority_id" text DEFAULT '' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"allowed" jsonb DEFAULT '{"roles":false,"categories":false,"groups":false,"users":false}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scheduled_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"run_at" timestamp with time zone NOT NULL,
	"params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"done_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "booking_id" text;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "scheduled_shutdown_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deployments" ADD CONSTRAINT "deployments_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deployments" ADD CONSTRAINT "deployments_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deployments" ADD CONSTRAINT "deployments_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reservable_plans" ADD CONSTRAINT "reservable_plans_item_id_reservable_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "public"."reservable_items"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reservable_plans" ADD CONSTRAINT "reservable_plans_subitem_id_reservable_subitems_id_fk" FOREIGN KEY ("subitem_id") REFERENCES "public"."reservable_subitems"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "bookings_item_idx" ON "bookings" USING btree ("item_type","item_id");--> statement-breakpoint
CREATE INDEX "bookings_range_idx" ON "bookings" USING btree ("start","end");--> statement-breakpoint
CREATE INDEX "deployments_user_idx" ON "deployments" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "reservable_plans_range_idx" ON "reservable_plans" USING btree ("item_id","start","end");--> statement-breakpoint
CREATE INDEX "scheduled_jobs_due_idx" ON "scheduled_jobs" USING btree ("status","run_at");