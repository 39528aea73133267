--
-- mzcoord.read_at in a FROM clause runs as the read_at scan, which streams
-- the rows instead of storing them first.  It must give exactly what the
-- function gives (called where the scan does not take it: in the select
-- list), check what the function checks, and leave alone the forms it
-- does not take over.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE SCHEMA rs;
SET search_path = rs, public;
CREATE TABLE t (a int, b text, c int);
INSERT INTO t SELECT i % 50, 'row ' || i, i FROM generate_series(1, 500) i;
INSERT INTO t VALUES (NULL, NULL, NULL), (1, 'row 1', 1);
SELECT mzcoord.create_table('t', '1 hour') IS NOT NULL AS registered;

-- A time, the table's rows at it, and a strict serializable read after it.
CREATE TABLE marks (name text PRIMARY KEY, ts bigint);
CREATE FUNCTION mark(p_name text) RETURNS void LANGUAGE sql AS $$
    INSERT INTO rs.marks
    SELECT p_name, mzcoord.select_timestamp(ARRAY['rs.t'::regclass], 'strict serializable') $$;
CREATE FUNCTION at(p_name text) RETURNS bigint LANGUAGE sql STABLE
    AS $$ SELECT ts FROM rs.marks WHERE name = p_name $$;
-- The rows by the scan and by the function (select list), as multisets:
-- how many differ either way (all columns, and the two that stay).
CREATE FUNCTION differ(p_ts bigint) RETURNS TABLE (missing bigint, extra bigint)
LANGUAGE sql AS $$
    WITH s AS (SELECT ROW(r.a, r.b, r.c)::text AS x FROM mzcoord.read_at(NULL::rs.t, p_ts) r),
         f AS (SELECT ROW((x).a, (x).b, (x).c)::text AS x
                 FROM (SELECT mzcoord.read_at(NULL::rs.t, p_ts) AS x) q)
    SELECT (SELECT count(*) FROM (SELECT x FROM f EXCEPT ALL SELECT x FROM s) m),
           (SELECT count(*) FROM (SELECT x FROM s EXCEPT ALL SELECT x FROM f) e) $$;
CREATE FUNCTION differ_ab(p_ts bigint) RETURNS TABLE (missing bigint, extra bigint)
LANGUAGE sql AS $$
    WITH s AS (SELECT ROW(r.a, r.b)::text AS x FROM mzcoord.read_at(NULL::rs.t, p_ts) r),
         f AS (SELECT ROW((x).a, (x).b)::text AS x
                 FROM (SELECT mzcoord.read_at(NULL::rs.t, p_ts) AS x) q)
    SELECT (SELECT count(*) FROM (SELECT x FROM f EXCEPT ALL SELECT x FROM s) m),
           (SELECT count(*) FROM (SELECT x FROM s EXCEPT ALL SELECT x FROM f) e) $$;

SELECT mark('loaded');
-- Quiet: the scan reads the table itself.
EXPLAIN (COSTS OFF) SELECT * FROM mzcoord.read_at(NULL::t, 1);
SELECT * FROM differ(at('loaded'));
SELECT count(*), count(a), sum(c) FROM mzcoord.read_at(NULL::t, at('loaded'));

UPDATE t SET b = 'updated' WHERE a = 7;
DELETE FROM t WHERE a = 8;
SELECT mark('updated');
-- An earlier time reads the history.
SELECT * FROM differ(at('loaded'));
SELECT * FROM differ(at('updated'));
DROP FUNCTION differ(bigint);
ALTER TABLE t DROP COLUMN c;
INSERT INTO t VALUES (99, 'after the drop');
SELECT mark('changed');
-- After a dropped column.
SELECT * FROM differ_ab(at('loaded'));
SELECT * FROM differ_ab(at('changed'));
SELECT count(*), count(a), count(*) FILTER (WHERE b = 'updated') AS updated
  FROM mzcoord.read_at(NULL::t, at('loaded'));
SELECT count(*), count(a), count(*) FILTER (WHERE b = 'updated') AS updated
  FROM mzcoord.read_at(NULL::t, at('changed'));

-- Conditions, projections and joins on the scan.
SELECT a, b FROM mzcoord.read_at(NULL::t, at('changed')) WHERE a = 7 ORDER BY b LIMIT 3;
SELECT r.a, count(*) FROM mzcoord.read_at(NULL::t, at('changed')) r
  JOIN generate_series(5, 9) g ON g = r.a GROUP BY r.a ORDER BY r.a;
