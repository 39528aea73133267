--
-- Catalog plane: dropping.  mzcoord.drop, DROP TABLE / INDEX, DROP SCHEMA
-- ... CASCADE and DROP OWNED BY all end in the deletion of item rows, in one
-- statement, and the implications drop collections (readers first).
-- Dropping what another item reads needs cascade; so does DROP EXTENSION
-- while relations mzcoord created exist.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TEMP TABLE mark AS SELECT 0::bigint AS seq;
CREATE TEMP VIEW recent AS
SELECT dense_rank() OVER (ORDER BY l.batch) AS batch, l.action,
       l.detail->>'kind' AS kind, l.detail->>'relation' AS relation,
       l.detail->'relation_dropped' AS relation_dropped
  FROM mzcoord.implication_log l, mark m
 WHERE l.seq > m.seq
 ORDER BY l.seq;
CREATE TEMP VIEW counts AS
SELECT (SELECT count(*) FROM mzcoord.items) AS items,
       (SELECT count(*) FROM mzcoord.collections) AS collections,
       (SELECT count(*) FROM mzcoord.item_inputs) AS inputs,
       (SELECT count(*) FROM mzcoord.implication_log) AS log;

-- A small graph: t <- mv1 <- mv2 <- sink; t <- index; a plain view on mv1.
CREATE SCHEMA dr;
CREATE FUNCTION dr.setup() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    CREATE TABLE dr.t (a int, b int);
    PERFORM mzcoord.create_table('dr.t');
    PERFORM mzcoord.create_index('t_by_a', 'dr.t', '{a}');
    PERFORM mzcoord.create_materialized_view('dr.mv1', 'SELECT a, sum(b) AS s FROM dr.t GROUP BY a');
    PERFORM mzcoord.create_materialized_view('dr.mv2', 'SELECT a FROM dr.mv1 WHERE s > 0');
    PERFORM mzcoord.create_sink('dr.out', 'dr.mv2');
END
$$;
SELECT dr.setup();
SELECT name, kind FROM mzcoord.items WHERE schema_name = 'dr' ORDER BY name;

-- ------------------------------------------------------------------------
-- Without cascade, dropping what others read fails with 2BP01, naming the
-- dependents, whichever way it is dropped; nothing changes.
-- ------------------------------------------------------------------------
CREATE TEMP TABLE counts0 AS SELECT * FROM counts;
SELECT try($$SELECT mzcoord.drop('dr.t')$$);
SELECT try($$SELECT mzcoord.drop('dr.mv1')$$);
SELECT try($$DROP TABLE dr.t$$);
SELECT try($$DROP TABLE dr.mv1$$);
SELECT try($$DELETE FROM mzcoord.items WHERE name = 'mv1'$$);
SELECT try($$SELECT mzcoord.drop('dr.no_such')$$);
CREATE TABLE dr.unregistered (a int);
SELECT try($$SELECT mzcoord.drop('dr.unregistered')$$);
SELECT * FROM counts EXCEPT SELECT * FROM counts0;

-- ------------------------------------------------------------------------
-- mzcoord.drop of an item nobody reads: item, collection, relation gone.
-- ------------------------------------------------------------------------
UPDATE mark SET seq = (SELECT coalesce(max(seq), 0) FROM mzcoord.implication_log);
SELECT mzcoord.drop('dr.out');
SELECT to_regclass('dr.out') AS relation;
SELECT count(*) AS rows_of_sink FROM mzcoord.items WHERE name = 'out';
SELECT * FROM recent;

-- With cascade: everything that reads it, transitively, in one batch,
-- readers first.  A plain view on an item goes too, as with DROP CASCADE.
CREATE VIEW dr.on_mv1 AS SELECT * FROM dr.mv1;
SELECT mzcoord.create_sink('dr.out', 'dr.mv2') IS NOT NULL AS recreated;
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
SELECT mzcoord.drop('dr.mv1', cascade => true);
SELECT * FROM recent;
SELECT to_regclass('dr.on_mv1') AS plain_view;
SELECT name, kind FROM mzcoord.items WHERE schema_name = 'dr' ORDER BY name;
SELECT * FROM mzcoord.check_consistency();

-- An index item is dropped like any other (its relation is an index).
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
SELECT mzcoord.drop('dr.t_by_a');
SELECT * FROM recent;
SELECT to_regclass('dr.t_by_a') AS index_relation;
SELECT mzcoord.create_index('t_by_a', 'dr.t', '{a}') IS NOT NULL AS recreated;

-- An index goes with its table, as in PostgreSQL; mzcoord.drop of the
-- table names it as a dependent first.
SELECT try($$SELECT mzcoord.drop('dr.t')$$);
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
DROP TABLE dr.t;
SELECT * FROM recent;
SELECT * FROM mzcoord.check_consistency();

-- ------------------------------------------------------------------------
-- DROP TABLE ... CASCADE and DROP SCHEMA ... CASCADE: one statement, one
-- batch, readers first; PostgreSQL already dropped the relations.
-- ------------------------------------------------------------------------
SELECT dr.setup();
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
DROP TABLE dr.t CASCADE;
SELECT * FROM recent;
SELECT * FROM mzcoord.check_consistency();

