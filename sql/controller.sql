--
-- The controller: transaction read holds, timestamp selection, the table
-- timeline, since advance, introspection, consistency.
--
\set VERBOSITY terse
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TABLE ct1 (a int, b text);
CREATE TABLE ct2 (x bigint);
CREATE TABLE not_registered (z int);
SELECT mzcoord.create_table('ct1') AS ct1_id \gset
SELECT mzcoord.create_table('ct2', '1 hour') AS ct2_id \gset

-- Both tables are collections of the controller; tables share one upper.
SELECT relation, kind, since IS NOT NULL AS has_since, upper > since AS readable,
       state
  FROM mzcoord.frontiers WHERE relation IN ('ct1'::regclass, 'ct2'::regclass)
 ORDER BY relation::text;
SELECT count(DISTINCT upper) = 1 AS one_timeline_upper
  FROM mzcoord.frontiers WHERE kind = 'table';
SELECT ready, collections >= 2 AS has_collections FROM mzcoord.controller_status();

-- The table upper is the oracle read timestamp + 1, and it moves with time.
CREATE TEMP TABLE up0 AS SELECT upper FROM mzcoord.frontiers WHERE relation = 'ct1'::regclass;
SELECT wait_until($$SELECT f.upper > u.upper FROM mzcoord.frontiers f, up0 u
                     WHERE f.relation = 'ct1'::regclass$$);
SELECT f.upper = s.oracle_read_ts + 1 OR f.upper <= s.oracle_read_ts + 1 AS upper_follows_oracle
  FROM mzcoord.frontiers f, mzcoord.controller_status() s WHERE f.relation = 'ct1'::regclass;

-- ---------------------------------------------------------------------
-- acquire_read_hold
-- ---------------------------------------------------------------------
BEGIN;
SELECT mzcoord.acquire_read_hold(ARRAY['ct1'::regclass, 'ct2']) AS held \gset
-- Default time: the least time valid for both (the join of their sinces).
SELECT :held = max(since) AS held_at_least_valid FROM mzcoord.frontiers
 WHERE relation IN ('ct1'::regclass, 'ct2'::regclass);
SELECT relation, holder_kind, pid = pg_backend_pid() AS mine,
       held_time = :held AS at_held_time, held_since <= clock_timestamp() AS since_known
  FROM mzcoord.holds ORDER BY relation::text;
-- An explicit later time; holds accumulate within the transaction.
SELECT mzcoord.acquire_read_hold(ARRAY['ct1'::regclass], :held + 5) = :held + 5 AS explicit_time;
SELECT count(*) AS holds_in_txn FROM mzcoord.holds WHERE pid = pg_backend_pid();
COMMIT;
SELECT count(*) AS holds_after_commit FROM mzcoord.holds;

-- Rollback releases too; a rolled back savepoint keeps its holds until the
-- transaction ends.
BEGIN;
SAVEPOINT sp;
SELECT mzcoord.acquire_read_hold(ARRAY['ct1'::regclass]) > 0 AS held;
ROLLBACK TO sp;
SELECT count(*) AS kept_after_savepoint_rollback FROM mzcoord.holds WHERE pid = pg_backend_pid();
ROLLBACK;
SELECT count(*) AS holds_after_rollback FROM mzcoord.holds;

-- Bad input is rejected with its SQLSTATE and changes nothing.
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY['ct1'::regclass], 5)$$);
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY['not_registered'::regclass])$$);
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY[]::regclass[])$$);
SELECT try($$SELECT mzcoord.acquire_read_hold(NULL)$$);
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY[NULL::regclass])$$);
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY['ct1'::regclass], -1)$$);
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY[12345::oid::regclass])$$);
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY['ct1'::regclass, 'ct1'::regclass, 'ct2'::regclass])$$) AS duplicates_are_fine;
SELECT count(*) AS no_holds_left FROM mzcoord.holds;

-- ---------------------------------------------------------------------
-- select_timestamp
-- ---------------------------------------------------------------------
-- Strict serializable reads at the oracle read timestamp, which every
-- table upper is past: it responds at once.
BEGIN;
SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass]) AS ts \gset
SELECT :ts >= f.since AS valid, :ts < f.upper AS complete
  FROM mzcoord.frontiers f WHERE f.relation = 'ct1'::regclass;
