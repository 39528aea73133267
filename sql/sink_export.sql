--
-- Sinks (issue 12): the coordinator exports every update of a sink's input
-- into the sink's relation exactly once, consolidated per (row, time), in
-- time order, starting with a snapshot at the as-of (or not); consumers
-- delete what they consumed.  mzcoord.changes() reads the same stream of
-- any collection.  Every stream is compared with a model built from what
-- the test itself wrote, at the times it was told.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE SCHEMA se;
SET search_path = se, public;

-- The sink's durable upper, and a wait until it reaches a time.
CREATE FUNCTION sink_upper(p_rel regclass) RETURNS bigint LANGUAGE sql AS
$$ SELECT upper FROM mzcoord.frontiers WHERE relation = p_rel $$;
CREATE FUNCTION sink_as_of(p_rel regclass) RETURNS bigint LANGUAGE sql AS
$$ SELECT c.as_of FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id
    WHERE i.relation = p_rel $$;
CREATE FUNCTION wait_sink(p_rel regclass, p_past bigint) RETURNS boolean LANGUAGE sql AS
$$ SELECT wait_until(format('SELECT upper > %s FROM mzcoord.collections c
                              JOIN mzcoord.items i ON i.id = c.item_id
                             WHERE i.relation = %L::regclass', p_past, p_rel)) $$;

-- ---------------------------------------------------------------------------
-- A sink over a source, at explicit times
-- ---------------------------------------------------------------------------
SELECT mzcoord.create_source('se.src', 'k int, v text', '1 hour') IS NOT NULL AS src;
SELECT upper AS u0 FROM mzcoord.frontiers WHERE relation = 'se.src'::regclass \gset
SELECT mzcoord.append(NULL::src, :u0, ARRAY[ROW(1, 'a'), ROW(2, 'b'), ROW(2, 'b')]::src[]);
SELECT mzcoord.append(NULL::src, :u0 + 2, ARRAY[ROW(3, 'c')]::src[], ARRAY[ROW(1, 'a')]::src[]);
SELECT mzcoord.advance_upper('src', :u0 + 3);

-- With a snapshot (the default) and without; both start at the source's since.
SELECT mzcoord.create_sink('se.src_snap', 'se.src') IS NOT NULL AS snap;
SELECT mzcoord.create_sink('se.src_nosnap', 'se.src', false) IS NOT NULL AS nosnap;
SELECT i.name, o.snapshot FROM mzcoord.sink_options o JOIN mzcoord.items i ON i.id = o.item_id
 WHERE i.schema_name = 'se' ORDER BY i.name;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'src_snap'::regclass AND attnum > 0 ORDER BY attnum;
SELECT sink_as_of('src_snap') - :u0 AS snap_as_of, sink_as_of('src_nosnap') - :u0 AS nosnap_as_of;

-- Once both sinks exported up to the source's upper (3), an update exactly
-- at that time: the next export starts there.
SELECT wait_sink('src_snap', :u0 + 2) AND wait_sink('src_nosnap', :u0 + 2) AS first_export;
SELECT sink_upper('src_snap') - :u0 AS snap_upper, sink_upper('src_nosnap') - :u0 AS nosnap_upper;
SELECT mzcoord.append(NULL::src, :u0 + 3, ARRAY[ROW(6, 'f')]::src[]);
-- Two appends of one row at one time are one update of diff 2; an
-- insertion and a retraction of one row at one time cancel out.
SELECT mzcoord.append(NULL::src, :u0 + 5, ARRAY[ROW(4, 'd'), ROW(5, 'e')]::src[], ARRAY[ROW(2, 'b')]::src[]);
SELECT mzcoord.append(NULL::src, :u0 + 5, ARRAY[ROW(4, 'd')]::src[], ARRAY[ROW(5, 'e')]::src[]);
SELECT mzcoord.append(NULL::src, :u0 + 7, ARRAY[ROW(NULL, NULL)]::src[]);
SELECT mzcoord.advance_upper('src', :u0 + 8);
SELECT wait_sink('src_snap', :u0 + 7) AND wait_sink('src_nosnap', :u0 + 7) AS exported;
SELECT sink_upper('src_snap') - :u0 AS snap_upper, sink_upper('src_nosnap') - :u0 AS nosnap_upper;
SELECT k, v, mz_timestamp - :u0 AS t, mz_diff FROM src_snap ORDER BY mz_timestamp, k, v;
SELECT k, v, mz_timestamp - :u0 AS t, mz_diff FROM src_nosnap ORDER BY mz_timestamp, k, v;
-- The stream is in time order in the relation, as exported.
SELECT bool_and(prev <= mz_timestamp) AS in_time_order FROM (
  SELECT mz_timestamp, lag(mz_timestamp) OVER (ORDER BY ctid) AS prev FROM src_snap) x;
SELECT count(*) AS rows FROM src_snap;

-- changes() gives the same stream after a time.
SELECT mz_timestamp - :u0 AS t, mz_diff, "row" FROM mzcoord.changes(NULL::src, :u0, :u0 + 7)
 ORDER BY mz_timestamp, "row";
SELECT mz_timestamp - :u0 AS t, mz_diff, "row" FROM mzcoord.changes(NULL::src, :u0 + 2, :u0 + 5);
SELECT count(*) AS empty_window FROM mzcoord.changes(NULL::src, :u0 + 3, :u0 + 3);
SELECT (c."row").k, mz_diff FROM mzcoord.changes(NULL::src, :u0 + 4, :u0 + 5) c ORDER BY 1;

-- A backlog of more times than one export takes (10,000): two exports, the
-- first ending just before the first time it left out.
SELECT mzcoord.create_source('se.many', 'i int', '1 hour') IS NOT NULL AS many;
SELECT upper AS m0 FROM mzcoord.frontiers WHERE relation = 'se.many'::regclass \gset
SELECT mzcoord.create_sink('se.many_out', 'se.many', false) IS NOT NULL AS many_out;
DO $$
DECLARE m0 bigint := (SELECT upper FROM mzcoord.frontiers WHERE relation = 'se.many'::regclass);
BEGIN
  FOR i IN 1 .. 10500 LOOP
    PERFORM mzcoord.append(NULL::se.many, m0 + i, ARRAY[ROW(i)]::se.many[]);
  END LOOP;
END
$$;
SELECT mzcoord.advance_upper('many', :m0 + 10501);
SELECT wait_sink('many_out', :m0 + 10500) AS exported;
SELECT count(*) AS rows, count(DISTINCT mz_timestamp) AS times,
       bool_and(mz_timestamp - :m0 = i AND mz_diff = 1) AS each_at_its_time
  FROM many_out;
SELECT m.steps, m.times, m.updates FROM mzcoord.maintenance m
  JOIN mzcoord.items i ON i.id = m.item_id WHERE i.relation = 'se.many_out'::regclass;

-- ---------------------------------------------------------------------------
-- A sink over a table, compared with a model of what was written
-- ---------------------------------------------------------------------------
-- Every committed write, with the commit time the session was told; the
-- rows a table has when it is registered are written at its since.
CREATE TEMP TABLE written (ts bigint, k int, v text, diff bigint);
CREATE TABLE t (k int, v text);
INSERT INTO t VALUES (1, 'x'), (1, 'x'), (2, 'y');
SELECT mzcoord.create_table('se.t', '1 hour') IS NOT NULL AS t;
INSERT INTO written SELECT (SELECT since FROM mzcoord.frontiers WHERE relation = 'se.t'::regclass), *
  FROM (VALUES (1, 'x', 1), (1, 'x', 1), (2, 'y', 1)) w;

SELECT mzcoord.create_sink('se.t_snap', 'se.t') IS NOT NULL AS snap;
SELECT mzcoord.create_sink('se.t_nosnap', 'se.t', snapshot => false) IS NOT NULL AS nosnap;
SELECT sink_as_of('t_snap') >= (SELECT max(ts) FROM written) AS as_of_after_registration;

UPDATE t SET v = 'z' WHERE k = 2;
INSERT INTO written SELECT mzcoord.last_commit_ts(), * FROM (VALUES (2, 'y', -1), (2, 'z', 1)) w;
-- One row inserted twice and deleted once at one time: one update, diff 1.
BEGIN;
INSERT INTO t VALUES (3, 'w');
DELETE FROM t WHERE k = 3;
INSERT INTO t VALUES (3, 'w');
COMMIT;
INSERT INTO written SELECT mzcoord.last_commit_ts(), 3, 'w', 1;
-- Inserted and deleted at one time: nothing.
BEGIN;
INSERT INTO t VALUES (4, 'q');
DELETE FROM t WHERE k = 4;
INSERT INTO t VALUES (5, 'p');
COMMIT;
INSERT INTO written SELECT mzcoord.last_commit_ts(), 5, 'p', 1;
DELETE FROM t WHERE k = 1;
INSERT INTO written SELECT mzcoord.last_commit_ts(), 1, 'x', -2;
INSERT INTO t SELECT g, 'bulk' FROM generate_series(10, 509) g;
INSERT INTO written SELECT mzcoord.last_commit_ts(), g, 'bulk', 1 FROM generate_series(10, 509) g;
-- Random writes (a fixed seed), each in a transaction of its own, each
-- logging what it changed; the time is filled in once it committed.
SELECT setseed(0.42);
CREATE TEMP TABLE random_ops AS
SELECT n, k, CASE WHEN r < 0.45 THEN 'insert' WHEN r < 0.75 THEN 'update' ELSE 'delete' END AS op
  FROM (SELECT n, 1 + floor(random() * 12)::int AS k, random() AS r
          FROM generate_series(1, 150) n) x;
\set ECHO none
SELECT stmt FROM (
  SELECT n, 1 AS part, CASE op
    WHEN 'insert' THEN format($f$WITH c AS (INSERT INTO se.t VALUES (%s, 'r%s') RETURNING k, v)
                              INSERT INTO written SELECT NULL::bigint, k, v, 1 FROM c$f$, k, n)
    WHEN 'update' THEN format($f$WITH o AS (SELECT k, v FROM se.t WHERE k = %s),
                              u AS (UPDATE se.t SET v = v || '+' WHERE k = %s RETURNING k, v)
                              INSERT INTO written SELECT NULL::bigint, k, v, -1 FROM o
                              UNION ALL SELECT NULL::bigint, k, v, 1 FROM u$f$, k, k)
    ELSE format($f$WITH d AS (DELETE FROM se.t WHERE k = %s RETURNING k, v)
                INSERT INTO written SELECT NULL::bigint, k, v, -1 FROM d$f$, k)
    END AS stmt FROM random_ops
  UNION ALL
  SELECT n, 2, 'UPDATE written SET ts = mzcoord.last_commit_ts() WHERE ts IS NULL' FROM random_ops
) s ORDER BY n, part \gexec
\set ECHO all
SELECT count(*) FILTER (WHERE ts IS NULL) AS untimed, count(*) > 150 AS logged FROM written;

-- What a sink with this as-of must hold: the contents at the as-of (with
-- a snapshot), then every (row, time) after it with its summed diff.
CREATE FUNCTION expected(p_as_of bigint, p_snap boolean)
RETURNS TABLE (k int, v text, mz_timestamp bigint, mz_diff bigint) LANGUAGE sql AS $$
  SELECT k, v, p_as_of, sum(diff)::bigint FROM written
   WHERE p_snap AND ts <= p_as_of GROUP BY k, v HAVING sum(diff) <> 0
  UNION ALL
  SELECT k, v, ts, sum(diff)::bigint FROM written
   WHERE ts > p_as_of GROUP BY k, v, ts HAVING sum(diff) <> 0
$$;
CREATE FUNCTION stream_diff(p_sink regclass, p_snap boolean)
RETURNS TABLE (side text, k int, v text, t bigint, mz_diff bigint) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format($q$
    (SELECT 'missing', e.k, e.v, e.mz_timestamp - %2$s, e.mz_diff FROM expected(%2$s, %3$L) e
     EXCEPT ALL SELECT 'missing', s.k, s.v, s.mz_timestamp - %2$s, s.mz_diff FROM %1$s s)
    UNION ALL
    (SELECT 'extra', s.k, s.v, s.mz_timestamp - %2$s, s.mz_diff FROM %1$s s
     EXCEPT ALL SELECT 'extra', e.k, e.v, e.mz_timestamp - %2$s, e.mz_diff FROM expected(%2$s, %3$L) e)
    $q$, p_sink, sink_as_of(p_sink), p_snap);
END
$$;

SELECT wait_sink('t_snap', (SELECT max(ts) FROM written))
   AND wait_sink('t_nosnap', (SELECT max(ts) FROM written)) AS exported;
SELECT * FROM stream_diff('t_snap', true);
SELECT * FROM stream_diff('t_nosnap', false);
SELECT count(*) > 600 AS many_rows,
       count(*) = (SELECT count(*) FROM expected(sink_as_of('t_snap'), true)) AS as_many_as_expected,
       count(*) FILTER (WHERE mz_timestamp = sink_as_of('t_snap')) AS snapshot_rows
  FROM t_snap;
SELECT count(*) = (SELECT count(*) FROM t_snap) - 2 AS nosnap_rows_are_snap_rows_but_snapshot
  FROM t_nosnap;
-- No (row, time) twice.
SELECT count(*) AS duplicates FROM (
  SELECT k, v, mz_timestamp FROM t_snap GROUP BY 1, 2, 3 HAVING count(*) > 1) d;
-- The stream in readable form (transactions close together may share a
-- time, so times are not shown).
SELECT k, v, mz_diff, mz_timestamp = sink_as_of('t_snap') AS in_snapshot
  FROM t_snap WHERE v IN ('x', 'y', 'z', 'w', 'p') ORDER BY k, v, mz_timestamp;
-- The stream summed up to its upper is the contents at upper - 1.
SELECT count(*) AS differences FROM (
  (SELECT k, v, sum(mz_diff) FROM t_snap GROUP BY k, v HAVING sum(mz_diff) <> 0
   EXCEPT ALL
   SELECT k, v, count(*) FROM mzcoord.read_at(NULL::t, sink_upper('t_snap') - 1) GROUP BY k, v)
  UNION ALL
  (SELECT k, v, count(*) FROM mzcoord.read_at(NULL::t, sink_upper('t_snap') - 1) GROUP BY k, v
   EXCEPT ALL
   SELECT k, v, sum(mz_diff) FROM t_snap GROUP BY k, v HAVING sum(mz_diff) <> 0)) d;
-- changes() after the as-of is the stream of the sink without a snapshot.
SELECT count(*) AS differences FROM (
  (SELECT ("row").k, ("row").v, mz_timestamp, mz_diff
     FROM mzcoord.changes(NULL::t, sink_as_of('t_nosnap'), (SELECT max(ts) FROM written))
   EXCEPT ALL SELECT k, v, mz_timestamp, mz_diff FROM t_nosnap)
  UNION ALL
  (SELECT k, v, mz_timestamp, mz_diff FROM t_nosnap
   EXCEPT ALL SELECT ("row").k, ("row").v, mz_timestamp, mz_diff
     FROM mzcoord.changes(NULL::t, sink_as_of('t_nosnap'), (SELECT max(ts) FROM written)))) d;

-- ---------------------------------------------------------------------------
-- Consuming: read what is complete, process it, delete it, in one
-- transaction; the next round sees only what came after.
-- ---------------------------------------------------------------------------
CREATE TEMP TABLE consumed AS SELECT * FROM t_snap WHERE false;
BEGIN;
SELECT sink_upper('t_snap') AS consumed_upto \gset
WITH taken AS (DELETE FROM t_snap WHERE mz_timestamp < :consumed_upto RETURNING *)
INSERT INTO consumed SELECT * FROM taken;
COMMIT;
SELECT count(*) AS left_after_consuming FROM t_snap;
WITH o AS (SELECT k, v FROM t WHERE k = 2), u AS (UPDATE t SET v = 'zz' WHERE k = 2 RETURNING k, v)
INSERT INTO written SELECT NULL::bigint, k, v, -1 FROM o UNION ALL SELECT NULL::bigint, k, v, 1 FROM u;
UPDATE written SET ts = mzcoord.last_commit_ts() WHERE ts IS NULL;
SELECT wait_sink('t_snap', (SELECT max(ts) FROM written)) AS exported;
SELECT count(*) > 0 AS new_rows, bool_and(mz_timestamp >= :consumed_upto) AS all_after_consumed,
       count(*) FILTER (WHERE v = 'zz') AS zz_rows FROM t_snap;
-- Consumers only delete: inserts and updates of a sink's relation are refused.
SELECT try($$INSERT INTO se.t_snap VALUES (9, 'no', 1, 1)$$);
SELECT try($$UPDATE se.t_snap SET mz_diff = 5$$);
SELECT count(*) AS guards FROM pg_trigger
 WHERE tgrelid = 'se.t_snap'::regclass AND tgisinternal AND tgfoid = 'mzcoord._sink_guard'::regproc;
-- What was consumed and what is left together are the whole stream.
INSERT INTO consumed SELECT * FROM t_snap;
SELECT count(*) AS differences FROM (
  (SELECT k, v, mz_timestamp, mz_diff FROM consumed
   EXCEPT ALL SELECT * FROM expected(sink_as_of('t_snap'), true))
  UNION ALL
  (SELECT * FROM expected(sink_as_of('t_snap'), true)
   EXCEPT ALL SELECT k, v, mz_timestamp, mz_diff FROM consumed)) d;

-- ---------------------------------------------------------------------------
-- A sink over a materialized view
-- ---------------------------------------------------------------------------
SELECT mzcoord.create_materialized_view('se.counts',
  'SELECT k % 3 AS g, count(*) AS n FROM se.t GROUP BY k % 3') IS NOT NULL AS mv;
SELECT mzcoord.create_sink('se.counts_out', 'se.counts') IS NOT NULL AS mv_sink;
INSERT INTO t VALUES (6, 'm'), (7, 'm');
SELECT mzcoord.last_commit_ts() AS last_write \gset
SELECT wait_sink('counts_out', :last_write) AS exported;
-- Summed up to its upper, the stream is the view's contents at upper - 1.
SELECT count(*) AS differences FROM (
  (SELECT g, n, sum(mz_diff) FROM counts_out GROUP BY g, n HAVING sum(mz_diff) <> 0
   EXCEPT ALL
   SELECT g, n, count(*) FROM mzcoord.read_at(NULL::counts, sink_upper('counts_out') - 1) GROUP BY g, n)
  UNION ALL
  (SELECT g, n, count(*) FROM mzcoord.read_at(NULL::counts, sink_upper('counts_out') - 1) GROUP BY g, n
   EXCEPT ALL
   SELECT g, n, sum(mz_diff) FROM counts_out GROUP BY g, n HAVING sum(mz_diff) <> 0)) d;
-- After the as-of, it is the view's changes.
SELECT count(*) AS differences FROM (
  (SELECT ("row").g, ("row").n, mz_timestamp, mz_diff
     FROM mzcoord.changes(NULL::counts, sink_as_of('counts_out'), sink_upper('counts_out') - 1)
   EXCEPT ALL SELECT g, n, mz_timestamp, mz_diff FROM counts_out
               WHERE mz_timestamp > sink_as_of('counts_out'))
  UNION ALL
  (SELECT g, n, mz_timestamp, mz_diff FROM counts_out WHERE mz_timestamp > sink_as_of('counts_out')
   EXCEPT ALL SELECT ("row").g, ("row").n, mz_timestamp, mz_diff
     FROM mzcoord.changes(NULL::counts, sink_as_of('counts_out'), sink_upper('counts_out') - 1))) d;
SELECT name, kind, schedule, steps > 0 AS stepped, failures, error
  FROM mzcoord.maintenance_status WHERE kind = 'sink' ORDER BY name;

-- ---------------------------------------------------------------------------
-- changes(): errors
-- ---------------------------------------------------------------------------
SELECT try(format('SELECT * FROM mzcoord.changes(NULL::se.src, %s, %s)', :u0 - 1, :u0 + 1));
SELECT try('SELECT * FROM mzcoord.changes(NULL::se.src, NULL, 5)');
SELECT try('SELECT * FROM mzcoord.changes(NULL::se.src, 5, NULL)');
SELECT try('SELECT * FROM mzcoord.changes(NULL::se.src, -1, 5)');
SELECT try(format('SELECT * FROM mzcoord.changes(NULL::se.src, %s, %s)', :u0 + 2, :u0 + 1));
SELECT try('SELECT * FROM mzcoord.changes(NULL::int, 1, 2)');
SELECT try('SELECT * FROM mzcoord.changes(NULL, 1, 2)');
CREATE TABLE plain (a int);
SELECT try('SELECT * FROM mzcoord.changes(NULL::se.plain, 1, 2)');
SELECT try('SELECT * FROM mzcoord.changes(NULL::se.t_snap, 1, 2)');
-- It waits, cancellably, until upto is complete.
CREATE FUNCTION changes_canceled(p_after bigint, p_upto bigint) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM * FROM mzcoord.changes(NULL::se.src, p_after, p_upto);
  RETURN 'returned';
EXCEPTION WHEN query_canceled THEN
  RETURN 'canceled while waiting';
END
$$;
SET statement_timeout = '300ms';
SELECT changes_canceled(:u0, :u0 + 100);
RESET statement_timeout;
-- SELECT on the relation is needed.
CREATE ROLE se_reader;
GRANT USAGE ON SCHEMA se TO se_reader;
SET ROLE se_reader;
SELECT try(format('SELECT * FROM mzcoord.changes(NULL::se.src, %s, %s)', :u0, :u0 + 1));
RESET ROLE;
GRANT SELECT ON src TO se_reader;
SET ROLE se_reader;
SELECT count(*) AS readable FROM mzcoord.changes(NULL::se.src, :u0, :u0 + 7);
RESET ROLE;
SELECT try($$SELECT mzcoord.create_sink('se.bad', 'se.t', NULL)$$);

-- ---------------------------------------------------------------------------
-- Dropping sinks; nothing inconsistent is left
-- ---------------------------------------------------------------------------
SELECT mzcoord.drop('se.src_nosnap');
SELECT count(*) AS options_left FROM mzcoord.sink_options o
  LEFT JOIN mzcoord.items i ON i.id = o.item_id WHERE i.id IS NULL OR i.name = 'src_nosnap';
SELECT mzcoord.drop('se.t', cascade => true);
SELECT mzcoord.drop('se.src', cascade => true);
SELECT mzcoord.drop('se.many', cascade => true);
SELECT * FROM mzcoord.check_consistency();
REVOKE ALL ON SCHEMA se FROM se_reader;
DROP ROLE se_reader;
DROP SCHEMA se CASCADE;
RESET search_path;
