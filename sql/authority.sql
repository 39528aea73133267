--
-- The catalog as the authority on compaction (issue 11): compaction bounds,
-- read requirements, the coordinator epoch, read-only mode.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
CREATE SCHEMA au;
CREATE TABLE au.t1 (a int);
CREATE TABLE au.t2 (a int);
SELECT mzcoord.create_table('au.t1') IS NOT NULL AS t1;
SELECT mzcoord.create_table('au.t2') IS NOT NULL AS t2;
SELECT mzcoord.create_source('au.s', 'a int') IS NOT NULL AS s;
SELECT mzcoord.create_materialized_view('au.mv', 'SELECT a FROM au.t1') IS NOT NULL AS mv;
-- A view that refreshes only in the far future: its upper waits there.
SELECT mzcoord.create_materialized_view('au.mvs', 'SELECT a FROM au.t1',
    refresh => ARRAY[format('at %s', (extract(epoch FROM now()) * 1000)::bigint
                                        + 100 * 86400000::bigint)]) IS NOT NULL AS mvs;
SELECT mzcoord.create_index('au_t1_a', 'au.t1', ARRAY['a']) IS NOT NULL AS idx;
SELECT mzcoord.create_sink('au.sk', 'au.t1') IS NOT NULL AS sk;

CREATE TEMP VIEW au_items AS
SELECT i.name, i.kind, c.global_id, b.bound, c.since, c.as_of
  FROM mzcoord.items i JOIN mzcoord.collections c ON c.item_id = i.id
  LEFT JOIN mzcoord.compaction_bounds b ON b.global_id = c.global_id
 WHERE i.schema_name = 'au';

-- Tables, sources and materialized views have a bound, born at their since
-- (the since of mzcoord.collections mirrors it); indexes and sinks do not.
SELECT name, kind, bound IS NOT NULL AS has_bound,
       bound IS NOT DISTINCT FROM since AS mirrored
  FROM au_items ORDER BY name;
-- The coordinator publishes under its epoch.
SELECT epoch > 0 AS coordinator_epoch FROM mzcoord.coordinator_epoch;
SELECT wait_until($$SELECT bool_and(b.epoch = e.epoch)
                      FROM mzcoord.compaction_bounds b, mzcoord.coordinator_epoch e
                     WHERE b.global_id IN (SELECT global_id FROM au_items
                                            WHERE name IN ('t1', 't2'))$$) AS published;

-- Requirements: every logical input of the maintained objects, from their
-- as-of, which is not below the input's bound, then at their progress
-- (upper - 1) once the coordinator has moved them: which of the two it is
-- by now depends on the machine's speed, the rule does not.
SELECT i.name, r.input_global_id = t.global_id AS on_t1,
       r.at = greatest(c.as_of, c.upper - 1) AS at_progress,
       r.at >= (SELECT bound FROM au_items WHERE name = 't1') AS not_below_bound
  FROM mzcoord.read_requirements r
  JOIN mzcoord.items i ON i.id = r.item_id
  JOIN mzcoord.collections c ON c.global_id = r.item_id,
       (SELECT global_id FROM au_items WHERE name = 't1') t
 WHERE i.schema_name = 'au' ORDER BY i.name;

-- A bound never decreases, not even by a superuser's UPDATE.
SELECT try($$UPDATE mzcoord.compaction_bounds SET bound = bound - 1
              WHERE global_id = (SELECT global_id FROM au_items WHERE name = 't2')$$);
SELECT try($$UPDATE mzcoord.compaction_bounds SET bound = 5
              WHERE global_id = (SELECT global_id FROM au_items WHERE name = 't2')$$);
-- A requirement below an input's committed bound is refused (D3).
SELECT try(format($$SELECT mzcoord._record_requirements(%L, ARRAY[%L], 0)$$,
                  (SELECT global_id FROM au_items WHERE name = 'mv'),
                  (SELECT global_id FROM au_items WHERE name = 't2')));

