--
-- mzcoord.metrics agrees with the views it summarizes (issue 24).
--
\set VERBOSITY terse
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TABLE mt (k int, v int);
SELECT mzcoord.create_table('mt', '1 hour') IS NOT NULL AS registered;
INSERT INTO mt VALUES (1, 1), (2, 2);
SELECT mzcoord.create_materialized_view('mt_mv', 'SELECT k, v FROM mt', '1 hour')
       IS NOT NULL AS created;
SELECT mzcoord.last_commit_ts() AS t0 \gset
SELECT wait_until(format($$SELECT upper > %s FROM mzcoord.frontiers
                            WHERE relation = 'mt_mv'::regclass$$, :t0));

-- Every metric name, with its labels' keys.
SELECT metric, array(SELECT jsonb_object_keys(labels) ORDER BY 1) AS label_keys,
       count(*) > 0 AS present
  FROM mzcoord.metrics
 WHERE metric NOT LIKE 'mzcoord_collection_%' AND metric NOT LIKE 'mzcoord_maintenance_%'
 GROUP BY 1, 2 ORDER BY 1, 2;

-- One since and one upper lag per active collection, labelled with it.
SELECT (SELECT count(*) FROM mzcoord.metrics
         WHERE metric = 'mzcoord_collection_since_lag_seconds')
     = (SELECT count(*) FROM mzcoord.frontiers WHERE since IS NOT NULL AND state = 'active')
       AS one_since_lag_each,
       (SELECT count(*) FROM mzcoord.metrics
         WHERE metric = 'mzcoord_collection_upper_lag_seconds')
     = (SELECT count(*) FROM mzcoord.frontiers WHERE since IS NOT NULL AND state = 'active')
       AS one_upper_lag_each;
SELECT m.labels->>'kind' AS kind, m.value >= 0 AS not_negative
  FROM mzcoord.metrics m
 WHERE m.metric = 'mzcoord_collection_since_lag_seconds'
   AND m.labels->>'relation' IN ('mt', 'mt_mv') ORDER BY 1;
-- The since lag is the timeline minus the since (both read in one query,
-- the timeline only moves forward: the lag is at least what it was).
SELECT m.value * 1000 >= (s.oracle_read_ts - f.since) - 1 AS since_lag_from_frontiers
  FROM mzcoord.frontiers f, mzcoord.controller_status() s, mzcoord.metrics m
 WHERE f.relation = 'mt'::regclass AND m.metric = 'mzcoord_collection_since_lag_seconds'
   AND m.labels->>'relation' = 'mt';

-- Holds: a transaction's hold shows, by kind, as in mzcoord.holds.
BEGIN;
SELECT count(*) AS rows FROM mzcoord.read_at(NULL::mt, :t0);
SELECT m.labels->>'kind' AS kind,
       m.value = (SELECT count(*) FROM mzcoord.holds h WHERE h.holder_kind = m.labels->>'kind')
       AS agrees
  FROM mzcoord.metrics m WHERE m.metric = 'mzcoord_read_holds_current' ORDER BY 1;
SELECT value > 0 AS transaction_hold_counted FROM mzcoord.metrics
 WHERE metric = 'mzcoord_read_holds_current' AND labels->>'kind' = 'transaction';
SELECT value >= 0 AS oldest_age FROM mzcoord.metrics
 WHERE metric = 'mzcoord_hold_oldest_age_seconds';
COMMIT;

-- Leases by state.
SELECT mzcoord.create_lease('mt_lease', ARRAY['mt'::regclass]) > 0 AS leased;
SELECT labels->>'state' AS state, value FROM mzcoord.metrics
 WHERE metric = 'mzcoord_leases_current' ORDER BY 1;
SELECT mzcoord.drop_lease('mt_lease');

-- Maintenance: the view's steps and failures are maintenance_status's.
SELECT m.metric, m.value = CASE m.metric
           WHEN 'mzcoord_maintenance_steps_total' THEN coalesce(s.steps, 0)
           ELSE s.failures END AS agrees
  FROM mzcoord.metrics m JOIN mzcoord.maintenance_status s ON s.name = m.labels->>'object'
 WHERE s.name = 'public.mt_mv'
   AND m.metric IN ('mzcoord_maintenance_steps_total', 'mzcoord_maintenance_failures')
 ORDER BY 1;

-- The tick: its counters are worker_status()'s (which only grow).
SELECT m.value <= w.ticks AS ticks_agree, m.value > 0 AS ticked
  FROM mzcoord.metrics m, mzcoord.worker_status() w
 WHERE m.metric = 'mzcoord_ticks_total';

-- Catalog traffic: a write moves a bound, which the tick publishes.
SELECT value AS bound_rows_before FROM mzcoord.metrics
 WHERE metric = 'mzcoord_catalog_rows_written_total'
   AND labels->>'table' = 'compaction_bounds' \gset
SELECT mzcoord.set_retain_history('mt', '1 second');
INSERT INTO mt VALUES (3, 3);
SELECT wait_until(format($$SELECT value > %s FROM mzcoord.metrics
                            WHERE metric = 'mzcoord_catalog_rows_written_total'
                              AND labels->>'table' = 'compaction_bounds'$$, :bound_rows_before));
SELECT labels->>'table' AS table_name,
       (SELECT value FROM mzcoord.metrics b
         WHERE b.metric = 'mzcoord_catalog_bytes_written_total'
           AND b.labels = m.labels) >= value * 20 AS bytes_per_row_plausible
  FROM mzcoord.metrics m
 WHERE metric = 'mzcoord_catalog_rows_written_total' AND value > 0
   AND labels->>'table' IN ('compaction_bounds', 'coordinator_epoch') ORDER BY 1;

SELECT * FROM mzcoord.check_consistency();
SELECT mzcoord.drop('mt_mv');
DROP TABLE mt;
