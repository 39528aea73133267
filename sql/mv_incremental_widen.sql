--
-- The incremental path widened (issue 20): avg of integers, DISTINCT and
-- GROUP BY without aggregates, HAVING (groups kept whole, incremental.c),
-- and joins whose other side is read from its own relation and its index.
-- Random writes in many transactions, half of them while another session
-- locks the views (so that one step covers many times); then each view is
-- compared, as text (the very bytes: 1.0 is not 1.00), with its query over
-- read_at of its inputs at every commit time, and every time after a
-- view's first was refreshed from the updates.
--
CREATE EXTENSION dblink;
CREATE SCHEMA wd;
CREATE TABLE wd.t (k int, g int, v int, w bigint, s smallint);
INSERT INTO wd.t VALUES (1, 1, 10, 100, 1), (2, 1, NULL, NULL, NULL), (3, 2, 5, 7, 2),
                        (4, NULL, 3, 3, 3);
-- A dimension large enough that the updates joined with it go in pieces,
-- and a fact table with a dropped column.
CREATE TABLE wd.dim (id int PRIMARY KEY, name text, grp int);
INSERT INTO wd.dim SELECT i, 'n' || i, i % 10 FROM generate_series(1, 33000) i;
ANALYZE wd.dim;
CREATE TABLE wd.fact (x int, junk int, id int, a int);
ALTER TABLE wd.fact DROP COLUMN junk;
INSERT INTO wd.fact VALUES (1, 1, 5), (2, 2, NULL), (3, 40000, 1);
SELECT mzcoord.create_table('wd.t', '1 hour') IS NOT NULL AS t,
       mzcoord.create_table('wd.dim', '1 hour') IS NOT NULL AS dim,
       mzcoord.create_table('wd.fact', '1 hour') IS NOT NULL AS fact;

