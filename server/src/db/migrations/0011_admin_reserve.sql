CREATE TABLE "shutdown_policies" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"target_id" text NOT NULL,
	"category_id" text,
	"max_time" integer,
	"idle_time" integer,
	"warnings" jsonb DEFAULT '[5,1]'::jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "shutdown_policies_target_idx" ON "shutdown_policies" USING btree ("kind","target_id");--> statement-breakpoint
CREATE INDEX "shutdown_policies_category_idx" ON "shutdown_policies" USING btree ("category_id");--> statement-breakpoint
-- The default booking rules (reference §6.2) are written once, here, and are the admin's to edit or
-- delete from then on (they were re-inserted at every start before, undoing a deletion).
INSERT INTO "booking_priorities" ("id", "rule_id", "name", "allowed", "priority", "forbid_time", "max_time", "max_items") VALUES
	('default', 'default', 'default', '{"roles":[],"categories":false,"groups":false,"users":false}'::jsonb, 1, 0, 60, 1),
	('default-admins', 'default', 'default admins', '{"roles":["admin"],"categories":false,"groups":false,"users":false}'::jsonb, 999, 1, 999999, 999999)
ON CONFLICT ("id") DO NOTHING;
