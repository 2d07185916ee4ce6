CREATE TABLE "desktop_pool_waiters" (
	"pool_id" text NOT NULL,
	"user_id" text NOT NULL,
	"since" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "desktop_pool_waiters_pool_id_user_id_pk" PRIMARY KEY("pool_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "desktop_pools" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"user_id" text NOT NULL,
	"category_id" text NOT NULL,
	"template_id" text NOT NULL,
	"allowed" jsonb NOT NULL,
	"max_desktops" integer NOT NULL,
	"prepared" integer DEFAULT 0 NOT NULL,
	"schedule" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"persistent" boolean DEFAULT false NOT NULL,
	"give_back" jsonb NOT NULL,
	"permissions" jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"prepare_seconds" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "pool_id" text;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "pool_assigned_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "pool_ready_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "desktop_pool_waiters" ADD CONSTRAINT "desktop_pool_waiters_pool_id_desktop_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."desktop_pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "desktop_pool_waiters" ADD CONSTRAINT "desktop_pool_waiters_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "desktop_pools" ADD CONSTRAINT "desktop_pools_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "desktop_pools" ADD CONSTRAINT "desktop_pools_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "desktop_pools_category_idx" ON "desktop_pools" USING btree ("category_id");--> statement-breakpoint
CREATE INDEX "domains_pool_idx" ON "domains" USING btree ("pool_id");