--
-- Catalog plane: the DDL functions, their results and every error path.
-- Errors are shown by try() with their SQLSTATE; after each group of
-- errors, the catalog counts show that nothing changed.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

-- The catalog as the tests look at it: names instead of ids (ids depend on
-- what ran before), no timestamps.
CREATE TEMP VIEW cat AS
SELECT i.schema_name AS schema, i.name, i.kind, i.relation::text AS relation,
       i.owner::text AS owner, i.retain_history, i.refresh, i.definition,
       o.name AS on_item, i.index_keys
  FROM mzcoord.items i LEFT JOIN mzcoord.items o ON o.id = i.on_item
 ORDER BY i.schema_name, i.name;

CREATE TEMP VIEW counts AS
SELECT (SELECT count(*) FROM mzcoord.items) AS items,
       (SELECT count(*) FROM mzcoord.collections) AS collections,
       (SELECT count(*) FROM mzcoord.item_inputs) AS inputs,
       (SELECT count(*) FROM mzcoord.implication_log) AS log;

CREATE TABLE orders (id int, amount numeric(10,2), note text COLLATE "C");
INSERT INTO orders VALUES (1, 10.5, 'a');

-- ------------------------------------------------------------------------
-- create_table
-- ------------------------------------------------------------------------
SELECT mzcoord.create_table('orders', '1 hour') ~ '^u[1-9][0-9]*$' AS item_id;
SELECT * FROM cat;
-- Its collection: since = as_of (its registration time), upper one past it;
-- an exact look inside the creating transaction, before the controller
-- can persist newer frontiers.
CREATE TABLE lines (order_id int, qty int);
BEGIN;
SELECT mzcoord.create_table('lines') AS lines_id \gset
SELECT c.global_id = :'lines_id' AS gid_is_item_id, c.version, c.primary_id,
       c.since = c.as_of AS since_is_as_of, c.upper = c.as_of + 1 AS upper_is_next,
       c.as_of > 1700000000000 AS as_of_is_epoch_ms
  FROM mzcoord.collections c WHERE c.item_id = :'lines_id';
COMMIT;
SELECT count(*) FROM mzcoord.item_inputs i JOIN mzcoord.items t ON t.id = i.item_id
 WHERE t.kind = 'table';

-- Errors: nothing changes.
CREATE TEMP TABLE counts0 AS SELECT * FROM counts;
SELECT try($q$SELECT mzcoord.create_table('orders')$q$);
SELECT try($q$SELECT mzcoord.create_table('no_such_table')$q$);
SELECT try($q$SELECT mzcoord.create_table(NULL)$q$);
CREATE TEMP TABLE tmp_t (a int);
SELECT try($q$SELECT mzcoord.create_table('tmp_t')$q$);
CREATE UNLOGGED TABLE unlogged_t (a int);
SELECT try($q$SELECT mzcoord.create_table('unlogged_t')$q$);
CREATE TABLE part_t (a int) PARTITION BY RANGE (a);
SELECT try($q$SELECT mzcoord.create_table('part_t')$q$);
CREATE FOREIGN DATA WRAPPER mzc_fdw;
CREATE SERVER mzc_server FOREIGN DATA WRAPPER mzc_fdw;
CREATE FOREIGN TABLE foreign_t (a int) SERVER mzc_server;
SELECT try($q$SELECT mzcoord.create_table('foreign_t')$q$);
CREATE VIEW plain_v AS SELECT 1 AS one;
SELECT try($q$SELECT mzcoord.create_table('plain_v')$q$);
SELECT try($q$SELECT mzcoord.create_table('pg_class')$q$);
SELECT try($q$SELECT mzcoord.create_table('mzcoord.items')$q$);
CREATE TABLE retain_t (a int);
SELECT try($q$SELECT mzcoord.create_table('retain_t', '0 seconds')$q$);
SELECT try($q$SELECT mzcoord.create_table('retain_t', '-1 second')$q$);
SELECT try($q$SELECT mzcoord.create_table('retain_t', '999 milliseconds')$q$);
SELECT try($q$SELECT mzcoord.create_table('retain_t', '1 month')$q$);
SELECT try($q$SELECT mzcoord.create_table('retain_t', '2000000000 days')$q$);
SELECT * FROM counts EXCEPT SELECT * FROM counts0;
-- The minimum is accepted.
SELECT mzcoord.create_table('retain_t', '1 second') IS NOT NULL AS registered;

