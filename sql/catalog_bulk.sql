--
-- Bulk catalog changes: registering and dropping hundreds of collections in
-- one transaction reserves only what publishing them needs.
--
\set VERBOSITY terse
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

SELECT collections AS collections_before FROM mzcoord.controller_status() \gset
CREATE SCHEMA bulk;
-- 400 tables registered in one transaction.
DO $$
BEGIN
    FOR i IN 1..400 LOOP
        EXECUTE format('CREATE TABLE bulk.t%s (a int)', i);
        PERFORM mzcoord.create_table(format('bulk.t%s', i)::regclass);
    END LOOP;
END
$$;
SELECT count(*) AS registered
  FROM mzcoord.frontiers f JOIN pg_class c ON c.oid = f.relation
 WHERE c.relnamespace = 'bulk'::regnamespace;
SELECT count(*) AS holds FROM mzcoord.holds;

-- A policy change for each of them, in one statement.
SELECT count(mzcoord.set_retain_history(c.oid::regclass, '1 hour'))
  FROM pg_class c WHERE c.relnamespace = 'bulk'::regnamespace AND c.relkind = 'r';

-- Dropped together, in one statement.
SET client_min_messages = warning;
DROP SCHEMA bulk CASCADE;
RESET client_min_messages;
SELECT count(*) AS items_left FROM mzcoord.items WHERE schema_name = 'bulk';
SELECT wait_until(format($$SELECT collections <= %s FROM mzcoord.controller_status()$$,
                         :collections_before));
SELECT * FROM mzcoord.check_consistency();
