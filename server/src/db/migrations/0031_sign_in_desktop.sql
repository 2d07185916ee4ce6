ALTER TABLE "groups" ADD COLUMN "open_desktop_at_sign_in" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "sign_in_opens" text;