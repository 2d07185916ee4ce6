CREATE TABLE "desktop_list_revs" (
	"user_id" text PRIMARY KEY NOT NULL,
	"rev" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE FUNCTION "desktop_list_touch"(uid text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF uid IS NOT NULL THEN
    INSERT INTO "desktop_list_revs" ("user_id", "rev") VALUES (uid, 1)
      ON CONFLICT ("user_id") DO UPDATE SET "rev" = "desktop_list_revs"."rev" + 1;
  END IF;
END;
$$;--> statement-breakpoint
CREATE FUNCTION "desktop_list_touch_where"(column_name text, value text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF value IS NOT NULL THEN
    EXECUTE format('INSERT INTO "desktop_list_revs" ("user_id", "rev")
      SELECT DISTINCT "user_id", 1 FROM "domains" WHERE %I = $1
      ON CONFLICT ("user_id") DO UPDATE SET "rev" = "desktop_list_revs"."rev" + 1', column_name) USING value;
  END IF;
END;
$$;--> statement-breakpoint
CREATE FUNCTION "desktop_list_on_domain"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM "desktop_list_touch"(OLD."user_id"); END IF;
  IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW."user_id" IS DISTINCT FROM OLD."user_id") THEN
    PERFORM "desktop_list_touch"(NEW."user_id");
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "desktop_list_domains" AFTER INSERT OR UPDATE OR DELETE ON "domains"
  FOR EACH ROW EXECUTE FUNCTION "desktop_list_on_domain"();--> statement-breakpoint
CREATE FUNCTION "desktop_list_on_disk"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM "desktop_list_touch"((SELECT "user_id" FROM "domains" WHERE "id" = OLD."domain_id")); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM "desktop_list_touch"((SELECT "user_id" FROM "domains" WHERE "id" = NEW."domain_id")); END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "desktop_list_domain_disks" AFTER INSERT OR UPDATE OR DELETE ON "domain_disks"
  FOR EACH ROW EXECUTE FUNCTION "desktop_list_on_disk"();--> statement-breakpoint
CREATE FUNCTION "desktop_list_on_user_name"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "desktop_list_touch"(NEW."id");
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "desktop_list_users" AFTER UPDATE OF "name" ON "users"
  FOR EACH ROW WHEN (OLD."name" IS DISTINCT FROM NEW."name") EXECUTE FUNCTION "desktop_list_on_user_name"();--> statement-breakpoint
CREATE FUNCTION "desktop_list_on_owner_name"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "desktop_list_touch_where"(TG_ARGV[0], NEW."id");
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "desktop_list_groups" AFTER UPDATE OF "name" ON "groups"
  FOR EACH ROW WHEN (OLD."name" IS DISTINCT FROM NEW."name") EXECUTE FUNCTION "desktop_list_on_owner_name"('group_id');--> statement-breakpoint
CREATE TRIGGER "desktop_list_categories" AFTER UPDATE OF "name" ON "categories"
  FOR EACH ROW WHEN (OLD."name" IS DISTINCT FROM NEW."name") EXECUTE FUNCTION "desktop_list_on_owner_name"('category_id');--> statement-breakpoint
CREATE FUNCTION "desktop_list_on_deployment"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM "desktop_list_touch_where"('tag', OLD."id"); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM "desktop_list_touch_where"('tag', NEW."id"); END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "desktop_list_deployments" AFTER INSERT OR DELETE OR UPDATE OF "user_permissions" ON "deployments"
  FOR EACH ROW EXECUTE FUNCTION "desktop_list_on_deployment"();--> statement-breakpoint
CREATE FUNCTION "desktop_list_on_booking"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    IF OLD."item_type" = 'deployment' THEN PERFORM "desktop_list_touch_where"('tag', OLD."item_id");
    ELSE PERFORM "desktop_list_touch"((SELECT "user_id" FROM "domains" WHERE "id" = OLD."item_id")); END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    IF NEW."item_type" = 'deployment' THEN PERFORM "desktop_list_touch_where"('tag', NEW."item_id");
    ELSE PERFORM "desktop_list_touch"((SELECT "user_id" FROM "domains" WHERE "id" = NEW."item_id")); END IF;
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "desktop_list_bookings" AFTER INSERT OR UPDATE OR DELETE ON "bookings"
  FOR EACH ROW EXECUTE FUNCTION "desktop_list_on_booking"();
