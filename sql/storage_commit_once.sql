--
-- A transaction's history rows are written once, at its commit timestamp.
-- A transaction that commits at a later time than the one it first wrote
-- at leaves no rewritten row behind: every row of the history is still
-- where it was first written (its ctid), all at the commit time.  Around
-- that: savepoints and exception blocks that roll back, a large statement
-- written straight into the history beside small ones kept for the commit,
-- ALTER TABLE and check_consistency inside a writing transaction, values
-- stored out of line, and a table dropped after a write.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE SCHEMA co;
SET search_path = co, public;
CREATE TABLE t (k int, v text);
SELECT mzcoord.create_table('t', '1 hour') IS NOT NULL AS registered;
SELECT history AS hist FROM mzcoord.storage WHERE relation = 'co.t'::regclass \gset

-- The wall clock in epoch milliseconds, and t's contents as of now.
CREATE FUNCTION now_ms() RETURNS bigint LANGUAGE sql
    AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;
CREATE FUNCTION latest() RETURNS TABLE (k int, v text) LANGUAGE sql AS $$
    SELECT r.k, r.v FROM mzcoord.read_at(NULL::co.t,
        mzcoord.select_timestamp(ARRAY['co.t'::regclass], 'strict serializable')) r
     ORDER BY r.k, r.v $$;

-- A transaction that commits after the timeline has passed the time of its
-- first write (a second later on the wall clock): it commits at a later
-- time.  Its four updates are in the history at that time, written once.
BEGIN;
INSERT INTO t VALUES (1, 'a'), (2, 'b');
UPDATE t SET v = 'c' WHERE k = 2;
SELECT now_ms() + 1000 AS mark \gset
SELECT wait_until(format($$SELECT upper > %s FROM mzcoord.frontiers
                           WHERE relation = 'co.t'::regclass$$, :mark), 120);
COMMIT;
SELECT ctid, c1 AS k, c2 AS v, diff FROM :hist ORDER BY ctid;
SELECT count(DISTINCT ts) AS times, min(ts) > :mark AS after_the_wait FROM :hist;
SELECT count(*) AS before_commit FROM mzcoord.read_at(NULL::t, :mark);
SELECT * FROM latest();

-- Savepoints: what a rolled back savepoint captured is forgotten, what a
-- released one captured stays.
BEGIN;
INSERT INTO t VALUES (3, 'kept');
SAVEPOINT s1;
INSERT INTO t VALUES (4, 'rolled back');
SAVEPOINT s2;
UPDATE t SET v = 'gone' WHERE k = 3;
ROLLBACK TO s1;
INSERT INTO t VALUES (5, 'after');
SAVEPOINT s3;
DELETE FROM t WHERE k = 1;
RELEASE s3;
COMMIT;
SELECT c1 AS k, c2 AS v, diff FROM :hist
 WHERE ts = (SELECT max(ts) FROM :hist) ORDER BY k, diff;
SELECT * FROM latest();
SELECT * FROM mzcoord.check_consistency();

-- An exception block rolls back its subtransaction.
DO $$
BEGIN
    INSERT INTO co.t VALUES (6, 'outer');
    BEGIN
        INSERT INTO co.t VALUES (7, 'inner');
        RAISE EXCEPTION 'undo';
    EXCEPTION WHEN raise_exception THEN
        NULL;
    END;
    BEGIN
        INSERT INTO co.t VALUES (8, 'inner kept');
    EXCEPTION WHEN raise_exception THEN
        NULL;
    END;
END
$$;
SELECT * FROM latest();
SELECT * FROM mzcoord.check_consistency();

-- A large statement goes straight into the history, small ones are kept
-- for the commit; a commit at a later time brings both there.
BEGIN;
INSERT INTO t VALUES (9, 'small');
INSERT INTO t SELECT 100 + i, 'large' FROM generate_series(1, 1500) i;
DELETE FROM t WHERE k = 9;
INSERT INTO t VALUES (10, 'small');
SELECT now_ms() + 1000 AS mark \gset
SELECT wait_until(format($$SELECT upper > %s FROM mzcoord.frontiers
                           WHERE relation = 'co.t'::regclass$$, :mark), 120);
COMMIT;
SELECT count(*) AS rows, sum(diff) AS net, count(DISTINCT ts) AS times,
       min(ts) > :mark AS after_the_wait
  FROM :hist WHERE ts > (SELECT max(ts) FROM :hist WHERE c1 = 8);
DELETE FROM t WHERE k > 100;
SELECT * FROM latest();
SELECT * FROM mzcoord.check_consistency();

-- ALTER TABLE after writes in the same transaction, once in a savepoint
-- that rolls back, once for good: the history follows the columns, and
-- the rows written before each ALTER keep their values.
BEGIN;
INSERT INTO t VALUES (11, 'before the alter');
SAVEPOINT a;
ALTER TABLE t ADD COLUMN x int DEFAULT 7;
INSERT INTO t VALUES (12, 'rolled back', 1);
ROLLBACK TO a;
INSERT INTO t VALUES (13, 'after the rollback');
ALTER TABLE t ADD COLUMN y int DEFAULT 9;
INSERT INTO t VALUES (14, 'after the alter', 1);
UPDATE t SET y = 2 WHERE k = 11;
COMMIT;
SELECT r.k, r.v, r.y
  FROM mzcoord.read_at(NULL::t,
         mzcoord.select_timestamp(ARRAY['co.t'::regclass], 'strict serializable')) r
 ORDER BY r.k;
SELECT * FROM mzcoord.check_consistency();

-- check_consistency inside a writing transaction sees its writes in the
-- history as in the table.
BEGIN;
INSERT INTO t VALUES (15, 'checked');
SELECT * FROM mzcoord.check_consistency();
UPDATE t SET v = 'checked again' WHERE k = 15;
SELECT * FROM mzcoord.check_consistency();
COMMIT;
SELECT * FROM mzcoord.check_consistency();

-- Values stored out of line, kept for the commit and retracted in it.
BEGIN;
INSERT INTO t (k, v)
SELECT 16, string_agg(md5(i::text), '') FROM generate_series(1, 400) i;
UPDATE t SET k = 17 WHERE k = 16;
COMMIT;
SELECT k, length(v), md5(v) = (SELECT md5(string_agg(md5(i::text), ''))
                                 FROM generate_series(1, 400) i) AS same
  FROM mzcoord.read_at(NULL::t,
         mzcoord.select_timestamp(ARRAY['co.t'::regclass], 'strict serializable'))
 WHERE k >= 16;
SELECT * FROM mzcoord.check_consistency();

-- Tables written and then dropped, by DROP TABLE and by mzcoord.drop, in
-- one transaction.
CREATE TABLE d (k int);
CREATE TABLE e (k int);
SELECT mzcoord.create_table('d') IS NOT NULL AND
       mzcoord.create_table('e') IS NOT NULL AS registered;
BEGIN;
INSERT INTO d VALUES (1);
DROP TABLE d;
INSERT INTO e VALUES (1);
SELECT mzcoord.drop('e');
COMMIT;
SELECT to_regclass('co.d') IS NULL AND to_regclass('co.e') IS NULL AS both_gone;
SELECT * FROM mzcoord.check_consistency();

DROP SCHEMA co CASCADE;
