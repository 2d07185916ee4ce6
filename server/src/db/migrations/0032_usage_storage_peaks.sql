CREATE TABLE "usage_peak_hours" (
	"hour" timestamp with time zone NOT NULL,
	"category_id" text NOT NULL,
	"desktops" integer NOT NULL,
	"at" timestamp with time zone NOT NULL,
	CONSTRAINT "usage_peak_hours_category_id_hour_pk" PRIMARY KEY("category_id","hour")
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
	CONSTRAINT "usage_storage_hours_category_id_hour_pk" PRIMARY KEY("category_id","hour")
);
--> statement-breakpoint
CREATE INDEX "usage_storage_days_category_idx" ON "usage_storage_days" USING btree ("category_id","day");--> statement-breakpoint
-- Before the unique index: a desktop with more than one open interval keeps its earliest open (the others close at their start).
UPDATE "usage_intervals" AS i SET "ended_at" = i."started_at" WHERE i."ended_at" IS NULL AND EXISTS (SELECT 1 FROM "usage_intervals" o WHERE o."desktop_id" = i."desktop_id" AND o."ended_at" IS NULL AND (o."started_at", o."id") < (i."started_at", i."id"));--> statement-breakpoint
CREATE UNIQUE INDEX "usage_intervals_one_open_idx" ON "usage_intervals" USING btree ("desktop_id") WHERE ended_at IS NULL;--> statement-breakpoint
-- The peaks of the hours already recorded (the roll-up computes them from now on, for the hours it touches):
-- the same sweep as modules/usage/rollup.ts (rollupPeaks) over every interval, up to now.
WITH b AS (SELECT date_trunc('hour', min(started_at), 'UTC') AS "from", now() AS "at" FROM "usage_intervals"),
  iv AS (
    SELECT i.category_id, greatest(i.started_at, b."from") AS s, least(coalesce(i.ended_at, b."at"), b."at") AS e
    FROM "usage_intervals" i, b WHERE b."from" IS NOT NULL AND i.started_at < b."at"),
  ev AS (
    SELECT category_id, s AS t, 1 AS d FROM iv WHERE e > s
    UNION ALL SELECT category_id, e, -1 FROM iv WHERE e > s
    UNION ALL SELECT c.category_id, h.hour, 0 FROM (SELECT DISTINCT category_id FROM iv) c
      CROSS JOIN b CROSS JOIN LATERAL generate_series(b."from", b."at", interval '1 hour') AS h(hour)),
  scoped AS (SELECT category_id, t, d FROM ev UNION ALL SELECT '*', t, d FROM ev),
  run AS (SELECT category_id, t, sum(d) OVER (PARTITION BY category_id ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS n FROM scoped)
INSERT INTO "usage_peak_hours" ("hour", "category_id", "desktops", "at")
  SELECT DISTINCT ON (date_trunc('hour', t, 'UTC'), category_id) date_trunc('hour', t, 'UTC'), category_id, n::int, date_trunc('minute', t, 'UTC')
  FROM run, b WHERE t < b."at" AND n > 0
  ORDER BY date_trunc('hour', t, 'UTC'), category_id, n DESC, t
ON CONFLICT ("hour", "category_id") DO NOTHING;
