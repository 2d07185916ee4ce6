CREATE TABLE "bastion_targets" (
	"id" text PRIMARY KEY NOT NULL,
	"desktop_id" text NOT NULL,
	"user_id" text NOT NULL,
	"http_enabled" boolean DEFAULT false NOT NULL,
	"http_port" integer DEFAULT 80 NOT NULL,
	"https_port" integer DEFAULT 443 NOT NULL,
	"ssh_enabled" boolean DEFAULT false NOT NULL,
	"ssh_port" integer DEFAULT 22 NOT NULL,
	"authorized_keys" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "user_vpn" (
	"user_id" text PRIMARY KEY NOT NULL,
	"address" text NOT NULL,
	"private_key" text NOT NULL,
	"public_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "bastion_targets" ADD CONSTRAINT "bastion_targets_desktop_id_domains_id_fk" FOREIGN KEY ("desktop_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bastion_targets" ADD CONSTRAINT "bastion_targets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_vpn" ADD CONSTRAINT "user_vpn_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "bastion_targets_desktop_idx" ON "bastion_targets" USING btree ("desktop_id");--> statement-breakpoint
CREATE INDEX "bastion_targets_user_idx" ON "bastion_targets" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "user_vpn_address_idx" ON "user_vpn" USING btree ("address");