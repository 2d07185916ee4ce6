-- Many hosts (issue 25): a host's URI and confirmed host key, draining; where a desktop runs (null when
-- stopped); the hosts a template's or deployment's desktops start on (the original's forced_hyp/favourite_hyp).
ALTER TABLE "deployments" ADD COLUMN "preferred_hypervisors" jsonb DEFAULT '{"forced":[],"favourite":[]}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "hypervisor_id" text;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "preferred_hypervisors" jsonb DEFAULT '{"forced":[],"favourite":[]}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "hypervisors" ADD COLUMN "draining" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "hypervisors" ADD COLUMN "uri" text;--> statement-breakpoint
ALTER TABLE "hypervisors" ADD COLUMN "host_key_fingerprint" text;--> statement-breakpoint
CREATE UNIQUE INDEX "hypervisors_uri_idx" ON "hypervisors" USING btree ("uri");