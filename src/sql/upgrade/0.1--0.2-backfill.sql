-- ---------------------------------------------------------------------------
-- Backfill of a 0.1 catalog (issue 11), after the new fragments created the
-- authority's tables, triggers and the coordinator epoch row (epoch 0), and
-- the changed functions were replaced.  Runs in ALTER EXTENSION's
-- transaction; the coordinator of a 0.2 library does not tick against the
-- catalog until that commits (it waits while extversion is not 0.2), so no
-- publication runs meanwhile.  The rows are those a 0.2 catalog would hold
-- had it created these collections and advanced them the same way.
-- ---------------------------------------------------------------------------

-- A compaction bound for every collection with history (tables, sources,
-- materialized views: mzcoord._kind_has_bound), at its durable since; never
-- below what its history was already compacted to (a 0.1 coordinator
-- compacted up to the live since, which the durable since could trail), and
-- the empty frontier for an empty since.  Bounds come first: the guard of
-- read_requirements refuses a requirement below its input's bound.
INSERT INTO mzcoord.compaction_bounds (global_id, bound, epoch, published_at)
SELECT c.global_id,
       CASE WHEN c.since IS NULL THEN NULL
            ELSE greatest(c.since, st.compacted) END,
       e.epoch, now()
  FROM mzcoord.collections c
  JOIN mzcoord.items i ON i.id = c.item_id
  LEFT JOIN mzcoord.storage st ON st.global_id = c.global_id
 CROSS JOIN mzcoord.coordinator_epoch e
 WHERE mzcoord._kind_has_bound(i.kind)
 ORDER BY c.global_id;

-- The since mirrors the bound (check_consistency(), "since mirrors bound"):
-- it only moves up, and only where history was compacted beyond it.
UPDATE mzcoord.collections c
   SET since = b.bound
  FROM mzcoord.compaction_bounds b
 WHERE b.global_id = c.global_id
   AND c.since IS DISTINCT FROM b.bound;

-- The read requirements of every materialized view, index and sink on each
-- of its logical inputs: from its as-of, advanced with its durable upper as
-- mzcoord._advance_requirements() would have (step_back(upper); complete
-- when the upper is the empty frontier), and never below the input's bound
-- (the guard's rule, D3).  A bound is never above these: each is at least
-- the bound just backfilled.
INSERT INTO mzcoord.read_requirements (item_id, input_global_id, at)
SELECT ii.item_id, ii.input_global_id,
       CASE WHEN c.upper IS NULL THEN NULL
            ELSE greatest(c.as_of, greatest(c.upper - 1, 0), b.bound) END
  FROM mzcoord.item_inputs ii
  JOIN mzcoord.items i ON i.id = ii.item_id
  JOIN mzcoord.collections c ON c.global_id = ii.item_id
  LEFT JOIN mzcoord.compaction_bounds b ON b.global_id = ii.input_global_id
 WHERE i.kind IN ('materialized_view', 'index', 'sink')
 ORDER BY ii.item_id, ii.input_global_id;

-- Issue 12: mzcoord.create_sink(text, regclass, boolean) replaced the
-- two-argument function, whose privileges went with it.
COMMENT ON FUNCTION mzcoord.create_sink(text, regclass, boolean) IS
'Create a sink exporting the updates of a table, source or materialized view (with snapshot, starting with its contents at the as-of); returns its item id';
REVOKE ALL ON FUNCTION mzcoord.create_sink(text, regclass, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.create_sink(text, regclass, boolean) TO PUBLIC;

-- Issue 12: the relations of existing sinks get their guard.
SELECT mzcoord._sink_install_guard(relation)
  FROM mzcoord.items WHERE kind = 'sink' AND relation IS NOT NULL;
