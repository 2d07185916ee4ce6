ALTER TABLE "domains" ALTER COLUMN "accessed_at" SET DEFAULT now();--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "admin_secret_hash" text;--> statement-breakpoint
UPDATE "domains" SET "accessed_at" = "created_at" WHERE "accessed_at" IS NULL;
