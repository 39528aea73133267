--
-- Incremental refresh of continual materialized views (incremental.c):
-- random writes in many transactions, then at every commit time each view
-- equals (a) its twin that the incremental path cannot take (OFFSET 0), and
-- (b) its query computed by PostgreSQL over read_at of the inputs.
--
CREATE SCHEMA inc;
CREATE TABLE inc.t1 (k int, g int, v int, w bigint);
CREATE TABLE inc.t2 (g int, name text, f int);
INSERT INTO inc.t1 VALUES (1, 1, 10, 100), (2, 1, NULL, NULL), (3, 2, 5, 7);
INSERT INTO inc.t2 VALUES (1, 'one', 1), (2, 'two', 0), (3, 'three', 1);
SELECT mzcoord.create_table('inc.t1', '1 hour') IS NOT NULL AS t1,
       mzcoord.create_table('inc.t2', '1 hour') IS NOT NULL AS t2;

-- The queries, {t1}, {t2} and {g} standing for the inputs.
CREATE TABLE inc.defs (name text PRIMARY KEY, query text NOT NULL);
INSERT INTO inc.defs VALUES
-- filter and projection
('f',   'SELECT k, v * 2 AS v2, w FROM {t1} t1 WHERE v IS NULL OR v % 3 <> 0'),
-- inner join with a filter on each side
('j',   'SELECT t1.k, t1.v, t2.name FROM {t1} t1 JOIN {t2} t2 ON t1.g = t2.g WHERE t2.f > 0 AND t1.k < 25'),
-- a self-join
('s',   'SELECT a.k, b.k AS k2 FROM {t1} a, {t1} b WHERE a.g = b.g AND a.k < b.k'),
-- GROUP BY with every count: always incremental
('g',   'SELECT g, count(*) AS n, count(v) AS nv, sum(v) AS sv, count(w) AS nw, sum(w) AS sw FROM {t1} t1 GROUP BY g'),
-- GROUP BY without count(*): a group losing rows is recomputed
('g2',  'SELECT g, sum(v) AS sv, sum(w) AS sw FROM {t1} t1 GROUP BY g'),
-- join and GROUP BY on a text key
('jg',  'SELECT t2.name, count(*) AS n, sum(t1.v) AS sv FROM {t1} t1 JOIN {t2} t2 USING (g) GROUP BY t2.name'),
-- aggregates without GROUP BY: one row, even of no rows
('tot', 'SELECT count(*) AS n, sum(v) AS sv, sum(w) AS sw, count(k) AS nk FROM {t1} t1'),
-- a view over a view (g, created before it), summing bigints into numeric
('v',   'SELECT g.n, count(*) AS groups, sum(g.nv) AS snv, count(g.nv) AS cnv FROM {g} g GROUP BY g.n'),
-- min and max, retractions of the extremes included (incremental over
-- intervals; recomputed at single times)
('mm',  'SELECT g, min(v) AS lo, max(k) AS hk, min(w) AS lw, max(w) AS hw FROM {t1} t1 GROUP BY g'),
('mmt', 'SELECT f, min(name) AS lo, max(name) AS hi FROM {t2} t2 GROUP BY f');

SELECT name, mzcoord.create_materialized_view('inc.' || name,
           replace(replace(replace(query, '{t1}', 'inc.t1'), '{t2}', 'inc.t2'), '{g}', 'inc.g'),
           retain_history => '1 hour') IS NOT NULL AS created,
       mzcoord.create_materialized_view('inc.' || name || '_r',
           replace(replace(replace(query, '{t1}', 'inc.t1'), '{t2}', 'inc.t2'), '{g}', 'inc.g') || ' OFFSET 0',
           retain_history => '1 hour') IS NOT NULL AS twin
  FROM inc.defs ORDER BY name;

-- Random writes, one transaction each; every commit time is recorded.
-- Most are a few milliseconds apart, so they commit at times of their own;
-- the others may share a time with the one before.
CREATE TABLE inc.times (ts bigint);
SELECT setseed(0.5);
DO $$
DECLARE
    r float8;
    kk int;
