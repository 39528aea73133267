--
-- Data plane: read_at's errors, histories following DDL (columns,
-- inheritance, drops), the protection of the capture triggers, writing and
-- reading in one transaction, and what check_consistency() detects.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE SCHEMA sd;
SET search_path = sd, public;
CREATE TABLE t (a int, b text);
INSERT INTO t VALUES (1, 'one');
SELECT mzcoord.create_table('t', '1 hour') AS t_id \gset
SELECT history::text AS hist FROM mzcoord.storage WHERE global_id = :'t_id' \gset
SELECT since AS since0 FROM mzcoord.frontiers WHERE relation = 't'::regclass \gset
CREATE FUNCTION last_ts() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE v bigint;
BEGIN
    EXECUTE format('SELECT max(ts) FROM %s',
                   (SELECT history FROM mzcoord.storage WHERE relation = 'sd.t'::regclass))
       INTO v;
    RETURN v;
END $$;

-- ---------------------------------------------------------------------
-- read_at: errors
-- ---------------------------------------------------------------------
SELECT try($$SELECT * FROM mzcoord.read_at(NULL::sd.t, NULL)$$);
SELECT try($$SELECT * FROM mzcoord.read_at(NULL::sd.t, -1)$$);
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::sd.t, %s)', :since0 - 1));
CREATE TABLE plain (a int);
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::sd.plain, %s)', :since0));
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::int, %s)', :since0));
CREATE TYPE ct AS (a int);
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::sd.ct, %s)', :since0));
CREATE VIEW v AS SELECT * FROM t;
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::sd.v, %s)', :since0));
-- Privileges: SELECT on the table; no row-level security to bypass.
CREATE ROLE mzc_reader;
GRANT USAGE ON SCHEMA sd TO mzc_reader;
SET ROLE mzc_reader;
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::sd.t, %s)', :since0));
RESET ROLE;
GRANT SELECT (a) ON t TO mzc_reader;
SET ROLE mzc_reader;
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::sd.t, %s)', :since0));
RESET ROLE;
GRANT SELECT ON t TO mzc_reader;
SET ROLE mzc_reader;
SELECT * FROM mzcoord.read_at(NULL::t, :since0);
RESET ROLE;
ALTER TABLE t ENABLE ROW LEVEL SECURITY;
SET ROLE mzc_reader;
SELECT try(format('SELECT * FROM mzcoord.read_at(NULL::sd.t, %s)', :since0));
RESET ROLE;
ALTER TABLE t DISABLE ROW LEVEL SECURITY;
-- A failed read_at holds nothing; a successful one holds until the end of
-- its transaction.
SELECT count(*) AS holds FROM mzcoord.holds WHERE pid = pg_backend_pid();
BEGIN;
SELECT count(*) AS rows FROM mzcoord.read_at(NULL::t, :since0);
SELECT held_time = :since0 AS held_at_read_time FROM mzcoord.holds WHERE pid = pg_backend_pid();
COMMIT;
SELECT count(*) AS holds FROM mzcoord.holds WHERE pid = pg_backend_pid();

-- ---------------------------------------------------------------------
-- Writing and reading in one transaction
-- ---------------------------------------------------------------------
-- Registering and writing in the same transaction.
BEGIN;
CREATE TABLE w (x int);
SELECT mzcoord.create_table('w') IS NOT NULL AS registered;
INSERT INTO w VALUES (1), (2);
COMMIT;
SELECT history::text AS whist FROM mzcoord.storage WHERE relation = 'w'::regclass \gset
-- Written in the registering transaction: at its write timestamp, which is
-- the registration time (the since).
SELECT c1 AS x, diff, ts = (SELECT since FROM mzcoord.frontiers WHERE relation = 'w'::regclass)
       AS at_registration
  FROM :whist ORDER BY c1;
SELECT count(*) AS rows, min(x), max(x)
  FROM mzcoord.read_at(NULL::w, (SELECT upper - 1 FROM mzcoord.frontiers WHERE relation = 'w'::regclass));
-- A transaction that writes can read at any time, its provisional write
-- timestamp too: its own updates have no time yet and are left out.
BEGIN;
INSERT INTO t VALUES (2, 'two');
SELECT write_ts AS provisional FROM mzcoord.writes_in_flight()
 WHERE pid = pg_backend_pid() \gset
SELECT count(*) AS own_rows_seen FROM mzcoord.read_at(NULL::t, :provisional) WHERE a = 2;
ROLLBACK;
BEGIN;
INSERT INTO t VALUES (2, 'two');
SELECT count(*) AS rows_before_own_write
  FROM mzcoord.read_at(NULL::t, (SELECT write_ts - 1 FROM mzcoord.writes_in_flight()
                                  WHERE pid = pg_backend_pid()));
COMMIT;
-- Its commit timestamp: a read there sees it.
SELECT count(*) AS own_row_at_commit
  FROM mzcoord.read_at(NULL::t, mzcoord.last_commit_ts()) WHERE a = 2;
