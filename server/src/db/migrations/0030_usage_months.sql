CREATE TABLE "usage_category_hours" (
	"hour" timestamp with time zone NOT NULL,
	"category_id" text NOT NULL,
	"desktop_seconds" bigint DEFAULT 0 NOT NULL,
	"gpu_booked_seconds" bigint DEFAULT 0 NOT NULL,
	"gpu_used_seconds" bigint DEFAULT 0 NOT NULL,
	"sign_ins" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_category_hours_hour_category_id_pk" PRIMARY KEY("hour","category_id")
);
--> statement-breakpoint
CREATE TABLE "usage_months" (
	"month" timestamp with time zone NOT NULL,
	"category_id" text NOT NULL,
	"category_name" text NOT NULL,
	"group_id" text NOT NULL,
	"group_name" text NOT NULL,
	"user_id" text NOT NULL,
	"username" text NOT NULL,
	"template_id" text DEFAULT '' NOT NULL,
	"template_name" text DEFAULT '' NOT NULL,
	"deployment_id" text DEFAULT '' NOT NULL,
	"deployment_name" text DEFAULT '' NOT NULL,
	"desktop_id" text DEFAULT '' NOT NULL,
	"desktop_name" text DEFAULT '' NOT NULL,
	"desktop_seconds" bigint DEFAULT 0 NOT NULL,
	"gpu_booked_seconds" bigint DEFAULT 0 NOT NULL,
	"gpu_used_seconds" bigint DEFAULT 0 NOT NULL,
	"sign_ins" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_months_month_user_id_desktop_id_deployment_id_pk" PRIMARY KEY("month","user_id","desktop_id","deployment_id")
);
--> statement-breakpoint
CREATE INDEX "usage_months_category_idx" ON "usage_months" USING btree ("category_id","month");--> statement-breakpoint
CREATE INDEX "usage_hours_key_idx" ON "usage_hours" USING btree ("user_id","desktop_id","deployment_id","hour");