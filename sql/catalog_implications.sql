--
-- Catalog plane: the implications of changes to mzcoord.items.  One
-- statement is one catalog change; its implications are applied in order
-- (sources, tables, materialized views in dependency order, indexes, sinks,
-- then read policies, then alterations, then drops, readers first), and a
-- superuser inserting item rows directly gets what the DDL functions give.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

-- The log since the last mark, batches numbered from 1.
CREATE TEMP TABLE mark AS SELECT 0::bigint AS seq;
CREATE TEMP VIEW recent AS
SELECT dense_rank() OVER (ORDER BY l.batch) AS batch, l.action,
       l.detail->>'kind' AS kind, l.detail->>'relation' AS relation,
       l.detail->'inputs' AS inputs
  FROM mzcoord.implication_log l, mark m
 WHERE l.seq > m.seq
 ORDER BY l.seq;
CREATE TEMP VIEW counts AS
SELECT (SELECT count(*) FROM mzcoord.items) AS items,
       (SELECT count(*) FROM mzcoord.collections) AS collections,
       (SELECT count(*) FROM mzcoord.item_inputs) AS inputs,
       (SELECT count(*) FROM mzcoord.implication_log) AS log;

CREATE SCHEMA imp;
CREATE TABLE imp.t (a int, b text);

-- ------------------------------------------------------------------------
-- Several items in one statement, given in the worst order: each is applied
-- after what it reads, and read policies only once everything exists.
-- ------------------------------------------------------------------------
UPDATE mark SET seq = (SELECT coalesce(max(seq), 0) FROM mzcoord.implication_log);
INSERT INTO mzcoord.items (id, kind, schema_name, name, owner, definition, on_item, index_keys, retain_history) VALUES
 ('u9000', 'sink', 'imp', 'snk', 'postgres', NULL, 'u9002', NULL, NULL),
 ('u9001', 'index', 'imp', 'src_x', 'postgres', NULL, 'u9004', '{x}', '5 s'),
 ('u9002', 'materialized_view', 'imp', 'mv2', 'postgres', 'SELECT x FROM imp.mv1 WHERE x > 1', NULL, NULL, NULL),
 ('u9003', 'materialized_view', 'imp', 'mv1', 'postgres', 'SELECT s.x FROM imp.src s JOIN imp.t ON t.a = s.x', NULL, NULL, '1 hour'),
 ('u9004', 'source', 'imp', 'src', 'postgres', 'x int NOT NULL', NULL, NULL, NULL),
 ('u9005', 'table', 'imp', 't', 'postgres', NULL, NULL, NULL, NULL);
SELECT * FROM recent;
-- Every item has its relation, its collection and its inputs.
SELECT i.id, i.kind, i.relation::text, c.global_id, c.version, c.primary_id,
       (SELECT array_agg(ii.input_item_id ORDER BY ii.input_item_id)
          FROM mzcoord.item_inputs ii WHERE ii.item_id = i.id) AS reads
  FROM mzcoord.items i JOIN mzcoord.collections c ON c.item_id = i.id
 WHERE i.schema_name = 'imp' ORDER BY i.id;
-- Published to the controller at commit.
SELECT f.relation::text, f.kind, f.state
  FROM mzcoord.frontiers f WHERE f.item_id LIKE 'u900_' ORDER BY f.item_id;
-- The new items hold what they read (maintained holds, not transaction ones).
SELECT h.relation::text AS held, h.holder_kind, h.holder_item_id
  FROM mzcoord.holds h WHERE h.holder_item_id LIKE 'u900_'
 ORDER BY h.holder_item_id, 1, 2;
SELECT count(*) AS transaction_holds_left FROM mzcoord.holds
 WHERE holder_kind = 'transaction';
-- The same objects through the DDL functions look the same.
SELECT mzcoord.create_source('imp.src_f', 'x int NOT NULL') IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('imp.mv1_f',
    'SELECT s.x FROM imp.src_f s JOIN imp.t ON t.a = s.x', '1 hour') IS NOT NULL AS created;
SELECT a.name, a.kind = b.kind AS same_kind,
       (SELECT array_agg(format_type(atttypid, atttypmod) || attnotnull ORDER BY attnum)
          FROM pg_attribute WHERE attrelid = a.relation AND attnum > 0)
       = (SELECT array_agg(format_type(atttypid, atttypmod) || attnotnull ORDER BY attnum)
            FROM pg_attribute WHERE attrelid = b.relation AND attnum > 0) AS same_columns,
       a.retain_history IS NOT DISTINCT FROM b.retain_history AS same_retain_history,
       (SELECT array_agg(p.kind ORDER BY p.kind) FROM mzcoord.item_inputs ii
          JOIN mzcoord.items p ON p.id = ii.input_item_id WHERE ii.item_id = a.id)
       IS NOT DISTINCT FROM
       (SELECT array_agg(p.kind ORDER BY p.kind) FROM mzcoord.item_inputs ii
          JOIN mzcoord.items p ON p.id = ii.input_item_id WHERE ii.item_id = b.id) AS same_input_kinds,
       (SELECT array_agg(l.action ORDER BY l.seq) FROM mzcoord.implication_log l WHERE l.item_id = a.id)
       = (SELECT array_agg(l.action ORDER BY l.seq) FROM mzcoord.implication_log l WHERE l.item_id = b.id) AS same_log
  FROM mzcoord.items a JOIN mzcoord.items b ON b.name = a.name || '_f'
 WHERE a.schema_name = 'imp' ORDER BY a.name;
