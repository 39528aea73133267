--
-- Catalog plane: refresh schedules of materialized views.  Clauses are
-- stored in a canonical form (epoch milliseconds), and the as-of of a
-- materialized view with a schedule is its first refresh at or after the
-- least valid read of its inputs (reference 2.7).
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
SET timezone = 'UTC';
-- Times far beyond the clock are refused (mzcoord.max_future, one year by
-- default); these tests use the year 2100.
SET mzcoord.max_future = '36600d';

CREATE SCHEMA rf;
CREATE TABLE rf.t (a int);
SELECT mzcoord.create_table('rf.t') IS NOT NULL AS registered;

CREATE TEMP VIEW mvs AS
SELECT i.name, i.refresh, c.as_of, c.since >= c.as_of AS since_from_as_of,
       -- refreshed or not yet (the coordinator runs them), never before
       c.upper IS NULL OR c.upper >= c.as_of AS upper_from_as_of
  FROM mzcoord.items i JOIN mzcoord.collections c ON c.item_id = i.id
 WHERE i.schema_name = 'rf' AND i.kind = 'materialized_view';

-- A time in the future: the as-of is that time.
SELECT mzcoord.create_materialized_view('rf.at_future', 'SELECT a FROM rf.t',
    refresh => ARRAY['at 4102444800000']) IS NOT NULL;
-- A timestamptz literal means the same, whatever the session's time zone.
SET timezone = 'America/New_York';
SELECT mzcoord.create_materialized_view('rf.at_literal', 'SELECT a FROM rf.t',
    refresh => ARRAY['AT   2100-01-01 00:00:00+00']) IS NOT NULL;
SELECT mzcoord.create_materialized_view('rf.at_local', 'SELECT a FROM rf.t',
    refresh => ARRAY['at 2100-01-01 00:00:00']) IS NOT NULL;
SET timezone = 'UTC';
-- Every day at midnight: the as-of is the next midnight, not before the
-- least valid read of the input.
SELECT mzcoord.create_materialized_view('rf.daily', 'SELECT a FROM rf.t',
    refresh => ARRAY['every 1 day aligned to 2000-01-01 00:00:00+00']) IS NOT NULL;
-- Without alignment it is aligned to the as-of; at creation is the as-of.
SELECT mzcoord.create_materialized_view('rf.hourly', 'SELECT a FROM rf.t',
    refresh => ARRAY['every 1 hour']) IS NOT NULL;
SELECT mzcoord.create_materialized_view('rf.once', 'SELECT a FROM rf.t',
    refresh => ARRAY['at creation']) IS NOT NULL;
-- Several clauses: the earliest one that is not in the past wins.
SELECT mzcoord.create_materialized_view('rf.mixed', 'SELECT a FROM rf.t',
    refresh => ARRAY['at 5', 'at 4102444800000', 'every 7 days aligned to 4102444800000']) IS NOT NULL;

SELECT name, refresh FROM mvs ORDER BY name;
SELECT name, as_of FROM mvs WHERE name IN ('at_future', 'at_literal', 'at_local') ORDER BY name;
SELECT m.name,
       m.as_of >= t.as_of AS not_before_input,
       m.as_of % 86400000 = 0 AS at_midnight,
       m.as_of < t.as_of + 86400000 + 60000 AS the_next_one
  FROM mvs m, mzcoord.collections t
 WHERE t.item_id = (SELECT id FROM mzcoord.items WHERE schema_name = 'rf' AND name = 't')
   AND m.name = 'daily';
SELECT m.name, m.as_of >= t.as_of AS not_before_input, m.since_from_as_of, m.upper_from_as_of
  FROM mvs m, mzcoord.collections t
 WHERE t.item_id = (SELECT id FROM mzcoord.items WHERE schema_name = 'rf' AND name = 't')
 ORDER BY m.name;
-- "every 7 days aligned to a future time" refreshes before that time too.
SELECT as_of < 4102444800000 AS before_alignment,
       (4102444800000 - as_of) % (7 * 86400000) = 0 AS on_the_grid
  FROM mvs WHERE name = 'mixed';
-- The log records the least valid read and the schedule.
SELECT (l.detail->>'least_valid_read')::bigint <= (l.detail->>'since')::bigint AS rounded_up,
       l.detail->'refresh' AS refresh
  FROM mzcoord.implication_log l
 WHERE l.action = 'create' AND l.detail->>'relation' = 'rf.mixed';

-- Errors.
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => '{}')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY[NULL])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => '{{"at creation"}}')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['whenever'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['at'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['at yesterday-ish'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['at infinity'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['at 1960-01-01'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['every 1 month'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['every 0 seconds'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['every -1 hour'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['every 1.5 ms'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['every 1 hour aligned to'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT 1', refresh => ARRAY['every sometimes'])$$);
-- Beyond mzcoord.max_future.
RESET mzcoord.max_future;
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT a FROM rf.t', refresh => ARRAY['at 2100-01-01 00:00:00+00'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT a FROM rf.t', refresh => ARRAY['at 9223372036854775807'])$$);
-- Only past times: it would never refresh.
SELECT try($$SELECT mzcoord.create_materialized_view('rf.x', 'SELECT a FROM rf.t', refresh => ARRAY['at 5', 'at 2000-01-01 00:00:00+00'])$$);
SELECT count(*) AS no_x FROM mzcoord.items WHERE name = 'x';
SELECT * FROM mzcoord.check_consistency();

DROP SCHEMA rf CASCADE;
SELECT * FROM mzcoord.check_consistency();
