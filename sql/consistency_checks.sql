--
-- check_consistency() catches what it should: each check is provoked by
-- tampering as a superuser, seen, and undone.  It is callable by PUBLIC.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
CREATE SCHEMA cc;
SET search_path = cc, public;
CREATE TABLE t (a int);
SELECT mzcoord.create_table('t') AS t_id \gset
INSERT INTO t VALUES (1);
SELECT * FROM mzcoord.check_consistency();

-- PUBLIC may run it.
CREATE ROLE mzc_cc_reader;
SET ROLE mzc_cc_reader;
SELECT count(*) AS problems FROM mzcoord.check_consistency();
RESET ROLE;

-- A history relation without a collection (left behind, or hand-made).
CREATE TABLE mzcoord.history_u999999 (c1 int, ts bigint, diff bigint);
SELECT check_name, object FROM mzcoord.check_consistency();
DROP TABLE mzcoord.history_u999999;

-- A committed history row above the table timeline.
SELECT history::text AS hist FROM mzcoord.storage WHERE relation = 'cc.t'::regclass \gset
BEGIN;
INSERT INTO :hist (c1, ts, diff)
VALUES (5, (SELECT upper FROM mzcoord.frontiers WHERE relation = 'cc.t'::regclass) + 3600000, 1),
       (5, (SELECT upper FROM mzcoord.frontiers WHERE relation = 'cc.t'::regclass) + 3600000, -1);
COMMIT;
SELECT check_name, object = :'t_id' AS the_table FROM mzcoord.check_consistency();
DELETE FROM :hist WHERE c1 = 5;

-- A durable upper beyond the live one: time went back.
BEGIN;
UPDATE mzcoord.collections SET upper = upper + 86400000 WHERE global_id = :'t_id';
SELECT check_name, object = :'t_id' AS the_table FROM mzcoord.check_consistency()
 WHERE check_name <> 'durable since';
ROLLBACK;

-- The controller dropped a collection the catalog still has.
CREATE TABLE gone (a int);
SELECT mzcoord.create_table('gone') AS gone_id \gset
BEGIN;
SELECT mzcoord._stage_drop(:'gone_id');
COMMIT;
SELECT check_name, object = :'gone_id' AS the_table FROM mzcoord.check_consistency();
-- Dropping it properly puts both sides in line again: the catalog row
-- goes, and the controller either has nothing left to drop or, if a tick
-- has not yet cleared its slot, rebuilds itself from the catalog (a
-- WARNING).  Which of the two happens depends on timing; both end clean.
SET client_min_messages = error;
SELECT mzcoord.drop('gone');
RESET client_min_messages;
SELECT wait_until($$SELECT ready AND NOT EXISTS (SELECT FROM mzcoord.check_consistency())
                      FROM mzcoord.controller_status()$$) AS consistent;
SELECT * FROM mzcoord.check_consistency();

RESET search_path;
DROP SCHEMA cc CASCADE;
DROP ROLE mzc_cc_reader;
SELECT * FROM mzcoord.check_consistency();
