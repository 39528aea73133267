--
-- Sinks and materialized views vs. row-level security and REVOKE (issue
-- 19, defects 1, 2 and 10b).  A sink exports nothing its owner could not
-- read with a plain SELECT at that moment: an input under row-level
-- security for the owner is refused at creation and at every export, and
-- a revoked SELECT stops the export (42501 in maintenance_status) until it
-- is granted again; then the export resumes where it stopped, each update
-- exactly once.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
CREATE ROLE regress_hs_alice;
CREATE ROLE regress_hs_eve;
CREATE ROLE regress_hs_dbo;
CREATE SCHEMA hs;
GRANT USAGE, CREATE ON SCHEMA hs TO regress_hs_alice, regress_hs_eve, regress_hs_dbo;
SET search_path = hs, public;

-- Every committed write, at the commit time the session was told.
CREATE TEMP TABLE written (ts bigint, k int);
-- Wait until the sink exported every time up to ts (its upper is past it).
CREATE FUNCTION wait_sink(p_rel regclass, p_ts bigint) RETURNS boolean LANGUAGE sql AS
$$ SELECT wait_until(format('SELECT upper > %s FROM mzcoord.frontiers WHERE relation = %L::regclass',
                            p_ts, p_rel), 90) $$;
-- Wait for a new failure of a step (failures counts consecutive ones).
CREATE FUNCTION wait_failing(p_name text) RETURNS boolean LANGUAGE sql AS
$$ SELECT wait_until(format('SELECT failures > 0 FROM mzcoord.maintenance_status WHERE name = %L',
                            p_name), 90) $$;
-- Each written row in the sink exactly once, at its time, and nothing else.
CREATE FUNCTION sink_mismatches(p_rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format($q$SELECT count(*) FROM (
      (SELECT k, mz_timestamp, mz_diff FROM %s EXCEPT ALL SELECT k, ts, 1 FROM written)
      UNION ALL
      (SELECT k, ts, 1 FROM written EXCEPT ALL SELECT k, mz_timestamp, mz_diff FROM %s)) d$q$,
    p_rel, p_rel) INTO n;
  RETURN n;
END
$$;

-- Alice's table; eve may SELECT it.
SET ROLE regress_hs_alice;
CREATE TABLE hs.t (k int, owner name);
SELECT mzcoord.create_table('hs.t', '1 hour') IS NOT NULL AS registered;
CREATE POLICY own ON hs.t USING (owner = current_user);
GRANT SELECT ON hs.t TO regress_hs_eve;
RESET ROLE;

-- ---------------------------------------------------------------------------
-- Eve's sink, created while she may read all of the table.
-- ---------------------------------------------------------------------------
SET ROLE regress_hs_eve;
SELECT mzcoord.create_sink('hs.eve_out', 'hs.t', snapshot => false) IS NOT NULL AS created;
RESET ROLE;
INSERT INTO hs.t VALUES (1, 'regress_hs_alice');
INSERT INTO written SELECT mzcoord.last_commit_ts(), 1;
SELECT wait_sink('hs.eve_out', (SELECT max(ts) FROM written)) AS exported;
SELECT sink_mismatches('hs.eve_out') AS mismatches;

-- Defect 2: REVOKE stops the export.  The step fails with 42501, visible
-- in maintenance_status, and the sink stays behind the write after it.
REVOKE SELECT ON hs.t FROM regress_hs_eve;
INSERT INTO hs.t VALUES (2, 'regress_hs_alice');
SELECT mzcoord.last_commit_ts() AS t2 \gset
SELECT wait_failing('hs.eve_out') AS failing;
SELECT failures > 0 AS failing, error, error_code, upper <= :t2 AS behind
  FROM mzcoord.maintenance_status WHERE name = 'hs.eve_out';
SELECT count(*) AS exported_after_revoke FROM hs.eve_out WHERE k = 2;
INSERT INTO written VALUES (:t2, 2);

-- Granted again: the export resumes where it stopped, no gap, no duplicate.
GRANT SELECT ON hs.t TO regress_hs_eve;
SELECT wait_sink('hs.eve_out', :t2) AS resumed;
SELECT wait_until($$SELECT failures = 0 FROM mzcoord.maintenance_status WHERE name = 'hs.eve_out'$$)
       AS recovered;
SELECT sink_mismatches('hs.eve_out') AS mismatches;

-- ---------------------------------------------------------------------------
-- Defect 1: row-level security.  Enabled after the sink was created: the
-- export stops (42501) until it is disabled again.
-- ---------------------------------------------------------------------------
SET ROLE regress_hs_alice;
ALTER TABLE hs.t ENABLE ROW LEVEL SECURITY;
RESET ROLE;
INSERT INTO hs.t VALUES (3, 'regress_hs_alice');
SELECT mzcoord.last_commit_ts() AS t3 \gset
SELECT wait_failing('hs.eve_out') AS failing;
SELECT failures > 0 AS failing, error, error_code, upper <= :t3 AS behind
  FROM mzcoord.maintenance_status WHERE name = 'hs.eve_out';
SELECT count(*) AS exported_under_rls FROM hs.eve_out WHERE k = 3;
INSERT INTO written VALUES (:t3, 3);

-- A plain SELECT shows eve none of alice's rows, and read_at and
-- create_sink refuse the table; nothing is created.
SET ROLE regress_hs_eve;
SELECT count(*) AS visible FROM hs.t;
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::hs.t, %s)', :t3));
SELECT try($$SELECT mzcoord.create_sink('hs.eve_rls', 'hs.t')$$);
RESET ROLE;
SELECT count(*) AS eve_rls FROM mzcoord.items WHERE schema_name = 'hs' AND name = 'eve_rls';
SELECT to_regclass('hs.eve_rls') AS eve_rls_rel;

