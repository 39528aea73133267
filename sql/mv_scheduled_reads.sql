--
-- A scheduled view waits at its next refresh time, ahead of the timeline.
-- Between refreshes it must stay readable at the current time, whatever
-- its retain history (the default one second here): the timeline holds
-- its since back, as Materialize's coordinator holds every collection at
-- its timeline's read time.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
CREATE SCHEMA sr;
CREATE TABLE sr.t (k int);
SELECT mzcoord.create_table('sr.t') IS NOT NULL AS t;
INSERT INTO sr.t VALUES (1), (2);
SELECT mzcoord.create_materialized_view('sr.hourly', 'SELECT k FROM sr.t',
    refresh => ARRAY['every 1 hour']) IS NOT NULL AS hourly;
SELECT mzcoord.create_index('hourly_k', 'sr.hourly', ARRAY['k']) IS NOT NULL AS hourly_k;
SELECT as_of AS first_refresh FROM mzcoord.collections
 WHERE item_id = (SELECT id FROM mzcoord.items WHERE name = 'hourly') \gset
-- Its first refresh runs at its as-of; its upper then waits an hour ahead.
SELECT wait_until(format($$SELECT upper > %s FROM mzcoord.frontiers
                            WHERE relation = 'sr.hourly'::regclass$$, :first_refresh)) AS refreshed;
SELECT upper - :first_refresh AS next_refresh_in_ms
  FROM mzcoord.frontiers WHERE relation = 'sr.hourly'::regclass;
-- What the query gives at the refresh time (its as-of, the least valid
-- read of sr.t when it was created).
SELECT coalesce(array_agg(k ORDER BY k), '{}') AS at_refresh
  FROM mzcoord.read_at(NULL::sr.t, :first_refresh) \gset
-- A write after the refresh.  Ticks later, a read of the view together
-- with its input at the current time works at once: the view's since is
-- held near the timeline (not an hour ahead, below its next refresh), and
-- the view still shows its last refresh while the table shows the write.
INSERT INTO sr.t VALUES (3);
SELECT mzcoord.last_commit_ts() AS w \gset
SELECT wait_ticks(25);
-- At once: well before the next refresh, an hour away.
SET statement_timeout = '60s';
BEGIN;
SELECT mzcoord.select_timestamp(ARRAY['sr.hourly'::regclass, 'sr.t'::regclass,
                                      'sr.hourly_k'::regclass]) AS now_ts \gset
SELECT :now_ts >= :w AS after_the_write, :now_ts < :first_refresh + 3600000 AS before_next_refresh;
-- The view at the current time is its query at its last refresh.
SELECT coalesce(array_agg(k ORDER BY k), '{}') = :'at_refresh' AS view_now_is_query_at_refresh
  FROM mzcoord.read_at(NULL::sr.hourly, :now_ts);
SELECT array_agg(k ORDER BY k) AS table_now FROM mzcoord.read_at(NULL::sr.t, :now_ts);
COMMIT;
RESET statement_timeout;
-- Its since and its bound, published by the coordinator, stay behind the
-- timeline like a table's, not just below the next refresh.
SELECT f.since <= t.upper AS since_behind_timeline,
       b.bound <= t.upper AS bound_behind_timeline
  FROM mzcoord.frontiers f, mzcoord.compaction_bounds b, mzcoord.frontiers t
 WHERE f.relation = 'sr.hourly'::regclass AND b.global_id = f.global_id
   AND t.relation = 'sr.t'::regclass;
SELECT * FROM mzcoord.check_consistency();
SELECT mzcoord.drop('sr.hourly', cascade => true);
SELECT mzcoord.drop('sr.t');
DROP SCHEMA sr CASCADE;
