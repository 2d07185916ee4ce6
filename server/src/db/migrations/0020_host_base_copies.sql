CREATE TABLE "host_base_copies" (
	"storage_id" text NOT NULL,
	"hypervisor_id" text NOT NULL,
	"path" text NOT NULL,
	"bytes" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "host_base_copies_storage_id_hypervisor_id_pk" PRIMARY KEY("storage_id","hypervisor_id")
);
--> statement-breakpoint
ALTER TABLE "host_base_copies" ADD CONSTRAINT "host_base_copies_hypervisor_id_hypervisors_id_fk" FOREIGN KEY ("hypervisor_id") REFERENCES "public"."hypervisors"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "host_base_copies_hypervisor_idx" ON "host_base_copies" USING btree ("hypervisor_id");