--
-- Replacing a materialized view's definition in place (issue 23).
--
\set VERBOSITY terse
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TABLE rp_t (k int, v int);
CREATE TABLE rp_u (k int, w text);
SELECT mzcoord.create_table('rp_t', '1 hour') IS NOT NULL AS registered;
SELECT mzcoord.create_table('rp_u', '1 hour') IS NOT NULL AS registered;
INSERT INTO rp_t VALUES (1, 10), (2, 20), (3, 30);
INSERT INTO rp_u VALUES (1, 'a'), (2, 'b');
SELECT mzcoord.create_materialized_view('rp_mv', 'SELECT k, v AS total FROM rp_t', '1 hour')
       IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('rp_over',
       'SELECT count(*) AS n, sum(total) AS s FROM rp_mv', '1 hour') IS NOT NULL AS created;
CREATE VIEW rp_plain AS SELECT * FROM rp_mv;
CREATE ROLE rp_reader;
GRANT SELECT ON rp_mv TO rp_reader;
SELECT 'rp_mv'::regclass::oid AS mv_oid \gset
SELECT id AS mv_id FROM mzcoord.items WHERE name = 'rp_mv' \gset
INSERT INTO rp_t VALUES (4, 40);
SELECT mzcoord.last_commit_ts() AS t0 \gset
SELECT wait_until(format($$SELECT upper > %s FROM mzcoord.frontiers
                            WHERE relation = 'rp_over'::regclass$$, :t0));

-- ---------------------------------------------------------------------
-- Refused, and nothing changes
-- ---------------------------------------------------------------------
SELECT try($$SELECT mzcoord.create_replacement(NULL, 'x', 'SELECT 1')$$);
SELECT try($$SELECT mzcoord.create_replacement('rp_mv', 'x', NULL)$$);
SELECT try($$SELECT mzcoord.create_replacement('rp_t', 'x', 'SELECT k, v AS total FROM rp_t')$$);
SELECT try($$SELECT mzcoord.create_replacement('rp_plain', 'x', 'SELECT k, v AS total FROM rp_t')$$);
-- Columns: a missing one, another type, another name.
SELECT try($$SELECT mzcoord.create_replacement('rp_mv', 'rp_bad', 'SELECT k FROM rp_t')$$);
SELECT try($$SELECT mzcoord.create_replacement('rp_mv', 'rp_bad', 'SELECT k, v::bigint AS total FROM rp_t')$$);
SELECT try($$SELECT mzcoord.create_replacement('rp_mv', 'rp_bad', 'SELECT k, v AS sum FROM rp_t')$$);
-- It cannot read its target, nor what reads the target.
SELECT try($$SELECT mzcoord.create_replacement('rp_mv', 'rp_bad', 'SELECT k, total FROM rp_mv')$$);
SELECT try($$SELECT mzcoord.create_replacement('rp_mv', 'rp_bad', 'SELECT n::int AS k, s::int AS total FROM rp_over')$$);
SELECT try($$SELECT mzcoord.apply_replacement('rp_t')$$);
SELECT try($$SELECT mzcoord.apply_replacement(NULL)$$);
SELECT count(*) AS no_bad_items FROM mzcoord.items WHERE name = 'rp_bad';
SELECT to_regclass('rp_bad') IS NULL AS no_bad_relation;
-- Only the target's owner may replace it.
SET ROLE rp_reader;
SELECT try($$SELECT mzcoord.create_replacement('rp_mv', 'rp_x', 'SELECT k, v AS total FROM rp_t')$$);
RESET ROLE;

-- ---------------------------------------------------------------------
-- A replacement is a view of its own; dropping one leaves the target
-- ---------------------------------------------------------------------
SELECT mzcoord.create_replacement('rp_mv', 'rp_tmp', 'SELECT k, v AS total FROM rp_t WHERE k > 2')
       IS NOT NULL AS created;
SELECT wait_until(format($$SELECT upper > %s FROM mzcoord.frontiers
                            WHERE relation = 'rp_tmp'::regclass$$, :t0));
SELECT k, total FROM mzcoord.read_at(NULL::rp_tmp, :t0) ORDER BY k;
-- It reads its own inputs; the target is no input of it.
SELECT count(*) AS reads_target FROM mzcoord.item_inputs ii JOIN mzcoord.items i ON i.id = ii.item_id
 WHERE i.name = 'rp_tmp' AND ii.input_item_id = :'mv_id';
