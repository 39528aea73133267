--
-- Catalog plane: the logical inputs of materialized views (reference D4).
-- PostgreSQL views are expanded transitively, collections are leaves (an
-- upstream materialized view is one), and inputs that planning would
-- eliminate are kept: the query is analysed, never planned.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE SCHEMA li;
CREATE TABLE li.a (k int, v text);
CREATE TABLE li.b (k int, w int);
CREATE TABLE li.c (k int);
CREATE TABLE li.d (k int);
CREATE TABLE li.e (k int);
SELECT count(mzcoord.create_table(r)) AS registered
  FROM unnest(ARRAY['li.a', 'li.b', 'li.c', 'li.d', 'li.e']::regclass[]) r;
SELECT mzcoord.create_source('li.s', 'k int, payload jsonb') IS NOT NULL AS created;

-- What each materialized view of schema li reads, by name and kind.
CREATE TEMP VIEW inputs AS
SELECT i.name AS mv, string_agg(p.name || ' (' || p.kind || ')', ', ' ORDER BY p.name) AS reads
  FROM mzcoord.items i
  LEFT JOIN mzcoord.item_inputs ii ON ii.item_id = i.id
  LEFT JOIN mzcoord.items p ON p.id = ii.input_item_id
 WHERE i.schema_name = 'li' AND i.kind = 'materialized_view'
 GROUP BY i.name ORDER BY i.name;

-- Views, nested, are expanded down to the collections.
CREATE VIEW li.v1 AS SELECT k, v FROM li.a WHERE k > 0;
CREATE VIEW li.v2 AS SELECT v1.k, b.w FROM li.v1 JOIN li.b USING (k);
CREATE VIEW li.v3 AS SELECT * FROM li.v2 UNION ALL SELECT k, k FROM li.c;
SELECT mzcoord.create_materialized_view('li.through_views', 'SELECT * FROM li.v3') IS NOT NULL;

-- Inputs that the planner would eliminate are still inputs.
SELECT mzcoord.create_materialized_view('li.where_false',
    'SELECT k FROM li.a WHERE false') IS NOT NULL;
SELECT mzcoord.create_materialized_view('li.limit_zero',
    'SELECT k FROM li.b LIMIT 0') IS NOT NULL;
SELECT mzcoord.create_materialized_view('li.empty_join_side',
    'SELECT a.k FROM li.a JOIN (SELECT k FROM li.c WHERE 1 = 0) z ON z.k = a.k') IS NOT NULL;
SELECT mzcoord.create_materialized_view('li.union_false_branch',
    'SELECT k FROM li.a UNION ALL SELECT k FROM li.d WHERE false') IS NOT NULL;
SELECT mzcoord.create_materialized_view('li.unused_cte',
    'WITH unused AS (SELECT * FROM li.e) SELECT 1 AS one') IS NOT NULL;
SELECT mzcoord.create_materialized_view('li.dead_sublink',
    'SELECT k FROM li.a WHERE false AND EXISTS (SELECT 1 FROM li.b WHERE b.k = a.k)') IS NOT NULL;
SELECT mzcoord.create_materialized_view('li.scalar_sublink',
    'SELECT k, (SELECT max(w) FROM li.b) AS m FROM li.c') IS NOT NULL;
SELECT mzcoord.create_materialized_view('li.in_sublink_in_view',
    'SELECT k FROM li.d WHERE k IN (SELECT k FROM li.v1)') IS NOT NULL;
SELECT mzcoord.create_materialized_view('li.lateral_and_recursive',
    $$WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3)
      SELECT r.n, x.k FROM r, LATERAL (SELECT k FROM li.e WHERE e.k = r.n) x$$) IS NOT NULL;
SELECT mzcoord.create_materialized_view('li.source_reader',
    $$SELECT k, payload->>'x' AS x FROM li.s$$) IS NOT NULL;
