--
-- The compactor rewrites a history only when retractions make it pay.  An
-- insertion that nothing retracts would only be moved to the since, its row
-- rewritten for nothing: an insert-only history keeps its rows where they
-- are, and its compacted frontier stays.  A retraction makes the history
-- due: the rows it cancels go, the rest is consolidated at the since.
--
CREATE SCHEMA cp;
SET search_path = cp, public;
CREATE TABLE log (k int, v text);
SELECT mzcoord.create_table('log') IS NOT NULL AS registered;
SELECT history AS cp_hist, compacted AS cp_compacted0
  FROM mzcoord.storage WHERE relation = 'log'::regclass \gset

INSERT INTO log SELECT g, 'a' FROM generate_series(1, 100) g;
INSERT INTO log SELECT g, 'b' FROM generate_series(101, 200) g;
INSERT INTO log VALUES (1, 'a');   -- the same row again

-- Wait until the since is past the inserts, then until the compactor has
-- taken five more steps and two seconds have passed: twice the age at
-- which a history with anything to remove is due whatever its size.
SELECT wait_until(format($$SELECT f.since > (SELECT max(ts) FROM %s)
                            FROM mzcoord.frontiers f WHERE f.relation = 'cp.log'::regclass$$,
                         :'cp_hist')) AS since_past_inserts;
SELECT steps AS cp_steps0, clock_timestamp() AS cp_clock0
  FROM mzcoord.compaction_status() \gset
SELECT wait_until(format($$SELECT steps >= %s + 5 AND clock_timestamp() > %L::timestamptz + interval '2 seconds'
                            FROM mzcoord.compaction_status()$$,
                         :cp_steps0, :'cp_clock0')) AS compactor_stepped;
SELECT compacted = :cp_compacted0 AS frontier_stays, compactions = 0 AS never_compacted
  FROM mzcoord.storage WHERE relation = 'log'::regclass;
SELECT count(*) AS rows, sum(diff) AS total FROM :cp_hist;
-- Reads at the since are what they were.
SELECT count(*) AS rows_at_since, count(DISTINCT k) AS keys
  FROM mzcoord.read_at(NULL::log, (SELECT since FROM mzcoord.frontiers
                                    WHERE relation = 'log'::regclass));

-- A retraction: both copies of (1, 'a') go.  The history is compacted past
-- it: the retraction and the rows it cancels go, and the other rows stay
-- where they are, below the compacted frontier and read as at it.
DELETE FROM log WHERE k = 1;
SELECT max(ts) AS cp_delete_ts FROM :cp_hist \gset
SELECT wait_until(format($$SELECT compacted > %s FROM mzcoord.storage
                            WHERE relation = 'cp.log'::regclass$$,
                         :cp_delete_ts)) AS compacted_past_delete;
SELECT count(*) AS rows, sum(diff) AS total, bool_and(diff > 0) AS all_insertions,
       min(c1) AS first_key,
       (SELECT compacted FROM mzcoord.storage WHERE relation = 'log'::regclass)
         >= max(ts) AS all_at_or_below_compacted,
       (SELECT compacted_rows FROM mzcoord.storage WHERE relation = 'log'::regclass)
         AS compacted_rows
  FROM :cp_hist;
SELECT count(*) AS rows_at_since
  FROM mzcoord.read_at(NULL::log, (SELECT since FROM mzcoord.frontiers
                                    WHERE relation = 'log'::regclass));

-- mzcoord.compact() moves the compacted frontier of an insert-only history
-- all the same, and rewrites nothing.
INSERT INTO log VALUES (1000, 'c');
SELECT max(ts) AS cp_insert_ts FROM :cp_hist \gset
SELECT wait_until(format($$SELECT f.since > %s
                            FROM mzcoord.frontiers f WHERE f.relation = 'cp.log'::regclass$$,
                         :cp_insert_ts)) AS since_past_insert;
SELECT compacted > :cp_insert_ts AS compacted_past_insert, rows_in, rows_out
  FROM mzcoord.compact('log');
SELECT count(*) AS rows, count(*) FILTER (WHERE ts = :cp_insert_ts) AS new_row_kept_its_time
  FROM :cp_hist;

SELECT * FROM mzcoord.check_consistency();
RESET search_path;
DROP SCHEMA cp CASCADE;
