CREATE TABLE "usage_hours" (
	"hour" timestamp with time zone NOT NULL,
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
	"desktop_seconds" integer DEFAULT 0 NOT NULL,
	"gpu_booked_seconds" integer DEFAULT 0 NOT NULL,
	"gpu_used_seconds" integer DEFAULT 0 NOT NULL,
	"sign_ins" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_hours_hour_user_id_desktop_id_deployment_id_pk" PRIMARY KEY("hour","user_id","desktop_id","deployment_id")
);
--> statement-breakpoint
CREATE TABLE "usage_intervals" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "usage_intervals_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"desktop_id" text NOT NULL,
	"desktop_name" text NOT NULL,
	"user_id" text NOT NULL,
	"username" text NOT NULL,
	"group_id" text NOT NULL,
	"group_name" text NOT NULL,
	"category_id" text NOT NULL,
	"category_name" text NOT NULL,
	"template_id" text DEFAULT '' NOT NULL,
	"template_name" text DEFAULT '' NOT NULL,
	"deployment_id" text DEFAULT '' NOT NULL,
	"deployment_name" text DEFAULT '' NOT NULL,
	"gpu_profile" text,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "usage_rollups" (
	"name" text PRIMARY KEY NOT NULL,
	"done_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "usage_hours_category_idx" ON "usage_hours" USING btree ("category_id","hour");--> statement-breakpoint
CREATE INDEX "usage_intervals_open_idx" ON "usage_intervals" USING btree ("desktop_id","ended_at");--> statement-breakpoint
CREATE INDEX "usage_intervals_ended_idx" ON "usage_intervals" USING btree ("ended_at");