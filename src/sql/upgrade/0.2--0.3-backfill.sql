-- ---------------------------------------------------------------------------
-- Backfill of a 0.2 catalog (issue 12), after the new fragments and the
-- changed functions.  Runs in ALTER EXTENSION's transaction; a 0.3
-- coordinator does not tick against the catalog until it commits.
-- ---------------------------------------------------------------------------

-- Materialized views have histories now (a fed history, like a source's).
ALTER TABLE mzcoord.storage DROP CONSTRAINT storage_kind_check;
ALTER TABLE mzcoord.storage ADD CONSTRAINT storage_kind_check
    CHECK (kind IN ('table', 'source', 'materialized_view'));

COMMENT ON FUNCTION mzcoord.read_at(anyelement, bigint) IS
'Contents of a table, source or materialized view at a time, with multiplicities (read_at(NULL::rel, ts)); holds the relation at that time until the transaction ends';

-- A 0.2 materialized view was never computed: its upper is still its as-of
-- and its relation should be empty (nothing guarded it, so it is emptied:
-- whatever is in it is not the view's).  Each gets its history at its since,
-- and its relation the guard against direct writes; the coordinator then
-- refreshes it from its as-of, which its read requirements kept readable.
DO $$
DECLARE
    v record;
BEGIN
    FOR v IN SELECT c.global_id, i.relation, c.since
               FROM mzcoord.items i
               JOIN mzcoord.collections c
                 ON c.item_id = i.id AND c.primary_id IS NULL
              WHERE i.kind = 'materialized_view' AND i.relation IS NOT NULL
                AND c.since IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM mzcoord.storage s
                                 WHERE s.global_id = c.global_id)
              ORDER BY mzcoord._gid_num(c.global_id)
    LOOP
        EXECUTE format('TRUNCATE %s', v.relation);
        PERFORM mzcoord._storage_install(v.global_id, 'materialized_view',
                                         v.relation, v.since);
    END LOOP;
END
$$;

-- mzcoord.create_sink(text, regclass, boolean) replaced the two-argument
-- function, whose privileges and comment went with it.
COMMENT ON FUNCTION mzcoord.create_sink(text, regclass, boolean) IS
'Create a sink exporting the updates of a table, source or materialized view (with snapshot, starting with its contents at the as-of); returns its item id';
REVOKE ALL ON FUNCTION mzcoord.create_sink(text, regclass, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.create_sink(text, regclass, boolean) TO PUBLIC;

-- The relations of existing sinks get their guard.  A 0.2 sink never
-- exported anything (its upper is still its as-of); its export starts with
-- a snapshot at its as-of, which its read requirement kept readable.
SELECT mzcoord._sink_install_guard(relation)
  FROM mzcoord.items WHERE kind = 'sink' AND relation IS NOT NULL;
