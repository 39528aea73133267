-- Part 81: views that keep pace with their inputs (issue 20).
--
-- New in catalog 0.5.  Support for refreshing a materialized view over
-- many changed times at once (src/compute/).

-- The updates of a collection over an interval of times, unconsolidated,
-- with their times and diffs (src/storage/changes.c): the refresh of a
-- continual view reads each input's updates for all the times of a step
-- at once through it.  It runs the view's query as the view's owner with
-- relations replaced by calls of it (with a column definition list: the
-- relation's columns, then ts bigint and diff bigint; with base, the
-- contents at lo - 1 come first, at lo - 1), so it is executable
-- by everyone and checks, holds and waits as read_at does.
CREATE FUNCTION mzcoord._history_rows(rel anyelement, lo bigint, hi bigint, base boolean)
RETURNS SETOF record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_history_rows';

COMMENT ON FUNCTION mzcoord._history_rows(anyelement, bigint, bigint, boolean) IS
'Internal: the updates of a table, source or materialized view with lo <= ts < hi as its history holds them (columns, then ts and diff), after its contents at lo - 1 with base';

REVOKE ALL ON FUNCTION mzcoord._history_rows(anyelement, bigint, bigint, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord._history_rows(anyelement, bigint, bigint, boolean) TO PUBLIC;

-- mzcoord.maintenance_status (60_maintenance.sql) shows the ranges of
-- times a view did not evaluate (unevaluated_ranges, unevaluated_before):
-- its comment says so here, where the upgrade sets it too.
COMMENT ON VIEW mzcoord.maintenance_status IS
'Every materialized view, index and sink: its upper, the least upper of its inputs (what it can reach), its steps, its last failed step (error), the data error it is in, if any (in_error_since), and the ranges of times above its since it did not evaluate (unevaluated_ranges, the last ending at unevaluated_before): a recomputed view under load evaluates only the last time of a step';
