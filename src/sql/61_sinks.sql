
-- Part 61: sinks and change streams (issue 12).  A sink's relation receives
-- the consolidated updates of its input, exactly once, as the coordinator
-- exports them (src/compute/export.c); mzcoord.changes() reads the same
-- stream of any readable collection between two times
-- (src/storage/changes.c).  See doc/sinks.md.

-- The options of each sink, recorded by mzcoord.create_sink() in the
-- transaction that creates it.  A sink without a row (restored from a
-- catalog of an older version) has the defaults: snapshot true.
CREATE TABLE mzcoord.sink_options (
    item_id  text NOT NULL,
    snapshot boolean NOT NULL DEFAULT true,
    CONSTRAINT sink_options_pkey PRIMARY KEY (item_id),
    CONSTRAINT sink_options_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) ON DELETE CASCADE
);

COMMENT ON TABLE mzcoord.sink_options IS
'Options of each sink, fixed at its creation';
COMMENT ON COLUMN mzcoord.sink_options.snapshot IS
'Whether the first export writes the input''s contents at the as-of (at mz_timestamp = as-of) before the updates after it';

REVOKE ALL ON TABLE mzcoord.sink_options FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord.sink_options TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('mzcoord.sink_options', '');

-- Called by mzcoord.create_sink() once the sink's item exists.
CREATE FUNCTION mzcoord._catalog_set_sink_options(p_item text,
                                                  p_snapshot boolean)
RETURNS void LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO mzcoord.sink_options (item_id, snapshot)
    VALUES (p_item, p_snapshot);
END
$$;

REVOKE ALL ON FUNCTION mzcoord._catalog_set_sink_options(text, boolean)
FROM PUBLIC;

-- The guard of a sink's relation: only the export inserts rows, consumers
-- only delete them (src/compute/export.c).  An internal statement trigger,
-- installed by mzcoord._create_sink() and again by restore_after_dump().
CREATE FUNCTION mzcoord._sink_guard()
RETURNS trigger LANGUAGE C
AS 'MODULE_PATHNAME', 'mzcoord_sink_guard';

CREATE FUNCTION mzcoord._sink_install_guard(rel regclass)
RETURNS integer LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_sink_install_guard';

REVOKE ALL ON FUNCTION
    mzcoord._sink_guard(),
    mzcoord._sink_install_guard(regclass)
FROM PUBLIC;

-- The consolidated updates of a collection with after < ts <= upto.
CREATE FUNCTION mzcoord.changes(rel anyelement, after bigint, upto bigint)
RETURNS TABLE (mz_timestamp bigint, mz_diff bigint, "row" anyelement)
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_changes';

COMMENT ON FUNCTION mzcoord.changes(anyelement, bigint, bigint) IS
'Consolidated updates (row, time, diff) of a table, source or materialized view with after < time <= upto, in time order (changes(NULL::rel, after, upto)); needs after >= since, waits until upto < upper, holds the relation at after until the transaction ends';

REVOKE ALL ON FUNCTION mzcoord.changes(anyelement, bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.changes(anyelement, bigint, bigint) TO PUBLIC;