BEGIN
    FOR i IN 1..150 LOOP
        r := random();
        kk := 1 + floor(random() * 30)::int;
        IF r < 0.35 THEN
            -- a few rows, repeated rows and NULLs among them (NULL groups too)
            INSERT INTO inc.t1
            SELECT kk + j % 2, CASE WHEN random() < 0.05 THEN NULL ELSE 1 + floor(random() * 6)::int END,
                   CASE WHEN random() < 0.25 THEN NULL ELSE floor(random() * 20)::int - 5 END,
                   CASE WHEN random() < 0.25 THEN NULL ELSE floor(random() * 1e12)::bigint END
              FROM generate_series(1, 1 + floor(random() * 4)::int) j;
        ELSIF r < 0.5 THEN
            UPDATE inc.t1 SET v = CASE WHEN random() < 0.3 THEN NULL ELSE v + 1 END,
                              w = w - 3
             WHERE t1.k = kk;
            UPDATE inc.t1 SET g = 1 + floor(random() * 6)::int WHERE t1.k = kk;
        ELSIF r < 0.65 THEN
            DELETE FROM inc.t1 WHERE t1.k BETWEEN kk AND kk + 3;
        ELSIF r < 0.72 THEN
            -- a whole group goes
            DELETE FROM inc.t1 WHERE g = 1 + kk % 6;
        ELSIF r < 0.8 THEN
            INSERT INTO inc.t2 VALUES (1 + kk % 7, (ARRAY['one', 'two', 'three', 'x'])[1 + kk % 4], kk % 2);
        ELSIF r < 0.88 THEN
            DELETE FROM inc.t2 WHERE ctid = (SELECT min(ctid) FROM inc.t2 WHERE g = 1 + kk % 7);
        ELSIF r < 0.93 THEN
            -- both inputs in one transaction
            UPDATE inc.t2 SET f = 1 - f WHERE g = 1 + kk % 7;
            UPDATE inc.t1 SET v = coalesce(v, 0) - 1 WHERE g = 1 + kk % 7;
        ELSE
            -- an insert and a delete of the same rows in one transaction
            INSERT INTO inc.t1 VALUES (kk, 2, 1, 1), (kk, 2, 1, 1);
            DELETE FROM inc.t1 WHERE t1.k = kk AND g = 2;
        END IF;
        COMMIT;
        INSERT INTO inc.times VALUES (mzcoord.last_commit_ts());
        COMMIT;
        IF i % 4 <> 0 THEN
            PERFORM pg_sleep(0.003);
        END IF;
    END LOOP;
END
$$;
SELECT count(DISTINCT ts) > 80 AS distinct_times FROM inc.times;

-- Every view catches up, without a failed refresh (a wrong change would
-- retract rows a view does not have); a view that does not make it fails
-- the comparison below by the timeout rather than hang.
SELECT wait_until(format($$SELECT bool_and(f.upper > %s) FROM mzcoord.frontiers f
                            JOIN mzcoord.items i ON i.id = f.item_id
                           WHERE i.schema_name = 'inc' AND i.kind = 'materialized_view'$$,
                         (SELECT max(ts) FROM inc.times)), 60) AS caught_up;
SELECT i.name, m.failures, m.error
  FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
 WHERE i.schema_name = 'inc' AND m.error IS NOT NULL;
SET statement_timeout = '120s';

-- Every view against its twin and against the query over read_at, at
-- every commit time (read_at of a view waits until its upper passes t).
CREATE FUNCTION inc.differences(p_name text) RETURNS TABLE (ts bigint, kind text, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
    q text := (SELECT query FROM inc.defs WHERE name = p_name);
    direct text;
    mv text;
    twin text;
    t bigint;
BEGIN
    FOR t IN SELECT DISTINCT x.ts FROM inc.times x ORDER BY 1 LOOP
        mv := format('SELECT * FROM mzcoord.read_at(NULL::inc.%I, %s)', p_name, t);
        twin := format('SELECT * FROM mzcoord.read_at(NULL::inc.%I, %s)', p_name || '_r', t);
        direct := replace(replace(replace(q, '{t1}', format('mzcoord.read_at(NULL::inc.t1, %s)', t)),
                                  '{t2}', format('mzcoord.read_at(NULL::inc.t2, %s)', t)),
                          '{g}', format('mzcoord.read_at(NULL::inc.g, %s)', t));
        ts := t;
        kind := 'twin';
        -- The twin recomputes: when more times changed in a step than it
        -- recomputes, it evaluates only the last one and the others are
        -- unreadable (55MZ1).  The view itself never skips (below).
        BEGIN
            EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) d',
                           mv, twin, twin, mv) INTO n;
        EXCEPTION WHEN SQLSTATE '55MZ1' THEN
            n := 0;
        END;
        IF n > 0 THEN RETURN NEXT; END IF;
        kind := 'query';
        EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) d',
                       mv, direct, direct, mv) INTO n;
        IF n > 0 THEN RETURN NEXT; END IF;
    END LOOP;
