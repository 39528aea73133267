--
-- Data plane: sources.  Batches of insertions and retractions appended at
-- explicit times at or after the upper, made complete by advancing the
-- upper; the relation shows the contents at the latest complete time.
-- Every error with its SQLSTATE, and nothing changed by a failed call.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE SCHEMA ss;
SET search_path = ss, public;
SELECT mzcoord.create_source('ss.s', 'k int, v text, j jsonb', '1 hour') AS s_id \gset
SELECT history::text AS hist FROM mzcoord.storage WHERE global_id = :'s_id' \gset
CREATE TEMP TABLE u0 AS SELECT upper AS u0 FROM mzcoord.frontiers WHERE relation = 'ss.s'::regclass;
SELECT u0 AS u0 FROM u0 \gset
-- A new source is empty and has nothing complete yet: since = upper.
SELECT since = upper AS empty, (SELECT count(*) FROM s) AS rows
  FROM mzcoord.frontiers WHERE relation = 's'::regclass;

-- Times relative to the source's creation, for readable output.
CREATE FUNCTION upper_now() RETURNS bigint LANGUAGE sql AS
$$ SELECT upper - (SELECT u0 FROM u0) FROM mzcoord.frontiers WHERE relation = 'ss.s'::regclass $$;
CREATE FUNCTION durable_upper() RETURNS bigint LANGUAGE sql AS
$$ SELECT upper - (SELECT u0 FROM u0) FROM mzcoord.collections
    WHERE global_id = (SELECT global_id FROM mzcoord.storage WHERE relation = 'ss.s'::regclass) $$;
CREATE FUNCTION at(p bigint) RETURNS SETOF ss.s LANGUAGE sql AS
$$ SELECT * FROM mzcoord.read_at(NULL::ss.s, (SELECT u0 FROM u0) + p) ORDER BY k, v $$;

-- Appends at the upper and later; duplicates count; identical rows of one
-- batch are consolidated in the history.
SELECT mzcoord.append(NULL::s, :u0, ARRAY[ROW(1, 'a', '{"x": 1}'), ROW(1, 'a', '{"x": 1}'),
                                          ROW(2, 'b', NULL)]::s[]);
SELECT mzcoord.append(NULL::s, :u0 + 5, ARRAY[ROW(3, 'c', '[]')]::s[],
                      ARRAY[ROW(1, 'a', '{"x": 1}')]::s[]);
SELECT mzcoord.append(NULL::s, :u0 + 5, ARRAY[ROW(NULL, NULL, NULL)]::s[]);
SELECT c1 AS k, c2 AS v, ts - :u0 AS t, diff FROM :hist ORDER BY ts, c1, diff;
-- Nothing is visible before the upper advances.
SELECT count(*) AS rows_before_advance FROM s;

-- Advancing the upper: the relation shows the contents at upper - 1.
SELECT mzcoord.advance_upper('s', :u0 + 3);
SELECT upper_now(), durable_upper();
SELECT * FROM s ORDER BY k, v;
SELECT * FROM at(2);
SELECT mzcoord.advance_upper('s', :u0 + 10);
SELECT upper_now(), durable_upper();
SELECT * FROM s ORDER BY k, v;
SELECT * FROM at(4);
SELECT * FROM at(5);
SELECT * FROM at(9);
-- Advancing to the current upper changes nothing.
SELECT mzcoord.advance_upper('s', :u0 + 10);
SELECT upper_now();

-- Append and advance in one transaction; rolled back, nothing happened.
BEGIN;
SELECT mzcoord.append(NULL::s, :u0 + 10, ARRAY[ROW(4, 'd', NULL)]::s[]);
SELECT mzcoord.advance_upper('s', :u0 + 20);
SELECT count(*) AS rows_in_transaction FROM s;
ROLLBACK;
SELECT upper_now(), durable_upper(), (SELECT count(*) FROM s) AS rows;

