-- Many hosts (issue 25): where a disk lives when it is on a hypervisor's own pool (a host without the shared
-- storage folder: a template's base copied there, the desktop's disk made there); null: the storage folder.
ALTER TABLE "storage" ADD COLUMN "hypervisor_id" text;