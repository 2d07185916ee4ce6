CREATE TABLE "user_migrations" (
	"origin_user_id" text PRIMARY KEY NOT NULL,
	"code_hash" text NOT NULL,
	"status" text DEFAULT 'exported' NOT NULL,
	"target_user_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_pending" text;--> statement-breakpoint
ALTER TABLE "user_migrations" ADD CONSTRAINT "user_migrations_origin_user_id_users_id_fk" FOREIGN KEY ("origin_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "user_migrations_code_idx" ON "user_migrations" USING btree ("code_hash");