-- INSERT ... ON CONFLICT: updated rows are a retraction and an insertion,
-- skipped ones nothing.
CREATE TABLE oc (k int PRIMARY KEY, n int);
SELECT mzcoord.create_table('oc') IS NOT NULL AS registered;
INSERT INTO oc VALUES (1, 1), (2, 1);
SELECT mzcoord.select_timestamp(ARRAY['oc'::regclass], 'strict serializable') > 0 AS read;
INSERT INTO oc VALUES (1, 0), (3, 1) ON CONFLICT (k) DO UPDATE SET n = oc.n + 1;
INSERT INTO oc VALUES (2, 9) ON CONFLICT DO NOTHING;
SELECT history::text AS ochist FROM mzcoord.storage WHERE relation = 'oc'::regclass \gset
SELECT c1 AS k, c2 AS n, diff, dense_rank() OVER (ORDER BY ts) AS t FROM :ochist ORDER BY ts, diff, k;
SELECT * FROM mzcoord.read_at(NULL::oc, (SELECT max(ts) FROM :ochist)) ORDER BY k;
-- REPEATABLE READ still reads everything committed at the time it reads.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) AS rows_in_snapshot FROM t;
SELECT count(*) AS rows_read FROM mzcoord.read_at(NULL::t, last_ts());
COMMIT;

-- ---------------------------------------------------------------------
-- The capture triggers belong to the history
-- ---------------------------------------------------------------------
SELECT regexp_replace(tgname, '_\d+$', '_N') AS trigger, tgisinternal, tgenabled
  FROM pg_trigger WHERE tgrelid = 't'::regclass ORDER BY 1;
SELECT regexp_replace(try(format('DROP TRIGGER %I ON sd.t',
                                 (SELECT tgname FROM pg_trigger WHERE tgrelid = 'sd.t'::regclass
                                   ORDER BY tgname LIMIT 1))), '(_u?)\d+', '\1N', 'g');
CREATE ROLE mzc_owner;
CREATE TABLE owned (a int);
ALTER TABLE owned OWNER TO mzc_owner;
GRANT USAGE, CREATE ON SCHEMA sd TO mzc_owner;
SET ROLE mzc_owner;
SELECT mzcoord.create_table('sd.owned') IS NOT NULL AS registered_by_owner;
SELECT regexp_replace(try($$ALTER TABLE sd.owned DISABLE TRIGGER ALL$$), '_\d+', '_N');
SELECT try($$ALTER TABLE sd.owned DISABLE TRIGGER USER$$);
INSERT INTO owned VALUES (1);
SELECT count(*) AS captured FROM mzcoord.read_at(NULL::owned,
    (SELECT upper - 1 FROM mzcoord.frontiers WHERE relation = 'sd.owned'::regclass));
-- The owner may compact; others may not.
SELECT rows_in, rows_out FROM mzcoord.compact('sd.owned');
RESET ROLE;
SET ROLE mzc_reader;
SELECT try($$SELECT * FROM mzcoord.compact('sd.owned')$$);
RESET ROLE;
SELECT try($$SELECT * FROM mzcoord.compact('sd.plain')$$);
SELECT try($$SELECT * FROM mzcoord.compact(NULL)$$);

-- ---------------------------------------------------------------------
-- Columns: the history follows them
-- ---------------------------------------------------------------------
-- A new column with a default: earlier times show it null, the table's
-- rows get it from the ALTER's time on.
SELECT last_ts() AS before_add \gset
ALTER TABLE t ADD COLUMN c int DEFAULT 7;
SELECT * FROM mzcoord.read_at(NULL::t, :before_add) ORDER BY a;
SELECT * FROM mzcoord.read_at(NULL::t, last_ts()) ORDER BY a;
-- A new column without default changes no row: nothing is recorded.
SELECT count(*) AS history_rows FROM :hist;
ALTER TABLE t ADD COLUMN d text;
SELECT count(*) AS history_rows FROM :hist;
-- Renaming changes nothing; dropping a column projects the history.
ALTER TABLE t RENAME COLUMN b TO bee;
ALTER TABLE t DROP COLUMN d;
INSERT INTO t VALUES (3, 'three', 3);
SELECT * FROM mzcoord.read_at(NULL::t, last_ts()) ORDER BY a;
SELECT * FROM mzcoord.read_at(NULL::t, :before_add) ORDER BY a;
-- A new type: earlier rows converted by the cast, the table's rows by the
-- USING clause from the ALTER's time on.
SELECT last_ts() AS before_type \gset
ALTER TABLE t ALTER COLUMN c TYPE text USING 'c=' || c;
SELECT * FROM mzcoord.read_at(NULL::t, :before_type) ORDER BY a;
SELECT * FROM mzcoord.read_at(NULL::t, last_ts()) ORDER BY a;
SELECT count(*) AS history_columns FROM pg_attribute
 WHERE attrelid = :'hist'::regclass AND attnum > 0 AND NOT attisdropped;
