--
-- Determinism of materialized view definitions (issue 19, defect 10d).
-- An immutable query can still give different rows from the same inputs:
-- a moment frozen at analysis ('now'), an IMMUTABLE SQL function that calls
-- a volatile one, or a result that depends on the order in which rows come
-- (LIMIT, DISTINCT ON, row_number(), string_agg() without a total order).
-- Each is refused with 42P17 and changes nothing; the neighbouring shapes
-- that are deterministic are accepted.  Every refused case names its own
-- view, so that each would show as created if it were accepted.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE SCHEMA det;
CREATE TABLE det.t (k int, v text, ts timestamptz, d date);
SELECT mzcoord.create_table('det.t') IS NOT NULL AS registered;
CREATE TEMP VIEW counts AS
SELECT (SELECT count(*) FROM mzcoord.items) AS items,
       (SELECT count(*) FROM mzcoord.collections) AS collections,
       (SELECT count(*) FROM mzcoord.implication_log) AS log;
CREATE TEMP TABLE counts0 AS SELECT * FROM counts;

-- Moments frozen at analysis: date/time input reads these words from the
-- clock, whatever the spelling and however the literal gets its type.
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r01', $$SELECT k FROM det.t WHERE ts > 'now'::timestamptz$$)$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r02', $$SELECT k FROM det.t WHERE ts > ' Now '$$)$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r03', $$SELECT k, date 'tomorrow' AS day FROM det.t$$)$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r04', $$SELECT k FROM det.t WHERE d = 'TODAY'$$)$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r05', $$SELECT k FROM det.t WHERE ts <@ '[yesterday,infinity)'::tstzrange$$)$q$);
-- Already refused as calls: now(), CURRENT_DATE, random(), nextval().
CREATE SEQUENCE det.seq;
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r06', 'SELECT k, random() AS r FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r07', $$SELECT k, nextval('det.seq') AS n FROM det.t$$)$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r08', 'SELECT k FROM det.t TABLESAMPLE BERNOULLI (50)')$q$);

-- IMMUTABLE SQL functions are looked into, through other SQL functions.
CREATE FUNCTION det.noisy(int) RETURNS float8 IMMUTABLE LANGUAGE sql
    AS 'SELECT $1 + random()';
CREATE FUNCTION det.noisy_atomic(x int) RETURNS float8 IMMUTABLE LANGUAGE sql
    RETURN x + random();
CREATE FUNCTION det.wrap(int) RETURNS float8 IMMUTABLE LANGUAGE sql
    AS 'SELECT det.noisy($1) * 2';
CREATE FUNCTION det.stamp(int) RETURNS timestamptz IMMUTABLE LANGUAGE sql
    BEGIN ATOMIC SELECT now(); END;
CREATE FUNCTION det.draws(n int) RETURNS SETOF float8 IMMUTABLE LANGUAGE sql
    AS 'SELECT random() FROM generate_series(1, n)';
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r09', 'SELECT det.noisy(k) AS x FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r10', 'SELECT det.noisy_atomic(k) AS x FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r11', 'SELECT k FROM det.t WHERE det.wrap(k) > 1')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r12', 'SELECT det.stamp(k) AS s FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r30', 'SELECT k, x FROM det.t, det.draws(k) x')$q$);

-- Window functions whose result depends on the order of the partition.
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r13', 'SELECT k, row_number() OVER () AS n FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r14', 'SELECT k, lag(v) OVER (PARTITION BY k) AS p FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r15', 'SELECT k, sum(k) OVER (ROWS 1 PRECEDING) AS s FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r16', $$SELECT k, string_agg(v, ',') OVER (PARTITION BY k) AS s FROM det.t$$)$q$);

-- LIMIT, OFFSET and FETCH FIRST need an ORDER BY over every output column,
-- at every level, also inside a PostgreSQL view that the query reads.
CREATE VIEW det.first_rows AS SELECT k, v FROM det.t ORDER BY k LIMIT 2;
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r17', 'SELECT k FROM det.t LIMIT 2')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r18', 'SELECT k, v FROM det.t ORDER BY k LIMIT 2')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r19', 'SELECT k FROM det.t OFFSET 1')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r20', 'SELECT k FROM det.t FETCH FIRST 1 ROWS ONLY')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r21', 'SELECT k, v FROM det.t ORDER BY k OFFSET 1 FETCH FIRST 1 ROWS WITH TIES')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r22', 'SELECT k, (SELECT v FROM det.t LIMIT 1) AS any_v FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r23', 'SELECT * FROM det.first_rows')$q$);

