--
-- Privilege matrix: two unprivileged roles and the database owner try every
-- entry point on objects another role owns, every internal function, and
-- every catalog table and history.  Nothing of it may succeed; each attempt
-- is refused with a clear error.  (The owner's own rights are exercised by
-- the other tests.)
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
CREATE ROLE mzc_pm_owner;
CREATE ROLE mzc_pm_a;
CREATE ROLE mzc_pm_b;
CREATE ROLE mzc_pm_dbo;
CREATE SCHEMA pm AUTHORIZATION mzc_pm_owner;
GRANT USAGE, CREATE ON SCHEMA pm TO mzc_pm_a, mzc_pm_b, mzc_pm_dbo;
SELECT datdba::regrole AS old_dba FROM pg_database WHERE datname = current_database() \gset
ALTER DATABASE contrib_regression OWNER TO mzc_pm_dbo;

SET ROLE mzc_pm_owner;
CREATE TABLE pm.t (a int);
SELECT mzcoord.create_table('pm.t') IS NOT NULL AS registered;
INSERT INTO pm.t VALUES (1);
SELECT mzcoord.create_source('pm.s', 'k int') IS NOT NULL AS source;
SELECT mzcoord.create_materialized_view('pm.mv', 'SELECT a FROM pm.t') IS NOT NULL AS mv;
SELECT mzcoord.create_lease('pm_lease', ARRAY['pm.t'::regclass]) > 0 AS leased;
-- A table under row-level security: mzc_pm_a may SELECT it, through a
-- policy that hides rows; its history applies no policy (issue 19).
CREATE TABLE pm.t_rls (a int);
SELECT mzcoord.create_table('pm.t_rls') IS NOT NULL AS registered;
CREATE POLICY p ON pm.t_rls USING (a::text = current_user);
ALTER TABLE pm.t_rls ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON pm.t_rls TO mzc_pm_a;
RESET ROLE;
SELECT history::text AS hist FROM mzcoord.storage WHERE relation = 'pm.t'::regclass \gset
SELECT global_id AS t_id FROM mzcoord.storage WHERE relation = 'pm.t'::regclass \gset

