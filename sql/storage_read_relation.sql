--
-- read_at of a table with nothing after the time read reads the table
-- itself; at earlier times it reads the history.  Both must give the
-- contents at that time: every step's contents are recorded, and read back
-- at every step's time (the history for all but the last, the table for
-- the last), after the table becomes quiet, after compaction, with a
-- dropped column, and inside transactions that wrote or truncated the
-- table (whose own updates a read leaves out).
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE SCHEMA rr;
SET search_path = rr, public;
CREATE TABLE t (a int, b text, c int);
INSERT INTO t VALUES (1, 'one', 10), (1, 'one', 10), (NULL, NULL, NULL);
SELECT mzcoord.create_table('t', '1 hour') IS NOT NULL AS registered;

-- Each step is one transaction; its commit time and the table's rows (as
-- text of the columns that stay) are recorded, and the step is observed
-- as a strict serializable read would, so the next one commits later.
CREATE TABLE steps (step int, ts bigint);
CREATE TABLE snaps (step int, r text);
CREATE FUNCTION record_step(p_step int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO steps SELECT p_step, upper - 1 FROM mzcoord.frontiers
     WHERE relation = 'rr.t'::regclass;
    INSERT INTO snaps SELECT p_step, ROW(x.a, x.b)::text FROM rr.t x;
    PERFORM mzcoord.select_timestamp(ARRAY['rr.t'::regclass], 'strict serializable');
END
$$;
-- The steps whose read_at at their time differs from their recorded rows
-- (as multisets); none.
CREATE FUNCTION mismatches() RETURNS TABLE (step int, missing bigint, extra bigint)
LANGUAGE sql AS $$
    SELECT s.step,
           (SELECT count(*) FROM (SELECT r FROM rr.snaps n WHERE n.step = s.step
                                  EXCEPT ALL
                                  SELECT ROW(x.a, x.b)::text FROM mzcoord.read_at(NULL::rr.t, s.ts) x) m),
           (SELECT count(*) FROM (SELECT ROW(x.a, x.b)::text FROM mzcoord.read_at(NULL::rr.t, s.ts) x
                                  EXCEPT ALL
                                  SELECT r FROM rr.snaps n WHERE n.step = s.step) e)
      FROM rr.steps s
$$;
CREATE VIEW bad AS SELECT * FROM mismatches() WHERE missing <> 0 OR extra <> 0;
SELECT record_step(0);

INSERT INTO t VALUES (2, 'two', 20), (3, 'three', 30);
SELECT record_step(1);
UPDATE t SET b = 'ONE' WHERE a = 1;
SELECT record_step(2);
DELETE FROM t WHERE a = 2;
SELECT record_step(3);
-- Read at the last step: the table itself (nothing after it).
SELECT * FROM bad;
SELECT count(*) AS rows_at_last_step
  FROM mzcoord.read_at(NULL::t, (SELECT max(ts) FROM steps));

TRUNCATE t;
SELECT record_step(4);
INSERT INTO t VALUES (4, 'four', 40), (4, 'four', 40);
SELECT record_step(5);
SELECT * FROM bad;

-- A dropped column reads as absent both ways.
ALTER TABLE t DROP COLUMN c;
INSERT INTO t VALUES (5, 'five');
SELECT record_step(6);
SELECT * FROM bad;
SELECT * FROM mzcoord.read_at(NULL::t, (SELECT max(ts) FROM steps)) ORDER BY a, b;

-- Later times with nothing after them read the same rows as the last step.
SELECT wait_until($$SELECT upper > (SELECT max(ts) FROM rr.steps) + 5
                     FROM mzcoord.frontiers WHERE relation = 'rr.t'::regclass$$);
SELECT (SELECT array_agg(ROW(x.a, x.b)::text ORDER BY 1)
          FROM mzcoord.read_at(NULL::t, (SELECT upper - 1 FROM mzcoord.frontiers
                                          WHERE relation = 'rr.t'::regclass)) x)
     = (SELECT array_agg(r ORDER BY 1) FROM snaps WHERE step = 6) AS quiet_read_is_last_step;

-- A transaction that wrote the table reads without its own updates.
BEGIN;
INSERT INTO t VALUES (6, 'six');
DELETE FROM t WHERE a = 5;
SELECT ROW(x.a, x.b)::text AS own_writes_left_out
  FROM mzcoord.read_at(NULL::t, (SELECT max(ts) FROM steps)) x ORDER BY 1;
ROLLBACK;
BEGIN;
TRUNCATE t;
SELECT count(*) AS truncated_in_this_transaction_still_reads
  FROM mzcoord.read_at(NULL::t, (SELECT max(ts) FROM steps));
ROLLBACK;

-- After compaction up to the since, the times it keeps read the same.
SELECT mzcoord.set_retain_history('t', '1 second');
SELECT wait_until($$SELECT since > (SELECT max(ts) FROM rr.steps)
                     FROM mzcoord.frontiers WHERE relation = 'rr.t'::regclass$$);
SELECT mzcoord.compact('t') AS compacted \gset
-- A longer retain history stops the since where it is (it never regresses).
SELECT mzcoord.set_retain_history('t', '1 hour');
DELETE FROM steps WHERE ts < (SELECT since FROM mzcoord.frontiers WHERE relation = 'rr.t'::regclass);
INSERT INTO steps SELECT 7, since FROM mzcoord.frontiers WHERE relation = 'rr.t'::regclass;
INSERT INTO snaps SELECT 7, r FROM snaps WHERE step = 6;
SELECT * FROM bad;
SELECT count(*) AS steps_read FROM steps;

RESET search_path;
DROP SCHEMA rr CASCADE;
