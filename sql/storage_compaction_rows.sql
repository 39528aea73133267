--
-- Compaction rewrites only the rows that consolidate: each retraction
-- between the compacted frontier and the since, and every row below the
-- since with the same columns (by binary image).  Their sums go back at
-- the since; every other row keeps its time, below the compacted frontier,
-- read as at it.  Reads at or after the since are the same before and
-- after.  The retractions are held in memory up to maintenance_work_mem:
-- beyond it a compaction stops at a time and the next goes on.
--
CREATE SCHEMA cr;
SET search_path = cr, public;
ALTER SYSTEM SET mzcoord.auto_compact = off;
SELECT pg_reload_conf();
SELECT wait_ticks(3);

-- Rows that a retraction touches, and rows it does not: a duplicate, a
-- numeric equal to another but printed differently (a different row), a
-- toasted value, a row that goes to NULL and back.
CREATE TABLE t (k int, n numeric, j jsonb, big text);
SELECT mzcoord.create_table('t') IS NOT NULL AS registered;
SELECT history AS cr_hist FROM mzcoord.storage WHERE relation = 't'::regclass \gset
INSERT INTO t SELECT g, g, jsonb_build_object('g', g), NULL FROM generate_series(1, 50) g;
INSERT INTO t VALUES (1, 1, '{"g": 1}', NULL);
INSERT INTO t VALUES (100, 1.0, NULL, repeat('x', 5000)), (100, 1.00, NULL, repeat('x', 5000));
DELETE FROM t WHERE ctid = (SELECT min(ctid) FROM t WHERE k = 1);
UPDATE t SET n = n + 1 WHERE k BETWEEN 2 AND 5;
DELETE FROM t WHERE k = 100 AND n::text = '1.00';
UPDATE t SET k = NULL WHERE k = 6;
UPDATE t SET k = 6 WHERE k IS NULL;
SELECT max(ts) AS cr_last FROM :cr_hist \gset
SELECT wait_until(format($$SELECT since > %s FROM mzcoord.frontiers
                            WHERE relation = 'cr.t'::regclass$$, :cr_last)) AS since_past_writes;
SELECT count(*) AS rows, count(*) FILTER (WHERE diff < 0) AS retractions FROM :cr_hist;

-- 18 rows consolidate: k = 1 (two insertions, one retraction: one row
-- written back), k = 2..5 (the old values and their retractions), the
-- numeric 1.00 and its retraction, k = 6 (inserted, retracted, inserted:
-- one written back) and its NULL detour.
SELECT compacted > :cr_last AS compacted_past_writes, rows_in, rows_out
  FROM mzcoord.compact('t');
SELECT count(*) AS rows, count(*) FILTER (WHERE diff < 0) AS retractions,
       count(*) FILTER (WHERE ts = (SELECT compacted FROM mzcoord.storage
                                     WHERE relation = 't'::regclass)) AS written_back,
       sum(diff) AS total, (SELECT count(*) FROM t) AS table_rows
  FROM :cr_hist;
SELECT c1 AS k, c2::text AS n, diff, length(c4) AS big
  FROM :cr_hist WHERE c1 IN (1, 6, 100) ORDER BY c1, c2::text;
-- The read at the since is the table, row for row (as text: 1.0 is not 1.00).
SELECT count(*) AS differences FROM (
  (SELECT r::text FROM mzcoord.read_at(NULL::t, (SELECT since FROM mzcoord.frontiers
                                                  WHERE relation = 't'::regclass)) r
   EXCEPT ALL SELECT t::text FROM t)
  UNION ALL
  (SELECT t::text FROM t
   EXCEPT ALL SELECT r::text FROM mzcoord.read_at(NULL::t, (SELECT since FROM mzcoord.frontiers
                                                             WHERE relation = 't'::regclass)) r)) d;
SELECT * FROM mzcoord.check_consistency();

-- More retractions than maintenance_work_mem holds: twelve updates of 400
-- wide rows, at several times.  A compaction stops at a time, having
-- consolidated everything below it; the next ones go on to the since.
CREATE TABLE w (k int, pad text);
SELECT mzcoord.create_table('w') IS NOT NULL AS registered;
SELECT history AS cr_whist FROM mzcoord.storage WHERE relation = 'w'::regclass \gset
INSERT INTO w SELECT g, repeat('p', 300) FROM generate_series(1, 400) g;
DO $$
BEGIN
    FOR i IN 1..12 LOOP
        UPDATE cr.w SET pad = repeat(chr(97 + i), 300);
        COMMIT;
        PERFORM pg_sleep(0.01);
    END LOOP;
END $$;
SELECT max(ts) AS cr_wlast FROM :cr_whist \gset
SELECT wait_until(format($$SELECT since > %s FROM mzcoord.frontiers
                            WHERE relation = 'cr.w'::regclass$$, :cr_wlast)) AS since_past_updates;
SELECT count(DISTINCT ts) >= 5 AS several_update_times FROM :cr_whist WHERE diff < 0;
SET maintenance_work_mem = '1MB';
SELECT compacted < :cr_wlast AS stopped_at_a_time, rows_in > 0 AS consolidated
  FROM mzcoord.compact('w') \gset
SELECT :'stopped_at_a_time' AS stopped_at_a_time, :'consolidated' AS consolidated;
SELECT count(*) = 0 AS no_retraction_below_compacted,
       (SELECT count(*) > 0 FROM :cr_whist
         WHERE diff < 0 AND ts > (SELECT compacted FROM mzcoord.storage
                                   WHERE relation = 'w'::regclass)) AS retractions_left_above
  FROM :cr_whist
 WHERE diff < 0 AND ts < (SELECT compacted FROM mzcoord.storage WHERE relation = 'w'::regclass);
SELECT * FROM mzcoord.check_consistency();
SELECT set_config('cr.wlast', :'cr_wlast', false) IS NOT NULL AS noted;
DO $$
BEGIN
    FOR i IN 1..50 LOOP
        EXIT WHEN (SELECT compacted FROM mzcoord.compact('cr.w'))
                  > current_setting('cr.wlast')::bigint;
    END LOOP;
END $$;
RESET maintenance_work_mem;
SELECT compacted > :cr_wlast AS compacted_past_updates, compactions > 1 AS in_several
  FROM mzcoord.storage WHERE relation = 'w'::regclass;
SELECT count(*) AS rows, count(*) FILTER (WHERE diff < 0) AS retractions,
       count(DISTINCT c2) AS pads, sum(diff) AS total
  FROM :cr_whist;
SELECT * FROM mzcoord.check_consistency();

ALTER SYSTEM RESET mzcoord.auto_compact;
SELECT pg_reload_conf();
RESET search_path;
DROP SCHEMA cr CASCADE;
