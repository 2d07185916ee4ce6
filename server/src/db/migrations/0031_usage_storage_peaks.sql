CREATE TABLE "usage_peak_hours" (
	"hour" timestamp with time zone NOT NULL,
	"category_id" text NOT NULL,
	"desktops" integer NOT NULL,
	"at" timestamp with time zone NOT NULL,
	CONSTRAINT "usage_peak_hours_hour_category_id_pk" PRIMARY KEY("hour","category_id")
);
--> statement-breakpoint
CREATE TABLE "usage_storage_days" (
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
	"bytes" bigint NOT NULL,
	CONSTRAINT "usage_storage_days_day_user_id_template_id_deployment_id_pk" PRIMARY KEY("day","user_id","template_id","deployment_id")
);
--> statement-breakpoint
CREATE TABLE "usage_storage_hours" (
	"hour" timestamp with time zone NOT NULL,
	"category_id" text NOT NULL,
	"bytes" bigint NOT NULL,
	CONSTRAINT "usage_storage_hours_hour_category_id_pk" PRIMARY KEY("hour","category_id")
);
--> statement-breakpoint
CREATE INDEX "usage_storage_days_category_idx" ON "usage_storage_days" USING btree ("category_id","day");--> statement-breakpoint
-- Before the unique index: a desktop with more than one open interval keeps its earliest open (the others close at their start).
UPDATE "usage_intervals" AS i SET "ended_at" = i."started_at" WHERE i."ended_at" IS NULL AND EXISTS (SELECT 1 FROM "usage_intervals" o WHERE o."desktop_id" = i."desktop_id" AND o."ended_at" IS NULL AND (o."started_at", o."id") < (i."started_at", i."id"));--> statement-breakpoint
CREATE UNIQUE INDEX "usage_intervals_one_open_idx" ON "usage_intervals" USING btree ("desktop_id") WHERE ended_at IS NULL;