--
-- Leases: durable read protection outside a transaction, with expiry.
--
\set VERBOSITY terse
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TABLE lt1 (a int);
CREATE TABLE lt2 (b int);
CREATE TABLE lt_plain (c int);
SELECT mzcoord.create_table('lt1', '1 second') IS NOT NULL AS registered;
SELECT mzcoord.create_table('lt2', '1 second') IS NOT NULL AS registered;
INSERT INTO lt1 VALUES (1), (2);
INSERT INTO lt2 VALUES (10);
SELECT mzcoord.last_commit_ts() AS inserted \gset
SELECT mzcoord.create_materialized_view('lt_mv', 'SELECT a FROM lt1') IS NOT NULL AS mv;

-- The settings.
SELECT name, setting, unit, context FROM pg_settings
 WHERE name IN ('mzcoord.max_leases', 'mzcoord.max_lease_ttl') ORDER BY name;

-- ---------------------------------------------------------------------
-- Bad arguments
-- ---------------------------------------------------------------------
SELECT try($$SELECT mzcoord.create_lease(NULL, ARRAY['lt1'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease('', ARRAY['lt1'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease(repeat('x', 64), ARRAY['lt1'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease('l', NULL)$$);
SELECT try($$SELECT mzcoord.create_lease('l', '{}'::regclass[])$$);
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY[NULL::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lt1'::regclass, 'lt1'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease('l', '{{lt1},{lt2}}'::regclass[])$$);
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lt_plain'::regclass])$$);
SELECT mzcoord.drop('lt_mv');
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lt1'::regclass], -1)$$);
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lt1'::regclass], 0)$$);
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lt1'::regclass], NULL, NULL)$$);
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lt1'::regclass], NULL, '0 seconds')$$);
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lt1'::regclass], NULL, '-1 hour')$$);
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lt1'::regclass], NULL, '2 days')$$);
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lt1'::regclass], NULL, '1000000 years')$$);
SELECT try($$SELECT mzcoord.renew_lease(NULL)$$);
SELECT try($$SELECT mzcoord.renew_lease('nope')$$);
SELECT try($$SELECT mzcoord.advance_lease('nope', 1)$$);
SELECT try($$SELECT mzcoord.advance_lease('nope', NULL)$$);
SELECT try($$SELECT mzcoord.advance_lease('nope', -5)$$);
SELECT try($$SELECT mzcoord.drop_lease('nope')$$);
SELECT try($$SELECT mzcoord.drop_lease(NULL)$$);
SELECT count(*) AS no_leases FROM mzcoord.leases;

-- ---------------------------------------------------------------------
-- A lease holds the since while the policy would move it on
-- ---------------------------------------------------------------------
SELECT wait_until(format($$SELECT bool_and(since > %s) FROM mzcoord.frontiers
                            WHERE relation IN ('lt1'::regclass, 'lt2'::regclass)$$,
                         :inserted));
SELECT mzcoord.create_lease('nightly', ARRAY['lt1'::regclass, 'lt2'::regclass])
       AS held \gset
SELECT :held = (SELECT max(since) FROM mzcoord.frontiers
                 WHERE relation IN ('lt1'::regclass, 'lt2'::regclass)) AS at_max_since;
SELECT name, owner, relations, held_at = :held AS at_held, state,
       expires_at > now() + interval '4 minutes' AS five_minutes
  FROM mzcoord.leases;
SELECT relation, holder_kind, holder, held_time = :held AS at_held
  FROM mzcoord.holds WHERE holder_kind = 'lease' ORDER BY relation::text;
SELECT try($$SELECT mzcoord.create_lease('nightly', ARRAY['lt1'::regclass])$$);

-- The policy (1 second) moves on; the since stops at the lease.
SELECT wait_until(format($$SELECT behind_policy_ms > 1500 FROM mzcoord.leases
                            WHERE name = 'nightly'$$));
SELECT relation, since = :held AS since_at_lease
  FROM mzcoord.frontiers WHERE relation IN ('lt1'::regclass, 'lt2'::regclass)
 ORDER BY relation::text;
SELECT b.bound <= :held AS durable_since_not_past_lease
  FROM mzcoord.compaction_bounds b JOIN mzcoord.items i ON i.id = b.global_id
 WHERE i.relation = 'lt1'::regclass;

-- A read at the lease's time needs no transaction hold.
INSERT INTO lt1 VALUES (3);
BEGIN;
SELECT a FROM mzcoord.read_at(NULL::lt1, :held) ORDER BY a;
SELECT count(*) AS own_transaction_holds FROM mzcoord.holds
 WHERE holder_kind = 'transaction' AND pid = pg_backend_pid();
COMMIT;
-- Below the lease it is the since violation.
SELECT try(format('SELECT count(*) FROM mzcoord.read_at(NULL::lt1, %s)', :held - 1));

-- Renew and advance.
SELECT mzcoord.renew_lease('nightly') > now() AS renewed;
SELECT try(format($$SELECT mzcoord.advance_lease('nightly', %s)$$, :held - 1));
SELECT mzcoord.advance_lease('nightly', :held + 1);
SELECT held_at = :held + 1 AS advanced FROM mzcoord.leases WHERE name = 'nightly';
SELECT wait_until(format($$SELECT bool_and(since = %s) FROM mzcoord.frontiers
                            WHERE relation IN ('lt1'::regclass, 'lt2'::regclass)$$,
                         :held + 1));
-- Beyond the upper is allowed: the lease then simply holds less.
SELECT mzcoord.advance_lease('nightly', 9000000000000);
SELECT wait_until($$SELECT bool_and(since > 0 AND since < 9000000000000)
                     FROM mzcoord.frontiers
                    WHERE relation IN ('lt1'::regclass, 'lt2'::regclass)$$);

-- Dropping releases it.
SELECT mzcoord.drop_lease('nightly');
SELECT count(*) AS leases_left FROM mzcoord.leases;
SELECT count(*) AS lease_holds_left FROM mzcoord.holds WHERE holder_kind = 'lease';

-- ---------------------------------------------------------------------
-- Transactions: abort and savepoints leave nothing
-- ---------------------------------------------------------------------
BEGIN;
SELECT mzcoord.create_lease('rolled_back', ARRAY['lt1'::regclass]) > 0 AS created;
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT mzcoord.create_lease('rolled_back', ARRAY['lt1'::regclass]) > 0 AS created;
ROLLBACK TO SAVEPOINT s;
SELECT mzcoord.create_lease('kept', ARRAY['lt2'::regclass]) > 0 AS created;
SELECT mzcoord.renew_lease('kept') > now() AS renewed_in_same_transaction;
COMMIT;
SELECT name, relations, state FROM mzcoord.leases ORDER BY name;
SELECT relation, holder FROM mzcoord.holds WHERE holder_kind = 'lease';
BEGIN;
SELECT mzcoord.drop_lease('kept');
ROLLBACK;
SELECT name FROM mzcoord.leases;
SELECT mzcoord.drop_lease('kept');
-- A transaction that changes a lease cannot be prepared.
SELECT mzcoord.create_lease('p', ARRAY['lt2'::regclass]) > 0 AS created;
BEGIN;
SELECT mzcoord.drop_lease('p');
PREPARE TRANSACTION 'lease_x';
SELECT name FROM mzcoord.leases;
SELECT mzcoord.drop_lease('p');

-- ---------------------------------------------------------------------
-- Expiry: an expired lease protects nothing and stays until dropped
-- ---------------------------------------------------------------------
SELECT mzcoord.create_lease('short', ARRAY['lt1'::regclass], NULL, '300 milliseconds')
       AS short_at \gset
SELECT wait_until($$SELECT state = 'expired' FROM mzcoord.leases WHERE name = 'short'$$);
SELECT name, state, behind_policy_ms FROM mzcoord.leases;
SELECT try($$SELECT mzcoord.renew_lease('short')$$);
SELECT try(format($$SELECT mzcoord.advance_lease('short', %s)$$, :short_at + 1));
-- The tick releases it, and the since moves past it.
SELECT wait_until(format($$SELECT since > %s FROM mzcoord.frontiers
                            WHERE relation = 'lt1'::regclass$$, :short_at));
SELECT count(*) AS expired_lease_holds FROM mzcoord.holds WHERE holder_kind = 'lease';
SELECT try(format('SELECT count(*) FROM mzcoord.read_at(NULL::lt1, %s)', :short_at));
SELECT mzcoord.drop_lease('short');

-- ---------------------------------------------------------------------
-- Limits and privileges
-- ---------------------------------------------------------------------
CREATE ROLE lease_a;
CREATE ROLE lease_b;
GRANT SELECT ON lt1, lt2 TO lease_a;
SET mzcoord.max_lease_ttl = '1h';
SET ROLE lease_b;
SELECT try($$SELECT mzcoord.create_lease('b1', ARRAY['lt1'::regclass])$$);
SELECT try($$SET mzcoord.max_leases = 100$$);
SELECT try($$SELECT * FROM mzcoord.lease_records$$);
SELECT try($$SELECT mzcoord._lease_write('drop', 'x', 0, NULL, 0, NULL, NULL)$$);
RESET ROLE;
SET ROLE lease_a;
SELECT try($$SELECT mzcoord.create_lease('a1', ARRAY['lt1'::regclass], NULL, '2 hours')$$);
SELECT mzcoord.create_lease('a1', ARRAY['lt1'::regclass, 'lt2'::regclass], NULL, '1 hour') > 0 AS created;
RESET ROLE;
SET mzcoord.max_leases = 1;
SET ROLE lease_a;
SELECT try($$SELECT mzcoord.create_lease('a2', ARRAY['lt1'::regclass])$$);
SET ROLE lease_b;
SELECT name, owner, state FROM mzcoord.leases;
SELECT try($$SELECT mzcoord.renew_lease('a1')$$);
SELECT try($$SELECT mzcoord.advance_lease('a1', 9000000000000)$$);
SELECT try($$SELECT mzcoord.drop_lease('a1')$$);
-- Someone else's lease does not cover lease_b's reads (it has no SELECT anyway).
RESET ROLE;
RESET mzcoord.max_leases;
SET ROLE lease_a;
SELECT mzcoord.renew_lease('a1') > now() AS owner_renews;
SELECT mzcoord.drop_lease('a1');
RESET ROLE;
-- A superuser may drop anyone's lease.
SET ROLE lease_a;
SELECT mzcoord.create_lease('a3', ARRAY['lt2'::regclass]) > 0 AS created;
RESET ROLE;
SELECT mzcoord.drop_lease('a3');
RESET mzcoord.max_lease_ttl;
REVOKE SELECT ON lt1, lt2 FROM lease_a;
DROP ROLE lease_a;
DROP ROLE lease_b;

-- ---------------------------------------------------------------------
-- A dropped relation: the lease keeps holding the rest
-- ---------------------------------------------------------------------
CREATE TABLE lt3 (d int);
SELECT mzcoord.create_table('lt3') IS NOT NULL AS registered;
SELECT mzcoord.create_lease('partial', ARRAY['lt2'::regclass, 'lt3'::regclass]) > 0 AS created;
DROP TABLE lt3;
SELECT name, relations, state FROM mzcoord.leases;
SELECT mzcoord.drop_lease('partial');

-- ---------------------------------------------------------------------
-- Materialized views and indexes (issue 23)
-- ---------------------------------------------------------------------
-- A lease on a view holds the view's since and bound (its own history);
-- one on an index holds the index's since, and through it the relation
-- it indexes, whose since and bound stay at or below the lease.
CREATE TABLE lv (k int, v int);
SELECT mzcoord.create_table('lv', '1 second') IS NOT NULL AS registered;
INSERT INTO lv VALUES (1, 10), (2, 20);
SELECT mzcoord.create_materialized_view('lv_mv', 'SELECT k, v FROM lv', '1 second')
       IS NOT NULL AS mv;
SELECT mzcoord.create_index('lv_idx', 'lv', ARRAY['k']) IS NOT NULL AS idx;
SELECT mzcoord.last_commit_ts() AS lv_created \gset
SELECT wait_until(format($$SELECT bool_and(since > %s) FROM mzcoord.frontiers
                            WHERE relation IN ('lv'::regclass, 'lv_mv'::regclass,
                                               'lv_idx'::regclass)$$, :lv_created));
-- A sink is not leasable.
SELECT mzcoord.create_sink('lv_sink', 'lv_mv') IS NOT NULL AS sink;
SELECT try($$SELECT mzcoord.create_lease('l', ARRAY['lv_sink'::regclass])$$);
SELECT mzcoord.drop('lv_sink');

SELECT mzcoord.create_lease('on_view', ARRAY['lv_mv'::regclass]) AS view_held \gset
SELECT mzcoord.create_lease('on_index', ARRAY['lv_idx'::regclass]) AS index_held \gset
SELECT name, relations, state FROM mzcoord.leases ORDER BY name;
SELECT relation, holder_kind, holder FROM mzcoord.holds
 WHERE holder_kind = 'lease' ORDER BY relation::text;
SELECT k, v FROM mzcoord.read_at(NULL::lv_mv, :view_held) ORDER BY k;
SELECT k, v FROM mzcoord.read_at(NULL::lv, :index_held) ORDER BY k;

-- Writes and the policy (1 second) would move everything on.
UPDATE lv SET v = v + 1;
INSERT INTO lv VALUES (3, 30);
DELETE FROM lv WHERE k = 1;
SELECT wait_until($$SELECT bool_and(behind_policy_ms > 1500) FROM mzcoord.leases$$);
SELECT wait_until(format($$SELECT upper > %s + 1 FROM mzcoord.frontiers
                            WHERE relation = 'lv_mv'::regclass$$, :view_held));
SELECT (mzcoord.compact('lv_mv')).compacted <= :view_held AS compacted_view;
SELECT (mzcoord.compact('lv')).compacted <= :index_held AS compacted_table;
SELECT relation, since = :view_held AS since_at_lease
  FROM mzcoord.frontiers WHERE relation = 'lv_mv'::regclass;
SELECT relation, since = :index_held AS since_at_lease
  FROM mzcoord.frontiers WHERE relation = 'lv_idx'::regclass;
SELECT since <= :index_held AS table_since_held
  FROM mzcoord.frontiers WHERE relation = 'lv'::regclass;
SELECT i.relation, b.bound <= CASE i.relation WHEN 'lv_mv'::regclass THEN :view_held
                                              ELSE :index_held END AS bound_held
  FROM mzcoord.compaction_bounds b JOIN mzcoord.items i ON i.id = b.global_id
 WHERE i.relation IN ('lv'::regclass, 'lv_mv'::regclass) ORDER BY i.relation::text;
-- The rows at the leased times are still there, after compaction.
SELECT k, v FROM mzcoord.read_at(NULL::lv_mv, :view_held) ORDER BY k;
SELECT k, v FROM mzcoord.read_at(NULL::lv, :index_held) ORDER BY k;
SELECT try(format('SELECT count(*) FROM mzcoord.read_at(NULL::lv_mv, %s)', :view_held - 1));

-- Renewing and advancing work as for tables.
SELECT mzcoord.renew_lease('on_index') > now() AS renewed;
SELECT mzcoord.advance_lease('on_view', :view_held + 1);
SELECT wait_until(format($$SELECT since = %s FROM mzcoord.frontiers
                            WHERE relation = 'lv_mv'::regclass$$, :view_held + 1));

-- Privileges of an index lease are those of the relation it indexes.
CREATE ROLE lease_c;
SET ROLE lease_c;
SELECT try($$SELECT mzcoord.create_lease('c1', ARRAY['lv_idx'::regclass])$$);
SELECT try($$SELECT mzcoord.create_lease('c1', ARRAY['lv_mv'::regclass])$$);
RESET ROLE;
GRANT SELECT ON lv TO lease_c;
SET ROLE lease_c;
SELECT mzcoord.create_lease('c1', ARRAY['lv_idx'::regclass]) > 0 AS created_with_select;
SELECT mzcoord.drop_lease('c1');
RESET ROLE;
REVOKE SELECT ON lv FROM lease_c;
DROP ROLE lease_c;

-- Dropping the leases releases them: the sinces move past.
SELECT mzcoord.drop_lease('on_view');
SELECT mzcoord.drop_lease('on_index');
SELECT wait_until(format($$SELECT bool_and(since > %s) FROM mzcoord.frontiers
                            WHERE relation IN ('lv'::regclass, 'lv_idx'::regclass)$$,
                         :index_held));
SELECT wait_until(format($$SELECT since > %s + 1 FROM mzcoord.frontiers
                            WHERE relation = 'lv_mv'::regclass$$, :view_held));
SELECT count(*) AS lease_holds_left FROM mzcoord.holds WHERE holder_kind = 'lease';
SELECT mzcoord.drop('lv_mv');
SELECT mzcoord.drop('lv_idx');
DROP TABLE lv;

SELECT * FROM mzcoord.check_consistency();
DROP TABLE lt1, lt2, lt_plain CASCADE;