-- ------------------------------------------------------------------------
-- create_source
-- ------------------------------------------------------------------------
CREATE SCHEMA feed;
SELECT mzcoord.create_source('feed.ticks', $$symbol text NOT NULL, price numeric(12,4), at timestamptz, tags text[] COLLATE "C"$$) IS NOT NULL AS created;
SELECT * FROM cat WHERE name = 'ticks';
\d feed.ticks
-- A source starts empty: upper = since = its creation time.
BEGIN;
SELECT mzcoord.create_source('src_empty', 'x int') AS src_id \gset
SELECT since = as_of AS since_is_as_of, upper = since AS empty
  FROM mzcoord.collections WHERE item_id = :'src_id';
ROLLBACK;
-- Unqualified names follow the caller's search_path.
SET search_path = feed, public;
SELECT mzcoord.create_source('quotes', 'bid int, "Ask Price" int') IS NOT NULL AS created;
RESET search_path;
SELECT schema, name, definition FROM cat WHERE name = 'quotes';

CREATE TEMP TABLE counts1 AS SELECT * FROM counts;
SELECT try($q$SELECT mzcoord.create_source('feed.ticks', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_source('orders', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x int); DROP TABLE orders; --')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x int DEFAULT 1')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x int PRIMARY KEY')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x int, CHECK (x > 0)')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x int GENERATED ALWAYS AS IDENTITY')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'LIKE orders')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x no_such_type')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x int, x text')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'xmin int')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x anyelement')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x int COLLATE "C"')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', '')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x int,')$q$);
SELECT try($q$SELECT mzcoord.create_source('pg_temp.s1', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_source('pg_catalog.s1', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_source('mzcoord.s1', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_source('no_such_schema.s1', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_source('otherdb.public.s1', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_source('s1', 'x int', '0 s')$q$);
SELECT try($q$SELECT mzcoord.create_source(NULL, 'x int')$q$);
SELECT * FROM counts EXCEPT SELECT * FROM counts1;

-- ------------------------------------------------------------------------
-- create_materialized_view
-- ------------------------------------------------------------------------
SELECT mzcoord.create_materialized_view('order_totals',
    $$SELECT o.id, sum(l.qty) AS qty, max(o.note) AS note
        FROM orders o JOIN lines l ON l.order_id = o.id GROUP BY o.id$$,
    retain_history => '10 minutes') IS NOT NULL AS created;
-- The stored definition is qualified; the storage table has the columns.
SELECT name, definition, retain_history FROM cat WHERE name = 'order_totals';
\d order_totals
SELECT i.name, p.name AS reads, p.kind
  FROM mzcoord.item_inputs ii
  JOIN mzcoord.items i ON i.id = ii.item_id
  JOIN mzcoord.items p ON p.id = ii.input_item_id
 ORDER BY 1, 2;
-- An MV over an MV: the upstream MV is a leaf, not expanded.
SELECT mzcoord.create_materialized_view('big_orders',
    'SELECT id FROM order_totals WHERE qty > 10') IS NOT NULL AS created;
SELECT item::text, input::text, input_kind FROM mzcoord.logical_inputs
 WHERE item = 'big_orders'::regclass;
-- Its as-of is the least valid read of its inputs: not before theirs.
SELECT m.as_of >= i.as_of AS not_before_input
  FROM mzcoord.collections m, mzcoord.collections i
 WHERE m.item_id = (SELECT id FROM mzcoord.items WHERE name = 'big_orders')
   AND i.item_id = (SELECT id FROM mzcoord.items WHERE name = 'order_totals');
-- Without inputs it starts at its creation time, like a source.
SELECT mzcoord.create_materialized_view('constants',
    'SELECT g, g * 2 AS twice FROM generate_series(1, 3) g') IS NOT NULL AS created;
SELECT count(*) AS inputs FROM mzcoord.logical_inputs
 WHERE item = 'constants'::regclass;

CREATE TABLE not_registered (a int);
CREATE TEMP TABLE counts2 AS SELECT * FROM counts;
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT r.a FROM retain_t r, not_registered n')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT * FROM no_such_table')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT * FROM pg_class')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT * FROM tmp_t')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELEC 1')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT id FROM orders WHERE')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT 1; SELECT 2')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'INSERT INTO orders VALUES (2)')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT 1 INTO new_table')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT * FROM orders FOR UPDATE')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT * FROM orders TABLESAMPLE SYSTEM (50)')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT id, id FROM orders')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT id, now() FROM orders')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT random()')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT CURRENT_DATE FROM orders')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', $$SELECT id FROM orders WHERE note::timestamptz > '2000-01-01'$$)$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT $1')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('orders', 'SELECT 1')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', 'SELECT 1', '0 s')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('m1', NULL)$q$);
SELECT * FROM counts EXCEPT SELECT * FROM counts2;

