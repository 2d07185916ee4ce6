CREATE TABLE "start_queue" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"desktop_id" text NOT NULL,
	"lane" text NOT NULL,
	"enqueued_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"runner_pid" integer,
	"runner_since" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "start_queue" ADD CONSTRAINT "start_queue_desktop_id_domains_id_fk" FOREIGN KEY ("desktop_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "start_queue_desktop_idx" ON "start_queue" USING btree ("desktop_id");--> statement-breakpoint
CREATE INDEX "start_queue_lane_idx" ON "start_queue" USING btree ("lane","id");