CREATE TABLE pm_attempts (role text, what text, sqlstate text);
GRANT INSERT ON pm_attempts TO PUBLIC;
CREATE FUNCTION pm_try(what text, stmt text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    state text := 'ok';
BEGIN
    BEGIN
        EXECUTE stmt;
        RAISE SQLSTATE 'MZPM0';   -- undo whatever it did, keep 'ok'
    EXCEPTION
        WHEN SQLSTATE 'MZPM0' THEN state := 'ok';
        WHEN OTHERS THEN state := SQLSTATE;
    END;
    INSERT INTO public.pm_attempts VALUES (current_user, what, state);
END $$;
GRANT EXECUTE ON FUNCTION pm_try(text, text) TO PUBLIC;

CREATE TABLE pm_stmts (what text, stmt text);
INSERT INTO pm_stmts VALUES
 ('read_at',            $$SELECT count(*) FROM mzcoord.read_at(NULL::pm.t, (SELECT since FROM mzcoord.frontiers WHERE relation = 'pm.t'::regclass))$$),
 ('select_timestamp',   $$SELECT mzcoord.select_timestamp(ARRAY['pm.t'::regclass])$$),
 ('explain_timestamp',  $$SELECT mzcoord.explain_timestamp(ARRAY['pm.t'::regclass])$$),
 ('_updates_at',        $$SELECT count(*) FROM mzcoord._updates_at(NULL::pm.t, (SELECT since FROM mzcoord.frontiers WHERE relation = 'pm.t'::regclass), 1)$$),
 ('changes',            $$SELECT count(*) FROM mzcoord.changes(NULL::pm.t, (SELECT since FROM mzcoord.frontiers WHERE relation = 'pm.t'::regclass), (SELECT since FROM mzcoord.frontiers WHERE relation = 'pm.t'::regclass))$$),
 ('sink_options',       $$UPDATE mzcoord.sink_options SET snapshot = false$$),
 ('_catalog_set_sink_options', $$SELECT mzcoord._catalog_set_sink_options('u1', false)$$),
 ('acquire_read_hold',  $$SELECT mzcoord.acquire_read_hold(ARRAY['pm.t'::regclass])$$),
 ('hold the mv',        $$SELECT mzcoord.acquire_read_hold(ARRAY['pm.mv'::regclass])$$),
 ('lease t',            $$SELECT mzcoord.create_lease('pm_other', ARRAY['pm.t'::regclass])$$),
 ('renew the lease',    $$SELECT mzcoord.renew_lease('pm_lease')$$),
 ('advance the lease',  $$SELECT mzcoord.advance_lease('pm_lease', 9000000000000)$$),
 ('drop the lease',     $$SELECT mzcoord.drop_lease('pm_lease')$$),
 ('lease_records',      $$UPDATE mzcoord.lease_records SET expires_at = 'infinity'$$),
 ('_lease_write',       $$SELECT mzcoord._lease_write('drop', 'pm_lease', 0, NULL, 0, NULL, NULL)$$),
 ('_check_leases',      $$SELECT * FROM mzcoord._check_leases$$),
 ('explain_compaction', $$SELECT mzcoord.explain_compaction('pm.t')$$),
 ('compaction_bounds',  $$UPDATE mzcoord.compaction_bounds SET bound = 9000000000000$$),
 ('read_requirements',  $$DELETE FROM mzcoord.read_requirements$$),
 ('coordinator_epoch',  $$UPDATE mzcoord.coordinator_epoch SET epoch = epoch + 1$$),
 ('_create_bound',      $$SELECT mzcoord._create_bound('u1', 'table', 0)$$),
 ('compact',            $$SELECT mzcoord.compact('pm.t')$$),
 ('set_retain_history', $$SELECT mzcoord.set_retain_history('pm.t', '1 hour')$$),
 ('drop',               $$SELECT mzcoord.drop('pm.t')$$),
 ('drop the source',    $$SELECT mzcoord.drop('pm.s')$$),
 ('register again',     $$SELECT mzcoord.create_table('pm.t')$$),
 ('append',             $$SELECT mzcoord.append(NULL::pm.s, (SELECT upper FROM mzcoord.frontiers WHERE relation = 'pm.s'::regclass), ARRAY[ROW(1)::pm.s])$$),
 ('advance_upper',      $$SELECT mzcoord.advance_upper('pm.s', (SELECT upper + 1 FROM mzcoord.frontiers WHERE relation = 'pm.s'::regclass))$$),
 ('mv over t',          $$SELECT mzcoord.create_materialized_view('pm.x', 'SELECT a FROM pm.t')$$),
 ('index on t',         $$SELECT mzcoord.create_index('pm.x', 'pm.t', ARRAY['a'])$$),
 ('sink from t',        $$SELECT mzcoord.create_sink('pm.x', 'pm.t')$$),
 ('insert into t',      $$INSERT INTO pm.t VALUES (2)$$),
 ('write the source',   $$INSERT INTO pm.s VALUES (2)$$),
 ('read the history',   format('SELECT count(*) FROM %s', :'hist')),
 ('write the history',  format('INSERT INTO %s (c1, ts, diff) VALUES (9, 0, 1)', :'hist')),
 ('items insert',       $$INSERT INTO mzcoord.items (id, kind, schema_name, name, owner) VALUES ('u999999', 'table', 'pm', 'z', 10)$$),
 ('items update',       $$UPDATE mzcoord.items SET owner = 10$$),
 ('items delete',       $$DELETE FROM mzcoord.items$$),
 ('collections update', $$UPDATE mzcoord.collections SET since = 0$$),
 ('collections delete', $$DELETE FROM mzcoord.collections$$),
 ('item_inputs delete', $$DELETE FROM mzcoord.item_inputs$$),
 ('storage update',     $$UPDATE mzcoord.storage SET compacted = 0$$),
 ('implication_log',    $$DELETE FROM mzcoord.implication_log$$),
 ('_write_ts',          $$SELECT mzcoord._write_ts()$$),
 ('_creation_ts',       $$SELECT mzcoord._creation_ts()$$),
 ('_stage_drop',        format($$SELECT mzcoord._stage_drop(%L)$$, :'t_id')),
 ('_stage_policy',      format($$SELECT mzcoord._stage_policy(%L, 1)$$, :'t_id')),
 ('_hold_inputs',       format($$SELECT mzcoord._hold_inputs(ARRAY[%L])$$, :'t_id')),
 ('_row_is_own',        $$SELECT mzcoord._row_is_own('1'::xid)$$),
 ('_check_storage_orphans', $$SELECT * FROM mzcoord._check_storage_orphans$$),
 ('_check_controller',  $$SELECT * FROM mzcoord._check_controller$$),
 -- issue 19
 ('read t_rls',         $$SELECT count(*) FROM mzcoord.read_at(NULL::pm.t_rls, (SELECT since FROM mzcoord.frontiers WHERE relation = 'pm.t_rls'::regclass))$$),
 ('sink from t_rls',    $$SELECT mzcoord.create_sink('pm.x', 'pm.t_rls')$$),
 ('mv over t_rls',      $$SELECT mzcoord.create_materialized_view('pm.x', 'SELECT a FROM pm.t_rls')$$),
 ('lease t_rls',        $$SELECT mzcoord.create_lease('pm_other', ARRAY['pm.t_rls'::regclass])$$),
 ('_creation_refresh_ts', $$SELECT mzcoord._creation_refresh_ts('{}')$$),
 ('source in information_schema', $$SELECT mzcoord.create_source('information_schema.x', 'a int')$$),
 ('raise the role limit', $$SET mzcoord.max_collections_per_role = 100$$);
GRANT SELECT ON pm_stmts TO PUBLIC;
-- Try the statements (all of them, or those named) as the current role.
CREATE FUNCTION pm_run_all(names text[] DEFAULT NULL) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(pm_try(what, stmt)::text) FROM (SELECT * FROM pm_stmts
     WHERE names IS NULL OR what = ANY (names) ORDER BY what) s
$$;
GRANT EXECUTE ON FUNCTION pm_run_all(text[]) TO PUBLIC;

SET ROLE mzc_pm_a;
SELECT pm_run_all();
RESET ROLE;
SET ROLE mzc_pm_b;
SET search_path = pm, public;
SELECT pm_run_all();
RESET search_path;
RESET ROLE;
SET ROLE mzc_pm_dbo;
SELECT pm_run_all();
RESET ROLE;

-- After a REVOKE (issue 19): mzc_pm_a had SELECT on pm.t_rev and made a
-- lease and a sink of it; the owner revokes it.  Renewing or advancing the
-- lease is refused, and the sink stops exporting (its step fails with
-- 42501, and a row written after the REVOKE never reaches the sink).
SET ROLE mzc_pm_owner;
CREATE TABLE pm.t_rev (a int);
SELECT mzcoord.create_table('pm.t_rev') IS NOT NULL AS registered;
GRANT SELECT ON pm.t_rev TO mzc_pm_a;
RESET ROLE;
SET ROLE mzc_pm_a;
SELECT mzcoord.create_lease('pm_rev', ARRAY['pm.t_rev'::regclass], NULL, '1 hour') > 0 AS leased;
SELECT mzcoord.create_sink('pm.a_sink', 'pm.t_rev') IS NOT NULL AS sink;
RESET ROLE;
SET ROLE mzc_pm_owner;
REVOKE SELECT ON pm.t_rev FROM mzc_pm_a;
INSERT INTO pm.t_rev VALUES (1);
RESET ROLE;
SET ROLE mzc_pm_a;
SELECT pm_try('renew a lease after REVOKE', $$SELECT mzcoord.renew_lease('pm_rev')$$);
SELECT pm_try('advance a lease after REVOKE', $$SELECT mzcoord.advance_lease('pm_rev', 9000000000000)$$);
RESET ROLE;
SELECT wait_until($$SELECT error_code = '42501' FROM mzcoord.maintenance_status
                    WHERE name = 'pm.a_sink'$$) AS sink_fails;
INSERT INTO pm_attempts
SELECT 'mzc_pm_a', 'export a sink after REVOKE',
       CASE WHEN EXISTS (SELECT 1 FROM pm.a_sink) THEN 'ok' ELSE
            (SELECT error_code FROM mzcoord.maintenance_status WHERE name = 'pm.a_sink') END;
-- The per-role collection limit binds every role (a superuser lowers it).
SET mzcoord.max_collections_per_role = 0;
SET ROLE mzc_pm_b;
SELECT pm_try('a collection over the per-role limit', $$SELECT mzcoord.create_source('pm.over', 'a int')$$);
RESET ROLE;
RESET mzcoord.max_collections_per_role;

-- The harness can tell success: the owner may do what the others may not.
SET ROLE mzc_pm_owner;
SELECT pm_run_all(ARRAY['read_at', '_updates_at', 'changes', 'select_timestamp', 'compact', 'set_retain_history',
                        'insert into t', 'append', 'advance_upper', 'lease t',
                        'renew the lease', 'advance the lease', 'drop the lease',
                        'sink from t_rls', 'lease t_rls', 'read t_rls']);
RESET ROLE;
SELECT what, sqlstate FROM pm_attempts WHERE role = 'mzc_pm_owner' ORDER BY what;
DELETE FROM pm_attempts WHERE role = 'mzc_pm_owner';

-- Every attempt by every role, refused; and how.
SELECT count(*) AS attempts,
       count(*) FILTER (WHERE sqlstate <> 'ok') AS refused,
       count(*) FILTER (WHERE sqlstate = 'ok') AS wrongly_allowed,
       count(*) FILTER (WHERE sqlstate LIKE 'XX%') AS internal_errors
  FROM pm_attempts;
SELECT role, what FROM pm_attempts WHERE sqlstate = 'ok' ORDER BY 1, 2;
SELECT sqlstate, count(*) FROM pm_attempts GROUP BY 1 ORDER BY 1;
-- The same error whoever tries.
SELECT what, string_agg(DISTINCT sqlstate, ',') AS sqlstates
  FROM pm_attempts GROUP BY what ORDER BY what;

SELECT * FROM mzcoord.check_consistency();
ALTER DATABASE contrib_regression OWNER TO :old_dba;
SELECT mzcoord.drop_lease('pm_lease');
SELECT mzcoord.drop_lease('pm_rev');
DROP SCHEMA pm CASCADE;
DROP TABLE pm_attempts, pm_stmts;
DROP FUNCTION pm_run_all(text[]);
DROP FUNCTION pm_try(text, text);
DROP ROLE mzc_pm_owner, mzc_pm_a, mzc_pm_b, mzc_pm_dbo;
SELECT * FROM mzcoord.check_consistency();
