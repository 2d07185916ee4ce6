CREATE TABLE "usage_days" (
	"day" timestamp with time zone NOT NULL,
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
	CONSTRAINT "usage_days_day_user_id_desktop_id_deployment_id_pk" PRIMARY KEY("day","user_id","desktop_id","deployment_id")
);
--> statement-breakpoint
CREATE INDEX "usage_days_category_idx" ON "usage_days" USING btree ("category_id","day");--> statement-breakpoint
-- The days of the hours already recorded (the roll-up keeps them from now on, for the days it touches).
INSERT INTO "usage_days" ("day", "category_id", "category_name", "group_id", "group_name", "user_id", "username", "template_id", "template_name",
    "deployment_id", "deployment_name", "desktop_id", "desktop_name", "desktop_seconds", "gpu_booked_seconds", "gpu_used_seconds", "sign_ins")
  SELECT date_trunc('day', "hour", 'UTC'), max("category_id"), max("category_name"), max("group_id"), max("group_name"), "user_id", max("username"),
    max("template_id"), max("template_name"), "deployment_id", max("deployment_name"), "desktop_id", max("desktop_name"),
    sum("desktop_seconds"), sum("gpu_booked_seconds"), sum("gpu_used_seconds"), sum("sign_ins")
  FROM "usage_hours"
  GROUP BY date_trunc('day', "hour", 'UTC'), "user_id", "desktop_id", "deployment_id"
ON CONFLICT ("day", "user_id", "desktop_id", "deployment_id") DO NOTHING;