SELECT count(*) = 1 AS held FROM mzcoord.holds
 WHERE pid = pg_backend_pid() AND held_time = :ts;
COMMIT;

-- Serializable reads the freshest available time: upper - 1.
BEGIN;
SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass, 'ct2'], 'serializable') AS ts \gset
SELECT :ts = min(upper) - 1 OR :ts < min(upper) AS freshest_available
  FROM mzcoord.frontiers WHERE relation IN ('ct1'::regclass, 'ct2'::regclass);
COMMIT;

-- AS OF an exact valid time; AS OF AT LEAST a time below the since gives the
-- since (the stalest valid time).
SELECT since AS ct2_since FROM mzcoord.frontiers WHERE relation = 'ct2'::regclass \gset
BEGIN;
SELECT mzcoord.select_timestamp(ARRAY['ct2'::regclass], as_of => :ct2_since) = :ct2_since AS exact;
SELECT mzcoord.select_timestamp(ARRAY['ct2'::regclass], as_of_at_least => 0) = :ct2_since AS stalest_valid;
SELECT mzcoord.select_timestamp(ARRAY['ct2'::regclass], as_of_at_least => :ct2_since + 1) = :ct2_since + 1 AS at_least;
COMMIT;

-- Errors: below the since (names the relation, its since, and a hint), bad
-- arguments.
SELECT try($$SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass, 'ct2'], as_of => 1)$$);
SELECT try($$SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass], 'read committed')$$);
SELECT try($$SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass], as_of => 1, as_of_at_least => 1)$$);
SELECT try($$SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass], as_of => -5)$$);
SELECT try($$SELECT mzcoord.select_timestamp(ARRAY['not_registered'::regclass])$$);
SELECT try($$SELECT mzcoord.explain_timestamp(ARRAY['ct1'::regclass], as_of => 1)$$);

-- A time beyond the upper waits; statement_timeout cancels the wait, and
-- the hold goes with the transaction.
BEGIN;
SET LOCAL statement_timeout = '300ms';
SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass],
                                as_of => (SELECT upper + 3600000 FROM mzcoord.frontiers
                                           WHERE relation = 'ct1'::regclass));
ROLLBACK;
SELECT count(*) AS no_holds_after_cancel FROM mzcoord.holds;

-- A near-future time is served once the timeline passes it.
BEGIN;
SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass],
                                as_of => (SELECT upper + 300 FROM mzcoord.frontiers
                                           WHERE relation = 'ct1'::regclass)) AS future \gset
SELECT upper > :future AS upper_passed FROM mzcoord.frontiers WHERE relation = 'ct1'::regclass;
COMMIT;

-- Prepared transactions cannot keep holds.
BEGIN;
SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass]) > 0 AS held;
\set VERBOSITY default
PREPARE TRANSACTION 'mzc_holds';
\set VERBOSITY terse
SELECT count(*) AS no_prepared FROM pg_prepared_xacts;

-- ---------------------------------------------------------------------
-- explain_timestamp: the EXPLAIN TIMESTAMP layout, times masked.
-- ---------------------------------------------------------------------
CREATE FUNCTION pg_temp.masked(t text) RETURNS text LANGUAGE sql AS $$
    SELECT regexp_replace(regexp_replace(t,
        '\d{13} \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\)', '<ts>', 'g'),
        '\mu\d+\M', '<id>', 'g') $$;
SELECT pg_temp.masked(mzcoord.explain_timestamp(ARRAY['ct1'::regclass]));
SELECT pg_temp.masked(mzcoord.explain_timestamp(ARRAY['ct1'::regclass, 'ct2'], 'serializable'));
SELECT pg_temp.masked(mzcoord.explain_timestamp(ARRAY['ct2'::regclass], as_of => :ct2_since));
-- Explaining takes no hold.
SELECT count(*) AS no_holds_from_explain FROM mzcoord.holds;

-- ---------------------------------------------------------------------
-- The since follows the policy (default: 1 s lag, 1 s granularity) and is
-- held back by holds, never below them.
-- ---------------------------------------------------------------------
SELECT wait_until($$SELECT f.since > c.as_of FROM mzcoord.frontiers f
                     JOIN mzcoord.collections c USING (global_id)
                    WHERE f.relation = 'ct1'::regclass$$) AS since_left_registration;