SELECT mzcoord.drop('rp_tmp');
SELECT count(*) AS replacements_left FROM mzcoord.replacements;
SELECT k, total FROM mzcoord.read_at(NULL::rp_mv, :t0) ORDER BY k;

-- ---------------------------------------------------------------------
-- Apply: the old definition before T, the new one from T
-- ---------------------------------------------------------------------
SELECT mzcoord.create_replacement('rp_mv', 'rp_new',
       'SELECT t.k, t.v * 100 AS total FROM rp_t t JOIN rp_u u ON u.k = t.k')
       IS NOT NULL AS created;
SELECT r.target_id = :'mv_id' AS paired FROM mzcoord.replacements r;
UPDATE rp_t SET v = v + 1 WHERE k = 1;
SELECT mzcoord.last_commit_ts() AS t1 \gset
SELECT wait_until(format($$SELECT bool_and(upper > %s) FROM mzcoord.frontiers
                            WHERE relation IN ('rp_mv'::regclass, 'rp_new'::regclass,
                                               'rp_over'::regclass)$$, :t1));
SELECT string_agg(k || ':' || total, ',' ORDER BY k) AS before_t1
  FROM mzcoord.read_at(NULL::rp_mv, :t1) \gset
SELECT string_agg(n || ':' || s, ',') AS over_before_t1
  FROM mzcoord.read_at(NULL::rp_over, :t1) \gset
SELECT mzcoord.apply_replacement('rp_new') AS swapped \gset
SELECT :swapped > :t1 AS after_the_writes;
-- Before T: what it was.
SELECT string_agg(k || ':' || total, ',' ORDER BY k) = :'before_t1' AS old_rows_kept
  FROM mzcoord.read_at(NULL::rp_mv, :t1);
SELECT string_agg(k || ':' || total, ',' ORDER BY k) AS at_t1
  FROM mzcoord.read_at(NULL::rp_mv, :swapped - 1);
-- From T: the new definition.
SELECT k, total FROM mzcoord.read_at(NULL::rp_mv, :swapped) ORDER BY k;
SELECT k, total FROM rp_plain ORDER BY k;
-- The same relation, grants and dependents; the replacement's name is gone.
SELECT 'rp_mv'::regclass::oid = :mv_oid AS same_oid;
SELECT has_table_privilege('rp_reader', 'rp_mv', 'SELECT') AS grant_kept;
SELECT to_regclass('rp_new') IS NULL AS replacement_gone;
SELECT count(*) AS replacements_left FROM mzcoord.replacements;
SELECT count(*) AS replacement_items_left FROM mzcoord.items WHERE name = 'rp_new';
-- The catalog: both definitions with their validity; the new inputs.
SELECT global_id = :'mv_id' AS first_gid, definition, valid_until = :swapped AS until_t
  FROM mzcoord.versions WHERE name = 'rp_mv' AND valid_until IS NOT NULL;
SELECT global_id <> :'mv_id' AS new_gid, definition, valid_from = :swapped AS from_t
  FROM mzcoord.versions WHERE name = 'rp_mv' AND valid_until IS NULL;
SELECT i2.name AS input FROM mzcoord.item_inputs ii JOIN mzcoord.items i2 ON i2.id = ii.input_item_id
 WHERE ii.item_id = :'mv_id' ORDER BY 1;
SELECT r.input_global_id IS NOT NULL AS has_requirement, i2.name
  FROM mzcoord.read_requirements r JOIN mzcoord.items i2 ON i2.id = r.input_global_id
 WHERE r.item_id = :'mv_id' ORDER BY 2;

-- The new definition keeps going: a write to its new input shows.
INSERT INTO rp_u VALUES (3, 'c');
SELECT mzcoord.last_commit_ts() AS t2 \gset
SELECT wait_until(format($$SELECT bool_and(upper > %s) FROM mzcoord.frontiers
                            WHERE relation IN ('rp_mv'::regclass, 'rp_over'::regclass)$$, :t2));
SELECT k, total FROM mzcoord.read_at(NULL::rp_mv, :t2) ORDER BY k;
-- The view over the target: the old contents before T, the new after.
SELECT string_agg(n || ':' || s, ',') = :'over_before_t1' AS over_old_kept
  FROM mzcoord.read_at(NULL::rp_over, :t1);