-- ---------------------------------------------------------------------
-- Errors: each with its SQLSTATE, and nothing changed.
-- ---------------------------------------------------------------------
-- Below the upper, or moving it back.
SELECT try(format('SELECT mzcoord.append(NULL::ss.s, %s, ARRAY[ROW(9, %L, NULL)]::ss.s[])', :u0 + 9, 'late'));
SELECT try(format('SELECT mzcoord.advance_upper(%L, %s)', 'ss.s', :u0 + 9));
-- Null and negative arguments.
SELECT try($$SELECT mzcoord.append(NULL::ss.s, NULL, ARRAY[]::ss.s[])$$);
SELECT try($$SELECT mzcoord.append(NULL::ss.s, -1, ARRAY[]::ss.s[])$$);
SELECT try($$SELECT mzcoord.advance_upper('ss.s', NULL)$$);
SELECT try($$SELECT mzcoord.advance_upper(NULL, 5)$$);
SELECT try($$SELECT mzcoord.advance_upper('ss.s', -5)$$);
SELECT try(format('SELECT mzcoord.append(NULL::ss.s, %s, ARRAY[NULL]::ss.s[])', :u0 + 10));
SELECT try(format('SELECT mzcoord.append(NULL::ss.s, %s, ARRAY[[ROW(1, %L, NULL)]]::ss.s[])', :u0 + 10, 'x'));
-- Not a source.
CREATE TABLE t (k int, v text, j jsonb);
SELECT try($$SELECT mzcoord.append(NULL::ss.t, 1, ARRAY[]::ss.t[])$$);
SELECT mzcoord.create_table('t') IS NOT NULL AS registered;
SELECT try($$SELECT mzcoord.append(NULL::ss.t, 1, ARRAY[]::ss.t[])$$);
SELECT try($$SELECT mzcoord.advance_upper('ss.t', 1)$$);
SELECT try($$SELECT mzcoord.append(NULL::int, 1, ARRAY[1])$$);
SELECT try($$SELECT mzcoord.advance_upper(12345, 1)$$);
-- The relation is written by advances only.
SELECT try($$INSERT INTO ss.s VALUES (7, 'direct', NULL)$$);
SELECT try($$UPDATE ss.s SET v = 'direct'$$);
SELECT try($$DELETE FROM ss.s$$);
SELECT try($$TRUNCATE ss.s$$);
SELECT try($$ALTER TABLE ss.s ADD COLUMN extra int$$);
-- A retraction of a row the source does not have at that time is refused
-- when the upper would pass it; appending the missing insertion repairs it.
SELECT mzcoord.append(NULL::s, :u0 + 12, NULL, ARRAY[ROW(2, 'b', NULL), ROW(5, 'e', NULL)]::s[]);
SELECT try(format('SELECT mzcoord.advance_upper(%L, %s)', 'ss.s', :u0 + 20));
SELECT upper_now(), durable_upper(), (SELECT count(*) FROM s) AS rows;
SELECT mzcoord.append(NULL::s, :u0 + 14, ARRAY[ROW(5, 'e', NULL)]::s[]);
SELECT try(format('SELECT mzcoord.advance_upper(%L, %s)', 'ss.s', :u0 + 20));
SELECT mzcoord.append(NULL::s, :u0 + 11, ARRAY[ROW(5, 'e', NULL)]::s[]);
SELECT mzcoord.advance_upper('s', :u0 + 20);
SELECT * FROM s ORDER BY k, v;
SELECT * FROM at(11);
SELECT * FROM at(12);
SELECT * FROM at(14);

-- Privileges: appending needs INSERT on the source, retracting DELETE too;
-- reading needs SELECT; the history itself is nobody's business.
CREATE ROLE mzc_appender;
GRANT USAGE ON SCHEMA ss TO mzc_appender;
SET ROLE mzc_appender;
SELECT try(format('SELECT mzcoord.append(NULL::ss.s, %s, ARRAY[ROW(6, %L, NULL)]::ss.s[])', :u0 + 20, 'f'));
SELECT try(format('SELECT count(*) FROM mzcoord.read_at(NULL::ss.s, %s)', :u0 + 15));
SELECT try(format('SELECT mzcoord.advance_upper(%L, %s)', 'ss.s', :u0 + 25));
RESET ROLE;
GRANT INSERT, SELECT ON ss.s TO mzc_appender;
SET ROLE mzc_appender;
SELECT try(format('SELECT mzcoord.append(NULL::ss.s, %s, ARRAY[ROW(6, %L, NULL)]::ss.s[])', :u0 + 20, 'f'));
SELECT try(format('SELECT mzcoord.append(NULL::ss.s, %s, ARRAY[]::ss.s[], ARRAY[ROW(6, %L, NULL)]::ss.s[])', :u0 + 21, 'f'));
SELECT try(format('SELECT mzcoord.advance_upper(%L, %s)', 'ss.s', :u0 + 25));
SELECT regexp_replace(try(format('SELECT count(*) FROM %s', :'hist')), 'u\d+', 'uN');
SELECT regexp_replace(try(format('INSERT INTO %s (ts, diff) VALUES (1, 1)', :'hist')), 'u\d+', 'uN');
SELECT count(*) AS rows_read FROM mzcoord.read_at(NULL::ss.s, :u0 + 24);
RESET ROLE;
SELECT * FROM s ORDER BY k, v;

-- The upper in the catalog and in the controller agree.
SELECT upper_now() = durable_upper() AS uppers_agree;

-- Compaction keeps what the since allows.  A source's since follows its
-- upper (by the retain history).
SELECT mzcoord.set_retain_history('s', '1 second');
SELECT mzcoord.advance_upper('s', :u0 + 5000);
SELECT wait_until($$SELECT s.compacted >= f.since AND f.since > (SELECT u0 FROM u0)
                     FROM mzcoord.storage s JOIN mzcoord.frontiers f ON f.relation = s.relation
                    WHERE s.relation = 'ss.s'::regclass$$);
SELECT c1 AS k, c2 AS v, diff FROM :hist ORDER BY c1, c2;
SELECT * FROM mzcoord.check_consistency();

RESET search_path;
DROP SCHEMA ss CASCADE;
DROP ROLE mzc_appender;
SELECT count(*) AS history_left FROM mzcoord.storage WHERE global_id = :'s_id';
SELECT * FROM mzcoord.check_consistency();
