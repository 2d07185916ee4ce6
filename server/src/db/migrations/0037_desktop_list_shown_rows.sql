-- A desktop written raises its owner's list counter (0015) only when the list shows it, before or after the write: a
-- pool's prepared desktops (not given yet), templates and hidden deployments' desktops are in nobody's list. A class's
-- thirty givings raised the pool owner's one counter in turn, each waiting for the commit of the one before.
CREATE OR REPLACE FUNCTION "desktop_list_shows"(kind text, tag text, tag_visible boolean, pool_id text, pool_assigned_at timestamptz) RETURNS boolean
  LANGUAGE sql IMMUTABLE AS $$
  SELECT kind = 'desktop' AND (tag IS NULL OR tag_visible) AND (pool_id IS NULL OR pool_assigned_at IS NOT NULL);
$$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "desktop_list_on_domains"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM "desktop_list_touch_users"(ARRAY(SELECT "user_id" FROM "new_domains" n
      WHERE "desktop_list_shows"(n."kind", n."tag", n."tag_visible", n."pool_id", n."pool_assigned_at")));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM "desktop_list_touch_users"(ARRAY(SELECT "user_id" FROM "old_domains" o
      WHERE "desktop_list_shows"(o."kind", o."tag", o."tag_visible", o."pool_id", o."pool_assigned_at")));
  ELSE
    PERFORM "desktop_list_touch_users"(ARRAY(
      SELECT "user_id" FROM "old_domains" o WHERE "desktop_list_shows"(o."kind", o."tag", o."tag_visible", o."pool_id", o."pool_assigned_at")
      UNION
      SELECT "user_id" FROM "new_domains" n WHERE "desktop_list_shows"(n."kind", n."tag", n."tag_visible", n."pool_id", n."pool_assigned_at")));
  END IF;
  RETURN NULL;
END;
$$;
