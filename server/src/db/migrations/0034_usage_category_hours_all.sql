ALTER TABLE "usage_category_hours" DROP CONSTRAINT "usage_category_hours_hour_category_id_pk";--> statement-breakpoint
ALTER TABLE "usage_category_hours" ADD CONSTRAINT "usage_category_hours_category_id_hour_pk" PRIMARY KEY("category_id","hour");--> statement-breakpoint
-- The whole installation's row of the hours already summed (the roll-up keeps it from now on, for the hours it touches).
INSERT INTO "usage_category_hours" ("hour", "category_id", "desktop_seconds", "gpu_booked_seconds", "gpu_used_seconds", "sign_ins")
  SELECT "hour", '*', sum("desktop_seconds"), sum("gpu_booked_seconds"), sum("gpu_used_seconds"), sum("sign_ins")
  FROM "usage_category_hours" GROUP BY "hour"
ON CONFLICT ("category_id", "hour") DO NOTHING;
