--
-- Data plane: the history of a registered table.  A scripted history with
-- every kind of write (INSERT, UPDATE, DELETE, COPY, TRUNCATE, MERGE, rolled back
-- and partly rolled back transactions), duplicates, NULLs, wide (toasted)
-- values and many column types, read back with read_at at every time at
-- which something happened, and just before.  Then compaction, and the
-- same reads at the times it keeps.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE SCHEMA sh;
SET search_path = sh, public;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE TYPE pair AS (x int, y text);
CREATE TABLE h (
    id int, txt text, num numeric, flt float8, js json, jb jsonb, pt point,
    iv interval, tz timestamptz, bin bytea, u uuid, b bool, arr int[],
    m mood, d posint, vc varchar(5), ch char(3), pr pair
);

-- Rows before registration, a duplicate among them, and an all-null row.
INSERT INTO h VALUES
    (1, 'one', 1.0, 0.0, '{"a": 1}', '{"a": 1}', '(1,1)', '1 day',
     '2020-01-01 00:00+00', '\x01', '00000000-0000-0000-0000-000000000001',
     true, '{1,2}', 'ok', 1, 'abc', 'ab', ROW(1, 'p')),
    (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL),
    (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO h SELECT * FROM h WHERE id = 1;

-- Registration records the rows as of the registration time, the since.
SELECT mzcoord.create_table('h', '1 hour') AS h_id \gset
SELECT history::text AS hist FROM mzcoord.storage WHERE relation = 'h'::regclass \gset
SELECT kind, history = ('mzcoord.history_' || :'h_id')::regclass AS named_after_collection,
       compacted = (SELECT since FROM mzcoord.collections WHERE global_id = :'h_id')
           AS compacted_at_since,
       compacted_rows
  FROM mzcoord.storage WHERE relation = 'h'::regclass;
SELECT count(*) AS rows, count(DISTINCT ts) AS times, sum(diff) AS total
  FROM :hist;

-- Each step below is one transaction; afterwards its write timestamp and
-- the table's contents are recorded, and the step is read.
CREATE TABLE steps (step int, what text, ts bigint);
CREATE TABLE snaps (step int, r text);
CREATE FUNCTION record_step(p_step int, p_what text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_ts bigint;
BEGIN
    EXECUTE format('SELECT max(ts) FROM %s', (SELECT history FROM mzcoord.storage
                                               WHERE relation = 'sh.h'::regclass))
       INTO v_ts;
    INSERT INTO steps VALUES (p_step, p_what, v_ts);
    INSERT INTO snaps SELECT p_step, h::text FROM sh.h;
    -- Observe the step as a strict serializable read would: later writes
    -- then commit at later times (without a read in between, writes may
    -- share a timestamp, a group commit).
    PERFORM mzcoord.select_timestamp(ARRAY['sh.h'::regclass], 'strict serializable');
END
$$;
SELECT record_step(0, 'registration');

-- 1. Inserts, including a wide value stored out of line.
INSERT INTO h VALUES
    (3, repeat('wide ', 40000), 3.5, 'NaN', '[1, 2]', '[1, 2]', '(3,-3)', '3 hours',
     '2021-06-01 12:00+02', decode(repeat('ff', 5000), 'hex'),
     '00000000-0000-0000-0000-000000000003', false, '{}', 'happy', 3, 'x', 'x', NULL),
    (4, 'four', -4, '-Infinity', 'null', 'null', '(0,0)', '-1 mon', NULL, '\x', NULL,
     NULL, '{NULL}', 'sad', 4, '', '', ROW(NULL, NULL));
SELECT record_step(1, 'insert');

-- 2. Updates to values that are equal but not identical: numeric scale,
--    negative zero, an equivalent interval, a json with other spacing.
UPDATE h SET num = 1.00, flt = '-0', iv = '24 hours', js = '{"a":1}' WHERE id = 1;
SELECT record_step(2, 'update to equal values');

-- 3. An update that changes nothing is not recorded.
SELECT count(*) AS history_rows_before FROM :hist;
UPDATE h SET id = id;
SELECT count(*) AS history_rows_after FROM :hist;

-- 4. Delete one of two identical rows.
DELETE FROM h WHERE ctid = (SELECT min(ctid) FROM h WHERE id = 1);
SELECT record_step(4, 'delete one duplicate');

-- 5. Several statements in one transaction share one timestamp.
BEGIN;
INSERT INTO h (id, txt) VALUES (5, 'five'), (5, 'five');
UPDATE h SET txt = 'FIVE' WHERE id = 5;
DELETE FROM h WHERE id = 4;
INSERT INTO h (id, txt) VALUES (6, 'six');
COMMIT;
SELECT record_step(5, 'one transaction');

-- 6. COPY.
COPY h (id, txt, num, pt, js) FROM stdin;
7	seven	7.7	(7,7)	{"copy": true}
7	seven	7.7	(7,7)	{"copy": true}
8	\N	\N	\N	\N
\.
SELECT record_step(6, 'copy');

-- 7. A rolled back transaction leaves nothing; a rolled back savepoint
--    leaves nothing of its part.
BEGIN;
INSERT INTO h (id) VALUES (100);
DELETE FROM h;
ROLLBACK;
BEGIN;
INSERT INTO h (id, txt) VALUES (9, 'kept');
SAVEPOINT sp;
DELETE FROM h WHERE id = 9;
INSERT INTO h (id) VALUES (101);
ROLLBACK TO sp;
UPDATE h SET txt = 'nine' WHERE id = 9;
COMMIT;
SELECT record_step(7, 'savepoint');

-- 8. TRUNCATE retracts every row.
TRUNCATE h;
SELECT record_step(8, 'truncate');

-- 9. Life after TRUNCATE.
INSERT INTO h (id, txt) VALUES (10, 'ten'), (NULL, NULL);
SELECT record_step(9, 'insert after truncate');

-- 10. MERGE: an update, a delete and an insert in one statement.
INSERT INTO h (id, txt) VALUES (11, 'eleven');
SELECT record_step(10, 'insert');
MERGE INTO h USING (VALUES (10, 'TEN'), (11, NULL), (12, 'twelve')) AS m(id, txt)
   ON h.id = m.id
 WHEN MATCHED AND m.txt IS NULL THEN DELETE
 WHEN MATCHED THEN UPDATE SET txt = m.txt
 WHEN NOT MATCHED THEN INSERT (id, txt) VALUES (m.id, m.txt);
SELECT record_step(11, 'merge');

SELECT step, what FROM steps ORDER BY step;
SELECT count(DISTINCT ts) = count(*) AS one_time_per_step,
       bool_and(ts > prev) AS times_increase
  FROM (SELECT ts, lag(ts) OVER (ORDER BY step) AS prev FROM steps) s;

-- Every step read back at its time is exactly the table as it was then,
-- and just before its time it is the step before.
CREATE FUNCTION diff_at(p_step int, p_ts bigint) RETURNS TABLE (missing bigint, extra bigint)
LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM (SELECT r FROM snaps WHERE step = p_step
                                  EXCEPT ALL
                                  SELECT x::text FROM mzcoord.read_at(NULL::sh.h, p_ts) x) a),
           (SELECT count(*) FROM (SELECT x::text FROM mzcoord.read_at(NULL::sh.h, p_ts) x
                                  EXCEPT ALL
                                  SELECT r FROM snaps WHERE step = p_step) b)
$$;
SELECT s.step, s.what, (SELECT count(*) FROM snaps WHERE step = s.step) AS rows,
       d.missing, d.extra
  FROM steps s CROSS JOIN LATERAL diff_at(s.step, s.ts) d
 ORDER BY s.step;
SELECT s.step, p.missing AS missing_just_before, p.extra AS extra_just_before
  FROM steps s
  CROSS JOIN LATERAL diff_at((SELECT max(step) FROM steps WHERE step < s.step), s.ts - 1) p
 WHERE s.step > 0
 ORDER BY s.step;

-- Reads in between steps, and much later, are the step before.
SELECT count(*) AS rows_between_steps_1_and_2
  FROM mzcoord.read_at(NULL::h, (SELECT (a.ts + b.ts) / 2 FROM steps a, steps b
                                  WHERE a.step = 1 AND b.step = 2));
SELECT (SELECT missing + extra FROM diff_at(11, (SELECT upper - 1 FROM mzcoord.frontiers
                                               WHERE relation = 'h'::regclass)))
       AS differences_at_latest_time;

-- What the reads show, for a few steps (identical values kept apart).
SELECT id, txt IS NULL AS txt_null, length(txt) AS txt_len, num, flt, js, pt, iv,
       length(bin) AS bin_len, m, pr
  FROM mzcoord.read_at(NULL::h, (SELECT ts FROM steps WHERE step = 2))
 ORDER BY id, num::text, txt;
SELECT id, left(txt, 10) AS txt, num, pt, js
  FROM mzcoord.read_at(NULL::h, (SELECT ts FROM steps WHERE step = 6))
 ORDER BY id, txt;

-- The history itself: insertions and retractions per step.
SELECT s.step, coalesce(sum(x.diff) FILTER (WHERE x.diff > 0), 0) AS inserted,
       coalesce(-sum(x.diff) FILTER (WHERE x.diff < 0), 0) AS retracted
  FROM steps s LEFT JOIN :hist x ON x.ts = s.ts
 GROUP BY s.step ORDER BY s.step;
SELECT count(*) AS rows_at_other_times FROM :hist WHERE ts NOT IN (SELECT ts FROM steps);

SELECT * FROM mzcoord.check_consistency();

-- ---------------------------------------------------------------------
-- Compaction.  With a short retain history the since passes the last
-- step, and the coordinator compacts: every retraction is consolidated with
-- the rows it cancels, and what is left below the compacted frontier (one
-- insertion per row still there) is read as at it.
-- ---------------------------------------------------------------------
SELECT mzcoord.set_retain_history('h', '1 second');
SELECT wait_until(format($$SELECT compacted > %s FROM mzcoord.storage WHERE relation = 'sh.h'::regclass$$,
                         (SELECT ts FROM steps WHERE step = 11)));
SELECT bool_and(diff > 0) AS all_insertions, count(*) AS rows, sum(diff) AS total,
       count(*) FILTER (WHERE ts > (SELECT compacted FROM mzcoord.storage
                                     WHERE relation = 'h'::regclass)) AS above_compacted,
       (SELECT count(*) FROM h) AS table_rows
  FROM :hist;
SELECT (SELECT compacted FROM mzcoord.storage WHERE relation = 'h'::regclass)
       <= (SELECT since FROM mzcoord.frontiers WHERE relation = 'h'::regclass)
       AS compaction_not_ahead_of_since,
       (SELECT compactions > 0 FROM mzcoord.storage WHERE relation = 'h'::regclass)
       AS compacted_by_worker;

-- Reads at times the since still allows return the same as before; the
-- older ones are refused.
SELECT (SELECT missing + extra FROM diff_at(11, (SELECT since FROM mzcoord.frontiers
                                               WHERE relation = 'h'::regclass)))
       AS differences_at_since;
SELECT try(format('SELECT count(*) FROM mzcoord.read_at(NULL::sh.h, %s)',
                  (SELECT ts FROM steps WHERE step = 1)));

-- Compacting again without new updates does nothing.
SELECT rows_in, rows_out FROM mzcoord.compact('h');

-- New updates land above the compacted frontier; compacting them folds
-- the retraction and the row it cancels away, and leaves the new row.
UPDATE h SET txt = 'ten again' WHERE id = 10;
SELECT count(*) FILTER (WHERE diff < 0) AS retractions FROM :hist;
SELECT wait_until(format($$SELECT compacted > %s FROM mzcoord.storage WHERE relation = 'sh.h'::regclass$$,
                         (SELECT max(ts) FROM :hist)));
SELECT c1 AS id, c2 AS txt, diff FROM :hist ORDER BY id;

SELECT * FROM mzcoord.check_consistency();

RESET search_path;
DROP SCHEMA sh CASCADE;
SELECT count(*) AS history_left FROM mzcoord.storage WHERE global_id = :'h_id';
SELECT to_regclass(:'hist') AS history_relation;
SELECT * FROM mzcoord.check_consistency();
