--
-- mzcoord.auto_compact = off pauses the coordinator's compaction; history is
-- kept (and read_at stays right) until it is turned back on.
--
CREATE TABLE sp (k int, v int);
SELECT mzcoord.create_table('sp') IS NOT NULL AS registered;
INSERT INTO sp SELECT g, 0 FROM generate_series(1, 10) g;

ALTER SYSTEM SET mzcoord.auto_compact = off;
SELECT pg_reload_conf();
SELECT wait_ticks(3);   -- the coordinator reloads before its next tick
CREATE TEMP TABLE sp_c AS SELECT compacted FROM mzcoord.storage WHERE relation = 'sp'::regclass;
-- The compaction step's counters: no compaction runs while paused.
SELECT compactions AS compactions_before, steps AS steps_before
  FROM mzcoord.compaction_status() \gset
SELECT history AS sp_hist FROM mzcoord.storage WHERE relation = 'sp'::regclass \gset

UPDATE sp SET v = 1;
UPDATE sp SET v = 2;
-- Wait until the since is past the updates, then give the coordinator
-- ten ticks (a small history like this one is due at the first): nothing is
-- compacted.
SELECT wait_until(format($$SELECT f.since > (SELECT max(ts) FROM %s)
                            FROM mzcoord.frontiers f WHERE f.relation = 'sp'::regclass$$,
                          :'sp_hist')) AS since_past_updates;
SELECT wait_ticks(10);
SELECT s.compacted = c.compacted AS not_compacted
  FROM mzcoord.storage s, sp_c c WHERE s.relation = 'sp'::regclass;
-- What the tick published meanwhile is remembered as pending, and no step
-- ran a compaction.
SELECT pending > 0 AS remembered_while_paused,
       compactions = :compactions_before AS none_while_paused,
       steps = :steps_before AS no_steps_while_paused
  FROM mzcoord.compaction_status();
SELECT count(*) FROM mzcoord.read_at(NULL::sp, (SELECT since FROM mzcoord.frontiers
                                                  WHERE relation = 'sp'::regclass))
 WHERE v = 2;

ALTER SYSTEM RESET mzcoord.auto_compact;
SELECT pg_reload_conf();
SELECT wait_until($$SELECT s.compacted > c.compacted FROM mzcoord.storage s, sp_c c
                    WHERE s.relation = 'sp'::regclass$$) AS compacted_again;
-- The step counts a compaction once it returned, just after its commit.
SELECT wait_until(format($$SELECT compactions > %s FROM mzcoord.compaction_status()$$,
                         :compactions_before)) AS counted_soon;
SELECT compactions > :compactions_before AS counted, steps > :steps_before AS stepped
  FROM mzcoord.compaction_status();
SELECT count(*) FROM mzcoord.read_at(NULL::sp, (SELECT since FROM mzcoord.frontiers
                                                  WHERE relation = 'sp'::regclass))
 WHERE v = 2;
DROP TABLE sp;
SELECT * FROM mzcoord.check_consistency();
