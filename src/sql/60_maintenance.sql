-- Part 60: maintained objects at work (issue 12).  The maintenance workers
-- refresh materialized views and run the exports of sinks that the
-- coordinator hands them, one transaction per step (src/compute/maintain.c,
-- since issue 20); indexes follow their relation in the tick itself.  This fragment holds what that
-- work records and shows.

-- One row per materialized view or sink that has been worked on: its
-- progress and its last error.  Written only by the object's maintenance
-- step (in a maintenance worker; an object has one step at a time), in the
-- transaction of the step (a success) or right after it (a failure).
CREATE TABLE mzcoord.maintenance (
    item_id      text NOT NULL,
    steps        bigint NOT NULL DEFAULT 0,
    upper        bigint,
    updates      bigint NOT NULL DEFAULT 0,
    times        bigint NOT NULL DEFAULT 0,
    incremental_times bigint NOT NULL DEFAULT 0,
    last_step_at timestamptz,
    last_step_ms double precision,
    failures     bigint NOT NULL DEFAULT 0,
    error        text,
    error_code   text,
    error_at     timestamptz,
    CONSTRAINT maintenance_pkey PRIMARY KEY (item_id),
    -- Checked at once, so that a step's record fails inside the step (the
    -- worker records the failure and goes on), never at its commit;
    -- an id change cascades, and the catalog's own trigger refuses it
    -- with its own message.
    CONSTRAINT maintenance_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) ON DELETE CASCADE ON UPDATE CASCADE
);

COMMENT ON TABLE mzcoord.maintenance IS
'Progress and last error of each materialized view and sink the coordinator maintains';
COMMENT ON COLUMN mzcoord.maintenance.steps IS
'Steps that did work and committed: refreshes that evaluated the query at one time or more, exports that wrote rows (a step that only moves the upper of an idle object is not counted)';
COMMENT ON COLUMN mzcoord.maintenance.upper IS
'The upper the last counted step left (NULL: the empty frontier, or none yet); mzcoord.frontiers has the current one';
COMMENT ON COLUMN mzcoord.maintenance.updates IS
'Updates written in all: rows of the view''s history (sum of |diff|), or rows exported by the sink';
COMMENT ON COLUMN mzcoord.maintenance.times IS
'Distinct times refreshed or exported in all';
COMMENT ON COLUMN mzcoord.maintenance.incremental_times IS
'Of those, times a continual view was refreshed from its inputs'' updates rather than by recomputing its query (mzcoord.incremental)';
COMMENT ON COLUMN mzcoord.maintenance.failures IS
'Failed steps since the last one that committed (0: healthy)';
COMMENT ON COLUMN mzcoord.maintenance.error IS
'Message of the latest failed step (kept after a later success; see failures)';

REVOKE ALL ON TABLE mzcoord.maintenance FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord.maintenance TO PUBLIC;

-- The data errors of materialized views: a view whose query raises a data
-- error at time t (a division by zero, a failed cast: SQLSTATE classes 21,
-- 22 and 23) has no contents at t.  The refresh records that the view is in
-- error from t, keeps its last good contents and moves on; the range is
-- closed at the next time the query has a value again.  A read of the view
-- at a time in a range raises its error (src/storage/viewerrors.c).
-- Written only by the refresh, in its transaction: atomic with the view's
-- history and upper.
CREATE TABLE mzcoord.view_errors (
    item_id   text NOT NULL,
    from_ts   bigint NOT NULL,
    upto_ts   bigint,
    sqlstate  text NOT NULL,
    message   text NOT NULL,
    CONSTRAINT view_errors_pkey PRIMARY KEY (item_id, from_ts),
    CONSTRAINT view_errors_range_check CHECK (upto_ts IS NULL OR upto_ts > from_ts),
    -- Deferred like mzcoord.maintenance's.
    CONSTRAINT view_errors_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) ON DELETE CASCADE
        DEFERRABLE INITIALLY DEFERRED
);