END
$$;
SELECT d.name, x.* FROM inc.defs d, inc.differences(d.name) x ORDER BY 1, 2, 3;
RESET statement_timeout;

-- Not trivially equal: the views end up with rows.
SELECT (SELECT count(*) FROM inc.f) > 0 AS f, (SELECT count(*) FROM inc.j) > 0 AS j,
       (SELECT count(*) FROM inc.s) > 0 AS s, (SELECT count(*) FROM inc.g) > 0 AS g,
       (SELECT count(*) FROM inc.jg) > 0 AS jg, (SELECT n FROM inc.tot) > 0 AS tot,
       (SELECT count(*) FROM inc.v) > 0 AS v, (SELECT count(*) FROM inc.mm) > 0 AS mm,
       (SELECT count(*) FROM inc.mmt) > 0 AS mmt;

-- Which path ran: the eligible views from the updates, every time of a
-- step at once (times counts the times at which a view changed), all but
-- their first time when the view shows the counts it needs (f, g, j, s,
-- v), only some times otherwise (a group, or the one row of tot, losing an
-- argument of a sum whose count it does not show is recomputed); the
-- twins never.
SELECT i.name, m.times > 20 AS many_times,
       m.incremental_times > 0 AS incremental,
       -- min and max are incremental over intervals only: the times of
       -- the first step after the first one, if any, are recomputed
       CASE WHEN i.name IN ('mm', 'mmt') THEN NULL
            ELSE m.times - m.incremental_times = 1 END AS only_first_recomputed
  FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
 WHERE i.schema_name = 'inc' AND i.name NOT LIKE '%\_r'
 ORDER BY i.name;
SELECT count(*) AS twins_incremental
  FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
 WHERE i.schema_name = 'inc' AND i.name LIKE '%\_r' AND m.incremental_times > 0;

-- mzcoord.incremental = off recomputes (the coordinator reads it).
ALTER SYSTEM SET mzcoord.incremental = off;
SELECT pg_reload_conf();
SELECT wait_ticks(3);
CREATE TEMP TABLE before AS
SELECT i.name, m.incremental_times, m.times
  FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
 WHERE i.schema_name = 'inc';
INSERT INTO inc.t1 VALUES (100, 3, 4, 4);
SELECT count(*) AS rows FROM mzcoord.read_at(NULL::inc.g, mzcoord.last_commit_ts()) WHERE g = 3;
SELECT count(*) AS recomputed_only
  FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
  JOIN before b ON b.name = i.name
 WHERE i.name = 'g' AND m.times = b.times + 1 AND m.incremental_times = b.incremental_times;
ALTER SYSTEM RESET mzcoord.incremental;
SELECT pg_reload_conf();
SELECT wait_ticks(3);
INSERT INTO inc.t1 VALUES (101, 3, 4, 4);
SELECT count(*) AS rows FROM mzcoord.read_at(NULL::inc.g, mzcoord.last_commit_ts()) WHERE g = 3;
SELECT count(*) AS incremental_again
  FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
  JOIN before b ON b.name = i.name
 WHERE i.name = 'g' AND m.times = b.times + 2 AND m.incremental_times = b.incremental_times + 1;

-- The delta relation itself: insertions and retractions at one time.
CREATE TEMP TABLE last AS SELECT mzcoord.last_commit_ts() AS ts;
SELECT * FROM mzcoord._updates_at(NULL::inc.t1, (SELECT ts FROM last), 1);
SELECT count(*) FROM mzcoord._updates_at(NULL::inc.t1, (SELECT ts FROM last), -1);
SELECT * FROM mzcoord._updates_at(NULL::inc.t1, (SELECT ts FROM last), 0);

