CREATE TABLE "domain_disks" (
	"domain_id" text NOT NULL,
	"storage_id" text NOT NULL,
	"position" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "domain_disks_domain_id_storage_id_pk" PRIMARY KEY("domain_id","storage_id")
);
--> statement-breakpoint
CREATE TABLE "domains" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"user_id" text NOT NULL,
	"category_id" text NOT NULL,
	"group_id" text NOT NULL,
	"status" text NOT NULL,
	"persistent" boolean DEFAULT true NOT NULL,
	"template_id" text,
	"hardware" jsonb NOT NULL,
	"guest_properties" jsonb NOT NULL,
	"image" jsonb NOT NULL,
	"icon" text DEFAULT 'fa-desktop' NOT NULL,
	"allowed" jsonb DEFAULT '{"roles":false,"categories":false,"groups":false,"users":false}'::jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"server" boolean DEFAULT false NOT NULL,
	"tag" text,
	"tag_visible" boolean DEFAULT true NOT NULL,
	"jumper_url" text,
	"guest_ip" text,
	"started_at" timestamp with time zone,
	"current_action" text,
	"accessed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "storage" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"kind" text NOT NULL,
	"path" text NOT NULL,
	"parent_id" text,
	"format" text DEFAULT 'qcow2' NOT NULL,
	"status" text DEFAULT 'ready' NOT NULL,
	"actual_size" bigint DEFAULT 0 NOT NULL,
	"virtual_size" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "viewer_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"desktop_id" text NOT NULL,
	"user_id" text,
	"protocol" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "domain_disks" ADD CONSTRAINT "domain_disks_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domain_disks" ADD CONSTRAINT "domain_disks_storage_id_storage_id_fk" FOREIGN KEY ("storage_id") REFERENCES "public"."storage"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage" ADD CONSTRAINT "storage_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "viewer_tokens" ADD CONSTRAINT "viewer_tokens_desktop_id_domains_id_fk" FOREIGN KEY ("desktop_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "domains_user_idx" ON "domains" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "domains_kind_idx" ON "domains" USING btree ("kind");--> statement-breakpoint
CREATE INDEX "domains_template_idx" ON "domains" USING btree ("template_id");--> statement-breakpoint
CREATE UNIQUE INDEX "domains_jumper_idx" ON "domains" USING btree ("jumper_url");--> statement-breakpoint
CREATE INDEX "storage_user_idx" ON "storage" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "storage_parent_idx" ON "storage" USING btree ("parent_id");