-- What an import moved and when (the target's /migration page shows it), and the target looked up: an
-- account takes one migration only.
ALTER TABLE "user_migrations" ADD COLUMN "migrated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "user_migrations" ADD COLUMN "moved" jsonb;--> statement-breakpoint
CREATE INDEX "user_migrations_target_idx" ON "user_migrations" USING btree ("target_user_id");