-- A requirement on t2 (as if the far-future view read it too) stops its
-- bound there, and with it the live since, while its policy moves on.
-- (The tick publishes a bound for a table with history above it: an idle
-- table's bound stays where it is, whatever holds it, and how long t2 stays
-- on the tick's list after its creation depends on the machine's speed.
-- Each write below, which leaves t2's contents as they were, gives t2 such
-- history.)
SELECT global_id AS t2_gid, bound AS t2_req FROM au_items WHERE name = 't2' \gset
SELECT global_id AS mv_gid FROM au_items WHERE name = 'mv' \gset
SELECT global_id AS mvs_gid FROM au_items WHERE name = 'mvs' \gset
INSERT INTO mzcoord.read_requirements (item_id, input_global_id, at)
VALUES (:'mvs_gid', :'t2_gid', (SELECT bound FROM mzcoord.compaction_bounds
                                 WHERE global_id = :'t2_gid'));
SELECT at AS t2_req FROM mzcoord.read_requirements
 WHERE item_id = :'mvs_gid' AND input_global_id = :'t2_gid' \gset
BEGIN;
INSERT INTO au.t2 VALUES (1);
DELETE FROM au.t2 WHERE a = 1;
COMMIT;
-- The policy moves on (the timeline 2 s past the requirement), and the
-- coordinator publishes a few times after that.
SELECT wait_until(format($$SELECT upper - 2000 > %s FROM mzcoord.frontiers
                            WHERE global_id = %L$$, :t2_req, :'t2_gid')) AS timeline_moved;
SELECT wait_ticks(3);
SELECT b.bound = :t2_req AS bound_held, f.since <= b.bound AS since_not_above,
       f.upper - 2000 > b.bound AS policy_moved_on
  FROM mzcoord.compaction_bounds b JOIN mzcoord.frontiers f ON f.global_id = b.global_id
 WHERE b.global_id = :'t2_gid';
SELECT * FROM mzcoord.check_consistency();
SELECT mzcoord.drop('au.mvs');

-- A continual view's requirements follow its durable upper as it
-- refreshes: given one on t2 too, it advances to upper - 1 with each
-- refresh, and t2's bound follows.
INSERT INTO mzcoord.read_requirements (item_id, input_global_id, at)
VALUES (:'mv_gid', :'t2_gid', (SELECT bound FROM mzcoord.compaction_bounds
                                WHERE global_id = :'t2_gid'));
BEGIN;
INSERT INTO au.t2 VALUES (1);
DELETE FROM au.t2 WHERE a = 1;
COMMIT;
SELECT wait_until(format($$SELECT r.at = c.upper - 1 AND r.at > %s
                             FROM mzcoord.read_requirements r
                             JOIN mzcoord.collections c ON c.global_id = r.item_id
                            WHERE r.item_id = %L AND r.input_global_id = %L$$,
                         :t2_req + 500, :'mv_gid', :'t2_gid')) AS requirement_follows_upper;
SELECT wait_until(format($$SELECT bound >= %s FROM mzcoord.compaction_bounds
                            WHERE global_id = %L$$, :t2_req + 500, :'t2_gid')) AS bound_followed;
SELECT b.bound <= r.at AS bound_not_above_requirement
  FROM mzcoord.compaction_bounds b, mzcoord.read_requirements r
 WHERE b.global_id = :'t2_gid' AND r.item_id = :'mv_gid' AND r.input_global_id = :'t2_gid';
-- Requirements never go back; completion is final.
SELECT try(format($$UPDATE mzcoord.read_requirements SET at = at - 1
                     WHERE item_id = %L AND input_global_id = %L$$, :'mv_gid', :'t2_gid'));
