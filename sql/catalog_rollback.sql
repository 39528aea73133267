--
-- Catalog plane: a rolled back transaction or savepoint leaves no trace:
-- no catalog rows, no relations, no log entries, no collections in the
-- controller, no holds.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TEMP VIEW traces AS
SELECT (SELECT count(*) FROM mzcoord.items) AS items,
       (SELECT count(*) FROM mzcoord.collections) AS collections,
       (SELECT count(*) FROM mzcoord.item_inputs) AS inputs,
       (SELECT coalesce(max(seq), 0) FROM mzcoord.implication_log) AS log,
       (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'rb') AS relations,
       (SELECT count(*) FROM mzcoord.frontiers WHERE state = 'active') AS controller_collections,
       (SELECT count(*) FROM mzcoord.holds WHERE holder_kind <> 'requirement') AS holds;

CREATE SCHEMA rb;
CREATE TABLE rb.t (a int);
CREATE TEMP TABLE before AS SELECT * FROM traces;
SELECT items, collections, inputs, relations, controller_collections, holds FROM before;

-- A whole transaction rolled back.
BEGIN;
SELECT mzcoord.create_table('rb.t') IS NOT NULL AS registered;
SELECT mzcoord.create_source('rb.s', 'x int') IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('rb.mv', 'SELECT a FROM rb.t UNION ALL SELECT x FROM rb.s') IS NOT NULL AS created;
SELECT mzcoord.create_index('rb_t_a', 'rb.t', '{a}') IS NOT NULL AS created;
SELECT mzcoord.create_sink('rb.k', 'rb.mv') IS NOT NULL AS created;
SELECT items, collections, inputs, relations, controller_collections, holds FROM traces;
ROLLBACK;
SELECT * FROM traces EXCEPT SELECT * FROM before;

-- Savepoints: what a rolled back savepoint did is gone, the rest commits.
BEGIN;
SELECT mzcoord.create_table('rb.t') IS NOT NULL AS registered;
SAVEPOINT sp1;
SELECT mzcoord.create_source('rb.s', 'x int') IS NOT NULL AS created;
SAVEPOINT sp2;
SELECT mzcoord.create_materialized_view('rb.mv', 'SELECT a FROM rb.t') IS NOT NULL AS created;
ROLLBACK TO sp2;
SELECT mzcoord.create_materialized_view('rb.mv2', 'SELECT a FROM rb.t') IS NOT NULL AS created;
ROLLBACK TO sp1;
SELECT mzcoord.create_materialized_view('rb.mv3', 'SELECT a * 2 AS a2 FROM rb.t') IS NOT NULL AS created;
COMMIT;
SELECT name, kind FROM mzcoord.items ORDER BY name;
SELECT relname FROM pg_class WHERE relnamespace = 'rb'::regnamespace ORDER BY 1;
SELECT relation::text, kind FROM mzcoord.frontiers ORDER BY 1;
SELECT l.action, l.detail->>'relation' AS relation
  FROM mzcoord.implication_log l WHERE l.seq > (SELECT log FROM before) ORDER BY l.seq;
SELECT count(*) AS holds FROM mzcoord.holds WHERE holder_kind = 'transaction';
SELECT * FROM mzcoord.check_consistency();

-- Drops roll back too: the item, its relation and its collection come back.
CREATE TEMP TABLE before_drop AS SELECT * FROM traces;
BEGIN;
SELECT mzcoord.drop('rb.t', cascade => true);
DROP SCHEMA rb CASCADE;
SELECT count(*) AS items_in_txn FROM mzcoord.items;
ROLLBACK;
SELECT * FROM traces EXCEPT SELECT * FROM before_drop;
BEGIN;
SAVEPOINT sp;
DELETE FROM mzcoord.items;
ROLLBACK TO sp;
SELECT mzcoord.set_retain_history('rb.mv3', '1 hour');
ROLLBACK;
SELECT * FROM traces EXCEPT SELECT * FROM before_drop;
SELECT retain_history FROM mzcoord.items WHERE name = 'mv3';

-- An error inside a PL/pgSQL block (a subtransaction) after a creation
-- takes the creation back with it, leaving the outer work alone.
CREATE TABLE rb.u (b int);
DO $$
BEGIN
    PERFORM mzcoord.create_table('rb.u');
    BEGIN
        PERFORM mzcoord.create_materialized_view('rb.good', 'SELECT b FROM rb.u');
        PERFORM mzcoord.create_materialized_view('rb.bad', 'SELECT now()');
    EXCEPTION WHEN invalid_object_definition THEN
        RAISE NOTICE 'caught: %', SQLERRM;
    END;
END
$$;
SELECT name, kind FROM mzcoord.items WHERE name IN ('u', 'good', 'bad') ORDER BY name;
SELECT to_regclass('rb.good') AS good_relation;
SELECT * FROM mzcoord.check_consistency();

DROP SCHEMA rb CASCADE;
SELECT items, collections, inputs, relations, controller_collections, holds FROM traces
EXCEPT
SELECT items, collections, inputs, relations, controller_collections, holds FROM before;
SELECT * FROM mzcoord.check_consistency();
