-- The desktop list counters (0007) raised once per statement instead of once per row: showing or
-- hiding a deployment of 500 desktops ran the row trigger 500 times (an upsert each); now one
-- set-based upsert raises the counters of the owners it touched. Same users, same moments.
DROP TRIGGER "desktop_list_domains" ON "domains";--> statement-breakpoint
DROP FUNCTION "desktop_list_on_domain"();--> statement-breakpoint
DROP TRIGGER "desktop_list_domain_disks" ON "domain_disks";--> statement-breakpoint
DROP FUNCTION "desktop_list_on_disk"();--> statement-breakpoint
CREATE FUNCTION "desktop_list_touch_users"(uids text[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO "desktop_list_revs" ("user_id", "rev")
    SELECT DISTINCT u, 1 FROM unnest(uids) AS u WHERE u IS NOT NULL
    ON CONFLICT ("user_id") DO UPDATE SET "rev" = "desktop_list_revs"."rev" + 1;
$$;--> statement-breakpoint
-- A desktop written: its owner's list (before and after, when it changed hands).
CREATE FUNCTION "desktop_list_on_domains"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM "desktop_list_touch_users"(ARRAY(SELECT "user_id" FROM "new_domains"));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM "desktop_list_touch_users"(ARRAY(SELECT "user_id" FROM "old_domains"));
  ELSE
    PERFORM "desktop_list_touch_users"(ARRAY(SELECT "user_id" FROM "old_domains" UNION SELECT "user_id" FROM "new_domains"));
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "desktop_list_domains_insert" AFTER INSERT ON "domains"
  REFERENCING NEW TABLE AS "new_domains" FOR EACH STATEMENT EXECUTE FUNCTION "desktop_list_on_domains"();--> statement-breakpoint
CREATE TRIGGER "desktop_list_domains_update" AFTER UPDATE ON "domains"
  REFERENCING OLD TABLE AS "old_domains" NEW TABLE AS "new_domains" FOR EACH STATEMENT EXECUTE FUNCTION "desktop_list_on_domains"();--> statement-breakpoint
CREATE TRIGGER "desktop_list_domains_delete" AFTER DELETE ON "domains"
  REFERENCING OLD TABLE AS "old_domains" FOR EACH STATEMENT EXECUTE FUNCTION "desktop_list_on_domains"();--> statement-breakpoint
-- A desktop's disks linked or unlinked: the desktop's owner's list.
CREATE FUNCTION "desktop_list_on_domain_disks"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM "desktop_list_touch_users"(ARRAY(SELECT d."user_id" FROM "new_links" l JOIN "domains" d ON d."id" = l."domain_id"));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM "desktop_list_touch_users"(ARRAY(SELECT d."user_id" FROM "old_links" l JOIN "domains" d ON d."id" = l."domain_id"));
  ELSE
    PERFORM "desktop_list_touch_users"(ARRAY(SELECT d."user_id" FROM (SELECT "domain_id" FROM "old_links" UNION SELECT "domain_id" FROM "new_links") l JOIN "domains" d ON d."id" = l."domain_id"));
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "desktop_list_domain_disks_insert" AFTER INSERT ON "domain_disks"
  REFERENCING NEW TABLE AS "new_links" FOR EACH STATEMENT EXECUTE FUNCTION "desktop_list_on_domain_disks"();--> statement-breakpoint
CREATE TRIGGER "desktop_list_domain_disks_update" AFTER UPDATE ON "domain_disks"
  REFERENCING OLD TABLE AS "old_links" NEW TABLE AS "new_links" FOR EACH STATEMENT EXECUTE FUNCTION "desktop_list_on_domain_disks"();--> statement-breakpoint
CREATE TRIGGER "desktop_list_domain_disks_delete" AFTER DELETE ON "domain_disks"
  REFERENCING OLD TABLE AS "old_links" FOR EACH STATEMENT EXECUTE FUNCTION "desktop_list_on_domain_disks"();
