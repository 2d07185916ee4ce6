-- One pass of the start queue on a lane (engine/start-queue.ts) as one call: the lane's lock, then, in a statement of its
-- own (a fresh snapshot: what another process took before it let the lock go is seen), the entries of dead runners out
-- and the waiting ones taken while slots are free. A start waited for six round trips of a transaction before
-- (docs/decisions/0047-a-start-before-its-spawn.md); the function's plans are kept by each session.
-- A runner is alive when its live connection's backend is (shared: several processes on PostgreSQL), or, on the embedded
-- database (one process), when it is this run of the process.
CREATE OR REPLACE FUNCTION "start_queue_take"(p_lane text, p_concurrency integer, p_pid integer, p_since timestamptz, p_shared boolean, p_lock_class integer)
  RETURNS TABLE(o_kind text, o_id bigint, o_desktop_id text, o_started_at timestamptz)
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(p_lock_class, hashtext(p_lane));
  RETURN QUERY
  WITH entries AS (
    SELECT q."id", q."desktop_id", q."started_at",
      CASE WHEN q."started_at" IS NULL THEN NULL
           WHEN p_shared THEN EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = q."runner_pid" AND a.backend_start = q."runner_since")
           ELSE q."runner_pid" = p_pid AND q."runner_since" = p_since END AS alive
    FROM "start_queue" q WHERE q."lane" = p_lane
  ), orphans AS (
    DELETE FROM "start_queue" q USING entries e WHERE q."id" = e."id" AND e.alive IS FALSE
    RETURNING q."desktop_id", q."started_at"
  ), taken AS (
    UPDATE "start_queue" q SET "started_at" = now(), "runner_pid" = p_pid, "runner_since" = p_since
    WHERE q."id" IN (
      SELECT w."id" FROM "start_queue" w WHERE w."lane" = p_lane AND w."started_at" IS NULL ORDER BY w."id"
      LIMIT greatest(0, p_concurrency - (SELECT count(*) FROM entries e WHERE e.alive))
      FOR UPDATE SKIP LOCKED)
    RETURNING q."id", q."desktop_id"
  )
  SELECT 'orphan', NULL::bigint, o."desktop_id", o."started_at" FROM orphans o
  UNION ALL
  SELECT 'taken', t."id", t."desktop_id", NULL::timestamptz FROM taken t;
END;
$$;
