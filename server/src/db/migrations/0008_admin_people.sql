ALTER TABLE "users" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "users_category_username_idx" ON "users" USING btree ("category_id","username");--> statement-breakpoint
CREATE INDEX "users_lower_username_idx" ON "users" USING btree (lower("username"));