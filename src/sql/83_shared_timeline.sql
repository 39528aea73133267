-- Part 83: one durable since per collection, one durable upper for all
-- tables (issue 20).
--
-- New in catalog 0.6.  Until 0.5 the coordinator wrote a collection's
-- since twice (its compaction bound, and a mirror in mzcoord.collections)
-- and every published table's upper in its own row: a publication of N
-- bounds wrote 2N rows after locking 2N.  Now a collection with a
-- compaction bound has its durable since there only, and the tables, which
-- share the timeline, share one durable upper here; the tick writes one
-- row per changed bound (src/controller/tick.c).

ALTER TABLE mzcoord.coordinator_epoch ADD COLUMN timeline bigint;
ALTER TABLE mzcoord.coordinator_epoch
    ADD CONSTRAINT coordinator_epoch_timeline_check CHECK (timeline >= 0);

COMMENT ON COLUMN mzcoord.coordinator_epoch.timeline IS
'The durable upper of every table: the table timeline as of the last publication that wrote a table''s bound; a restart resumes the timeline above it';

COMMENT ON TABLE mzcoord.compaction_bounds IS
'How far each collection with history may be compacted: the authority, and the durable since of the collection';

COMMENT ON COLUMN mzcoord.collections.since IS
'Durable since of a collection without a compaction bound (an index), persisted by the controller; for one with a bound, the since at creation (mzcoord.compaction_bounds has the durable since); NULL means the empty frontier';
COMMENT ON COLUMN mzcoord.collections.upper IS
'Durable upper, persisted by the controller (an index) or by whatever makes progress (a source, a view, a sink); for a table, the upper at creation (or as catalog 0.5 last wrote it): the tables share mzcoord.coordinator_epoch.timeline; NULL means the empty frontier';

-- The durable since and upper of every collection, as a bootstrap reads
-- them.
CREATE VIEW mzcoord._durable_frontiers AS
SELECT c.global_id,
       CASE WHEN b.global_id IS NULL THEN c.since ELSE b.bound END AS since,
       CASE WHEN i.kind = 'table' AND c.upper IS NOT NULL
            THEN greatest(c.upper, (SELECT e.timeline FROM mzcoord.coordinator_epoch e))
            ELSE c.upper END AS upper
  FROM mzcoord.collections c
  JOIN mzcoord.items i ON i.id = c.item_id
  LEFT JOIN mzcoord.compaction_bounds b ON b.global_id = c.global_id;

REVOKE ALL ON mzcoord._durable_frontiers FROM PUBLIC;

-- The controller against the durable frontiers (check_consistency() runs
-- every _check_ view).
CREATE VIEW mzcoord._check_durable_frontiers AS
SELECT 'catalog collection in shared memory'::text AS check_name,
       d.global_id AS object,
       'the catalog has the collection, the controller does not'::text AS detail
  FROM mzcoord._durable_frontiers d
 WHERE d.since IS NOT NULL
   AND (SELECT ready FROM mzcoord.controller_status())
   AND NOT EXISTS (SELECT 1 FROM mzcoord._controller_collections() s
                    WHERE s.global_id = d.global_id)
UNION ALL
SELECT 'durable since', s.global_id,
       format('the catalog since %s differs from what the controller persisted, %s',
              d.since, s.durable_since)
  FROM mzcoord._controller_collections() s
  JOIN mzcoord._durable_frontiers d ON d.global_id = s.global_id
 WHERE s.durable_since IS NOT NULL AND d.since IS DISTINCT FROM s.durable_since
UNION ALL
SELECT 'catalog collection dropped in shared memory', s.global_id,
       format('the catalog has the collection, the controller has it %s', s.state)
  FROM mzcoord._controller_collections() s
  JOIN mzcoord._durable_frontiers d ON d.global_id = s.global_id
 WHERE s.state <> 'active' AND d.since IS NOT NULL
UNION ALL
-- The shared upper is written from the live timeline, which never goes
-- back.
SELECT 'table timeline went back', s.global_id,
       format('the tables'' durable upper is %s, the controller has %s',
              e.timeline, s.upper)
  FROM mzcoord._controller_collections() s, mzcoord.coordinator_epoch e
 WHERE s.state = 'active' AND s.kind = 'table' AND e.timeline IS NOT NULL
   AND s.upper IS NOT NULL AND s.upper < e.timeline;

REVOKE ALL ON mzcoord._check_durable_frontiers FROM PUBLIC;

-- The compaction step's counters since the server started (the step is in
-- src/storage/autocompact.c): how many collections may still have updates
-- to compact (what the next steps choose from, at most 128 a step), the
-- steps run, the collections they examined and the compactions they ran.
CREATE FUNCTION mzcoord.compaction_status(
    OUT pending bigint,
    OUT steps bigint,
    OUT examined bigint,
    OUT compactions bigint)
RETURNS record
LANGUAGE C STRICT VOLATILE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'mzcoord_compaction_status';

COMMENT ON FUNCTION mzcoord.compaction_status() IS
'Counters of the coordinator''s compaction step: collections pending, steps, collections examined, compactions run';

REVOKE ALL ON FUNCTION mzcoord.compaction_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.compaction_status() TO PUBLIC;