SELECT * FROM mzcoord.check_consistency();

-- ------------------------------------------------------------------------
-- Create before drop, in one statement.  A writable CTE fires one AFTER
-- trigger per event; both halves are one batch, creations first, whichever
-- order PostgreSQL runs them in.
-- ------------------------------------------------------------------------
-- The DELETE is not referenced: PostgreSQL runs it after the INSERT.
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
WITH d AS (DELETE FROM mzcoord.items WHERE id IN ('u9000', 'u9002'))
INSERT INTO mzcoord.items (id, kind, schema_name, name, owner, definition)
VALUES ('u9006', 'materialized_view', 'imp', 'mv3', 'postgres', 'SELECT count(*) AS n FROM imp.mv1');
SELECT * FROM recent;
-- The DELETE feeds the INSERT: PostgreSQL runs it first.
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
WITH d AS (DELETE FROM mzcoord.items WHERE id = 'u9006' RETURNING id)
INSERT INTO mzcoord.items (id, kind, schema_name, name, owner, definition)
SELECT 'u9007', 'materialized_view', 'imp', 'mv4', 'postgres', 'SELECT a FROM imp.t'
  FROM d;
SELECT * FROM recent;
-- An item created over one that the same statement drops: the catalog no
-- longer has the input, so the creation fails (and nothing changes).
SELECT try($$WITH d AS (DELETE FROM mzcoord.items WHERE id = 'u9005')
INSERT INTO mzcoord.items (id, kind, schema_name, name, owner, definition)
VALUES ('u9008', 'materialized_view', 'imp', 'mv5', 'postgres', 'SELECT b FROM imp.t')$$);
SELECT * FROM mzcoord.check_consistency();

-- ------------------------------------------------------------------------
-- Alterations
-- ------------------------------------------------------------------------
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
-- Only the retain history: the policy of the existing collection changes.
UPDATE mzcoord.items SET retain_history = '2 hours' WHERE id = 'u9003';
UPDATE mzcoord.items SET retain_history = NULL WHERE id IN ('u9003', 'u9001');
-- The name and owner: the relation follows.
CREATE ROLE mzc_carol;
UPDATE mzcoord.items SET name = 'mv1_renamed', owner = 'mzc_carol' WHERE id = 'u9003';
SELECT relname, relowner::regrole FROM pg_class WHERE oid = (SELECT relation FROM mzcoord.items WHERE id = 'u9003');
UPDATE mzcoord.items SET name = 'mv1', owner = 'postgres' WHERE id = 'u9003';
-- A change that is no change has no implications.
UPDATE mzcoord.items SET retain_history = retain_history;
SELECT batch, action, kind, relation FROM recent;
-- Anything else would be another item.
CREATE TEMP TABLE counts0 AS SELECT * FROM counts;
SELECT try($$UPDATE mzcoord.items SET definition = 'SELECT 1' WHERE id = 'u9003'$$);
SELECT try($$UPDATE mzcoord.items SET refresh = '{"at creation"}' WHERE id = 'u9003'$$);
SELECT try($$UPDATE mzcoord.items SET index_keys = '{x,x}' WHERE id = 'u9001'$$);
SELECT try($$UPDATE mzcoord.items SET relation = 'pg_class' WHERE id = 'u9003'$$);
SELECT try($$UPDATE mzcoord.items SET created_at = now() - interval '1 day' WHERE id = 'u9003'$$);
SELECT try($$UPDATE mzcoord.items SET kind = 'source' WHERE id = 'u9003'$$);
SELECT try($$UPDATE mzcoord.items SET retain_history = '1 ms' WHERE id = 'u9003'$$);
SELECT try($$UPDATE mzcoord.items SET schema_name = 'public' WHERE id = 'u9001'$$);
SELECT try($$UPDATE mzcoord.items SET owner = 'mzc_carol' WHERE id = 'u9001'$$);
SELECT try($$UPDATE mzcoord.items SET id = 'u9999' WHERE id = 'u9007'$$);
SELECT try($$TRUNCATE mzcoord.items CASCADE$$);
SELECT * FROM counts EXCEPT SELECT * FROM counts0;

-- ------------------------------------------------------------------------
-- Rows inserted directly are validated like the DDL functions' arguments.
-- (For constraint violations, only the message: the failing row has
-- generated values.)
-- ------------------------------------------------------------------------
SELECT split_part(try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, relation, definition)
             VALUES ('source', 'imp', 's9', 'postgres', 'imp.t', 'x int')$$), E'\n', 1) AS try;
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition)
             VALUES ('source', 'imp', 's9', 'postgres', 'x int); DROP TABLE imp.t; --')$$);
