--
-- Compute plane: materialized views refreshed by the coordinator (issue 12).
-- Checked against the world: the test writes its inputs in separate
-- transactions, records each commit's time, and compares the view as of
-- each recorded time with the same query written over read_at of the
-- inputs at that time (EXCEPT ALL both ways).  Sources with explicit times
-- make the schedules deterministic.  No timestamp is printed: times are
-- relative to a source's first upper, or shown as booleans and counts.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
SET timezone = 'UTC';
CREATE SCHEMA mvr;
SET search_path = mvr, public;

-- Rows that differ between two queries, counted both ways; $T in either
-- query is replaced by the time.
CREATE FUNCTION mvr.mismatches(mv_q text, ref_q text, t bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    a text := replace(mv_q, '$T', t::text);
    b text := replace(ref_q, '$T', t::text);
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                   a, b, b, a) INTO n;
    RETURN n;
END $$;
-- The rows of a query at a time, as one text.
CREATE FUNCTION mvr.contents_at(q text, t bigint) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE format('SELECT coalesce(string_agg(x::text, '' '' ORDER BY x::text), '''')
                      FROM (%s) x', replace(q, '$T', t::text)) INTO r;
    RETURN r;
END $$;
-- Live frontiers of a relation.
CREATE FUNCTION mvr.upper_of(rel regclass) RETURNS bigint LANGUAGE sql AS
$$ SELECT upper FROM mzcoord.frontiers WHERE relation = rel $$;
CREATE FUNCTION mvr.since_of(rel regclass) RETURNS bigint LANGUAGE sql AS
$$ SELECT since FROM mzcoord.frontiers WHERE relation = rel $$;
CREATE FUNCTION mvr.sealed(rel regclass) RETURNS boolean LANGUAGE sql AS
$$ SELECT upper IS NULL FROM mzcoord.frontiers WHERE relation = rel $$;

-- ---------------------------------------------------------------------
-- Continual views over tables: filter, join, GROUP BY, a PostgreSQL view
-- in the definition, and a view over a view.
-- ---------------------------------------------------------------------
CREATE TABLE mvr.orders (id int, cust int, amount int);
CREATE TABLE mvr.customers (cust int, region text);
SELECT mzcoord.create_table('mvr.orders', '1 hour') IS NOT NULL AS registered;
SELECT mzcoord.create_table('mvr.customers', '1 hour') IS NOT NULL AS registered;
CREATE VIEW mvr.big_orders AS SELECT id, cust, amount FROM mvr.orders WHERE amount >= 10;
-- Write times (an unregistered table: writing it moves no time).  After
-- each write, mvr.record() notes its commit time and waits for the table
-- timeline to pass it, so the next write commits at a later time (not in
-- the same group commit) and each state of the inputs is seen.
CREATE TABLE mvr.times (t bigint);
CREATE PROCEDURE mvr.record() LANGUAGE plpgsql AS $$
DECLARE
    v_t bigint := mzcoord.last_commit_ts();
    deadline timestamptz := clock_timestamp() + interval '30 seconds';
BEGIN
    INSERT INTO mvr.times VALUES (v_t);
    WHILE (SELECT upper FROM mzcoord.frontiers WHERE relation = 'mvr.orders'::regclass) <= v_t
          AND clock_timestamp() < deadline LOOP
        PERFORM pg_sleep(0.01);
    END LOOP;
END $$;
INSERT INTO mvr.customers VALUES (1, 'north'), (2, 'south'), (3, 'north');
CALL mvr.record();
INSERT INTO mvr.orders VALUES (1, 1, 5), (2, 1, 15), (3, 2, 30);
CALL mvr.record();

SELECT mzcoord.create_materialized_view('mvr.m_filter',
    'SELECT id, amount FROM mvr.orders WHERE amount >= 10', '1 hour') IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('mvr.m_join',
    'SELECT o.id, c.region, o.amount FROM mvr.orders o JOIN mvr.customers c ON c.cust = o.cust',
    '1 hour') IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('mvr.m_group',
    'SELECT cust, count(*) AS n, sum(amount) AS total FROM mvr.orders GROUP BY cust',
    '1 hour') IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('mvr.m_view',
    'SELECT cust, amount FROM mvr.big_orders', '1 hour') IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('mvr.m_mv',
    'SELECT region, count(*) AS n, sum(amount) AS total FROM mvr.m_join GROUP BY region',
    '1 hour') IS NOT NULL AS created;
-- The inputs the catalog found: the view is expanded, the upstream view is a leaf.
SELECT i.name, string_agg(s.relation::text, ', ' ORDER BY s.relation::text) AS inputs
  FROM mzcoord.items i
  JOIN mzcoord.item_inputs r ON r.item_id = i.id
  JOIN mzcoord.storage s ON s.global_id = r.input_global_id
 WHERE i.schema_name = 'mvr' AND i.kind = 'materialized_view'
 GROUP BY i.name ORDER BY i.name;

-- The as-of of the views: the first time to check.
SELECT max(c.as_of) AS as_of FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id
 WHERE i.schema_name = 'mvr' AND i.kind = 'materialized_view' \gset

-- Writes, each in its own transaction: inserts, updates, deletes, a
-- customer changing region, a join partner appearing and disappearing,
-- duplicates and NULLs.
INSERT INTO mvr.orders VALUES (4, 3, 12), (5, 4, 50);
CALL mvr.record();
UPDATE mvr.orders SET amount = amount + 10 WHERE id = 1;
CALL mvr.record();
INSERT INTO mvr.customers VALUES (4, 'east');
CALL mvr.record();
UPDATE mvr.customers SET region = 'south' WHERE cust = 1;
CALL mvr.record();
DELETE FROM mvr.orders WHERE id = 3;
CALL mvr.record();
INSERT INTO mvr.orders VALUES (6, 2, 20), (6, 2, 20), (7, NULL, 70), (8, 2, NULL);
CALL mvr.record();
BEGIN;
UPDATE mvr.orders SET amount = 9 WHERE id = 2;
DELETE FROM mvr.customers WHERE cust = 4;
INSERT INTO mvr.orders VALUES (9, 3, 11);
COMMIT;
CALL mvr.record();
DELETE FROM mvr.orders WHERE id = 6;
CALL mvr.record();
UPDATE mvr.customers SET region = 'west' WHERE region = 'north';
CALL mvr.record();
-- Every write committed at a distinct time.
SELECT count(*) AS times, count(DISTINCT t) = count(*) AS distinct_times FROM mvr.times;

-- Once every view is complete past the last write, check each one at
-- every recorded time and one before it.
SELECT wait_until($$SELECT bool_and(f.upper > (SELECT max(t) FROM mvr.times))
                      FROM mzcoord.frontiers f
                     WHERE f.relation IN ('mvr.m_filter'::regclass, 'mvr.m_join'::regclass,
                                          'mvr.m_group'::regclass, 'mvr.m_view'::regclass,
                                          'mvr.m_mv'::regclass)$$) AS complete;
CREATE TABLE mvr.checks (name text, mv_q text, ref_q text);
INSERT INTO mvr.checks VALUES
('m_filter', 'SELECT * FROM mzcoord.read_at(NULL::mvr.m_filter, $T)',
             'SELECT id, amount FROM mzcoord.read_at(NULL::mvr.orders, $T) WHERE amount >= 10'),
('m_join',   'SELECT * FROM mzcoord.read_at(NULL::mvr.m_join, $T)',
             'SELECT o.id, c.region, o.amount FROM mzcoord.read_at(NULL::mvr.orders, $T) o
                JOIN mzcoord.read_at(NULL::mvr.customers, $T) c ON c.cust = o.cust'),
('m_group',  'SELECT * FROM mzcoord.read_at(NULL::mvr.m_group, $T)',
             'SELECT cust, count(*), sum(amount) FROM mzcoord.read_at(NULL::mvr.orders, $T) GROUP BY cust'),
('m_view',   'SELECT * FROM mzcoord.read_at(NULL::mvr.m_view, $T)',
             'SELECT cust, amount FROM mzcoord.read_at(NULL::mvr.orders, $T) WHERE amount >= 10'),
('m_mv',     'SELECT * FROM mzcoord.read_at(NULL::mvr.m_mv, $T)',
             'SELECT c.region, count(*), sum(o.amount) FROM mzcoord.read_at(NULL::mvr.orders, $T) o
                JOIN mzcoord.read_at(NULL::mvr.customers, $T) c ON c.cust = o.cust GROUP BY c.region');
CREATE TEMP TABLE check_times AS
SELECT DISTINCT t FROM (SELECT t FROM mvr.times UNION ALL SELECT t - 1 FROM mvr.times
                        UNION ALL SELECT :as_of) x
 WHERE t >= :as_of;
SELECT c.name, count(*) > 10 AS many_times,
       sum(mvr.mismatches(c.mv_q, c.ref_q, t.t)) AS mismatches,
       bool_or(mvr.contents_at(c.mv_q, t.t) <> '') AS nonempty,
       count(DISTINCT mvr.contents_at(c.mv_q, t.t)) > 3 AS changed_often
  FROM mvr.checks c, check_times t
 GROUP BY c.name ORDER BY c.name;
-- The relations show the contents at the latest complete time (the
-- inputs are quiet now: the contents at the last write).
SELECT c.name,
       mvr.mismatches(format('SELECT * FROM mvr.%I', c.name), c.ref_q,
                      (SELECT max(t) FROM mvr.times)) AS relation_mismatches
  FROM mvr.checks c ORDER BY c.name;
SELECT * FROM mvr.m_mv ORDER BY region;
-- The maintenance status: healthy, steps recorded.
SELECT name, schedule, failures, steps > 0 AS stepped, error IS NULL AS no_error
  FROM mzcoord.maintenance_status
 WHERE name IN ('mvr.m_filter', 'mvr.m_join', 'mvr.m_group', 'mvr.m_view', 'mvr.m_mv')
 ORDER BY name;

-- ---------------------------------------------------------------------
-- The relation of a view is read-only to users.
-- ---------------------------------------------------------------------
SELECT try($$INSERT INTO mvr.m_filter VALUES (100, 100)$$);
SELECT try($$UPDATE mvr.m_filter SET amount = 0$$);
SELECT try($$DELETE FROM mvr.m_filter$$);
SELECT try($$TRUNCATE mvr.m_filter$$);
SELECT mvr.mismatches('SELECT * FROM mvr.m_filter', 'SELECT id, amount FROM mvr.orders WHERE amount >= 10', 0)
       AS unchanged;

-- ---------------------------------------------------------------------
-- A continual view over a source: every time explicit, fully
-- deterministic.  u0 is the source's first upper.
-- ---------------------------------------------------------------------
SELECT mzcoord.create_source('mvr.s', 'k int, v int', '1 hour') IS NOT NULL AS created;
SELECT upper AS u0 FROM mzcoord.frontiers WHERE relation = 'mvr.s'::regclass \gset
CREATE TABLE mvr.u0 AS SELECT :u0::bigint AS u0;
CREATE FUNCTION mvr.rel_upper(rel regclass) RETURNS bigint LANGUAGE sql AS
$$ SELECT upper - (SELECT u0 FROM mvr.u0) FROM mzcoord.frontiers WHERE relation = rel $$;
CREATE FUNCTION mvr.rel_durable_upper(rel regclass) RETURNS bigint LANGUAGE sql AS
$$ SELECT c.upper - (SELECT u0 FROM mvr.u0) FROM mzcoord.collections c
     JOIN mzcoord.storage s USING (global_id) WHERE s.relation = rel $$;
-- Contents of a relation at u0 + p, as text.
CREATE FUNCTION mvr.at(rel regclass, p bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE format('SELECT coalesce(string_agg(x::text, '' '' ORDER BY x::text), ''{}'')
                      FROM mzcoord.read_at(NULL::%s, %s) x', rel, (SELECT u0 FROM mvr.u0) + p) INTO r;
    RETURN r;
END $$;
SELECT mzcoord.create_materialized_view('mvr.m_src',
    'SELECT k, sum(v) AS total, count(*) AS n FROM mvr.s GROUP BY k', '1 hour') IS NOT NULL AS created;
SELECT c.as_of - :u0 AS as_of, c.upper - :u0 AS upper
  FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
 WHERE s.relation = 'mvr.m_src'::regclass;
SELECT mzcoord.append(NULL::mvr.s, :u0, ARRAY[ROW(1, 10), ROW(2, 20)]::mvr.s[]);
SELECT mzcoord.append(NULL::mvr.s, :u0 + 3, ARRAY[ROW(1, 5)]::mvr.s[]);
SELECT mzcoord.append(NULL::mvr.s, :u0 + 7, ARRAY[ROW(3, 1)]::mvr.s[], ARRAY[ROW(2, 20)]::mvr.s[]);
-- Nothing is complete yet: the view waits at its as-of.
SELECT wait_ticks(3);
SELECT mvr.rel_upper('mvr.m_src') AS upper, (SELECT count(*) FROM mvr.m_src) AS rows;
SELECT mzcoord.advance_upper('mvr.s', :u0 + 5);
SELECT wait_until($$SELECT mvr.rel_upper('mvr.m_src') = 5$$);
SELECT mvr.rel_durable_upper('mvr.m_src') AS durable_upper;
SELECT p, mvr.at('mvr.m_src', p) FROM generate_series(0, 4) p;
SELECT * FROM mvr.m_src ORDER BY k;
-- A read at the upper waits for it (here: it is cancelled).
SET statement_timeout = '300ms';
SELECT count(*) FROM mzcoord.read_at(NULL::mvr.m_src, :u0 + 5);
RESET statement_timeout;
SELECT mzcoord.advance_upper('mvr.s', :u0 + 10);
SELECT wait_until($$SELECT mvr.rel_upper('mvr.m_src') = 10$$);
SELECT p, mvr.at('mvr.m_src', p) FROM generate_series(5, 9) p;
SELECT * FROM mvr.m_src ORDER BY k;
-- Its history: the differences at the change times only.
SELECT format('SELECT c1 AS k, c2 AS total, c3 AS n, ts - %s AS t, diff FROM %s ORDER BY ts, c1, diff',
              :u0, history) AS q FROM mzcoord.storage WHERE relation = 'mvr.m_src'::regclass \gset
:q;

-- ---------------------------------------------------------------------
-- Schedules, over the same source.
-- ---------------------------------------------------------------------
-- At creation: once, at the creation's time: for a source, the last time
-- it is complete at (u0 + 9, its upper being u0 + 10), so that it has
-- every append made before; then the upper is the empty frontier.
SELECT mzcoord.create_materialized_view('mvr.m_once', 'SELECT k, v FROM mvr.s',
    '1 hour', ARRAY['at creation']) IS NOT NULL AS created;
SELECT wait_until($$SELECT mvr.sealed('mvr.m_once')$$);
SELECT c.as_of - :u0 AS as_of, c.upper IS NULL AS durable_empty
  FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
 WHERE s.relation = 'mvr.m_once'::regclass;
SELECT mvr.at('mvr.m_once', 9) AS at_9, mvr.at('mvr.m_once', 100000) AS much_later,
       mvr.at('mvr.s', 9) AS source_at_9;
SELECT * FROM mvr.m_once ORDER BY k, v;

-- At given times: refreshed at u0 + 12 and u0 + 20, the upper waiting at
-- each; after the last one, the empty frontier.
SELECT mzcoord.create_materialized_view('mvr.m_at', 'SELECT k, v FROM mvr.s', '1 hour',
    ARRAY[format('at %s', :u0 + 20), format('at %s', :u0 + 12)]) IS NOT NULL AS created;
-- And every 10 ms aligned to u0 + 5: its as-of is u0 + 5 (the first
-- refresh at or after u0), then it refreshes at u0 + 15, 25, ...  An
-- interval below mzcoord.tick_interval (100 ms here) is refused at
-- creation: lower the setting for it.  A new session starts with the
-- reloaded settings (the postmaster reloads them before it forks it); the
-- view keeps its schedule once the setting is back.
ALTER SYSTEM SET mzcoord.tick_interval = 10;
SELECT pg_reload_conf();
\c
SET timezone = 'UTC';
SET search_path = mvr, public;
SELECT mzcoord.create_materialized_view('mvr.m_every', 'SELECT k, sum(v) AS total FROM mvr.s GROUP BY k',
    '1 hour', ARRAY[format('every 10 milliseconds aligned to %s', :u0 + 5)]) IS NOT NULL AS created;
ALTER SYSTEM RESET mzcoord.tick_interval;
SELECT pg_reload_conf();
\c
SET timezone = 'UTC';
SET search_path = mvr, public;
SHOW mzcoord.tick_interval;
SELECT s.relation, c.as_of - :u0 AS as_of
  FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
 WHERE s.relation IN ('mvr.m_at'::regclass, 'mvr.m_every'::regclass) ORDER BY 1;
SELECT mzcoord.append(NULL::mvr.s, :u0 + 11, ARRAY[ROW(4, 4)]::mvr.s[]);
SELECT mzcoord.append(NULL::mvr.s, :u0 + 14, ARRAY[ROW(5, 5)]::mvr.s[]);
SELECT mzcoord.append(NULL::mvr.s, :u0 + 16, ARRAY[ROW(6, 6)]::mvr.s[]);
-- The source complete to 13: m_at refreshes at 12 and waits at 20; the
-- continual view follows to 13; m_every refreshed at 5 and waits at 15.
SELECT mzcoord.advance_upper('mvr.s', :u0 + 13);
SELECT wait_until($$SELECT mvr.rel_upper('mvr.m_at') = 20 AND mvr.rel_upper('mvr.m_src') = 13$$);
SELECT wait_ticks(3);
SELECT mvr.rel_upper('mvr.m_at') AS m_at, mvr.rel_upper('mvr.m_every') AS m_every,
       mvr.rel_upper('mvr.m_src') AS m_src;
SELECT mvr.at('mvr.m_at', 12) AS at_12, mvr.at('mvr.m_at', 19) AS at_19;
SELECT * FROM mvr.m_at ORDER BY k, v;
-- Complete to 17: m_every refreshes at 15 and waits at 25, above the
-- upper of its input; m_at still waits at 20.
SELECT mzcoord.advance_upper('mvr.s', :u0 + 17);
SELECT wait_until($$SELECT mvr.rel_upper('mvr.m_every') = 25 AND mvr.rel_upper('mvr.m_src') = 17$$);
SELECT name, upper - :u0 AS upper, inputs_upper - :u0 AS inputs_upper
  FROM mzcoord.maintenance_status WHERE name IN ('mvr.m_at', 'mvr.m_every', 'mvr.m_once')
 ORDER BY name;
-- Between refreshes the contents stay at the last refresh (6 at 16 is not
-- in it), while the continual view has it.
SELECT mvr.at('mvr.m_every', 5) AS at_5, mvr.at('mvr.m_every', 14) AS at_14,
       mvr.at('mvr.m_every', 15) AS at_15, mvr.at('mvr.m_every', 24) AS at_24;
SELECT mvr.at('mvr.m_src', 16) AS continual_at_16;
SELECT * FROM mvr.m_every ORDER BY k;
-- Complete to 40: m_at refreshes at 20 (its last: empty frontier), m_every
-- at 25 and 35 and waits at 45.
SELECT mzcoord.append(NULL::mvr.s, :u0 + 30, ARRAY[]::mvr.s[], ARRAY[ROW(4, 4)]::mvr.s[]);
SELECT mzcoord.advance_upper('mvr.s', :u0 + 40);
SELECT wait_until($$SELECT mvr.sealed('mvr.m_at') AND mvr.rel_upper('mvr.m_every') = 45
                       AND mvr.rel_upper('mvr.m_src') = 40$$);
SELECT c.upper IS NULL AS m_at_durable_empty
  FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
 WHERE s.relation = 'mvr.m_at'::regclass;
SELECT mvr.at('mvr.m_at', 20) AS at_20, mvr.at('mvr.m_at', 100000) AS much_later;
SELECT p, mvr.at('mvr.m_every', p) FROM (VALUES (25), (34), (35), (44)) v(p);
-- A scheduled view without inputs refreshes once: nothing can change
-- after (it does not run ahead through its schedule).
SELECT mzcoord.create_materialized_view('mvr.m_const', 'SELECT 1 AS one', '1 hour',
    ARRAY['every 100 milliseconds']) IS NOT NULL AS created;
SELECT wait_until($$SELECT mvr.sealed('mvr.m_const')$$) AS sealed;
SELECT wait_ticks(3);
SELECT steps FROM mzcoord.maintenance_status WHERE name = 'mvr.m_const';
SELECT * FROM mvr.m_const;
-- Each scheduled view against the query over its input at each refresh
-- time, and the time before the next.
SELECT v.rel, count(*) AS times_checked,
       sum(mvr.mismatches(format('SELECT * FROM mzcoord.read_at(NULL::%s, %s)', v.rel, :u0 + x.p),
                          format(v.ref, :u0 + x.r), 0)) AS mismatches
  FROM (VALUES ('mvr.m_at', 'SELECT k, v FROM mzcoord.read_at(NULL::mvr.s, %s)'),
               ('mvr.m_every', 'SELECT k, sum(v) FROM mzcoord.read_at(NULL::mvr.s, %s) GROUP BY k')) v(rel, ref),
       (VALUES ('mvr.m_at', 12, 12), ('mvr.m_at', 19, 12), ('mvr.m_at', 20, 20), ('mvr.m_at', 500, 20),
               ('mvr.m_every', 5, 5), ('mvr.m_every', 14, 5), ('mvr.m_every', 15, 15), ('mvr.m_every', 24, 15), ('mvr.m_every', 25, 25),
               ('mvr.m_every', 34, 25), ('mvr.m_every', 35, 35), ('mvr.m_every', 44, 35)) x(rel, p, r)
 WHERE x.rel = v.rel
 GROUP BY v.rel ORDER BY v.rel;
-- The continual one at every time from u0 to its upper.
SELECT count(*) AS times_checked,
       sum(mvr.mismatches(format('SELECT * FROM mzcoord.read_at(NULL::mvr.m_src, %s)', :u0 + p),
                          format('SELECT k, sum(v), count(*) FROM mzcoord.read_at(NULL::mvr.s, %s) GROUP BY k', :u0 + p),
                          0)) AS mismatches
  FROM generate_series(0, 39) p;

-- ---------------------------------------------------------------------
-- Indexes follow their relation's upper: on a source and on a view.
-- ---------------------------------------------------------------------
SELECT mzcoord.create_index('mvr.s_k', 'mvr.s', ARRAY['k']) IS NOT NULL AS created;
SELECT mzcoord.create_index('mvr.m_src_k', 'mvr.m_src', ARRAY['k']) IS NOT NULL AS created;
-- (A change right at the continual view's upper, 40, counts too.)
SELECT mzcoord.append(NULL::mvr.s, :u0 + 40, ARRAY[ROW(7, 7)]::mvr.s[]);
SELECT mzcoord.advance_upper('mvr.s', :u0 + 50);
SELECT wait_until($$SELECT mvr.rel_upper('mvr.s_k') = 50 AND mvr.rel_upper('mvr.m_src_k') = 50$$);
SELECT mvr.at('mvr.m_src', 39) AS at_39, mvr.at('mvr.m_src', 40) AS at_40;
SELECT count(*) AS times_checked,
       sum(mvr.mismatches(format('SELECT * FROM mzcoord.read_at(NULL::mvr.m_src, %s)', :u0 + p),
                          format('SELECT k, sum(v), count(*) FROM mzcoord.read_at(NULL::mvr.s, %s) GROUP BY k', :u0 + p),
                          0)) AS mismatches
  FROM generate_series(0, 49) p;
SELECT mvr.rel_upper('mvr.s_k') AS source_index, mvr.rel_upper('mvr.m_src_k') AS view_index;
-- On a table: it keeps up with the table's upper as it moves.
SELECT mzcoord.create_index('mvr.orders_id', 'mvr.orders', ARRAY['id']) IS NOT NULL AS created;
SELECT upper AS orders_upper FROM mzcoord.frontiers WHERE relation = 'mvr.orders'::regclass \gset
SELECT wait_until(format($$SELECT upper > %s FROM mzcoord.frontiers
                            WHERE relation = 'mvr.orders_id'::regclass$$, :orders_upper)) AS index_follows;

-- ---------------------------------------------------------------------
-- Retain history of a view: a read below its since is refused.
-- ---------------------------------------------------------------------
SELECT mzcoord.create_source('mvr.s2', 'k int', '1 hour') IS NOT NULL AS created;
SELECT upper AS u2 FROM mzcoord.frontiers WHERE relation = 'mvr.s2'::regclass \gset
SELECT mzcoord.create_materialized_view('mvr.m_short', 'SELECT k FROM mvr.s2') IS NOT NULL AS created;
SELECT mzcoord.append(NULL::mvr.s2, :u2, ARRAY[ROW(1)]::mvr.s2[]);
SELECT mzcoord.append(NULL::mvr.s2, :u2 + 10, ARRAY[ROW(2)]::mvr.s2[]);
SELECT mzcoord.advance_upper('mvr.s2', :u2 + 5000);
-- The default retain history (1 s) lets its since follow its upper; the
-- source keeps its hour.
SELECT wait_until(format($$SELECT since > %s FROM mzcoord.frontiers
                            WHERE relation = 'mvr.m_short'::regclass$$, :u2 + 10)) AS since_moved;
SELECT since = :u2 AS source_since_kept FROM mzcoord.frontiers WHERE relation = 'mvr.s2'::regclass;
SELECT try(format('SELECT count(*) FROM mzcoord.read_at(NULL::mvr.m_short, %s)', :u2 + 1));
SELECT count(*) AS rows_at_4999 FROM mzcoord.read_at(NULL::mvr.m_short, :u2 + 4999);
-- A view with an hour keeps its as-of readable.
SELECT mvr.at('mvr.m_src', 0) AS m_src_at_as_of;

-- ---------------------------------------------------------------------
-- Inputs are released: a table read only by a continual view compacts on
-- its own policy (default retain history) rather than stay at the view's
-- as-of.
-- ---------------------------------------------------------------------
CREATE TABLE mvr.r (a int);
SELECT mzcoord.create_table('mvr.r') IS NOT NULL AS registered;
INSERT INTO mvr.r VALUES (1);
SELECT mzcoord.create_materialized_view('mvr.m_r', 'SELECT a FROM mvr.r') IS NOT NULL AS created;
SELECT c.as_of AS r_as_of
  FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
 WHERE s.relation = 'mvr.m_r'::regclass \gset
INSERT INTO mvr.r VALUES (2);
SELECT wait_until(format($$SELECT since > %s + 1000 FROM mzcoord.frontiers
                            WHERE relation = 'mvr.r'::regclass$$, :r_as_of)) AS input_released;
-- The view's requirement on it follows the view's upper.
SELECT wait_until(format($$SELECT bool_and(r.at > %s)
                             FROM mzcoord.read_requirements r
                             JOIN mzcoord.storage s ON s.global_id = r.input_global_id
                             JOIN mzcoord.frontiers f ON f.relation = 'mvr.m_r'::regclass
                            WHERE s.relation = 'mvr.r'::regclass AND r.item_id = f.item_id$$,
                         :r_as_of)) AS requirement_follows;
SELECT * FROM mvr.m_r ORDER BY a;

-- ---------------------------------------------------------------------
-- Errors.
-- A data error (here a division by zero once a row with 0 arrives) is
-- part of the view's contents: the view is in error from that time, its
-- upper moves on, its relation keeps the last good contents, and a read at
-- a time in error raises the error.  Other views keep refreshing.
-- ---------------------------------------------------------------------
CREATE TABLE mvr.d (k int, v int);
SELECT mzcoord.create_table('mvr.d', '1 hour') IS NOT NULL AS registered;
INSERT INTO mvr.d VALUES (1, 5);
SELECT mzcoord.create_materialized_view('mvr.m_div', 'SELECT k, 100 / v AS q FROM mvr.d', '1 hour')
       IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('mvr.m_d', 'SELECT k, v FROM mvr.d', '1 hour')
       IS NOT NULL AS created;
-- A view over the view in error: the error is its own too.
SELECT mzcoord.create_materialized_view('mvr.m_div2', 'SELECT k FROM mvr.m_div WHERE q > 0', '1 hour')
       IS NOT NULL AS created;
-- A sink over it: exports up to the error, then fails until it is gone.
SELECT mzcoord.create_sink('mvr.div_out', 'mvr.m_div', false) IS NOT NULL AS created;
INSERT INTO mvr.d VALUES (2, 4);
SELECT mzcoord.last_commit_ts() AS t_good \gset
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.m_div2') > %s$$, :t_good)) AS refreshed;
INSERT INTO mvr.d VALUES (3, 0);
SELECT mzcoord.last_commit_ts() AS t_bad \gset
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.d') > %s$$, :t_bad)) AS t_bad_complete;
INSERT INTO mvr.d VALUES (4, 10);
SELECT mzcoord.last_commit_ts() AS t_after \gset
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.d') > %s$$, :t_after)) AS t_after_complete;
-- The views advance past the bad time.
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.m_div') > %s AND mvr.upper_of('mvr.m_div2') > %s$$,
                         :t_after, :t_after)) AS advanced;
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.m_d') > %s$$, :t_after)) AS others_refresh;
SELECT name, failures, error IS NULL AS no_step_error, in_error_since = :t_bad AS in_error_from_t_bad,
       regexp_replace(data_error, '[0-9]{13}', '<ts>') AS data_error, data_error_code
  FROM mzcoord.maintenance_status WHERE name IN ('mvr.m_div', 'mvr.m_div2', 'mvr.m_d') ORDER BY name;
SELECT i.name, e.from_ts = :t_bad AS from_t_bad, e.upto_ts, e.sqlstate,
       regexp_replace(e.message, '[0-9]{13}', '<ts>') AS message
  FROM mzcoord.view_errors e JOIN mzcoord.items i ON i.id = e.item_id
 WHERE i.schema_name = 'mvr' ORDER BY i.name, e.from_ts;
-- A read at a time in error raises the error; before it, the contents.
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::mvr.m_div, %s)', :t_bad));
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::mvr.m_div, %s)', :t_after));
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::mvr.m_div2, %s)', :t_after));
SELECT * FROM mzcoord.read_at(NULL::mvr.m_div, :t_bad - 1) ORDER BY k;
SELECT try(format('SELECT * FROM mzcoord.changes(NULL::mvr.m_div, %s, %s)', :t_good, :t_after));
SELECT mz_diff, "row" FROM mzcoord.changes(NULL::mvr.m_div, :t_good - 1, :t_bad - 1) ORDER BY 2;
-- Its relation keeps the last good contents.
SELECT * FROM mvr.m_div ORDER BY k;
SELECT mvr.mismatches('SELECT * FROM mzcoord.read_at(NULL::mvr.m_d, $T)',
                      'SELECT * FROM mzcoord.read_at(NULL::mvr.d, $T)', :t_after) AS m_d_mismatches;
-- The sink exported up to the error and fails (55000) at it.
SELECT wait_until($$SELECT failures > 0 FROM mzcoord.maintenance_status WHERE name = 'mvr.div_out'$$)
       AS sink_failed;
SELECT regexp_replace(error, '[0-9]{13}', '<ts>') AS error, error_code, upper = :t_bad AS stopped_at_t_bad
  FROM mzcoord.maintenance_status WHERE name = 'mvr.div_out';
SELECT k, q, mz_diff FROM mvr.div_out ORDER BY k;
-- Deleting the bad row closes the error range: the view has contents
-- again, equal to its query, and its inputs were never pinned.
DELETE FROM mvr.d WHERE v = 0;
SELECT mzcoord.last_commit_ts() AS t_fixed \gset
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.m_div') > %s AND mvr.upper_of('mvr.m_div2') > %s$$,
                         :t_fixed, :t_fixed)) AS refreshed;
SELECT i.name, e.from_ts = :t_bad AS from_t_bad, e.upto_ts = :t_fixed AS upto_t_fixed, e.sqlstate
  FROM mzcoord.view_errors e JOIN mzcoord.items i ON i.id = e.item_id
 WHERE i.schema_name = 'mvr' ORDER BY i.name, e.from_ts;
SELECT name, failures, in_error_since, data_error
  FROM mzcoord.maintenance_status WHERE name IN ('mvr.m_div', 'mvr.m_div2') ORDER BY name;
SELECT mvr.mismatches('SELECT * FROM mzcoord.read_at(NULL::mvr.m_div, $T)',
                      'SELECT k, 100 / v FROM mzcoord.read_at(NULL::mvr.d, $T)', :t_fixed) AS mismatches;
SELECT mvr.mismatches('SELECT * FROM mzcoord.read_at(NULL::mvr.m_div2, $T)',
                      'SELECT k FROM mzcoord.read_at(NULL::mvr.d, $T) WHERE 100 / v > 0', :t_fixed)
       AS mismatches2;
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::mvr.m_div, %s)', :t_fixed - 1));
SELECT * FROM mvr.m_div ORDER BY k;
SELECT r.at >= :t_fixed AS requirement_moved_on
  FROM mzcoord.read_requirements r JOIN mzcoord.items i ON i.id = r.item_id
 WHERE i.schema_name = 'mvr' AND i.name = 'm_div';
-- The sink catches up, the times in error left out.
SELECT wait_until(format($$SELECT failures = 0 AND upper > %s
                             FROM mzcoord.maintenance_status WHERE name = 'mvr.div_out'$$, :t_fixed))
       AS sink_recovered;
SELECT k, q, mz_diff, mz_timestamp = :t_fixed AS at_t_fixed FROM mvr.div_out ORDER BY mz_timestamp, k;
SELECT * FROM mzcoord.check_consistency();
SELECT mzcoord.drop('mvr.m_div', cascade => true);

-- Two separate errors give two ranges; the input's since moves on meanwhile
-- (before, the view stayed behind the first bad time and held its input
-- there); ranges below the view's since are deleted by a later refresh.
CREATE TABLE mvr.e (k int, v int);
SELECT mzcoord.create_table('mvr.e', '1 second') IS NOT NULL AS registered;
INSERT INTO mvr.e VALUES (1, 1);
SELECT mzcoord.create_materialized_view('mvr.m_e', 'SELECT k, 100 / v AS q FROM mvr.e', '1 second')
       IS NOT NULL AS created;
-- A cast to a domain whose CHECK fails is a data error too (class 23).
CREATE DOMAIN mvr.posint AS int CHECK (VALUE > 0);
SELECT mzcoord.create_materialized_view('mvr.m_dom', 'SELECT k, v::mvr.posint AS v FROM mvr.e', '1 second')
       IS NOT NULL AS created;
INSERT INTO mvr.e VALUES (2, 0);
SELECT mzcoord.last_commit_ts() AS t1 \gset
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.e') > %s$$, :t1)) AS t1_complete;
DELETE FROM mvr.e WHERE v = 0;
SELECT mzcoord.last_commit_ts() AS t2 \gset
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.e') > %s$$, :t2)) AS t2_complete;
UPDATE mvr.e SET v = 0 WHERE k = 1;
SELECT mzcoord.last_commit_ts() AS t3 \gset
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.e') > %s$$, :t3)) AS t3_complete;
UPDATE mvr.e SET v = 1 WHERE k = 1;
SELECT mzcoord.last_commit_ts() AS t4 \gset
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.m_e') > %s AND mvr.upper_of('mvr.m_dom') > %s$$,
                         :t4, :t4)) AS refreshed;
SELECT i.name, e.from_ts = :t1 AND e.upto_ts = :t2 AS first_range,
       e.from_ts = :t3 AND e.upto_ts = :t4 AS second_range, e.sqlstate, e.message
  FROM mzcoord.view_errors e JOIN mzcoord.items i ON i.id = e.item_id
 WHERE i.schema_name = 'mvr' AND i.name IN ('m_e', 'm_dom') ORDER BY i.name, e.from_ts;
SELECT * FROM mvr.m_dom ORDER BY k;
SELECT wait_until(format($$SELECT mvr.since_of('mvr.e') > %s$$, :t4)) AS input_since_moved_on;
SELECT wait_until(format($$SELECT mvr.since_of('mvr.m_e') > %s$$, :t4)) AS view_since_moved_on;
INSERT INTO mvr.e VALUES (5, 5);
SELECT mzcoord.last_commit_ts() AS t5 \gset
SELECT wait_until(format($$SELECT mvr.upper_of('mvr.m_e') > %s AND mvr.upper_of('mvr.m_dom') > %s$$,
                         :t5, :t5)) AS refreshed;
SELECT count(*) AS ranges_left FROM mzcoord.view_errors e JOIN mzcoord.items i ON i.id = e.item_id
 WHERE i.schema_name = 'mvr' AND i.name IN ('m_e', 'm_dom');
SELECT * FROM mzcoord.check_consistency();
SELECT mzcoord.drop('mvr.m_e');
SELECT mzcoord.drop('mvr.m_dom');

-- A failure that goes away: the view's owner loses SELECT on its input,
-- the refresh fails (42501) and is retried with back-off; once SELECT is
-- granted again the view catches up, its failures back to 0.
CREATE ROLE regress_mvr_owner;
GRANT CREATE, USAGE ON SCHEMA mvr TO regress_mvr_owner;
SET ROLE regress_mvr_owner;
CREATE TABLE mvr.p (k int, v int);
SELECT mzcoord.create_table('mvr.p', '1 hour') IS NOT NULL AS registered;
INSERT INTO mvr.p VALUES (1, 1);
SELECT mzcoord.create_materialized_view('mvr.m_p', 'SELECT k, 10 / v AS q FROM mvr.p', '1 hour')
       IS NOT NULL AS created;
REVOKE SELECT ON mvr.p FROM regress_mvr_owner;
RESET ROLE;
INSERT INTO mvr.p VALUES (2, 2);
SELECT mzcoord.last_commit_ts() AS t_p \gset
SELECT wait_until($$SELECT failures > 0 FROM mzcoord.maintenance_status WHERE name = 'mvr.m_p'$$)
       AS failed;
SELECT failures > 0 AS failing, error, error_code, upper <= :t_p AS behind
  FROM mzcoord.maintenance_status WHERE name = 'mvr.m_p';
GRANT SELECT ON mvr.p TO regress_mvr_owner;
SELECT wait_until(format($$SELECT failures = 0 AND upper > %s
                             FROM mzcoord.maintenance_status WHERE name = 'mvr.m_p'$$, :t_p))
       AS recovered;
SELECT failures, error_code, upper > :t_p AS caught_up
  FROM mzcoord.maintenance_status WHERE name = 'mvr.m_p';
SELECT * FROM mvr.m_p ORDER BY k;
SELECT mvr.mismatches('SELECT * FROM mzcoord.read_at(NULL::mvr.m_p, $T)',
                      'SELECT k, 10 / v FROM mzcoord.read_at(NULL::mvr.p, $T)', :t_p) AS mismatches;

-- ---------------------------------------------------------------------
-- Dropping: an input with dependents is refused; with cascade the views
-- go too.
-- ---------------------------------------------------------------------
SELECT try($$SELECT mzcoord.drop('mvr.customers')$$);
SELECT mzcoord.drop('mvr.customers', cascade => true);
SELECT i.name FROM mzcoord.items i
 WHERE i.schema_name = 'mvr' AND i.kind = 'materialized_view' ORDER BY i.name;

SELECT * FROM mzcoord.check_consistency();

DROP SCHEMA mvr CASCADE;
DROP ROLE regress_mvr_owner;
SELECT * FROM mzcoord.check_consistency();