-- Which queries go incremental (the others recompute), and both give the
-- query's rows: views over a fresh table, one write after their first time.
CREATE TABLE inc.t3 (k int, n numeric, s varchar, c text COLLATE "C");
SELECT mzcoord.create_table('inc.t3') IS NOT NULL AS t3;
CREATE TABLE inc.shapes (name text PRIMARY KEY, query text NOT NULL);
INSERT INTO inc.shapes VALUES
('varchar_key',   'SELECT s, count(*) AS n FROM inc.t3 GROUP BY s'),
('c_key',         'SELECT c, count(*) AS n, sum(k) AS sk FROM inc.t3 GROUP BY c'),
('expr_key',      'SELECT k % 2 AS m, count(*) AS n, sum(k) AS sk FROM inc.t3 GROUP BY k % 2'),
('cross_join',    'SELECT a.k, b.k AS k2 FROM inc.t3 a CROSS JOIN inc.t3 b'),
('using_join',    'SELECT k, a.s, b.c FROM inc.t3 a JOIN inc.t3 b USING (k) WHERE a.n < 3'),
('numeric_key',   'SELECT n, count(*) AS c FROM inc.t3 GROUP BY n'),
('numeric_sum',   'SELECT k, sum(n) AS sn, count(*) AS c FROM inc.t3 GROUP BY k'),
('having_hidden', 'SELECT k, count(*) AS c FROM inc.t3 GROUP BY k HAVING sum(k) > 1'),
('distinct_num',  'SELECT DISTINCT n FROM inc.t3'),
('group_join',    'SELECT a.k FROM inc.t3 a JOIN inc.t3 b USING (k) GROUP BY a.k'),
('key_not_shown', 'SELECT count(*) AS c FROM inc.t3 GROUP BY k'),
('agg_in_expr',   'SELECT k, count(*) + 1 AS c FROM inc.t3 GROUP BY k'),
('agg_filter',    'SELECT k, count(*) FILTER (WHERE n > 1) AS c FROM inc.t3 GROUP BY k'),
('avg_numeric',   'SELECT k, avg(n) AS a FROM inc.t3 GROUP BY k'),
('left_join',     'SELECT a.k, b.s FROM inc.t3 a LEFT JOIN inc.t3 b ON a.k = b.k + 1'),
('order_limit',   'SELECT k FROM inc.t3 ORDER BY k LIMIT 2'),
('sublink',       'SELECT k FROM inc.t3 WHERE k IN (SELECT k FROM inc.t3 WHERE s = ''a'')'),
('window',        'SELECT k, count(*) OVER () AS c FROM inc.t3'),
('target_srf',    'SELECT k, generate_series(1, 2) AS g FROM inc.t3');
SELECT name, mzcoord.create_materialized_view('inc.e_' || name, query) IS NOT NULL AS created
  FROM inc.shapes ORDER BY name;
INSERT INTO inc.t3 VALUES (1, 1.0, 'a', 'x'), (2, 2.50, 'b', 'y'), (2, 2.5, 'a', 'x'),
                          (3, NULL, NULL, NULL);
SELECT wait_until(format($$SELECT bool_and(f.upper > %s) FROM mzcoord.frontiers f
                            JOIN mzcoord.items i ON i.id = f.item_id
                           WHERE i.schema_name = 'inc' AND i.name LIKE 'e\_%%'$$,
                         mzcoord.last_commit_ts())) AS caught_up;
CREATE FUNCTION inc.mismatch(p_view text, p_query text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((TABLE inc.%I EXCEPT ALL (%s)) UNION ALL ((%s) EXCEPT ALL TABLE inc.%I)) d',
                   p_view, p_query, p_query, p_view) INTO n;
    RETURN n;
END
$$;
SELECT s.name, m.incremental_times > 0 AS incremental,
       inc.mismatch('e_' || s.name, s.query) AS mismatch
  FROM inc.shapes s
  JOIN mzcoord.items i ON i.schema_name = 'inc' AND i.name = 'e_' || s.name
  JOIN mzcoord.maintenance m ON m.item_id = i.id
 ORDER BY incremental DESC, s.name;
SELECT count(mzcoord.drop(('inc.e_' || name)::regclass)) AS dropped FROM inc.shapes;


SELECT * FROM mzcoord.check_consistency();
SELECT mzcoord.drop('inc.v'), mzcoord.drop('inc.v_r');
SELECT count(mzcoord.drop(name::regclass)) AS dropped
  FROM (SELECT 'inc.' || name AS name FROM inc.defs
        UNION ALL SELECT 'inc.' || name || '_r' FROM inc.defs) x
 WHERE name NOT IN ('inc.v', 'inc.v_r');
DROP TABLE inc.t1, inc.t2, inc.t3;
DROP SCHEMA inc CASCADE;
SELECT * FROM mzcoord.check_consistency();