SELECT split_part(try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner)
             VALUES ('source', 'imp', 's9', 'postgres')$$), E'\n', 1) AS try;
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition)
             VALUES ('materialized_view', 'imp', 'm9', 'postgres', 'SELECT a FROM t')$$);
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition)
             VALUES ('materialized_view', 'imp', 'm9', 'postgres', 'SELECT now()')$$);
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition)
             VALUES ('materialized_view', 'imp', 'm9', 'postgres', 'SELECT 1 FROM imp.m9')$$);
SELECT try($$INSERT INTO mzcoord.items (id, kind, schema_name, name, owner, definition) VALUES
             ('u9100', 'materialized_view', 'imp', 'ma', 'postgres', 'SELECT 1 FROM imp.mb'),
             ('u9101', 'materialized_view', 'imp', 'mb', 'postgres', 'SELECT 1 FROM imp.ma')$$);
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition, refresh)
             VALUES ('materialized_view', 'imp', 'm9', 'postgres', 'SELECT 1', '{"whenever"}')$$);
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, on_item, index_keys)
             VALUES ('index', 'imp', 'i9', 'postgres', 'u9999999', '{a}')$$);
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, on_item, index_keys)
             VALUES ('index', 'imp', 'i9', 'postgres', 'u9001', '{x}')$$);
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, on_item, index_keys)
             VALUES ('index', 'public', 'i9', 'postgres', 'u9005', '{a}')$$);
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, on_item)
             VALUES ('sink', 'imp', 'k9', 'postgres', 'u9000')$$);
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner)
             VALUES ('table', 'imp', 'no_such_table', 'postgres')$$);
SELECT split_part(try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, relation)
             VALUES ('table', 'imp', 'other_name', 'postgres', 'imp.t')$$), E'\n', 1) AS try;
CREATE TABLE imp.t2 (c int);
SELECT try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, relation)
             VALUES ('table', 'imp', 't2', 'mzc_carol', 'imp.t2')$$);
SELECT split_part(try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition)
             VALUES ('table', 'imp', 't2', 'postgres', 'x int')$$), E'\n', 1) AS try;
SELECT split_part(try($$INSERT INTO mzcoord.items (id, kind, schema_name, name, owner)
             VALUES ('x1', 'table', 'imp', 't2', 'postgres')$$), E'\n', 1) AS try;
SELECT split_part(try($$INSERT INTO mzcoord.items (kind, schema_name, name, owner)
             VALUES ('view', 'imp', 't2', 'postgres')$$), E'\n', 1) AS try;
SELECT * FROM counts EXCEPT SELECT * FROM counts0;
-- A table may be given by name only.
INSERT INTO mzcoord.items (kind, schema_name, name, owner) VALUES ('table', 'imp', 't2', 'postgres');
SELECT relation::text FROM mzcoord.items WHERE name = 't2';

-- ------------------------------------------------------------------------
-- The state machine itself (I2), fed directly: a change may add or drop an
-- item once; identical retraction and addition cancel out.
-- ------------------------------------------------------------------------
CREATE TEMP TABLE counts1 AS SELECT * FROM counts;
SELECT try($$SELECT mzcoord._apply_implications('{}',
              ARRAY[(SELECT i FROM mzcoord.items i WHERE id = 'u9003'),
                    (SELECT i FROM mzcoord.items i WHERE id = 'u9003')])$$);
SELECT try($$SELECT mzcoord._apply_implications(
              ARRAY[(SELECT i FROM mzcoord.items i WHERE id = 'u9003'),
                    (SELECT i FROM mzcoord.items i WHERE id = 'u9003')], '{}')$$);
-- Altered, then added once more.
SELECT try($$SELECT mzcoord._apply_implications(
              ARRAY[(SELECT i FROM mzcoord.items i WHERE id = 'u9003')],
              ARRAY[jsonb_populate_record(NULL::mzcoord.items,
                        (SELECT to_jsonb(i) FROM mzcoord.items i WHERE id = 'u9003')
                        || '{"retain_history": "3 s"}'),
                    jsonb_populate_record(NULL::mzcoord.items,
                        (SELECT to_jsonb(i) FROM mzcoord.items i WHERE id = 'u9003')
                        || '{"retain_history": "4 s"}')])$$);
SELECT try($$SELECT mzcoord._apply_implications(
              ARRAY[(SELECT i FROM mzcoord.items i WHERE id = 'u9003')],
              ARRAY[(SELECT i FROM mzcoord.items i WHERE id = 'u9003')])$$) AS cancels_out;
SELECT * FROM counts EXCEPT SELECT * FROM counts1;

SELECT * FROM mzcoord.check_consistency();

-- Clean up through PostgreSQL's DROP SCHEMA: the event trigger deletes the
-- items of every dropped relation in one statement.
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
DROP SCHEMA imp CASCADE;
SELECT batch, action, kind, relation FROM recent;
DROP ROLE mzc_carol;
SELECT count(*) AS items_left FROM mzcoord.items;
SELECT * FROM mzcoord.check_consistency();
