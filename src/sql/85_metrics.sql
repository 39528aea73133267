-- Part 85: metrics for monitoring (issue 24).  New in catalog 0.7.
--
-- mzcoord.metrics: one row per metric sample, Prometheus-style (a metric
-- name with its unit, labels as jsonb, a value), from what the controller
-- keeps in shared memory and the small catalog tables: no history is
-- scanned.  contrib/prometheus/queries.yaml exposes it to
-- prometheus-postgres-exporter.

-- The catalog traffic of the tick's publications since the server started
-- (src/controller/tick.c).
CREATE FUNCTION mzcoord._tick_traffic(OUT table_name text,
    OUT rows_written bigint, OUT bytes_written bigint, OUT held_back bigint)
RETURNS SETOF record
LANGUAGE C STRICT VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_tick_traffic';

REVOKE ALL ON FUNCTION mzcoord._tick_traffic() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord._tick_traffic() TO PUBLIC;

-- Lags are measured behind the timeline: the oracle's read timestamp, the
-- latest time every registered table has completed.  The names are those
-- prometheus-postgres-exporter gives the columns of
-- contrib/prometheus/queries.yaml (namespace_column): gauges that count
-- things end in _current, counters in _total.
CREATE VIEW mzcoord.metrics AS
WITH now AS (
    SELECT s.oracle_read_ts AS ts FROM mzcoord.controller_status() s
),
w AS (
    SELECT * FROM mzcoord.worker_status()
)
-- Per collection: how far its since and its upper lag the timeline (a
-- complete collection, whose upper is the empty frontier, lags by 0).
SELECT 'mzcoord_collection_since_lag_seconds'::text AS metric,
       jsonb_build_object('collection', f.global_id, 'relation', f.relation::text,
                          'kind', f.kind) AS labels,
       greatest(now.ts - f.since, 0) / 1000.0 AS value
  FROM mzcoord.frontiers f, now
 WHERE f.since IS NOT NULL AND f.state = 'active'
UNION ALL
SELECT 'mzcoord_collection_upper_lag_seconds',
       jsonb_build_object('collection', f.global_id, 'relation', f.relation::text,
                          'kind', f.kind),
       coalesce(greatest(now.ts + 1 - f.upper, 0), 0) / 1000.0
  FROM mzcoord.frontiers f, now
 WHERE f.since IS NOT NULL AND f.state = 'active'
UNION ALL
-- Holds by kind: transactions, maintained objects on their inputs, leases,
-- read requirements.
SELECT 'mzcoord_read_holds_current', jsonb_build_object('kind', k.kind),
       (SELECT count(*) FROM mzcoord.holds h WHERE h.holder_kind = k.kind)
  FROM (VALUES ('transaction'), ('maintained'), ('lease'), ('requirement')) k(kind)
UNION ALL
SELECT 'mzcoord_hold_oldest_age_seconds', '{}'::jsonb,
       coalesce(greatest(max(now.ts - h.held_time), 0) / 1000.0, 0)
  FROM now LEFT JOIN mzcoord.holds h ON h.holder_kind IN ('transaction', 'lease')
UNION ALL
SELECT 'mzcoord_leases_current', jsonb_build_object('state', s.state),
       (SELECT count(*) FROM mzcoord.leases l WHERE l.state = s.state)
  FROM (VALUES ('active'), ('expired')) s(state)
UNION ALL
-- The coordinator's tick.
SELECT 'mzcoord_ticks_total', '{}'::jsonb, coalesce(w.ticks, 0) FROM w
UNION ALL
SELECT 'mzcoord_tick_duration_seconds_last', '{}'::jsonb,
       coalesce(w.last_tick_ms, 0) / 1000.0 FROM w
UNION ALL
SELECT 'mzcoord_tick_duration_seconds_total', '{}'::jsonb,
       coalesce(w.total_tick_ms, 0) / 1000.0 FROM w
UNION ALL
-- Maintenance per object (materialized views, indexes, sinks).
SELECT 'mzcoord_maintenance_steps_total',
       jsonb_build_object('object', m.name, 'kind', m.kind),
       coalesce(m.steps, 0)
  FROM mzcoord.maintenance_status m
UNION ALL
SELECT 'mzcoord_maintenance_failures',
       jsonb_build_object('object', m.name, 'kind', m.kind), m.failures
  FROM mzcoord.maintenance_status m
UNION ALL
SELECT 'mzcoord_maintenance_lag_seconds',
       jsonb_build_object('object', m.name, 'kind', m.kind),
       coalesce(greatest(least(m.inputs_upper, now.ts + 1) - m.upper, 0), 0) / 1000.0
  FROM mzcoord.maintenance_status m, now
UNION ALL
-- Catalog traffic of the tick's publications since the server started.
SELECT 'mzcoord_catalog_rows_written_total',
       jsonb_build_object('table', t.table_name), t.rows_written
  FROM mzcoord._tick_traffic() t
UNION ALL
SELECT 'mzcoord_catalog_bytes_written_total',
       jsonb_build_object('table', t.table_name), t.bytes_written
  FROM mzcoord._tick_traffic() t
UNION ALL
SELECT 'mzcoord_bounds_held_back_total', '{}'::jsonb, t.held_back
  FROM mzcoord._tick_traffic() t WHERE t.held_back IS NOT NULL;

COMMENT ON VIEW mzcoord.metrics IS
'Monitoring metrics, one row per sample: Prometheus-style name with unit, labels (jsonb) and value; cheap to read (shared memory and small catalog tables)';

REVOKE ALL ON TABLE mzcoord.metrics FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord.metrics TO PUBLIC;
