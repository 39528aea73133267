--
-- The compactor asks of a history with retractions whether enough of them
-- lie below its since to make a compaction pay, at every step that looks
-- at it (each tick while the history is busy).  It counts them through
-- the history's index of retractions, and goes on from where its last
-- count stopped: a retraction below a since stays there until a
-- compaction, so each is counted once per compaction cycle, not once per
-- step.  (It used to count them all again at every step: under TPC-B at 8
-- clients, about 60 index fetches per transaction on the accounts history,
-- one retraction each.)
--
-- A table of 200,000 rows gets 1,000 retractions: far fewer than make a
-- compaction pay (a quarter of its rows), and the age at which it would
-- be compacted anyway (a millisecond per row) is 200 s away.  While the
-- compactor takes step after step, the index fetches it makes stay near
-- one per retraction, plus one per step (the probe for any retraction
-- above the compacted frontier).
--
SET stats_fetch_consistency = none;
CREATE SCHEMA cc;
SET search_path = cc, public;
CREATE TABLE big (k int, v text);
INSERT INTO big SELECT g, 'a' FROM generate_series(1, 200000) g;
SELECT mzcoord.create_table('big') IS NOT NULL AS registered;
SELECT history AS cc_hist, history::text || '_retractions' AS cc_retidx,
       compacted AS cc_compacted0
  FROM mzcoord.storage WHERE relation = 'big'::regclass \gset
SELECT idx_tup_fetch AS cc_fetch0 FROM pg_stat_all_indexes
 WHERE indexrelid = :'cc_retidx'::regclass \gset

UPDATE big SET v = 'b' WHERE k <= 1000;
SELECT wait_until(format($$SELECT f.since > (SELECT max(ts) FROM %s)
                            FROM mzcoord.frontiers f WHERE f.relation = 'cc.big'::regclass$$,
                         :'cc_hist')) AS since_past_update;

-- Wait until the compactor's statistics show every retraction counted
-- and at least ten more of its looks at the history.  Counting them all
-- again at each look would have made at least 2,000 fetches by then (the
-- first statistics showing more than 1,010 come after two looks or more).
SELECT wait_until(format($$SELECT idx_tup_fetch >= %s + 1010 FROM pg_stat_all_indexes
                            WHERE indexrelid = %L::regclass$$,
                         :cc_fetch0, :'cc_retidx'), 120) AS counted;
SELECT idx_tup_fetch - :cc_fetch0 < 1500 AS counted_once
  FROM pg_stat_all_indexes WHERE indexrelid = :'cc_retidx'::regclass;
SELECT compacted = :cc_compacted0 AS not_compacted
  FROM mzcoord.storage WHERE relation = 'big'::regclass;

-- Enough retractions to make it pay: the history is compacted, and they go.
UPDATE big SET v = 'c' WHERE k <= 30000;
SELECT wait_until(format($$SELECT count(*) = 0 FROM %s WHERE diff < 0$$, :'cc_hist'), 120)
       AS compacted;
SELECT * FROM mzcoord.check_consistency();
RESET search_path;
DROP SCHEMA cc CASCADE;
RESET stats_fetch_consistency;
