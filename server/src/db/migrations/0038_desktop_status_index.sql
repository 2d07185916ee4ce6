-- The running desktops (a start's quota and placement sums, the hosts' load) among thousands at rest: read by index,
-- not by a pass over every desktop (docs/decisions/0047-a-start-before-its-spawn.md).
CREATE INDEX "domains_status_idx" ON "domains" USING btree ("status");
