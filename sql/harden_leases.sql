--
-- Hardening (issue 19): a lease does not outlive a REVOKE (3), a per-role
-- collection limit (4), lease names (10a).
--
\set VERBOSITY terse
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE ROLE regress_hl_alice;
CREATE ROLE regress_hl_eve;
CREATE ROLE regress_hl_mallory;
CREATE TABLE hl_t (a int);
CREATE TABLE hl_u (b int);
SELECT mzcoord.create_table('hl_t', '1 second') IS NOT NULL AS registered;
SELECT mzcoord.create_table('hl_u', '1 second') IS NOT NULL AS registered;
GRANT SELECT ON hl_t, hl_u TO regress_hl_eve;
SET mzcoord.max_lease_ttl = '1h';

-- ---------------------------------------------------------------------
-- 10a: lease names
-- ---------------------------------------------------------------------
SELECT try($$SELECT mzcoord.create_lease(' ', ARRAY['hl_t'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease('   ', ARRAY['hl_t'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease(E'\n', ARRAY['hl_t'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease(E'a\tb', ARRAY['hl_t'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease(E'ok\x1b[2J', ARRAY['hl_t'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease(E'del\x7f', ARRAY['hl_t'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease('', ARRAY['hl_t'::regclass])$$);
-- Renew and drop look a name up: a lease of the older rules stays reachable.
SELECT try($$SELECT mzcoord.renew_lease(' ')$$);
SELECT try($$SELECT mzcoord.drop_lease(E'\n')$$);
SELECT count(*) AS no_leases FROM mzcoord.leases;
-- Spaces inside a name are fine.
SELECT mzcoord.create_lease(' night ly ', ARRAY['hl_t'::regclass]) > 0 AS created;
SELECT mzcoord.drop_lease(' night ly ');

-- ---------------------------------------------------------------------
-- 3: a lease does not outlive a REVOKE
-- ---------------------------------------------------------------------
SET ROLE regress_hl_eve;
SELECT mzcoord.create_lease('hl_eve', ARRAY['hl_t'::regclass, 'hl_u'::regclass],
                            NULL, '1 hour') > 0 AS created;
SELECT mzcoord.renew_lease('hl_eve') > now() AS renews_while_allowed;
RESET ROLE;
SELECT expires_at AS expires_before FROM mzcoord.leases WHERE name = 'hl_eve' \gset
REVOKE SELECT ON hl_u FROM regress_hl_eve;

-- Renewing and advancing need SELECT on every relation, as creating did.
SET ROLE regress_hl_eve;
SELECT try($$SELECT mzcoord.renew_lease('hl_eve')$$);
SELECT try($$SELECT mzcoord.advance_lease('hl_eve', 9000000000000)$$);
SELECT try($$SELECT mzcoord.create_lease('hl_eve2', ARRAY['hl_u'::regclass])$$);
RESET ROLE;
-- Also when a superuser renews it: the owner is who lost the privilege.
SELECT try($$SELECT mzcoord.renew_lease('hl_eve')$$);
-- Nothing was extended or moved; the lease runs out at its old expiry.
SELECT expires_at = :'expires_before' AS not_extended, held_at < 9000000000000 AS not_advanced,
       state
  FROM mzcoord.leases WHERE name = 'hl_eve';
SELECT count(*) AS consistency_problems FROM mzcoord.check_consistency();
-- Granted again, the owner may renew again.
GRANT SELECT ON hl_u TO regress_hl_eve;
SET ROLE regress_hl_eve;
SELECT mzcoord.renew_lease('hl_eve') > :'expires_before' AS renewed_again;
SELECT mzcoord.drop_lease('hl_eve');
RESET ROLE;

-- A short lease whose renewals are refused stops protecting at its expiry:
-- its counts go and the since follows the policy again.
SET ROLE regress_hl_eve;
SELECT mzcoord.create_lease('hl_short', ARRAY['hl_u'::regclass], NULL, '2 seconds')
       AS short_at \gset
RESET ROLE;
REVOKE SELECT ON hl_u FROM regress_hl_eve;
SET ROLE regress_hl_eve;
-- The privilege is checked first: 42501 whether or not it already expired.
SELECT try($$SELECT mzcoord.renew_lease('hl_short')$$);
RESET ROLE;
SELECT wait_until($$SELECT state = 'expired' FROM mzcoord.leases WHERE name = 'hl_short'$$);
SELECT wait_until($$SELECT NOT EXISTS (SELECT FROM mzcoord.holds WHERE holder_kind = 'lease')$$);
INSERT INTO hl_u VALUES (1);
SELECT wait_until(format($$SELECT since > %s FROM mzcoord.frontiers
                            WHERE relation = 'hl_u'::regclass$$, :short_at));
-- Its owner may still drop it.
SET ROLE regress_hl_eve;
SELECT mzcoord.drop_lease('hl_short');
RESET ROLE;
SELECT count(*) AS no_leases FROM mzcoord.leases;
SELECT count(*) AS consistency_problems FROM mzcoord.check_consistency();

-- ---------------------------------------------------------------------
-- 4: collections per role
-- ---------------------------------------------------------------------
SELECT name, setting, context FROM pg_settings
 WHERE name = 'mzcoord.max_collections_per_role';
SELECT try($$SET mzcoord.max_collections_per_role = -2$$);
CREATE SCHEMA hl_s;
GRANT USAGE, CREATE ON SCHEMA hl_s TO regress_hl_alice, regress_hl_mallory;
SET ROLE regress_hl_mallory;
SELECT try($$SET mzcoord.max_collections_per_role = 100$$);
RESET ROLE;

SET mzcoord.max_collections_per_role = 3;
SET ROLE regress_hl_mallory;
SELECT mzcoord.create_source('hl_s.m1', 'a int') IS NOT NULL AS source;
SELECT mzcoord.create_materialized_view('hl_s.m2', 'SELECT a FROM hl_s.m1') IS NOT NULL AS mv;
SELECT mzcoord.create_index('m1_a', 'hl_s.m1', ARRAY['a']) IS NOT NULL AS idx;
-- The fourth of any kind is refused, and changes nothing.
SELECT try($$SELECT mzcoord.create_source('hl_s.m3', 'a int')$$);
SELECT try($$SELECT mzcoord.create_sink('hl_s.m3', 'hl_s.m1')$$);
SELECT to_regclass('hl_s.m3') IS NULL AS no_relation;
RESET ROLE;
SELECT kind, name FROM mzcoord.items WHERE owner = 'regress_hl_mallory'::regrole
 ORDER BY name;
-- Another role keeps its room.
SET ROLE regress_hl_alice;
SELECT mzcoord.create_source('hl_s.a1', 'a int') IS NOT NULL AS alice_source;
RESET ROLE;
-- Dropping makes room again.
SET ROLE regress_hl_mallory;
SELECT mzcoord.drop('hl_s.m1_a');
SELECT mzcoord.create_source('hl_s.m3', 'a int') IS NOT NULL AS after_drop;
RESET ROLE;
-- 0 allows none; -1 is the default share (half of max_collections).
SET mzcoord.max_collections_per_role = 0;
SET ROLE regress_hl_alice;
SELECT try($$SELECT mzcoord.create_source('hl_s.a2', 'a int')$$);
RESET ROLE;
SET mzcoord.max_collections_per_role = -1;
SET ROLE regress_hl_alice;
SELECT mzcoord.create_source('hl_s.a2', 'a int') IS NOT NULL AS default_share;
RESET ROLE;
RESET mzcoord.max_collections_per_role;

SELECT count(*) AS consistency_problems FROM mzcoord.check_consistency();

-- ---------------------------------------------------------------------
-- Clean up
-- ---------------------------------------------------------------------
RESET mzcoord.max_lease_ttl;
DROP SCHEMA hl_s CASCADE;
DROP TABLE hl_t, hl_u;
DROP ROLE regress_hl_alice;
DROP ROLE regress_hl_eve;
DROP ROLE regress_hl_mallory;
