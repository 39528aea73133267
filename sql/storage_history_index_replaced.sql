--
-- A history index replaced by hand.  Reads and compaction find a history's
-- rows through the two btree indexes mzcoord created on its ts (one of its
-- insertions, one of its retractions).  One replaced by an index they
-- cannot use (a superuser drops the retractions index and creates a BRIN
-- index under its name) makes the reads that need
-- it fail with a clear error, and makes that history's compaction fail with
-- a warning in the server log; the compactor process goes on compacting
-- every other collection.  (It used to fail on the index itself and exit,
-- to be started again and fail again: no history was compacted.)
--
CREATE SCHEMA hr;
SET search_path = hr, public;
CREATE TABLE broken (k int, v text);
CREATE TABLE healthy (k int, v text);
SELECT mzcoord.create_table('broken') IS NOT NULL AS broken_registered,
       mzcoord.create_table('healthy') IS NOT NULL AS healthy_registered;
SELECT history AS hr_broken FROM mzcoord.storage WHERE relation = 'broken'::regclass \gset
SELECT history AS hr_healthy FROM mzcoord.storage WHERE relation = 'healthy'::regclass \gset
SELECT c.relname AS hr_retname
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE i.indrelid = :'hr_broken'::regclass AND c.relname LIKE '%\_retractions' \gset
SELECT compacted AS hr_compacted0 FROM mzcoord.storage WHERE relation = 'broken'::regclass \gset

INSERT INTO broken SELECT g, 'a' FROM generate_series(1, 100) g;
INSERT INTO healthy SELECT g, 'a' FROM generate_series(1, 100) g;
SELECT wait_until(format($$SELECT f.since > (SELECT max(ts) FROM %s)
                            FROM mzcoord.frontiers f WHERE f.relation = 'hr.broken'::regclass$$,
                         :'hr_broken')) AS since_past_inserts;
-- A lease keeps broken readable after the inserts, before the updates.
SELECT mzcoord.create_lease('hr_lease', '{hr.broken}') > :hr_compacted0 AS leased;
SELECT held_at AS hr_at FROM mzcoord.leases WHERE name = 'hr_lease' \gset

SELECT pid AS hr_compactor FROM pg_stat_activity
 WHERE backend_type = 'mzcoord compactor' \gset
DROP INDEX mzcoord.:"hr_retname";
CREATE INDEX :"hr_retname" ON :hr_broken USING brin (ts) WHERE diff < 0;
UPDATE broken SET v = 'b' WHERE k <= 50;
UPDATE healthy SET v = 'b' WHERE k <= 50;
SELECT max(ts) AS hr_broken_update FROM :hr_broken \gset
SELECT max(ts) AS hr_healthy_update FROM :hr_healthy \gset
-- The compactor sees a history written through its statistics.
SELECT pg_stat_force_next_flush();

-- A read at the lease's time needs the retractions after it: a clear error.
SET hr.at = :hr_at;
DO $$
BEGIN
    PERFORM count(*) FROM mzcoord.read_at(NULL::hr.broken, current_setting('hr.at')::bigint);
    RAISE NOTICE 'read_at succeeded';
EXCEPTION WHEN object_not_in_prerequisite_state THEN
    RAISE NOTICE '% %', SQLSTATE, regexp_replace(SQLERRM, 'u[0-9]+', 'uN', 'g');
END
$$;
RESET hr.at;

-- Without the lease broken's since passes its update, and the compactor
-- looks at it: its compaction fails (a warning in the log, retried a
-- minute later).  The compactor compacts healthy past its update, takes
-- five more steps, and is still the same process.
SELECT mzcoord.drop_lease('hr_lease');
SELECT wait_until(format($$SELECT f.since > %s
                            FROM mzcoord.frontiers f WHERE f.relation = 'hr.broken'::regclass$$,
                         :hr_broken_update)) AS since_past_update;
SELECT steps AS hr_steps0 FROM mzcoord.compaction_status() \gset
SELECT wait_until(format($$SELECT steps >= %s + 5 FROM mzcoord.compaction_status()$$,
                         :hr_steps0)) AS compactor_stepped;
SELECT wait_until(format($$SELECT compacted > %s FROM mzcoord.storage
                            WHERE relation = 'hr.healthy'::regclass$$,
                         :hr_healthy_update)) AS healthy_compacted;
SELECT pid = :hr_compactor AS same_compactor FROM pg_stat_activity
 WHERE backend_type = 'mzcoord compactor';
SELECT compacted = :hr_compacted0 AS broken_not_compacted
  FROM mzcoord.storage WHERE relation = 'broken'::regclass;

-- The index created again as mzcoord creates it: compaction and reads work.
DROP INDEX mzcoord.:"hr_retname";
CREATE INDEX :"hr_retname" ON :hr_broken (ts) WHERE diff < 0;
SELECT compacted > :hr_broken_update AS compacted_past_update
  FROM mzcoord.compact('broken');
SELECT count(*) FILTER (WHERE diff < 0) AS retractions_left FROM :hr_broken;
SELECT count(*) AS rows, count(*) FILTER (WHERE v = 'b') AS new_values
  FROM mzcoord.read_at(NULL::broken, (SELECT since FROM mzcoord.frontiers
                                       WHERE relation = 'broken'::regclass));

SELECT * FROM mzcoord.check_consistency();
RESET search_path;
DROP SCHEMA hr CASCADE;