SELECT n, s FROM mzcoord.read_at(NULL::rp_over, :t2);
-- The old definition's dependency is gone: the target no longer reads only
-- rp_t, and a second replacement may read just rp_u.
SELECT mzcoord.create_replacement('rp_mv', 'rp_third', 'SELECT k, 7 AS total FROM rp_u')
       IS NOT NULL AS created;
SELECT mzcoord.apply_replacement('rp_third') > :swapped AS applied_again;
SELECT count(*) AS definitions FROM mzcoord.versions WHERE name = 'rp_mv';
SELECT mzcoord.last_commit_ts() AS t3 \gset
INSERT INTO rp_u VALUES (4, 'd');
SELECT mzcoord.last_commit_ts() AS t4 \gset
SELECT wait_until(format($$SELECT upper > %s FROM mzcoord.frontiers
                            WHERE relation = 'rp_mv'::regclass$$, :t4));
SELECT k, total FROM mzcoord.read_at(NULL::rp_mv, :t4) ORDER BY k;
-- rp_t is read by nothing now and can be dropped.
SELECT mzcoord.drop('rp_t');

-- ---------------------------------------------------------------------
-- Data errors across a swap: the target's error ranges end at T, and the
-- replacement's from T on become the target's
-- ---------------------------------------------------------------------
CREATE TABLE rp_e (k int, v int);
SELECT mzcoord.create_table('rp_e', '1 hour') IS NOT NULL AS registered;
INSERT INTO rp_e VALUES (1, 5);
SELECT mzcoord.create_materialized_view('rp_div', 'SELECT k, 100 / v AS q FROM rp_e', '1 hour')
       IS NOT NULL AS created;
SELECT id AS div_id FROM mzcoord.items WHERE name = 'rp_div' \gset
INSERT INTO rp_e VALUES (2, 0);
SELECT mzcoord.last_commit_ts() AS e_bad \gset
-- A replacement that divides safely.
SELECT mzcoord.create_replacement('rp_div', 'rp_safe',
       'SELECT k, 100 / NULLIF(v, 0) AS q FROM rp_e') IS NOT NULL AS created;
SELECT wait_until(format($$SELECT bool_and(upper > %s) FROM mzcoord.frontiers
                            WHERE relation IN ('rp_div'::regclass, 'rp_safe'::regclass)$$, :e_bad));
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::rp_div, %s)', :e_bad));
SELECT mzcoord.apply_replacement('rp_safe') AS e_swap \gset
-- Before T the error stands, its range now ending at T; from T the
-- replacement's contents.
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::rp_div, %s)', :e_bad));
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::rp_div, %s)', :e_swap - 1));
SELECT k, q FROM mzcoord.read_at(NULL::rp_div, :e_swap) ORDER BY k;
SELECT from_ts = :e_bad AS from_bad, upto_ts = :e_swap AS upto_swap, sqlstate
  FROM mzcoord.view_errors WHERE item_id = :'div_id' ORDER BY from_ts;
-- A replacement in error from its start (the row (1, 5) divides by zero):
-- the target is in error from that swap on, and not before.
SELECT mzcoord.create_replacement('rp_div', 'rp_bad5',
       'SELECT k, 100 / (v - 5) AS q FROM rp_e') IS NOT NULL AS created;
SELECT mzcoord.apply_replacement('rp_bad5') AS e_swap2 \gset
SELECT k, q FROM mzcoord.read_at(NULL::rp_div, :e_swap2 - 1) ORDER BY k;
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::rp_div, %s)', :e_swap2));
SELECT from_ts = :e_bad AS from_bad, upto_ts = :e_swap AS upto_swap,
       from_ts = :e_swap2 AS from_swap2, upto_ts IS NULL AS open, sqlstate
  FROM mzcoord.view_errors WHERE item_id = :'div_id' ORDER BY from_ts;

SELECT * FROM mzcoord.check_consistency();
SELECT mzcoord.drop('rp_div');
SELECT mzcoord.drop('rp_e');
DROP VIEW rp_plain;
SELECT mzcoord.drop('rp_mv', cascade => true);
DROP TABLE rp_u;
REVOKE ALL ON SCHEMA public FROM rp_reader;
DROP ROLE rp_reader;
