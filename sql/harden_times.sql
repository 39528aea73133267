--
-- Hardening (issue 19): impossible times are refused at once (defect 5),
-- an 'at creation' view sees every write committed before its creation
-- (defect 6), and refresh intervals below the tick are refused (10c).
-- statement_timeout makes the old behaviour (waiting) fail with 57014
-- instead of hanging.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
CREATE SCHEMA ht;
CREATE TABLE ht.t (a int);
SELECT mzcoord.create_table('ht.t', '1 hour') IS NOT NULL AS registered;
SELECT mzcoord.create_source('ht.s', 'a int', '1 hour') IS NOT NULL AS created;

SET statement_timeout = '20s';
-- Defect 5: the largest time can never be complete, on any collection.
SELECT try('SELECT count(*) FROM mzcoord.read_at(NULL::ht.t, 9223372036854775807)');
SELECT try('SELECT count(*) FROM mzcoord.read_at(NULL::ht.s, 9223372036854775807)');
SELECT since AS t_since FROM mzcoord.frontiers WHERE relation = 'ht.t'::regclass \gset
SELECT try(format('SELECT count(*) FROM mzcoord.changes(NULL::ht.t, %s, 9223372036854775807)', :t_since));
SELECT try('SELECT count(*) FROM mzcoord._updates_at(NULL::ht.s, 9223372036854775807, 1)');
SELECT try('SELECT mzcoord.select_timestamp(ARRAY[''ht.t''::regclass], as_of => 9223372036854775807)');
SELECT try('SELECT mzcoord.select_timestamp(ARRAY[''ht.s''::regclass], ''serializable'', as_of_at_least => 9223372036854775807)');
-- Beyond mzcoord.max_future on the table timeline: refused at once.
SET mzcoord.max_future = 1;
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 600000 AS later \gset
SELECT try(format('SELECT count(*) FROM mzcoord.read_at(NULL::ht.t, %s)', :later));
SELECT try(format('SELECT count(*) FROM mzcoord.changes(NULL::ht.t, %s, %s)', :t_since, :later));
-- Nothing is held by a refused call (holds of a transaction last to its end).
BEGIN;
SELECT try(format('SELECT mzcoord.select_timestamp(ARRAY[''ht.t''::regclass], as_of => %s)', :later));
SELECT try('SELECT count(*) FROM mzcoord.read_at(NULL::ht.s, 9223372036854775807)');
SELECT count(*) AS holds FROM mzcoord.holds WHERE pid = pg_backend_pid();
COMMIT;
-- A source's time below the largest can become complete (its upper is
-- explicit): the wait is allowed, and ends when the source advances.
SELECT upper AS s_upper FROM mzcoord.frontiers WHERE relation = 'ht.s'::regclass \gset
SELECT mzcoord.advance_upper('ht.s', :s_upper + 5);
SELECT count(*) FROM mzcoord.read_at(NULL::ht.s, :s_upper + 4);
RESET mzcoord.max_future;

-- Defect 6: an 'at creation' view sees the rows committed before it.
INSERT INTO ht.t SELECT generate_series(1, 100);
SELECT mzcoord.last_commit_ts() AS t_write \gset
SELECT mzcoord.create_materialized_view('ht.once', 'SELECT a FROM ht.t', '1 hour',
    ARRAY['at creation']) IS NOT NULL AS created;
SELECT c.as_of >= :t_write AS after_the_write
  FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
 WHERE s.relation = 'ht.once'::regclass;
INSERT INTO ht.t VALUES (1000);
SELECT wait_until($$SELECT upper IS NULL FROM mzcoord.frontiers WHERE relation = 'ht.once'::regclass$$) AS sealed;
SELECT count(*) AS n, max(a) AS max_a FROM ht.once;
-- Over a source: every append before the creation (upper - 1).
SELECT mzcoord.append(NULL::ht.s, :s_upper + 6, ARRAY[ROW(1), ROW(2)]::ht.s[]);
SELECT mzcoord.advance_upper('ht.s', :s_upper + 8);
SELECT mzcoord.create_materialized_view('ht.once_s', 'SELECT a FROM ht.s', '1 hour',
    ARRAY['at creation']) IS NOT NULL AS created;
SELECT c.as_of - :s_upper AS as_of
  FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
 WHERE s.relation = 'ht.once_s'::regclass;
SELECT wait_until($$SELECT upper IS NULL FROM mzcoord.frontiers WHERE relation = 'ht.once_s'::regclass$$) AS sealed;
SELECT a FROM ht.once_s ORDER BY a;

-- 10c: an interval below mzcoord.tick_interval (100 ms here) is refused.
SELECT try($$SELECT mzcoord.create_materialized_view('ht.fast', 'SELECT a FROM ht.t', refresh => ARRAY['every 1 ms'])$$);
SELECT try($$SELECT mzcoord.create_materialized_view('ht.fast', 'SELECT a FROM ht.t', refresh => ARRAY['at creation', 'every 99 milliseconds'])$$);
SELECT try($$SELECT mzcoord._refresh_canonical('{"every 50 ms"}')$$);
SELECT mzcoord._refresh_canonical('{"every 100 ms"}');
SELECT count(*) AS created FROM mzcoord.items WHERE schema_name = 'ht' AND name = 'fast';
RESET statement_timeout;

DROP SCHEMA ht CASCADE;
SELECT * FROM mzcoord.check_consistency();