-- Functions are not inputs; immutable ones are fine.
SELECT mzcoord.create_materialized_view('li.functions_only',
    'SELECT g, upper(md5(g::text)) AS h FROM generate_series(1, 2) g') IS NOT NULL;
-- An upstream materialized view is a leaf, also behind a view.
SELECT mzcoord.create_materialized_view('li.upstream', 'SELECT k, w FROM li.v2') IS NOT NULL;
CREATE VIEW li.over_upstream AS SELECT k FROM li.upstream WHERE w > 1;
SELECT mzcoord.create_materialized_view('li.downstream',
    'SELECT u.k FROM li.over_upstream u JOIN li.c USING (k)') IS NOT NULL;
SELECT * FROM inputs;

-- Also as the view mzcoord.logical_inputs shows them.
SELECT item::text, input::text, input_kind FROM mzcoord.logical_inputs
 WHERE item = 'li.downstream'::regclass ORDER BY 2;

-- Every input is held by the materialized view that reads it.
SELECT count(*) = (SELECT count(*) FROM mzcoord.item_inputs ii
                     JOIN mzcoord.items i ON i.id = ii.item_id
                    WHERE i.schema_name = 'li') AS every_input_held
  FROM mzcoord.holds h
  JOIN mzcoord.items i ON i.id = h.holder_item_id
 WHERE i.schema_name = 'li' AND h.holder_kind = 'maintained';

-- What the query names directly are dependencies in pg_depend: views and
-- collections, not what the views read.
SELECT refobjid::regclass::text AS depends_on
  FROM pg_depend
 WHERE classid = 'pg_class'::regclass AND objid = 'li.downstream'::regclass
   AND refclassid = 'pg_class'::regclass AND deptype = 'n'
 ORDER BY 1;

-- Anything that is not a collection is refused, with a hint for tables.
CREATE TABLE li.plain (k int);
CREATE VIEW li.over_plain AS SELECT * FROM li.plain;
CREATE MATERIALIZED VIEW li.pg_matview AS SELECT 1 AS one;
SELECT try($$SELECT mzcoord.create_materialized_view('li.x', 'SELECT * FROM li.plain')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x', 'SELECT * FROM li.over_plain')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x',
               'SELECT k FROM li.a WHERE false AND k IN (SELECT k FROM li.plain)')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x',
               'WITH unused AS (SELECT * FROM li.plain) SELECT 1')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x', 'SELECT * FROM li.pg_matview')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x', 'SELECT relname FROM pg_class')$$);
-- Functions whose result depends on when they are computed are refused,
-- also inside a view, a subquery or a dead branch.
CREATE VIEW li.with_now AS SELECT k, now() AS at FROM li.a;
CREATE SEQUENCE li.seq;
CREATE FUNCTION li.volatile_f(int) RETURNS int LANGUAGE sql VOLATILE AS 'SELECT $1';
CREATE FUNCTION li.stable_f(int) RETURNS int LANGUAGE sql STABLE AS 'SELECT $1';
CREATE FUNCTION li.immutable_f(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1';
SELECT try($$SELECT mzcoord.create_materialized_view('li.x', 'SELECT * FROM li.with_now')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x', 'SELECT li.volatile_f(k) FROM li.a')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x', 'SELECT li.stable_f(k) FROM li.a')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x',
               'SELECT k FROM li.a WHERE false AND k > (SELECT random())')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x', 'SELECT nextval(''li.seq'')')$$);
SELECT try($$SELECT mzcoord.create_materialized_view('li.x', 'SELECT k FROM li.a, generate_series(1, (random() * 3)::int) g')$$);
SELECT mzcoord.create_materialized_view('li.immutable_ok', 'SELECT li.immutable_f(k) FROM li.a') IS NOT NULL;
-- A function it calls is a dependency.
SELECT try($$DROP FUNCTION li.immutable_f(int)$$);
SELECT * FROM mzcoord.check_consistency();

DROP SCHEMA li CASCADE;
SELECT count(*) AS items_left FROM mzcoord.items;
SELECT * FROM mzcoord.check_consistency();
