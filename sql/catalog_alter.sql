--
-- Catalog plane: renames and owner changes of item relations are followed
-- by the item rows (and logged); changes that would invalidate the stored,
-- qualified definition of a materialized view are refused.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TEMP TABLE mark AS SELECT 0::bigint AS seq;
CREATE TEMP VIEW recent AS
SELECT dense_rank() OVER (ORDER BY l.batch) AS batch, l.action,
       l.detail->>'kind' AS kind, l.detail->>'relation' AS relation,
       l.detail->>'from' AS "from", l.detail->>'to' AS "to"
  FROM mzcoord.implication_log l, mark m
 WHERE l.seq > m.seq
 ORDER BY l.seq;

CREATE SCHEMA al;
CREATE TABLE al.t (a int, b text, c int);
CREATE TABLE al.lonely (x int);
SELECT mzcoord.create_table('al.t') IS NOT NULL, mzcoord.create_table('al.lonely') IS NOT NULL;
CREATE VIEW al.v AS SELECT a, b FROM al.t WHERE a > 0;
SELECT mzcoord.create_materialized_view('al.mv', 'SELECT a, b FROM al.v') IS NOT NULL;
SELECT mzcoord.create_materialized_view('al.mv_direct', 'SELECT a, upper(b) AS ub FROM al.t') IS NOT NULL;
SELECT mzcoord.create_index('mv_by_a', 'al.mv', '{a}') IS NOT NULL;

-- Renaming and moving relations nobody names: the rows follow.
UPDATE mark SET seq = (SELECT coalesce(max(seq), 0) FROM mzcoord.implication_log);
ALTER TABLE al.lonely RENAME TO solitary;
CREATE SCHEMA al2;
ALTER TABLE al.solitary SET SCHEMA al2;
ALTER INDEX al.mv_by_a RENAME TO mv_on_a;
-- The storage table of a materialized view is named by nobody either.
ALTER TABLE al.mv RENAME TO mv_renamed;
CREATE ROLE mzc_erin;
ALTER TABLE al2.solitary OWNER TO mzc_erin;
SELECT * FROM recent;
SELECT schema_name, name, owner::text, relation::text FROM mzcoord.items
 WHERE name IN ('solitary', 'mv_on_a', 'mv_renamed') ORDER BY name;
-- Through a view, a renamed table is fine: the view refers to it by OID.
ALTER TABLE al.t RENAME COLUMN c TO c2;
SELECT * FROM mzcoord.check_consistency();

-- Changes that the stored definitions would not survive are refused.
SELECT try($$ALTER TABLE al.t RENAME TO t2$$);
SELECT try($$ALTER TABLE al.t RENAME COLUMN b TO bb$$);
SELECT try($$ALTER TABLE al.t DROP COLUMN b CASCADE$$);
SELECT try($$ALTER TABLE al.t ALTER COLUMN a TYPE bigint$$);
SELECT try($$ALTER VIEW al.v RENAME TO v2$$);
SELECT try($$ALTER SCHEMA al RENAME TO al3$$);
SELECT try($$CREATE OR REPLACE VIEW al.v AS SELECT a, b FROM al.t WHERE a > 1 UNION ALL SELECT x, NULL FROM al2.solitary$$);
SELECT try($$ALTER TABLE al.mv_renamed ADD COLUMN extra int$$);
SELECT try($$ALTER TABLE al.mv_renamed ALTER COLUMN b TYPE varchar(3)$$);
CREATE FUNCTION al.f(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 + 1';
SELECT mzcoord.create_materialized_view('al.mv_f', 'SELECT al.f(a) AS fa FROM al.t') IS NOT NULL;
SELECT try($$ALTER FUNCTION al.f(int) RENAME TO g$$);
SELECT try($$CREATE OR REPLACE FUNCTION al.f(int) RETURNS int LANGUAGE sql VOLATILE AS 'SELECT $1 + 1'$$);
SELECT try($$ALTER TABLE al.t SET UNLOGGED$$);
SELECT try($$ALTER TABLE al.mv_renamed SET UNLOGGED$$);
-- A change of a view's body that keeps what the view reads is fine.
CREATE OR REPLACE VIEW al.v AS SELECT a, b FROM al.t WHERE a > 1;
-- Adding a column is fine too.
ALTER TABLE al.t ADD COLUMN d int;
SELECT name, definition FROM mzcoord.items WHERE name IN ('mv', 'mv_renamed', 'mv_direct') ORDER BY name;
SELECT * FROM mzcoord.check_consistency();

-- A superuser renaming through the catalog row: the relation follows, and
-- the same protection applies.
UPDATE mark SET seq = (SELECT max(seq) FROM mzcoord.implication_log);
UPDATE mzcoord.items SET name = 'mv_again' WHERE name = 'mv_renamed';
SELECT to_regclass('al.mv_again') IS NOT NULL AS renamed;
SELECT try($$UPDATE mzcoord.items SET name = 't3' WHERE schema_name = 'al' AND name = 't'$$);
SELECT * FROM recent;

DROP SCHEMA al CASCADE;
DROP SCHEMA al2 CASCADE;
DROP ROLE mzc_erin;
SELECT count(*) AS items_left FROM mzcoord.items;
SELECT * FROM mzcoord.check_consistency();