-- Read again for every outer row (a rescan).
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT g, (SELECT count(*) FROM mzcoord.read_at(NULL::t, at('loaded')) r WHERE r.a = g)
  FROM generate_series(6, 8) g;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
-- A parameter of a prepared statement.
PREPARE q(bigint) AS SELECT count(*) FROM mzcoord.read_at(NULL::t, $1);
EXECUTE q(at('loaded'));
EXECUTE q(at('changed'));
DEALLOCATE q;

-- A sub-select argument is computed first (an init plan).
EXPLAIN (COSTS OFF) SELECT * FROM mzcoord.read_at(NULL::t, (SELECT max(ts) FROM marks));
SELECT count(*) FROM mzcoord.read_at(NULL::t, (SELECT max(ts) FROM marks));

-- Forms the scan leaves to the function: WITH ORDINALITY, the whole row,
-- LATERAL; the same rows either way.
EXPLAIN (COSTS OFF) SELECT * FROM mzcoord.read_at(NULL::t, 1) WITH ORDINALITY;
EXPLAIN (COSTS OFF) SELECT r FROM mzcoord.read_at(NULL::t, 1) r;
EXPLAIN (COSTS OFF) SELECT r.a FROM mzcoord.read_at(NULL::t, 1) r WHERE r::text = '(1,x)';
SELECT count(*) FROM mzcoord.read_at(NULL::t, at('changed')) r WHERE r::text = '(99,"after the drop")';
EXPLAIN (COSTS OFF) SELECT * FROM marks m, LATERAL mzcoord.read_at(NULL::t, m.ts) r;
SELECT count(*) FROM mzcoord.read_at(NULL::t, at('changed')) WITH ORDINALITY;
SELECT m.name, count(*) FROM marks m, LATERAL mzcoord.read_at(NULL::t, m.ts) r
 GROUP BY m.name ORDER BY m.name;
-- A function of the same name that is not mzcoord's.
CREATE FUNCTION rs.read_at(rel anyelement, at bigint) RETURNS SETOF anyelement
    LANGUAGE sql AS $$ SELECT rel $$;
EXPLAIN (COSTS OFF) SELECT * FROM rs.read_at(NULL::t, 1);

-- What the function checks, the scan checks.
SELECT try($$SELECT * FROM mzcoord.read_at(NULL::t, NULL)$$);
SELECT try($$SELECT * FROM mzcoord.read_at(NULL::t, -1)$$);
SELECT try($$SELECT * FROM mzcoord.read_at(NULL::marks, 1)$$);
SELECT try($$SELECT * FROM mzcoord.read_at(NULL::t, 0)$$);
CREATE ROLE rs_reader;
GRANT USAGE ON SCHEMA rs TO rs_reader;
GRANT SELECT ON marks TO rs_reader;
SET ROLE rs_reader;
SELECT try($$SELECT * FROM mzcoord.read_at(NULL::rs.t, rs.at('changed'))$$);
RESET ROLE;
GRANT SELECT ON t TO rs_reader;
BEGIN;
REVOKE EXECUTE ON FUNCTION mzcoord.read_at(anyelement, bigint) FROM PUBLIC;
SET ROLE rs_reader;
SELECT try($$SELECT * FROM mzcoord.read_at(NULL::rs.t, rs.at('changed'))$$);
ROLLBACK;
SET ROLE rs_reader;
SELECT count(*) FROM mzcoord.read_at(NULL::rs.t, rs.at('changed'));
RESET ROLE;

-- A corrupt history (an insertion removed behind mzcoord's back): a read
-- through it ends with read_at's error, by the scan as by the function.
CREATE TABLE bad (k int);
INSERT INTO bad SELECT g FROM generate_series(1, 10) g;
SELECT mzcoord.create_table('bad', '1 hour') IS NOT NULL AS registered;
DELETE FROM bad WHERE k = 5;
INSERT INTO marks
SELECT 'bad', mzcoord.select_timestamp(ARRAY['rs.bad'::regclass], 'strict serializable');
INSERT INTO bad VALUES (11);
SELECT history AS badhist FROM mzcoord.storage WHERE relation = 'rs.bad'::regclass \gset
DELETE FROM :badhist WHERE c1 = 5 AND diff > 0;
SELECT try($$SELECT count(*) FROM mzcoord.read_at(NULL::rs.bad, rs.at('bad'))$$);
SELECT try($$SELECT count(*) FROM (SELECT mzcoord.read_at(NULL::rs.bad, rs.at('bad'))) x$$);
DROP TABLE bad;

SELECT * FROM mzcoord.check_consistency();
DROP SCHEMA rs CASCADE;
DROP ROLE rs_reader;
