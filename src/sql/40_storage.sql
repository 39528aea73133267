-- Part 40: the data plane of tables and sources (issue 6): history
-- relations, capture of table writes, source appends, AS OF reads and
-- physical compaction.  See src/storage/ (history.h, capture.c, read.c).

-- One row per table or source collection: its relation, its history
-- relation mzcoord.history_u<N>, and how far that history is compacted.
-- Written by mzcoord's own code only; deleted when its history is dropped
-- (with its relation: DROP TABLE, mzcoord.drop(), DROP SCHEMA ...).
CREATE TABLE mzcoord.storage (
    global_id      text NOT NULL,
    relation       regclass NOT NULL,
    kind           text NOT NULL,
    history        regclass NOT NULL,
    compacted      bigint NOT NULL,
    compacted_rows bigint NOT NULL,
    compacted_at   timestamptz NOT NULL DEFAULT now(),
    compactions    bigint NOT NULL DEFAULT 0,
    CONSTRAINT storage_pkey PRIMARY KEY (global_id),
    CONSTRAINT storage_relation_key UNIQUE (relation),
    CONSTRAINT storage_history_key UNIQUE (history),
    CONSTRAINT storage_kind_check CHECK (kind IN ('table', 'source', 'materialized_view')),
    CONSTRAINT storage_compacted_check CHECK (compacted >= 0)
);

COMMENT ON TABLE mzcoord.storage IS
'History relation of every table and source collection, and its compaction state';
COMMENT ON COLUMN mzcoord.storage.history IS
'The history: one column c<k> per column k of the relation, then ts and diff';
COMMENT ON COLUMN mzcoord.storage.compacted IS
'Compacted frontier: the history has no update at a time below it';
COMMENT ON COLUMN mzcoord.storage.compacted_rows IS
'Rows the last compaction left at the compacted frontier (registration: the rows recorded)';

REVOKE ALL ON TABLE mzcoord.storage FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord.storage TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Internal functions
-- ---------------------------------------------------------------------------

-- Called by the catalog implications (mzcoord._install_collection) for every
-- new collection; tables and sources get their history here.
CREATE FUNCTION mzcoord._storage_install(global_id text, kind text,
                                         relation regclass, since bigint)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_storage_install';

-- The trigger function of the capture triggers of registered tables.
CREATE FUNCTION mzcoord._capture()
RETURNS trigger
LANGUAGE C
AS 'MODULE_PATHNAME', 'mzcoord_capture';

-- Was a row written by the current transaction?  A transaction moving its
-- updates to its commit timestamp selects its own rows with it.
CREATE FUNCTION mzcoord._row_is_own(xid)
RETURNS boolean
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED
AS 'MODULE_PATHNAME', 'mzcoord_row_is_own';
REVOKE ALL ON FUNCTION mzcoord._row_is_own(xid) FROM PUBLIC;

-- The trigger function that keeps a source's relation read-only.
CREATE FUNCTION mzcoord._source_guard()
RETURNS trigger
LANGUAGE C
AS 'MODULE_PATHNAME', 'mzcoord_source_guard';

-- Histories follow the columns of their relations; registered tables stay
-- out of inheritance.
CREATE FUNCTION mzcoord._storage_on_ddl()
RETURNS event_trigger
LANGUAGE C
AS 'MODULE_PATHNAME', 'mzcoord_storage_on_ddl';

-- For compaction: the bytes of a list of values (rows are consolidated by
-- their binary image), and any value of a group.
CREATE FUNCTION mzcoord._row_image(VARIADIC "any")
RETURNS bytea
LANGUAGE C IMMUTABLE
AS 'MODULE_PATHNAME', 'mzcoord_row_image';

CREATE FUNCTION mzcoord._any_transfn(anyelement, anyelement)
RETURNS anyelement
LANGUAGE C IMMUTABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_any_transfn';

CREATE AGGREGATE mzcoord._any(anyelement) (
    SFUNC = mzcoord._any_transfn,
    STYPE = anyelement
);

CREATE FUNCTION mzcoord._storage_problems(
    OUT check_name text, OUT object text, OUT detail text)
RETURNS SETOF record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_storage_problems';

REVOKE ALL ON FUNCTION
    mzcoord._storage_install(text, text, regclass, bigint),
    mzcoord._capture(),
    mzcoord._source_guard(),
    mzcoord._storage_on_ddl(),
    mzcoord._row_image("any"),
    mzcoord._any_transfn(anyelement, anyelement),
    mzcoord._any(anyelement),
    mzcoord._storage_problems()
FROM PUBLIC;
-- Everybody may run check_consistency(), which reads _check_storage.
GRANT EXECUTE ON FUNCTION mzcoord._storage_problems() TO PUBLIC;