-- The queries, {t}, {f} and {d} standing for the inputs.
CREATE TABLE wd.defs (name text PRIMARY KEY, query text NOT NULL);
INSERT INTO wd.defs VALUES
-- avg of int4, int8 and int2
('avg',  'SELECT g, avg(v) AS av, avg(w) AS aw, avg(s) AS a2, count(*) AS n FROM {t} t GROUP BY g'),
-- without GROUP BY: one row, of NULLs when the table is empty
('avg1', 'SELECT avg(v) AS av, avg(w) AS aw FROM {t} t'),
-- DISTINCT, with an expression
('dis',  'SELECT DISTINCT g, v % 3 AS r FROM {t} t'),
-- GROUP BY without aggregates
('grp',  'SELECT g FROM {t} t WHERE v IS NOT NULL GROUP BY g'),
-- HAVING on aggregates and on the key
('hav',  'SELECT g, count(*) AS n, avg(v) AS av FROM {t} t GROUP BY g HAVING count(*) > 1 AND (g IS NULL OR g <> 3) AND avg(v) IS DISTINCT FROM 1'),
-- HAVING without GROUP BY: the one row comes and goes
('hav1', 'SELECT count(*) AS n, sum(v) AS sv FROM {t} t HAVING sum(v) > 40'),
-- HAVING on a max
('mmh',  'SELECT g, min(v) AS lo, max(w) AS hw FROM {t} t GROUP BY g HAVING max(w) > 500000000000'),
-- joins with the dimension
('jn',   'SELECT f.x, f.a, d.name FROM {f} f JOIN {d} d ON d.id = f.id WHERE d.grp <> 7'),
('jn2',  'SELECT d.grp, count(*) AS n, sum(f.a) AS sa, count(f.a) AS na FROM {f} f JOIN {d} d ON d.id = f.id GROUP BY d.grp');
CREATE FUNCTION wd.expand(q text, t text, f text, d text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT replace(replace(replace(q, '{t}', t), '{f}', f), '{d}', d) $$;
SELECT name, mzcoord.create_materialized_view('wd.' || name,
           wd.expand(query, 'wd.t', 'wd.fact', 'wd.dim'),
           retain_history => '1 hour') IS NOT NULL AS created
  FROM wd.defs ORDER BY name;
SELECT wait_until(format($$SELECT bool_and(f.upper > %s) FROM mzcoord.frontiers f
                            JOIN mzcoord.items i ON i.id = f.item_id
                           WHERE i.schema_name = 'wd' AND i.kind = 'materialized_view'$$,
                         mzcoord.last_commit_ts())) AS ready;
CREATE TABLE wd.before AS
SELECT i.name, m.times, m.incremental_times
  FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
 WHERE i.schema_name = 'wd';

-- Random writes, one transaction each, every commit time recorded.
CREATE TABLE wd.times (ts bigint);
CREATE PROCEDURE wd.writes(n int, dim_too boolean)
LANGUAGE plpgsql AS $$
DECLARE
    r float8;
    kk int;
BEGIN
    FOR i IN 1..n LOOP
        r := random();
        kk := 1 + floor(random() * 20)::int;
        IF r < 0.3 THEN
            -- a few rows, NULLs among them (a NULL group too)
            INSERT INTO wd.t
            SELECT kk + j % 2, CASE WHEN random() < 0.1 THEN NULL ELSE 1 + floor(random() * 5)::int END,
                   CASE WHEN random() < 0.2 THEN NULL ELSE floor(random() * 20)::int - 5 END,
                   CASE WHEN random() < 0.2 THEN NULL ELSE floor(random() * 1e12)::bigint END,
                   CASE WHEN random() < 0.2 THEN NULL ELSE floor(random() * 100)::smallint END
              FROM generate_series(1, 1 + floor(random() * 3)::int) j;
        ELSIF r < 0.4 THEN
            UPDATE wd.t SET v = CASE WHEN random() < 0.3 THEN NULL ELSE v + 1 END, w = w - 3
             WHERE t.k = kk;
            UPDATE wd.t SET g = 1 + floor(random() * 5)::int WHERE t.k = kk + 1;
        ELSIF r < 0.5 THEN
            DELETE FROM wd.t WHERE t.k BETWEEN kk AND kk + 2;
        ELSIF r < 0.55 THEN
            -- a whole group goes
            DELETE FROM wd.t WHERE g = 1 + kk % 5;
        ELSIF r < 0.57 THEN
            -- every group goes
            DELETE FROM wd.t;
        ELSIF r < 0.6 THEN
            -- an insert and a delete of the same rows in one transaction
            INSERT INTO wd.t VALUES (kk, 2, 1, 1, 1), (kk, 2, 1, 1, 1);
            DELETE FROM wd.t WHERE t.k = kk AND g = 2;
        ELSIF r < 0.85 OR (r >= 0.93 AND NOT dim_too) THEN
            -- facts, most of them on the first few dimension rows, some on
            -- none
            INSERT INTO wd.fact
            SELECT i * 10 + j, CASE WHEN j = 5 THEN 40000 + kk
                                    WHEN random() < 0.7 THEN 1 + floor(random() * 60)::int
                                    ELSE 1 + floor(random() * 33000)::int END,
                   CASE WHEN random() < 0.2 THEN NULL ELSE kk END
              FROM generate_series(1, CASE WHEN random() < 0.1 THEN 150 ELSE 3 + floor(random() * 10)::int END) j;
        ELSIF r < 0.93 THEN
            DELETE FROM wd.fact WHERE id BETWEEN kk AND kk + 3;
            UPDATE wd.fact SET a = coalesce(a, 0) + 1 WHERE id = kk + 5;
        ELSIF r < 0.97 THEN
            UPDATE wd.dim SET name = name || 'x', grp = (grp + 1) % 10 WHERE id = 1 + kk * 2;
        ELSE
            -- both sides of the join in one transaction
            UPDATE wd.dim SET name = 'both' WHERE id = kk;
            INSERT INTO wd.fact VALUES (i, kk, kk);
        END IF;
        COMMIT;
        INSERT INTO wd.times VALUES (mzcoord.last_commit_ts());
        COMMIT;
        PERFORM pg_sleep(0.003);
    END LOOP;
END
$$;
SELECT setseed(0.75);
CALL wd.writes(60, true);
-- The views stay where they are while more writes commit: the first step
-- after the lock covers all of them, and as the dimension is not written
-- then, the join's step reads it from its own relation.
SELECT dblink_connect('wd_locker',
           format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
                  split_part(current_setting('unix_socket_directories'), ',', 1))) AS locker;