SELECT dr.setup();
CREATE SCHEMA dr2;
SELECT mzcoord.create_materialized_view('dr2.far', 'SELECT a FROM dr.mv2') IS NOT NULL AS created;
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
DROP SCHEMA dr CASCADE;
SELECT * FROM recent;
SELECT count(*) AS items_left FROM mzcoord.items;
SELECT * FROM mzcoord.check_consistency();

-- ------------------------------------------------------------------------
-- DROP OWNED BY: the items of the role's relations go, in one batch.
-- ------------------------------------------------------------------------
CREATE ROLE mzc_dave;
GRANT USAGE, CREATE ON SCHEMA dr2 TO mzc_dave;
SET ROLE mzc_dave;
CREATE TABLE dr2.dave_t (a int);
SELECT mzcoord.create_table('dr2.dave_t') IS NOT NULL AS registered;
SELECT mzcoord.create_source('dr2.dave_s', 'a int') IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('dr2.dave_mv',
    'SELECT a FROM dr2.dave_t UNION ALL SELECT a FROM dr2.dave_s') IS NOT NULL AS created;
RESET ROLE;
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
DROP OWNED BY mzc_dave;
SELECT * FROM recent;
DROP ROLE mzc_dave;
SELECT count(*) AS items_left FROM mzcoord.items;

-- ------------------------------------------------------------------------
-- A superuser deleting item rows: the implications drop the relations.
-- ------------------------------------------------------------------------
CREATE TABLE dr2.t (a int);
SELECT mzcoord.create_table('dr2.t') IS NOT NULL AS registered;
SELECT mzcoord.create_materialized_view('dr2.m', 'SELECT a FROM dr2.t') IS NOT NULL AS created;
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
DELETE FROM mzcoord.items WHERE schema_name = 'dr2' AND name IN ('m', 't');
SELECT * FROM recent;
SELECT to_regclass('dr2.m') AS mv_relation, to_regclass('dr2.t') AS table_relation;
SELECT * FROM mzcoord.check_consistency();

-- ------------------------------------------------------------------------
-- DROP EXTENSION with items in place.  Relations mzcoord created (sources,
-- materialized views, indexes, sinks) depend on the extension: without
-- CASCADE it refuses and names them; with CASCADE they go with it.  A
-- registered table is the user's own: it stays with its rows and without
-- its capture triggers (writes just work).  A new extension starts with an
-- empty catalog, and the same names can be created again.
-- ------------------------------------------------------------------------
CREATE TABLE dr2.keep (a int);
INSERT INTO dr2.keep VALUES (1), (2);
SELECT mzcoord.create_table('dr2.keep') IS NOT NULL AS registered;
SELECT mzcoord.create_materialized_view('dr2.keep_mv', 'SELECT a FROM dr2.keep') IS NOT NULL AS created;
SELECT mzcoord.create_source('dr2.keep_src', 'a int') IS NOT NULL AS created;
SELECT mzcoord.create_index('keep_a', 'dr2.keep', ARRAY['a']) IS NOT NULL AS created;
SELECT mzcoord.create_sink('dr2.keep_sink', 'dr2.keep') IS NOT NULL AS created;
DROP VIEW recent, counts;
DROP EXTENSION mzcoord;
SELECT count(*) AS items_still_there FROM mzcoord.items;
DROP EXTENSION mzcoord CASCADE;
SELECT to_regclass('dr2.keep') IS NOT NULL AS table_kept,
       to_regclass('dr2.keep_mv') IS NULL AS mv_dropped,
       to_regclass('dr2.keep_src') IS NULL AS source_dropped,
       to_regclass('dr2.keep_a') IS NULL AS index_dropped,
       to_regclass('dr2.keep_sink') IS NULL AS sink_dropped,
       (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'dr2.keep'::regclass) AS keep_triggers,
       (SELECT count(*) FROM pg_class WHERE relnamespace = 'mzcoord'::regnamespace) AS left_in_mzcoord;
INSERT INTO dr2.keep VALUES (3);
UPDATE dr2.keep SET a = a + 10 WHERE a = 3;
SELECT a FROM dr2.keep ORDER BY a;
CREATE EXTENSION mzcoord;
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
SELECT count(*) AS items FROM mzcoord.items;
SELECT mzcoord.create_table('dr2.keep') IS NOT NULL AS registered_again;
SELECT mzcoord.create_materialized_view('dr2.keep_mv', 'SELECT a FROM dr2.keep') IS NOT NULL AS created_again;
SELECT mzcoord.create_source('dr2.keep_src', 'a int') IS NOT NULL AS created_again;
SELECT mzcoord.create_index('keep_a', 'dr2.keep', ARRAY['a']) IS NOT NULL AS created_again;
SELECT mzcoord.create_sink('dr2.keep_sink', 'dr2.keep') IS NOT NULL AS created_again;
SELECT * FROM mzcoord.check_consistency();
DROP SCHEMA dr2 CASCADE;
SELECT count(*) AS items FROM mzcoord.items;
SELECT * FROM mzcoord.check_consistency();