-- The table's owner is not subject to its policies (no FORCE): her sink is
-- created and exports everything.
SET ROLE regress_hs_alice;
SELECT mzcoord.create_sink('hs.alice_out', 'hs.t') IS NOT NULL AS created;
RESET ROLE;
SELECT wait_sink('hs.alice_out', :t3) AS exported;
SELECT k, sum(mz_diff) AS n FROM hs.alice_out GROUP BY k ORDER BY k;

-- Defect 10b: a database owner without SELECT is told so (42501), not
-- that the policy of the table is not immutable.
SELECT datdba::regrole AS old_dba FROM pg_database WHERE datname = current_database() \gset
ALTER DATABASE contrib_regression OWNER TO regress_hs_dbo;
SET ROLE regress_hs_dbo;
SELECT try($$SELECT mzcoord.create_materialized_view('hs.dbo_mv', 'SELECT k FROM hs.t')$$);
RESET ROLE;
ALTER DATABASE contrib_regression OWNER TO :old_dba;
SELECT to_regclass('hs.dbo_mv') AS dbo_mv_rel;

-- Disabled again: eve's export resumes with the row it held back.
SET ROLE regress_hs_alice;
ALTER TABLE hs.t DISABLE ROW LEVEL SECURITY;
RESET ROLE;
SELECT wait_sink('hs.eve_out', :t3) AS resumed;
SELECT wait_until($$SELECT failures = 0 FROM mzcoord.maintenance_status WHERE name = 'hs.eve_out'$$)
       AS recovered;
SELECT sink_mismatches('hs.eve_out') AS mismatches;

-- ---------------------------------------------------------------------------
-- A sink over a materialized view: the privilege on the view's relation.
-- ---------------------------------------------------------------------------
SET ROLE regress_hs_alice;
SELECT mzcoord.create_materialized_view('hs.mv', 'SELECT k FROM hs.t WHERE k > 1', '1 hour')
       IS NOT NULL AS created;
GRANT SELECT ON hs.mv TO regress_hs_eve;
RESET ROLE;
-- Revoked in the transaction that creates the sink: it never exports.
BEGIN;
SET ROLE regress_hs_eve;
SELECT mzcoord.create_sink('hs.eve_mv_out', 'hs.mv') IS NOT NULL AS created;
RESET ROLE;
REVOKE SELECT ON hs.mv FROM regress_hs_eve;
COMMIT;
SELECT wait_failing('hs.eve_mv_out') AS failing;
SELECT error, error_code FROM mzcoord.maintenance_status WHERE name = 'hs.eve_mv_out';
SELECT count(*) AS exported_after_revoke FROM hs.eve_mv_out;
GRANT SELECT ON hs.mv TO regress_hs_eve;
SELECT wait_until($$SELECT failures = 0 AND steps > 0
                      FROM mzcoord.maintenance_status WHERE name = 'hs.eve_mv_out'$$, 90)
       AS recovered;
SELECT k, mz_diff FROM hs.eve_mv_out ORDER BY k;

-- ---------------------------------------------------------------------------
-- Cleanup
-- ---------------------------------------------------------------------------
SELECT mzcoord.drop('hs.t', cascade => true);
SELECT * FROM mzcoord.check_consistency();
DROP SCHEMA hs CASCADE;
DROP ROLE regress_hs_alice;
DROP ROLE regress_hs_eve;
DROP ROLE regress_hs_dbo;
RESET search_path;
