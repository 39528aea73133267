--
-- mzcoord.explain_compaction(rel): what keeps a since and a compaction
-- bound where they are.  Times and ids vary from run to run: digits are
-- masked, and lines are sorted.
--
\set VERBOSITY terse
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TABLE ec (a int);
SELECT mzcoord.create_table('ec', '1 second') IS NOT NULL AS registered;
INSERT INTO ec VALUES (1);

CREATE FUNCTION ec_lines(rel regclass) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT regexp_replace(regexp_replace(line, 'expires [^)]*', 'expires T', 'g'),
                          '[0-9]+', 'N', 'g')
      FROM regexp_split_to_table(mzcoord.explain_compaction(rel), E'\n') AS line
     ORDER BY 1
$$;

-- Nothing but the policy holds it.
SELECT * FROM ec_lines('ec');

-- A materialized view (its requirement and its dependency hold), a lease
-- and a transaction hold.
SELECT mzcoord.create_materialized_view('ec_mv', 'SELECT a FROM ec') IS NOT NULL AS mv;
SELECT mzcoord.create_lease('ec_lease', ARRAY['ec'::regclass]) IS NOT NULL AS leased;
BEGIN;
SELECT mzcoord.acquire_read_hold(ARRAY['ec'::regclass]) IS NOT NULL AS held;
SELECT * FROM ec_lines('ec');
COMMIT;

-- Errors: NULL, a relation that is not a collection, no SELECT right.
SELECT try($$SELECT mzcoord.explain_compaction(NULL)$$);
CREATE TABLE ec_plain (b int);
SELECT try($$SELECT mzcoord.explain_compaction('ec_plain')$$);
CREATE ROLE regress_ec_nobody;
SET ROLE regress_ec_nobody;
SELECT try($$SELECT mzcoord.explain_compaction('ec')$$);
RESET ROLE;
DROP ROLE regress_ec_nobody;

SELECT mzcoord.drop_lease('ec_lease');
SELECT mzcoord.drop('ec_mv');
SELECT mzcoord.drop('ec');
DROP TABLE ec_plain;
DROP FUNCTION ec_lines(regclass);
SELECT * FROM mzcoord.check_consistency();