SELECT dblink_exec('wd_locker', 'BEGIN');
SELECT dblink_exec('wd_locker', format('LOCK TABLE %s IN SHARE MODE',
                                       (SELECT string_agg('wd.' || name, ', ') FROM wd.defs)));
CALL wd.writes(60, false);
SELECT dblink_exec('wd_locker', 'COMMIT');
SELECT dblink_disconnect('wd_locker');
SELECT count(DISTINCT ts) > 80 AS distinct_times FROM wd.times;

SELECT wait_until(format($$SELECT bool_and(f.upper > %s) FROM mzcoord.frontiers f
                            JOIN mzcoord.items i ON i.id = f.item_id
                           WHERE i.schema_name = 'wd' AND i.kind = 'materialized_view'$$,
                         (SELECT max(ts) FROM wd.times)), 60) AS caught_up;
SELECT i.name, m.failures, m.error
  FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
 WHERE i.schema_name = 'wd' AND m.error IS NOT NULL;

-- Each view against its query over read_at of the inputs, row by row as
-- text, at every commit time.
SET statement_timeout = '300s';
CREATE FUNCTION wd.differences(p_name text) RETURNS TABLE (ts bigint, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
    q text := (SELECT query FROM wd.defs WHERE name = p_name);
    mv text;
    direct text;
    t bigint;
BEGIN
    FOR t IN SELECT DISTINCT x.ts FROM wd.times x ORDER BY 1 LOOP
        mv := format('SELECT v::text FROM mzcoord.read_at(NULL::wd.%I, %s) v', p_name, t);
        direct := format('SELECT v::text FROM (%s) v',
                         wd.expand(q, format('mzcoord.read_at(NULL::wd.t, %s)', t),
                                   format('mzcoord.read_at(NULL::wd.fact, %s)', t),
                                   format('mzcoord.read_at(NULL::wd.dim, %s)', t)));
        ts := t;
        EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) d',
                       mv, direct, direct, mv) INTO n;
        IF n > 0 THEN RETURN NEXT; END IF;
    END LOOP;
END
$$;
SELECT d.name, x.* FROM wd.defs d, wd.differences(d.name) x ORDER BY 1, 2;
RESET statement_timeout;

-- Not trivially equal: the views had rows, groups came and went.
SELECT count(DISTINCT (SELECT count(*) FROM mzcoord.read_at(NULL::wd.hav, x.ts))) > 2 AS hav_varies,
       count(DISTINCT (SELECT count(*) FROM mzcoord.read_at(NULL::wd.hav1, x.ts))) = 2 AS hav1_comes_and_goes
  FROM wd.times x;
SELECT (SELECT count(*) FROM wd.avg) > 0 AS avg, (SELECT count(*) FROM wd.dis) > 0 AS dis,
       (SELECT count(*) FROM wd.grp) > 0 AS grp, (SELECT count(*) FROM wd.jn) > 0 AS jn,
       (SELECT count(*) FROM wd.jn2) > 0 AS jn2;

-- Which path ran: every time after each view's first, from the updates.
SELECT i.name, m.times - b.times > 10 AS many_times,
       m.times - b.times = m.incremental_times - b.incremental_times AS all_incremental
  FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
  JOIN wd.before b ON b.name = i.name
 WHERE i.schema_name = 'wd'
 ORDER BY i.name;

SELECT * FROM mzcoord.check_consistency();
SELECT count(mzcoord.drop(('wd.' || name)::regclass)) AS dropped FROM wd.defs;
DROP TABLE wd.t, wd.fact, wd.dim;
DROP EXTENSION dblink;
DROP SCHEMA wd CASCADE;
SELECT * FROM mzcoord.check_consistency();