SELECT since % 1000 = 0 AS granular, since <= upper - 1000 AS lags_by_a_second
  FROM mzcoord.frontiers WHERE relation = 'ct1'::regclass;
-- One hour of retain history keeps everything since registration.
SELECT since = (SELECT as_of FROM mzcoord.collections WHERE global_id = :'ct2_id') AS ct2_keeps_history
  FROM mzcoord.frontiers WHERE relation = 'ct2'::regclass;

BEGIN;
SELECT mzcoord.acquire_read_hold(ARRAY['ct1'::regclass]) AS pinned \gset
-- 2.5 s: the policy (one second, granularity one second) is then at least
-- a second past the hold.
SELECT wait_until(format($$SELECT upper - %s > 2500 FROM mzcoord.frontiers
                           WHERE relation = 'ct1'::regclass$$, :pinned)) AS timeline_moved;
SELECT wait_ticks(3);
SELECT since = :pinned AS since_pinned, upper - since > 1500 AS lags
  FROM mzcoord.frontiers WHERE relation = 'ct1'::regclass;
SELECT behind_policy_ms > 0 AS holder_visible_behind_policy FROM mzcoord.holds
 WHERE relation = 'ct1'::regclass;
-- A write gives the table history to compact: without one, nothing above
-- its since needs compacting and its since stays (an idle table costs the
-- tick nothing).
INSERT INTO ct1 VALUES (100);
COMMIT;
SELECT wait_until(format($$SELECT since > %s FROM mzcoord.frontiers
                           WHERE relation = 'ct1'::regclass$$, :pinned));

-- The durable since in the catalog (the compaction bound) catches up with
-- the controller's.
SELECT wait_until($$SELECT b.bound = f.since FROM mzcoord.compaction_bounds b
                     JOIN mzcoord.frontiers f ON f.global_id = b.global_id
                    WHERE f.relation = 'ct1'::regclass$$);

-- A since that only follows its policy is published at most once per
-- mzcoord.publish_interval (the tests run with 0: every change), and the
-- live since never passes the since the catalog has: what a restart would
-- bring back.  With a long interval the since of a written table stays put
-- meanwhile.
ALTER SYSTEM SET mzcoord.publish_interval = '1h';
SELECT pg_reload_conf();
SELECT wait_ticks(3);
INSERT INTO ct1 VALUES (101);
SELECT since AS held_since FROM mzcoord.frontiers WHERE relation = 'ct1'::regclass \gset
SELECT wait_until(format($$SELECT upper - %s > 2000 FROM mzcoord.frontiers
                           WHERE relation = 'ct1'::regclass$$, :held_since)) AS timeline_moved;
SELECT wait_ticks(3);
SELECT f.since = :held_since AS since_waits_for_catalog,
       f.since = b.bound AS live_is_durable,
       f.upper - f.since > 2000 AS policy_would_move
  FROM mzcoord.compaction_bounds b JOIN mzcoord.frontiers f ON f.global_id = b.global_id
 WHERE f.relation = 'ct1'::regclass;
ALTER SYSTEM RESET mzcoord.publish_interval;
SELECT pg_reload_conf();
SELECT wait_until(format($$SELECT f.since > %s AND b.bound = f.since
                             FROM mzcoord.compaction_bounds b
                             JOIN mzcoord.frontiers f ON f.global_id = b.global_id
                            WHERE f.relation = 'ct1'::regclass$$, :held_since)) AS caught_up;

-- ---------------------------------------------------------------------
-- Privileges: anyone may hold and select; nobody else may stage.
-- ---------------------------------------------------------------------
CREATE ROLE mzc_user;
GRANT SELECT ON ct1 TO mzc_user;
SET ROLE mzc_user;
BEGIN;
SELECT mzcoord.select_timestamp(ARRAY['ct1'::regclass]) > 0 AS user_can_select;
COMMIT;
-- Holding pins history: it needs the right to read the relation.
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY['ct2'::regclass])$$);
SELECT try($$SELECT mzcoord.explain_timestamp(ARRAY['ct2'::regclass])$$);
SELECT try($$SELECT mzcoord._stage_drop('u1')$$);
SELECT try($$SELECT mzcoord._write_ts()$$);
RESET ROLE;
REVOKE SELECT ON ct1 FROM mzc_user;
DROP ROLE mzc_user;

SELECT * FROM mzcoord.check_consistency();
