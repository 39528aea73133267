--
-- A history's two indexes (ts of its insertions, rows with diff > 0, and ts
-- of its retractions, diff < 0) are written by history.c itself when they
-- are all the history has, and by the executor otherwise.  After writes of
-- every shape (a small transaction kept for its commit, a large statement
-- written straight into the history, savepoints rolled back, TRUNCATE, a
-- source's appends), amcheck finds every insertion in the first index and
-- every retraction in the second, and a scan of each finds nothing else:
-- each row has one entry.  Then the same with a third index added to the
-- history by hand (the executor's way, which must index it too), and again
-- once it is dropped.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
CREATE EXTENSION IF NOT EXISTS amcheck;

CREATE SCHEMA hx;
SET search_path = hx, public;
CREATE TABLE t (k int PRIMARY KEY, v text);
SELECT mzcoord.create_table('t', '1 hour') IS NOT NULL AS registered;
SELECT history AS hist FROM mzcoord.storage WHERE relation = 'hx.t'::regclass \gset

CREATE FUNCTION query_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END $$;

-- Every index of the history checked with heapallindexed (each row that
-- belongs in an index is in it), and the rows the retractions index finds
-- against the retractions a sequential scan finds.
CREATE FUNCTION check_indexes(hist regclass) RETURNS TABLE (
    indexes int, all_indexed bool, rows bigint, retractions bigint,
    retractions_by_index bigint, insertions_by_index bigint)
LANGUAGE plpgsql AS $$
DECLARE
    i regclass;
    n int := 0;
BEGIN
    FOR i IN SELECT indexrelid::regclass FROM pg_index WHERE indrelid = hist ORDER BY 1 LOOP
        PERFORM public.bt_index_check(i, true);
        n := n + 1;
    END LOOP;
    indexes := n;
    all_indexed := true;
    SET LOCAL enable_indexscan = off;
    SET LOCAL enable_bitmapscan = off;
    EXECUTE format('SELECT count(*), count(*) FILTER (WHERE diff < 0) FROM %s', hist)
        INTO rows, retractions;
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_indexscan = on;
    EXECUTE format('SELECT count(*) FROM %s WHERE diff OPERATOR(pg_catalog.<) 0', hist)
        INTO retractions_by_index;
    EXECUTE format('SELECT count(*) FROM %s WHERE diff OPERATOR(pg_catalog.>) 0', hist)
        INTO insertions_by_index;
    RETURN NEXT;
END $$;

-- The last two counts read the index of retractions and the index of
-- insertions.
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) = 1 AS through_retractions_index
  FROM query_plan(format('SELECT count(*) FROM %s WHERE diff OPERATOR(pg_catalog.<) 0', :'hist')) p
 WHERE p LIKE format('%%Index Only Scan using %s_retractions on %s%%',
                     replace(:'hist', 'mzcoord.', ''), replace(:'hist', 'mzcoord.', ''));
SELECT count(*) = 1 AS through_insertions_index
  FROM query_plan(format('SELECT count(*) FROM %s WHERE diff OPERATOR(pg_catalog.>) 0', :'hist')) p
 WHERE p LIKE format('%%Index Only Scan using %s_insertions on %s%%',
                     replace(:'hist', 'mzcoord.', ''), replace(:'hist', 'mzcoord.', ''));
RESET enable_seqscan;
RESET enable_bitmapscan;
-- What mzcoord's own statements on a history (the move of a transaction's
-- updates to its commit time, the checks' counts) ask for by time alone
-- is found through both indexes, not by reading the whole history.
SET enable_seqscan = off;
SELECT regexp_replace(p, 'history_u[0-9]+', 'history_uN', 'g') AS move_plan
  FROM query_plan(format('UPDATE %s SET ts = 2 WHERE ((ts = 1 AND diff > 0) OR (ts = 1 AND diff < 0))'
                         ' AND mzcoord._row_is_own(xmin)', :'hist')) p
 WHERE p ~ 'Bitmap|Seq Scan';
RESET enable_seqscan;

-- Small transactions, kept for their commit.
INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');
UPDATE t SET v = 'bb' WHERE k = 2;
DELETE FROM t WHERE k = 3;
BEGIN;
INSERT INTO t VALUES (4, 'd');
SAVEPOINT s;
UPDATE t SET v = 'gone' WHERE k = 1;
ROLLBACK TO s;
UPDATE t SET v = 'aa' WHERE k = 1;
COMMIT;
SELECT * FROM check_indexes(:'hist');

-- Large statements (over 1,000 rows), written straight into the history,
-- then a TRUNCATE, which retracts every row.
INSERT INTO t SELECT g, 'bulk ' || g FROM generate_series(10, 1509) g;
UPDATE t SET v = v || '!' WHERE k >= 10;
SELECT * FROM check_indexes(:'hist');
TRUNCATE t;
INSERT INTO t VALUES (1, 'again');
SELECT * FROM check_indexes(:'hist');

-- A third index, added by hand: writes go the executor's way and index
-- all three.
CREATE INDEX hx_extra ON :hist (diff);
INSERT INTO t VALUES (2, 'x'), (3, 'y');
UPDATE t SET v = 'z' WHERE k = 2;
INSERT INTO t SELECT g, 'more ' || g FROM generate_series(100, 1199) g;
DELETE FROM t WHERE k >= 100;
SELECT * FROM check_indexes(:'hist');
SET enable_seqscan = off;
SELECT count(*) AS retractions_by_extra FROM :hist WHERE diff = -1;
RESET enable_seqscan;

-- Dropped again: history.c writes the two indexes itself again.
DROP INDEX mzcoord.hx_extra;
UPDATE t SET v = 'w' WHERE k = 3;
DELETE FROM t WHERE k = 1;
SELECT * FROM check_indexes(:'hist');

-- A source's appends, insertions and retractions, go through the same
-- writer.
SELECT mzcoord.create_source('hx.s', 'k int, v text', '1 hour') IS NOT NULL AS source;
SELECT history AS shist FROM mzcoord.storage WHERE relation = 'hx.s'::regclass \gset
SELECT upper AS u0 FROM mzcoord.frontiers WHERE relation = 'hx.s'::regclass \gset
SELECT mzcoord.append(NULL::hx.s, :u0, ARRAY[ROW(1, 'a'), ROW(2, 'b')]::hx.s[]);
SELECT mzcoord.append(NULL::hx.s, :u0 + 5, ARRAY[ROW(3, 'c')]::hx.s[],
                      ARRAY[ROW(1, 'a')]::hx.s[]);
SELECT * FROM check_indexes(:'shist');

-- What the history holds reads back as the table.
SELECT r.* FROM mzcoord.read_at(NULL::t,
    mzcoord.select_timestamp(ARRAY['hx.t'::regclass], 'strict serializable')) r
 ORDER BY k;
SELECT * FROM mzcoord.check_consistency();

RESET search_path;
DROP SCHEMA hx CASCADE;