COMMENT ON TABLE mzcoord.view_errors IS
'Time ranges in which a materialized view has no contents because its query raises a data error; a read of the view at such a time raises the error';
COMMENT ON COLUMN mzcoord.view_errors.from_ts IS
'First time at which the query raised the error';
COMMENT ON COLUMN mzcoord.view_errors.upto_ts IS
'First time after from_ts at which the query has a value again (NULL: the view is still in error)';
COMMENT ON COLUMN mzcoord.view_errors.sqlstate IS
'SQLSTATE of the error at from_ts';
COMMENT ON COLUMN mzcoord.view_errors.message IS
'Message of the error at from_ts (later times of the range may have failed otherwise)';

REVOKE ALL ON TABLE mzcoord.view_errors FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord.view_errors TO PUBLIC;
-- Part of the views' contents (a read in a range raises its error), so it
-- is dumped with their histories, unlike mzcoord.maintenance.
SELECT pg_catalog.pg_extension_config_dump('mzcoord.view_errors', '');

-- Every maintained object, how far it is and how it is doing.
CREATE VIEW mzcoord.maintenance_status AS
SELECT i.id AS item_id,
       format('%I.%I', i.schema_name, i.name) AS name,
       i.kind,
       CASE WHEN i.kind = 'materialized_view' AND i.refresh IS NULL THEN 'continual'
            WHEN i.kind = 'materialized_view' THEN array_to_string(i.refresh, ', ')
            WHEN i.kind = 'index' THEN 'follows its relation'
            ELSE 'export'
       END AS schedule,
       f.upper,
       (SELECT min(coalesce(fi.upper, 9223372036854775807))
          FROM mzcoord.item_inputs r
          JOIN mzcoord.frontiers fi ON fi.global_id = r.input_global_id
         WHERE r.item_id = i.id) AS inputs_upper,
       m.steps,
       m.updates,
       m.last_step_at,
       m.last_step_ms,
       coalesce(m.failures, 0) AS failures,
       m.error,
       m.error_code,
       m.error_at,
       e.from_ts AS in_error_since,
       e.message AS data_error,
       e.sqlstate AS data_error_code,
       (SELECT count(*) FROM mzcoord.view_errors s
         WHERE s.item_id = i.id AND s.sqlstate = '55MZ1') AS unevaluated_ranges,
       (SELECT max(s.upto_ts) FROM mzcoord.view_errors s
         WHERE s.item_id = i.id AND s.sqlstate = '55MZ1') AS unevaluated_before
  FROM mzcoord.items i
  LEFT JOIN mzcoord.frontiers f ON f.global_id = i.id
  LEFT JOIN mzcoord.maintenance m ON m.item_id = i.id
  LEFT JOIN mzcoord.view_errors e ON e.item_id = i.id AND e.upto_ts IS NULL
 WHERE i.kind IN ('materialized_view', 'index', 'sink');

COMMENT ON VIEW mzcoord.maintenance_status IS
'Every materialized view, index and sink: its upper, the least upper of its inputs (what it can reach), its steps, its last failed step (error) and the data error it is in, if any (in_error_since)';

REVOKE ALL ON TABLE mzcoord.maintenance_status FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord.maintenance_status TO PUBLIC;

-- The delta relations of the incremental refresh (src/compute/incremental.c):
-- the insertions (sign 1) or retractions (sign -1) of a collection at
-- exactly one time, each row shown |diff| times.  The refresh runs the
-- view's query as its owner with relations replaced by these, so it is
-- executable by everyone and checks, holds and waits as read_at does.
CREATE FUNCTION mzcoord._updates_at(rel anyelement, at bigint, sign integer)
RETURNS SETOF anyelement
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_updates_at';

COMMENT ON FUNCTION mzcoord._updates_at(anyelement, bigint, integer) IS
'Internal: the insertions (sign 1) or retractions (sign -1) of a table, source or materialized view at exactly one time, each row |diff| times';

REVOKE ALL ON FUNCTION mzcoord._updates_at(anyelement, bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord._updates_at(anyelement, bigint, integer) TO PUBLIC;