-- DISTINCT ON keeps the first row of each group.
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r24', 'SELECT DISTINCT ON (k) k, v FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r25', 'SELECT DISTINCT ON (k) k, v FROM det.t ORDER BY k')$q$);

-- Aggregates whose result is in the order of their input.
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r26', $$SELECT k, string_agg(v, ',') AS s FROM det.t GROUP BY k$$)$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r27', 'SELECT array_agg(v ORDER BY k) AS a FROM det.t')$q$);
-- (json_agg() is refused already as not immutable.)
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r28', 'SELECT json_agg(v) AS j FROM det.t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('det.r29', 'SELECT jsonb_object_agg(k, v ORDER BY k) AS j FROM det.t')$q$);
SELECT * FROM counts EXCEPT SELECT * FROM counts0;

-- Accepted: deterministic neighbours of the refused shapes.
CREATE FUNCTION det.twice(int) RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT $1 * 2';
-- The body of a function in another language cannot be seen: a plpgsql
-- function declared IMMUTABLE is taken at its word (doc/maintenance.md).
CREATE FUNCTION det.opaque(int) RETURNS float8 IMMUTABLE LANGUAGE plpgsql
    AS 'BEGIN RETURN $1 + random(); END';
SELECT name, try(format('SELECT mzcoord.create_materialized_view(%L, %L)', 'det.' || name, query)) AS result
  FROM (VALUES
    ('literal_time',  $$SELECT k FROM det.t WHERE ts > '2026-01-01 00:00+00' AND v <> 'now'$$),
    ('sql_function',  'SELECT det.twice(k) AS k2 FROM det.t'),
    ('plpgsql_opaque','SELECT det.opaque(k) AS x FROM det.t'),
    ('window_total',  'SELECT k, count(*) OVER () AS c, sum(k) OVER (PARTITION BY v) AS s FROM det.t'),
    ('window_ranked', 'SELECT k, rank() OVER (PARTITION BY v) AS r, row_number() OVER (ORDER BY k, v) AS n FROM det.t'),
    ('limit_total',   'SELECT k, v FROM det.t ORDER BY k, v LIMIT 2 OFFSET 1'),
    ('limit_ties',    'SELECT k, v FROM det.t ORDER BY k FETCH FIRST 1 ROWS WITH TIES'),
    ('limit_zero',    'SELECT k FROM det.t LIMIT 0'),
    ('limit_all',     'SELECT k FROM det.t LIMIT ALL'),
    ('exists_limit',  'SELECT k FROM det.t a WHERE EXISTS (SELECT 1 FROM det.t b WHERE b.k > a.k LIMIT 1)'),
    ('distinct_on',   'SELECT DISTINCT ON (k) k, v FROM det.t ORDER BY k, v DESC'),
    ('agg_ordered',   $$SELECT k, string_agg(v, ',' ORDER BY v) AS s, array_agg(v ORDER BY k, v) AS a FROM det.t GROUP BY k$$),
    ('agg_distinct',  'SELECT array_agg(DISTINCT v) AS a FROM det.t'),
    ('agg_plain',     'SELECT count(*) AS c, sum(k) AS s, min(v) AS lo, max(ts) AS hi FROM det.t')
  ) AS q(name, query)
 ORDER BY name;
-- The accepted views went through the implication too (which analyses the
-- stored definition again) and have their collections.
SELECT i.name, c.global_id IS NOT NULL AS has_collection
  FROM mzcoord.items i LEFT JOIN mzcoord.collections c ON c.item_id = i.id
 WHERE i.schema_name = 'det' AND i.kind = 'materialized_view'
 ORDER BY i.name;
-- And one of them is maintained: its contents are the query's.
INSERT INTO det.t VALUES (1, 'a', '2026-01-02', '2026-01-02'),
                         (2, 'b', '2026-01-03', '2026-01-03'),
                         (2, 'c', '2026-01-04', '2026-01-04');
SELECT wait_until($$SELECT count(*) = 1 FROM det.limit_ties$$) AS caught_up;
SELECT * FROM det.limit_ties;
SELECT * FROM det.agg_ordered ORDER BY k;

-- Leave nothing behind for the tests that count the catalog.
DROP SCHEMA det CASCADE;
SELECT count(*) AS det_items FROM mzcoord.items WHERE schema_name = 'det';