-- A history goes with its relation (an automatic dependency); its row here
-- goes with it.
CREATE FUNCTION mzcoord._storage_on_drop()
RETURNS event_trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM mzcoord._extension_guard();
    DELETE FROM mzcoord.storage s
     USING pg_event_trigger_dropped_objects() d
     WHERE d.classid = 'pg_class'::regclass AND d.objsubid = 0
       AND d.objid = s.history::oid;
END
$$;

REVOKE ALL ON FUNCTION mzcoord._storage_on_drop() FROM PUBLIC;

CREATE EVENT TRIGGER mzcoord_storage_drop ON sql_drop
    EXECUTE FUNCTION mzcoord._storage_on_drop();

CREATE EVENT TRIGGER mzcoord_storage_columns ON ddl_command_end
    WHEN TAG IN ('ALTER TABLE', 'CREATE TABLE')
    EXECUTE FUNCTION mzcoord._storage_on_ddl();

-- ---------------------------------------------------------------------------
-- Reads, sources and compaction
-- ---------------------------------------------------------------------------

CREATE FUNCTION mzcoord.read_at(rel anyelement, at bigint)
RETURNS SETOF anyelement
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_read_at';

COMMENT ON FUNCTION mzcoord.read_at(anyelement, bigint) IS
'Contents of a table, source or materialized view at a time, with multiplicities (read_at(NULL::rel, ts)); holds the relation at that time until the transaction ends';

-- Two signatures rather than a default: a polymorphic parameter cannot
-- default to NULL.
CREATE FUNCTION mzcoord.append(source anyelement, at bigint,
                               inserts anyarray, retractions anyarray)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_append';

COMMENT ON FUNCTION mzcoord.append(anyelement, bigint, anyarray, anyarray) IS
'Appends insertions and retractions to a source at a time at or after its upper';

CREATE FUNCTION mzcoord.append(source anyelement, at bigint, inserts anyarray)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_append';

COMMENT ON FUNCTION mzcoord.append(anyelement, bigint, anyarray) IS
'Appends insertions to a source at a time at or after its upper';

CREATE FUNCTION mzcoord.advance_upper(source regclass, upper bigint)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_advance_upper';

COMMENT ON FUNCTION mzcoord.advance_upper(regclass, bigint) IS
'Makes every time of a source before the given upper complete, and shows its contents at upper - 1 in its relation';

CREATE FUNCTION mzcoord.compact(rel regclass, OUT compacted bigint,
                                OUT rows_in bigint, OUT rows_out bigint)
RETURNS record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_compact';

COMMENT ON FUNCTION mzcoord.compact(regclass) IS
'Compacts the history of a table or source up to its since now, whatever the compaction policy';

REVOKE ALL ON FUNCTION
    mzcoord.read_at(anyelement, bigint),
    mzcoord.append(anyelement, bigint, anyarray, anyarray),
    mzcoord.append(anyelement, bigint, anyarray),
    mzcoord.advance_upper(regclass, bigint),
    mzcoord.compact(regclass)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    mzcoord.read_at(anyelement, bigint),
    mzcoord.append(anyelement, bigint, anyarray, anyarray),
    mzcoord.append(anyelement, bigint, anyarray),
    mzcoord.advance_upper(regclass, bigint),
    mzcoord.compact(regclass)
TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Consistency (see mzcoord.check_consistency())
-- ---------------------------------------------------------------------------

CREATE VIEW mzcoord._check_storage AS
SELECT check_name, object, detail FROM mzcoord._storage_problems();

COMMENT ON VIEW mzcoord._check_storage IS
'Data plane invariants (histories, capture, compaction, contents); one row per violation';

-- A history relation that no collection owns (left behind by a failed
-- drop, a restore, or a hand-made table in the extension's schema).
CREATE VIEW mzcoord._check_storage_orphans AS
SELECT 'history without collection'::text AS check_name,
       c.relname::text AS object,
       format('relation mzcoord.%I has no mzcoord.storage row', c.relname) AS detail
  FROM pg_catalog.pg_class c
 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'mzcoord'::pg_catalog.regnamespace
   AND c.relkind OPERATOR(pg_catalog.=) 'r'
   AND c.relname OPERATOR(pg_catalog.~) '^history_u[0-9]+$'
   AND NOT EXISTS (SELECT 1 FROM mzcoord.storage s
                    WHERE s.history OPERATOR(pg_catalog.=) c.oid);

REVOKE ALL ON TABLE mzcoord._check_storage_orphans FROM PUBLIC;

REVOKE ALL ON TABLE mzcoord._check_storage FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord._check_storage TO PUBLIC;
