--
-- Per-session and per-role limits on transaction read holds: no backend and
-- no role can take every hold entry of shared memory.
--
\set VERBOSITY terse
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TABLE lim1 (a int);
CREATE TABLE lim2 (a int);
SELECT mzcoord.create_table('lim1') IS NOT NULL AS lim1_registered;
SELECT mzcoord.create_table('lim2') IS NOT NULL AS lim2_registered;

-- The defaults (-1) leave a quarter of mzcoord.max_holds to one session and
-- half to one role.
SHOW mzcoord.max_holds_per_backend;
SHOW mzcoord.max_holds_per_role;

-- ---------------------------------------------------------------------
-- Per session
-- ---------------------------------------------------------------------
SET mzcoord.max_holds_per_backend = 3;
BEGIN;
SELECT mzcoord.acquire_read_hold(ARRAY['lim1'::regclass, 'lim2']) > 0 AS two_held;
-- Two more would be four: refused, and the call adds none.
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY['lim1'::regclass, 'lim2'])$$);
SELECT try($$SELECT mzcoord.select_timestamp(ARRAY['lim1'::regclass, 'lim2'])$$);
SELECT count(*) AS holds_in_txn FROM mzcoord.holds WHERE pid = pg_backend_pid();
-- One more fits exactly.
SELECT mzcoord.select_timestamp(ARRAY['lim2'::regclass]) > 0 AS third_held;
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY['lim1'::regclass])$$);
SELECT count(*) AS holds_in_txn FROM mzcoord.holds WHERE pid = pg_backend_pid();
COMMIT;
-- The next transaction starts afresh.
BEGIN;
SELECT mzcoord.acquire_read_hold(ARRAY['lim1'::regclass, 'lim2']) > 0 AS held_again;
COMMIT;
SELECT count(*) AS holds_after_commit FROM mzcoord.holds;
RESET mzcoord.max_holds_per_backend;

-- ---------------------------------------------------------------------
-- Per role, charged to the current role (after SET ROLE too)
-- ---------------------------------------------------------------------
CREATE ROLE regress_mzc_limited;
GRANT SELECT ON lim1, lim2 TO regress_mzc_limited;
SET mzcoord.max_holds_per_role = 2;
SET ROLE regress_mzc_limited;
BEGIN;
SELECT mzcoord.acquire_read_hold(ARRAY['lim1'::regclass]) > 0 AS one_held;
SELECT mzcoord.select_timestamp(ARRAY['lim2'::regclass]) > 0 AS two_held;
SELECT try($$SELECT mzcoord.acquire_read_hold(ARRAY['lim1'::regclass])$$);
SELECT count(*) AS holds_in_txn FROM mzcoord.holds WHERE pid = pg_backend_pid();
COMMIT;

-- Only superusers change the limits: a user cannot raise their own.
SELECT try($$SET mzcoord.max_holds_per_role = 100$$);
SELECT try($$SET mzcoord.max_holds_per_backend = 100$$);
SHOW mzcoord.max_holds_per_role;
RESET ROLE;
RESET mzcoord.max_holds_per_role;

-- Out-of-range settings are refused.
SELECT try($$SET mzcoord.max_holds_per_backend = -2$$);
SELECT try($$SET mzcoord.max_holds_per_role = -2$$);

SELECT count(*) AS holds_left FROM mzcoord.holds;
SELECT * FROM mzcoord.check_consistency();
REVOKE ALL ON lim1, lim2 FROM regress_mzc_limited;
DROP ROLE regress_mzc_limited;
DROP TABLE lim1, lim2;