-- A new type that only a cast that is not built in reaches is refused:
-- the history would be converted as the extension owner.
CREATE TYPE pair AS (x int, y text);
CREATE TABLE tc (a int);
SELECT mzcoord.create_table('tc') IS NOT NULL AS registered;
INSERT INTO tc VALUES (1);
SELECT try($$ALTER TABLE sd.tc ALTER COLUMN a TYPE sd.pair USING ROW(a, 'x')$$);
SELECT history::text AS tchist FROM mzcoord.storage WHERE relation = 'tc'::regclass \gset
SELECT max(ts) AS tc_insert FROM :tchist \gset
ALTER TABLE tc ALTER COLUMN a TYPE bigint;
SELECT pg_typeof(a), a FROM mzcoord.read_at(NULL::tc, :tc_insert);
-- Domains: the history keeps the base type, and never evaluates a domain's
-- constraint (compaction runs as the extension owner).
CREATE TABLE checked_by (who name);
CREATE FUNCTION check_positive(v int) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sd.checked_by VALUES (current_user);
    RETURN v > 0;
END $$;
CREATE DOMAIN positive AS int CHECK (check_positive(VALUE));
CREATE TABLE dom (p positive, j json);
SELECT mzcoord.create_table('dom', '1 second') IS NOT NULL AS registered;
INSERT INTO dom VALUES (1, '{}'), (2, '[]');
UPDATE dom SET j = '{"a": 1}' WHERE p = 1;
SELECT count(*) AS checks_by_writes FROM checked_by;
SELECT format_type(atttypid, atttypmod) AS history_type FROM pg_attribute
 WHERE attrelid = (SELECT history FROM mzcoord.storage WHERE relation = 'dom'::regclass)
   AND attname = 'c1';
SELECT history::text AS domhist FROM mzcoord.storage WHERE relation = 'dom'::regclass \gset
SELECT max(ts) AS dom_last FROM :domhist \gset
SELECT wait_until(format($$SELECT compacted > %s FROM mzcoord.storage
                            WHERE relation = 'sd.dom'::regclass$$, :dom_last));
SELECT c1 AS p, c2 AS j, diff FROM :domhist ORDER BY c1;
SELECT count(*) AS checks_after_compaction FROM checked_by;

SELECT * FROM mzcoord.check_consistency();
-- Inheritance is refused, in every direction.
CREATE TABLE parent (a int);
SELECT try($$CREATE TABLE sd.child () INHERITS (sd.t)$$);
SELECT try($$ALTER TABLE sd.t INHERIT sd.parent$$);
CREATE TABLE kid () INHERITS (parent);
SELECT try($$SELECT mzcoord.create_table('sd.parent')$$);
SELECT try($$SELECT mzcoord.create_table('sd.kid')$$);
SELECT count(*) AS registered FROM mzcoord.storage WHERE relation::text IN ('sd.parent', 'sd.kid');

-- ---------------------------------------------------------------------
-- check_consistency() finds what is wrong (a superuser breaking things)
-- ---------------------------------------------------------------------
ALTER TABLE t DISABLE TRIGGER ALL;
SELECT check_name, object = :'t_id' AS this_table, detail FROM mzcoord.check_consistency();
INSERT INTO t VALUES (4, 'four', 'x');
SELECT check_name, object = :'t_id' AS this_table,
       regexp_replace(detail, '\d{5,}', '<n>', 'g') AS detail
  FROM mzcoord.check_consistency();
DELETE FROM t WHERE a = 4;
ALTER TABLE t ENABLE TRIGGER ALL;
SELECT * FROM mzcoord.check_consistency();
-- A retraction below the compacted frontier: compaction leaves none there.
INSERT INTO :hist (c1, c2, ts, diff) VALUES (99, 'bogus', 0, -1);
SELECT check_name, object = :'t_id' AS this_table,
       regexp_replace(detail, 'u\d+|\d{5,}', '<n>', 'g') AS detail
  FROM mzcoord.check_consistency();
DELETE FROM :hist WHERE c1 = 99;
SELECT * FROM mzcoord.check_consistency();

-- ---------------------------------------------------------------------
-- Drops: the history goes with its relation
-- ---------------------------------------------------------------------
SELECT to_regclass(:'hist') IS NOT NULL AS history_exists;
DROP VIEW v;
DROP TABLE t;
SELECT to_regclass(:'hist') IS NULL AS history_dropped,
       NOT EXISTS (SELECT 1 FROM mzcoord.storage WHERE global_id = :'t_id') AS row_deleted;
SELECT mzcoord.drop('w');
SELECT to_regclass(:'whist') IS NULL AS history_dropped;
SELECT * FROM mzcoord.check_consistency();

RESET search_path;
DROP SCHEMA sd CASCADE;
DROP ROLE mzc_reader;
DROP ROLE mzc_owner;
SELECT * FROM mzcoord.check_consistency();