-- ------------------------------------------------------------------------
-- create_index
-- ------------------------------------------------------------------------
SELECT mzcoord.create_index('orders_by_id', 'orders', '{id,note}') IS NOT NULL AS created;
SELECT mzcoord.create_index('feed.ticks_by_symbol', 'feed.ticks', '{symbol}') IS NOT NULL AS created;
SELECT mzcoord.create_index('totals_by_qty', 'order_totals', '{qty}') IS NOT NULL AS created;
SELECT name, kind, schema, owner, on_item, index_keys FROM cat WHERE kind = 'index';
SELECT indexrelid::regclass, indrelid::regclass, pg_get_indexdef(indexrelid)
  FROM pg_index WHERE indexrelid IN (SELECT relation FROM mzcoord.items WHERE kind = 'index')
 ORDER BY indexrelid;

CREATE TABLE points (p point);
SELECT mzcoord.create_table('points') IS NOT NULL AS registered;
CREATE TEMP TABLE counts3 AS SELECT * FROM counts;
SELECT try($q$SELECT mzcoord.create_index('i1', 'orders', '{}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'orders', '{no_such_column}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'orders', '{ID}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'orders', '{xmin}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'orders', '{id,NULL}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'orders', '{{id},{note}}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'points', '{p}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'unlogged_t', '{a}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'plain_v', '{one}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'orders_by_id', '{id}')$q$);
SELECT try($q$SELECT mzcoord.create_index('feed.i1', 'orders', '{id}')$q$);
SELECT try($q$SELECT mzcoord.create_index('orders_by_id', 'orders', '{id}')$q$);
SELECT try($q$SELECT mzcoord.create_index('lines', 'orders', '{id}')$q$);
SELECT try($q$SELECT mzcoord.create_index('i1', 'orders', NULL)$q$);
SELECT * FROM counts EXCEPT SELECT * FROM counts3;

-- ------------------------------------------------------------------------
-- create_sink
-- ------------------------------------------------------------------------
SELECT mzcoord.create_sink('totals_out', 'order_totals') IS NOT NULL AS created;
SELECT name, kind, on_item, retain_history FROM cat WHERE kind = 'sink';
\d totals_out
SELECT item::text, input::text FROM mzcoord.logical_inputs WHERE kind = 'sink';

CREATE TABLE clash (mz_diff int);
SELECT mzcoord.create_table('clash') IS NOT NULL AS registered;
CREATE TEMP TABLE counts4 AS SELECT * FROM counts;
SELECT try($q$SELECT mzcoord.create_sink('k1', 'totals_out')$q$);
SELECT try($q$SELECT mzcoord.create_sink('k1', 'orders_by_id')$q$);
SELECT try($q$SELECT mzcoord.create_sink('k1', 'retain_t_not_there')$q$);
SELECT try($q$SELECT mzcoord.create_sink('k1', 'unlogged_t')$q$);
SELECT try($q$SELECT mzcoord.create_sink('totals_out', 'orders')$q$);
SELECT try($q$SELECT mzcoord.create_sink('k1', 'clash')$q$);
SELECT * FROM counts EXCEPT SELECT * FROM counts4;

-- ------------------------------------------------------------------------
-- set_retain_history
-- ------------------------------------------------------------------------
SELECT mzcoord.set_retain_history('lines', '2 hours');
SELECT mzcoord.set_retain_history('orders_by_id', '5 seconds');
SELECT mzcoord.set_retain_history('orders', NULL);
SELECT name, retain_history FROM cat WHERE retain_history IS NOT NULL OR name = 'orders';
-- Setting the same value again is no change at all.
CREATE TEMP TABLE counts5 AS SELECT * FROM counts;
SELECT mzcoord.set_retain_history('lines', '120 minutes');
SELECT * FROM counts EXCEPT SELECT * FROM counts5;

SELECT try($q$SELECT mzcoord.set_retain_history('totals_out', '1 hour')$q$);
SELECT try($q$SELECT mzcoord.set_retain_history('unlogged_t', '1 hour')$q$);
SELECT try($q$SELECT mzcoord.set_retain_history('lines', '0 s')$q$);
SELECT try($q$SELECT mzcoord.set_retain_history('lines', '1 mon')$q$);
SELECT try($q$SELECT mzcoord.set_retain_history(NULL, '1 hour')$q$);
SELECT * FROM counts EXCEPT SELECT * FROM counts5;

-- ------------------------------------------------------------------------
-- Privileges: anyone may call the DDL functions and read the catalog; the
-- functions check the caller's own privileges; only the extension's code
-- and superusers write the catalog.
-- ------------------------------------------------------------------------
CREATE ROLE mzc_alice;
CREATE ROLE mzc_bob;
GRANT CREATE ON SCHEMA public TO mzc_alice, mzc_bob;
SET ROLE mzc_alice;
CREATE TABLE alice_t (a int, secret text);
SELECT mzcoord.create_table('alice_t') IS NOT NULL AS registered;
SELECT mzcoord.create_materialized_view('alice_mv', 'SELECT a FROM alice_t') IS NOT NULL AS created;
SELECT count(*) > 0 AS can_read FROM mzcoord.items;
SELECT count(*) >= 0 AS can_read FROM mzcoord.implication_log;
SELECT try($q$INSERT INTO mzcoord.items (kind, schema_name, name, owner) VALUES ('table', 'public', 'alice_t', 'mzc_alice')$q$);
SELECT try($q$UPDATE mzcoord.collections SET since = 0$q$);
SELECT try($q$DELETE FROM mzcoord.item_inputs$q$);
SELECT try($q$SELECT nextval('mzcoord.id_seq')$q$);
SELECT try($q$SELECT mzcoord._catalog_insert('table', 'public', 'x', NULL, 'mzc_alice', NULL, NULL, NULL, NULL, NULL)$q$);
SELECT try($q$SELECT mzcoord._apply_implications('{}', '{}')$q$);
RESET ROLE;
SELECT name, owner FROM cat WHERE name LIKE 'alice%';
\dt alice*

SET ROLE mzc_bob;
-- Not the owner of the table.
SELECT try($q$SELECT mzcoord.create_table('orders')$q$);
SELECT try($q$SELECT mzcoord.create_index('bob_i', 'alice_t', '{a}')$q$);
SELECT try($q$SELECT mzcoord.set_retain_history('alice_t', '1 hour')$q$);
SELECT try($q$SELECT mzcoord.drop('alice_mv')$q$);
-- No SELECT privilege on what the view or the sink would read.
SELECT try($q$SELECT mzcoord.create_materialized_view('bob_mv', 'SELECT a FROM alice_t')$q$);
SELECT try($q$SELECT mzcoord.create_sink('bob_k', 'alice_t')$q$);
-- No CREATE privilege on the schema.
SELECT try($q$SELECT mzcoord.create_source('feed.bob_s', 'x int')$q$);
RESET ROLE;
-- Column privileges count: bob may read alice_t.a but not alice_t.secret.
GRANT SELECT (a) ON alice_t TO mzc_bob;
SET ROLE mzc_alice;
CREATE VIEW alice_v AS SELECT a, secret FROM alice_t;
GRANT SELECT ON alice_v TO mzc_bob;
RESET ROLE;
SET ROLE mzc_bob;
SELECT try($q$SELECT mzcoord.create_materialized_view('bob_mv', 'SELECT a, secret FROM alice_t')$q$);
SELECT mzcoord.create_materialized_view('bob_mv', 'SELECT a FROM alice_t') IS NOT NULL AS created;
-- Through a view, the view owner's privileges on the table count.
SELECT mzcoord.create_materialized_view('bob_mv2', 'SELECT secret FROM alice_v') IS NOT NULL AS created;
-- Functions need EXECUTE.
RESET ROLE;
CREATE FUNCTION private_double(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 * 2';
REVOKE EXECUTE ON FUNCTION private_double(int) FROM PUBLIC;
SET ROLE mzc_bob;
SELECT try($q$SELECT mzcoord.create_materialized_view('bob_mv3', 'SELECT private_double(a) FROM alice_t')$q$);
RESET ROLE;
SELECT name, owner FROM cat WHERE name LIKE 'bob%';

-- Every function of the catalog plane has explicit privileges; the DDL
-- functions are callable by PUBLIC, the internal ones by nobody else.
SELECT p.proname, p.prosecdef,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p
 WHERE p.pronamespace = 'mzcoord'::regnamespace
   AND (p.proname IN ('create_table', 'create_source', 'create_materialized_view',
                      'create_index', 'create_sink', 'set_retain_history', 'drop')
        OR p.proname LIKE '\_catalog%' OR p.proname LIKE '\_apply%'
        OR p.proname LIKE '\_on\_%' OR p.proname LIKE '\_create%')
 ORDER BY 1;
-- SECURITY DEFINER functions pin search_path.
SELECT p.proname, p.proconfig
  FROM pg_proc p
 WHERE p.pronamespace = 'mzcoord'::regnamespace AND p.prosecdef
   AND p.proname IN ('_apply_implications', '_catalog_insert',
                     '_catalog_set_retain_history', '_on_sql_drop',
                     '_on_ddl_command_end')
 ORDER BY 1;

SELECT * FROM mzcoord.check_consistency();

-- Clean up (through the drop path; the plain view alice_v goes too).
SELECT mzcoord.drop('alice_t', cascade => true);
DROP FUNCTION private_double(int);
REVOKE CREATE ON SCHEMA public FROM mzc_alice, mzc_bob;
DROP ROLE mzc_alice;
DROP ROLE mzc_bob;
DROP SCHEMA feed CASCADE;
DROP TABLE orders, lines, retain_t, points, clash, unlogged_t, part_t, not_registered CASCADE;
DROP TABLE constants;
DROP VIEW plain_v;
DROP FOREIGN TABLE foreign_t;
DROP SERVER mzc_server;
DROP FOREIGN DATA WRAPPER mzc_fdw;
SELECT * FROM cat;
SELECT count(*) AS collections FROM mzcoord.collections;
SELECT * FROM mzcoord.check_consistency();
