-- Part 10: the pure semantics core (src/core) exposed to SQL: read policies,
-- frontiers, timestamp selection and as-of selection.  These functions only
-- compute: no shared memory, no catalog access.  Frontiers are bigint with
-- NULL meaning the empty frontier.

CREATE FUNCTION mzcoord.lag_frontier(
    upper bigint,
    lag_ms bigint,
    granularity_ms bigint DEFAULT 1000)
RETURNS bigint
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'mzcoord_lag_frontier';

COMMENT ON FUNCTION mzcoord.lag_frontier(bigint, bigint, bigint) IS
'Since that a retain-history (lag) read policy asks for at the given upper; NULL upper is the empty frontier';

REVOKE ALL ON FUNCTION mzcoord.lag_frontier(bigint, bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.lag_frontier(bigint, bigint, bigint) TO PUBLIC;

CREATE FUNCTION mzcoord.largest_not_in_advance_of_upper(upper bigint)
RETURNS bigint
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'mzcoord_largest_not_in_advance_of_upper';

COMMENT ON FUNCTION mzcoord.largest_not_in_advance_of_upper(bigint) IS
'Latest time complete at the given upper: upper - 1, or 9223372036854775807 for NULL (the empty frontier)';

REVOKE ALL ON FUNCTION mzcoord.largest_not_in_advance_of_upper(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.largest_not_in_advance_of_upper(bigint) TO PUBLIC;

CREATE FUNCTION mzcoord.determine_timestamp(request jsonb)
RETURNS jsonb
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'mzcoord_determine_timestamp';

COMMENT ON FUNCTION mzcoord.determine_timestamp(jsonb) IS
'Timestamp selection for a read over inputs with given sinces and uppers, with the binding constraints';

REVOKE ALL ON FUNCTION mzcoord.determine_timestamp(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.determine_timestamp(jsonb) TO PUBLIC;

CREATE FUNCTION mzcoord.select_as_ofs(request jsonb)
RETURNS jsonb
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'mzcoord_select_as_ofs';

COMMENT ON FUNCTION mzcoord.select_as_ofs(jsonb) IS
'As-of selection for maintained dataflows (indexes, materialized views) from storage frontiers';

REVOKE ALL ON FUNCTION mzcoord.select_as_ofs(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.select_as_ofs(jsonb) TO PUBLIC;