-- Dropping the view removes its requirements; t2's bound is free again.
SELECT mzcoord.drop('au.mv');
SELECT count(*) AS mv_requirements FROM mzcoord.read_requirements WHERE item_id = :'mv_gid';
SELECT count(*) AS mv_bounds FROM mzcoord.compaction_bounds WHERE global_id = :'mv_gid';
-- (A write gives t2 history to compact again.)
BEGIN;
INSERT INTO au.t2 VALUES (1);
DELETE FROM au.t2 WHERE a = 1;
COMMIT;
SELECT wait_until(format($$SELECT bound > %s FROM mzcoord.compaction_bounds
                            WHERE global_id = %L$$, :t2_req + 2000, :'t2_gid')) AS bound_free;

-- Read-only: no bound is published and nothing is compacted; reads and holds
-- keep working; turning it off resumes.
INSERT INTO au.t2 VALUES (1), (2);
UPDATE au.t2 SET a = a + 10;
ALTER SYSTEM SET mzcoord.read_only = on;
SELECT pg_reload_conf();
SELECT wait_ticks(3);   -- the coordinator reloads before its next tick
SELECT b.bound AS ro_bound, s.compacted AS ro_compacted
  FROM mzcoord.compaction_bounds b JOIN mzcoord.storage s USING (global_id)
 WHERE b.global_id = :'t2_gid' \gset
UPDATE au.t2 SET a = a + 10;
SELECT wait_ticks(20);
SELECT b.bound = :ro_bound AS bound_frozen, s.compacted = :ro_compacted AS not_compacted,
       f.since <= b.bound AS since_not_above
  FROM mzcoord.compaction_bounds b JOIN mzcoord.storage s USING (global_id)
  JOIN mzcoord.frontiers f USING (global_id)
 WHERE b.global_id = :'t2_gid';
BEGIN;
SELECT mzcoord.select_timestamp(ARRAY['au.t2'::regclass]) >= :ro_bound AS read_ok;
SELECT count(*) IN (0, 2) AS readable FROM mzcoord.read_at(NULL::au.t2, :ro_bound);
COMMIT;
ALTER SYSTEM RESET mzcoord.read_only;
SELECT pg_reload_conf();
SELECT wait_until(format($$SELECT bound > %s FROM mzcoord.compaction_bounds
                            WHERE global_id = %L$$, :ro_bound, :'t2_gid')) AS resumed;
SELECT * FROM mzcoord.check_consistency();

-- Dropping a table retires its bound with its catalog row.
DROP TABLE au.t2;
SELECT count(*) AS t2_bounds FROM mzcoord.compaction_bounds WHERE global_id = :'t2_gid';
SELECT mzcoord.drop('au.sk');
SELECT mzcoord.drop('au.au_t1_a');
SELECT mzcoord.drop('au.s');
DROP TABLE au.t1;
DROP SCHEMA au;
SELECT count(*) AS requirements_left FROM mzcoord.read_requirements;
SELECT * FROM mzcoord.check_consistency();

-- controller_status() shows the epoch the coordinator holds (issue 19), also
-- after an advanced epoch fenced it and a new coordinator took the next one;
-- the bootstrap count of shared memory is another number.  A registered
-- table gives the coordinator something to publish, so that it meets the
-- fence.
CREATE TABLE au_epoch (a int);
SELECT mzcoord.create_table('au_epoch') IS NOT NULL AS registered;
SELECT wait_until($$SELECT s.epoch = e.epoch FROM mzcoord.controller_status() s,
                                                  mzcoord.coordinator_epoch e$$) AS status_epoch;
SELECT epoch AS epoch_before FROM mzcoord.coordinator_epoch \gset
-- A jump of 100, so that no other counter can match by chance.
UPDATE mzcoord.coordinator_epoch SET epoch = epoch + 100;
SELECT wait_until(format($$SELECT e.epoch > %s + 100 AND s.epoch = e.epoch
                             FROM mzcoord.controller_status() s, mzcoord.coordinator_epoch e$$,
                         :epoch_before), 60) AS status_epoch_after_fencing;
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$) AS ready_again;
DROP TABLE au_epoch;
