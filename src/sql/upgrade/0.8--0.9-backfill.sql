-- ---------------------------------------------------------------------------
-- Backfill of a 0.8 catalog.  A 0.8 history has a btree on ts of every row
-- (history_u<N>_ts) and one of its retractions (history_u<N>_retractions),
-- so each retraction had two entries.  From 0.9 each row has one: the
-- first index becomes one of the insertions (history_u<N>_insertions, ts
-- of the rows with diff > 0), which the 0.9 library reads and writes
-- (src/storage/history.c).  Built before the old index is dropped, so that
-- no history is ever without an index of its insertions.  A history that
-- an earlier step of this update created (with this library) has it
-- already.
-- ---------------------------------------------------------------------------
DO $backfill$
DECLARE
    h record;
BEGIN
    FOR h IN SELECT c.relname
               FROM mzcoord.storage s
               JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.history
              ORDER BY s.global_id
    LOOP
        EXECUTE pg_catalog.format(
            'CREATE INDEX IF NOT EXISTS %I ON mzcoord.%I (ts) WHERE diff OPERATOR(pg_catalog.>) 0',
            h.relname || '_insertions', h.relname);
        EXECUTE pg_catalog.format('DROP INDEX IF EXISTS mzcoord.%I', h.relname || '_ts');
    END LOOP;
END
$backfill$;
