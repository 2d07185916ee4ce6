CREATE TABLE "viewer_connections" (
	"id" text PRIMARY KEY NOT NULL,
	"desktop_id" text NOT NULL,
	"holder" text NOT NULL,
	"opened_at" timestamp with time zone NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "viewer_connections" ADD CONSTRAINT "viewer_connections_desktop_id_domains_id_fk" FOREIGN KEY ("desktop_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "viewer_connections_desktop_idx" ON "viewer_connections" USING btree ("desktop_id");