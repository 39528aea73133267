--
-- Hardening (issue 19, defects 7-9): schemas a dump does not carry, guards
-- of the authority's tables, DDL under session_replication_role = replica.
-- Errors are shown by try(); after each group, the counts show that
-- nothing changed.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TEMP VIEW counts AS
SELECT (SELECT count(*) FROM mzcoord.items) AS items,
       (SELECT count(*) FROM mzcoord.collections) AS collections,
       (SELECT count(*) FROM mzcoord.compaction_bounds) AS bounds,
       (SELECT count(*) FROM mzcoord.read_requirements) AS requirements,
       (SELECT count(*) FROM mzcoord.coordinator_epoch) AS epochs;

CREATE SCHEMA hg;
CREATE TABLE hg.t (a int);
SELECT mzcoord.create_table('hg.t') IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view('hg.mv', 'SELECT a FROM hg.t') IS NOT NULL AS created;
SELECT mzcoord.create_sink('hg.k', 'hg.t') IS NOT NULL AS created;
SELECT * FROM counts \gset before_

-- ------------------------------------------------------------------------
-- Defect 7: schemas a dump does not carry are refused, for everyone
-- ------------------------------------------------------------------------
SELECT try($q$SELECT mzcoord.create_table('information_schema.sql_features')$q$);
SELECT try($q$SELECT mzcoord.create_table('pg_catalog.pg_class')$q$);
SELECT try($q$SELECT mzcoord.create_source('information_schema.s', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_source('pg_toast.s', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('information_schema.mv', 'SELECT a FROM hg.t')$q$);
SELECT try($q$SELECT mzcoord.create_sink('information_schema.k', 'hg.t')$q$);
SELECT try($q$SELECT mzcoord.create_source('mzcoord.s', 'x int')$q$);
-- A table created there by a superuser is refused too.
CREATE TABLE information_schema.hg_mine (a int);
SELECT try($q$SELECT mzcoord.create_table('information_schema.hg_mine')$q$);
DROP TABLE information_schema.hg_mine;
SELECT count(*) AS items_in_system_schemas FROM mzcoord.items
 WHERE schema_name IN ('information_schema', 'pg_catalog', 'pg_toast', 'mzcoord');

-- A registered table moved into such a schema afterwards is reported by
-- check_consistency(): a dump would not carry it.
SELECT count(*) AS problems FROM mzcoord.check_consistency();
CREATE TABLE hg.moved (a int);
SELECT mzcoord.create_table('hg.moved') IS NOT NULL AS created;
ALTER TABLE hg.moved SET SCHEMA information_schema;
SELECT check_name, detail FROM mzcoord.check_consistency() ORDER BY 1, 2;
ALTER TABLE information_schema.moved SET SCHEMA hg;
SELECT count(*) AS problems FROM mzcoord.check_consistency();
SELECT mzcoord.drop('hg.moved') AS dropped_moved;

-- ------------------------------------------------------------------------
-- Defect 8: the epoch, the bounds and the requirements are guarded
-- ------------------------------------------------------------------------
SELECT epoch AS epoch_before FROM mzcoord.coordinator_epoch \gset
SELECT try($q$DELETE FROM mzcoord.coordinator_epoch$q$);
SELECT try($q$TRUNCATE mzcoord.coordinator_epoch$q$);
SELECT try($q$UPDATE mzcoord.coordinator_epoch SET epoch = 9223372036854775807$q$);
SELECT try($q$UPDATE mzcoord.coordinator_epoch SET epoch = 4611686018427387905$q$);
SELECT regexp_replace(try($q$UPDATE mzcoord.coordinator_epoch SET epoch = epoch - 1$q$),
                      'from \d+ to \d+', 'from E to E-1') AS try;
SELECT try($q$INSERT INTO mzcoord.coordinator_epoch (epoch) VALUES (1)$q$);
SELECT try($q$TRUNCATE mzcoord.compaction_bounds$q$);
SELECT try($q$TRUNCATE mzcoord.read_requirements$q$);
SELECT try($q$TRUNCATE mzcoord.compaction_bounds, mzcoord.read_requirements, mzcoord.coordinator_epoch$q$);
SELECT epoch >= :epoch_before AS epoch_kept FROM mzcoord.coordinator_epoch;
SELECT (SELECT row(c.*)::text FROM counts c) = row(:before_items, :before_collections,
       :before_bounds, :before_requirements, :before_epochs)::text AS unchanged;

-- ------------------------------------------------------------------------
-- Defect 9: session_replication_role = replica
-- ------------------------------------------------------------------------
CREATE TABLE hg.t2 (a int);
SET session_replication_role = replica;
SELECT try($q$SELECT mzcoord.create_table('hg.t2')$q$);
SELECT try($q$SELECT mzcoord.create_source('hg.s', 'x int')$q$);
SELECT try($q$SELECT mzcoord.create_materialized_view('hg.mv2', 'SELECT a FROM hg.t')$q$);
SELECT try($q$SELECT mzcoord.create_index('hg.t_a', 'hg.t', ARRAY['a'])$q$);
SELECT try($q$SELECT mzcoord.create_sink('hg.k2', 'hg.t')$q$);
SELECT try($q$SELECT mzcoord.set_retain_history('hg.t', '1 hour')$q$);
SELECT try($q$SELECT mzcoord.drop('hg.mv')$q$);
-- Direct writes to the catalog are refused too (the foreign keys that
-- cascade from items do not fire in this mode).
SELECT try($q$DELETE FROM mzcoord.items WHERE name = 'mv'$q$);
SELECT try($q$UPDATE mzcoord.items SET retain_history = '1 hour' WHERE name = 't'$q$);
-- The guards still fire.
SELECT try($q$DELETE FROM mzcoord.coordinator_epoch$q$);
SELECT try($q$TRUNCATE mzcoord.compaction_bounds$q$);
SELECT try($q$INSERT INTO hg.mv VALUES (1)$q$);
SELECT try($q$INSERT INTO hg.k VALUES (1)$q$);
-- Dropping a registered relation is followed, so refused here as well.
SELECT try($q$DROP TABLE hg.mv$q$);
-- Writes to a registered table are still captured (a logical replication
-- apply worker writes as replica).
INSERT INTO hg.t VALUES (7);
RESET session_replication_role;
SELECT (SELECT row(c.*)::text FROM counts c) = row(:before_items, :before_collections,
       :before_bounds, :before_requirements, :before_epochs)::text AS unchanged;
SELECT to_regclass('hg.mv') IS NOT NULL AS mv_kept;
SELECT wait_until($$SELECT count(*) = 1 FROM hg.mv WHERE a = 7$$, 120) AS captured;
SELECT count(*) AS problems FROM mzcoord.check_consistency();

-- Every trigger of the catalog fires ALWAYS, and so do the event triggers.
SELECT count(*) AS not_always FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
 WHERE c.relnamespace = 'mzcoord'::regnamespace AND NOT t.tgisinternal
   AND t.tgenabled <> 'A';
SELECT evtname, evtenabled FROM pg_event_trigger
 WHERE evtname LIKE 'mzcoord%' ORDER BY 1;

-- In origin mode the same DDL works.
SELECT mzcoord.create_table('hg.t2') IS NOT NULL AS created;
SELECT mzcoord.drop('hg.k') AS dropped_sink;
SELECT mzcoord.drop('hg.mv') AS dropped_mv;
SELECT mzcoord.drop('hg.t2') AS dropped_t2;
SELECT mzcoord.drop('hg.t') AS dropped_t;
DROP SCHEMA hg CASCADE;
SELECT count(*) AS problems FROM mzcoord.check_consistency();
