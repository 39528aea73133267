-- mzcoord install script, assembled from the fragments in src/sql, in name
-- order.  Part 00: preload check and worker status.
\echo Use "CREATE EXTENSION mzcoord" to load this file. \quit

-- Refuses to go on unless the library was preloaded: everything below needs
-- the shared memory and the worker that only preloading provides.
CREATE FUNCTION mzcoord.check_preloaded()
RETURNS void
LANGUAGE C STRICT
AS 'MODULE_PATHNAME', 'mzcoord_check_preloaded';

SELECT mzcoord.check_preloaded();

REVOKE ALL ON FUNCTION mzcoord.check_preloaded() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.check_preloaded() TO PUBLIC;

GRANT USAGE ON SCHEMA mzcoord TO PUBLIC;

CREATE FUNCTION mzcoord.worker_status(
    OUT state text,
    OUT database text,
    OUT launcher_pid integer,
    OUT pid integer,
    OUT started_at timestamptz,
    OUT ticks bigint,
    OUT last_tick_at timestamptz,
    OUT last_tick_ms double precision,
    OUT starts bigint,
    OUT last_error text,
    OUT last_error_at timestamptz,
    OUT total_tick_ms double precision)
RETURNS record
LANGUAGE C STRICT VOLATILE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'mzcoord_worker_status';

COMMENT ON FUNCTION mzcoord.worker_status() IS
'State of the mzcoord coordinator background worker';

REVOKE ALL ON FUNCTION mzcoord.worker_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.worker_status() TO PUBLIC;
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
-- Part 20: the catalog plane (issue 4).  The durable catalog tables, the
-- views over them and their privileges.  Functions, triggers and the catalog
-- implications follow in 20_catalog_functions.sql.
--
-- The catalog is the authority: what exists (mzcoord.items), what each item
-- reads (mzcoord.item_inputs) and the collections that hold each item's
-- history (mzcoord.collections).  mzcoord.items is the only table whose
-- changes have implications; the other tables are derived from it by the
-- implication trigger, in the same statement.  Everybody may read the
-- catalog; only the extension's own code (running as the extension owner)
-- and superusers may change it.

-- User ids "u<N>" of items and collections (global ids) come from one
-- durable counter.  Gaps are allowed (a rolled back creation consumes a
-- value); a value is never handed out twice.
CREATE SEQUENCE mzcoord.id_seq AS bigint MINVALUE 1 NO CYCLE;

-- Numbers the catalog changes (batches) in mzcoord.implication_log.
CREATE SEQUENCE mzcoord.implication_batch_seq AS bigint MINVALUE 1 NO CYCLE;

CREATE TABLE mzcoord.items (
    id             text NOT NULL DEFAULT ('u' || nextval('mzcoord.id_seq')),
    kind           text NOT NULL,
    schema_name    name NOT NULL,
    name           name NOT NULL,
    relation       regclass,
    owner          regrole NOT NULL,
    retain_history interval,
    refresh        text[],
    definition     text,
    on_item        text,
    index_keys     text[],
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT items_pkey PRIMARY KEY (id),
    CONSTRAINT items_relation_key UNIQUE (relation),
    CONSTRAINT items_name_key UNIQUE (schema_name, name),
    CONSTRAINT items_on_item_fkey FOREIGN KEY (on_item)
        REFERENCES mzcoord.items (id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT items_id_check CHECK (id ~ '^u[1-9][0-9]*$'),
    CONSTRAINT items_kind_check
        CHECK (kind IN ('table', 'source', 'materialized_view', 'index', 'sink')),
    CONSTRAINT items_definition_check
        CHECK ((definition IS NOT NULL) = (kind IN ('source', 'materialized_view'))),
    CONSTRAINT items_refresh_check
        CHECK (refresh IS NULL OR kind = 'materialized_view'),
    CONSTRAINT items_on_item_check
        CHECK ((on_item IS NOT NULL) = (kind IN ('index', 'sink'))),
    CONSTRAINT items_index_keys_check
        CHECK ((index_keys IS NOT NULL) = (kind = 'index')),
    CONSTRAINT items_retain_history_check
        CHECK (retain_history IS NULL OR kind <> 'sink')
);

COMMENT ON TABLE mzcoord.items IS
'Catalog items (tables, sources, materialized views, indexes, sinks); changes to this table have implications';
COMMENT ON COLUMN mzcoord.items.id IS 'Item id, u<N>';
COMMENT ON COLUMN mzcoord.items.kind IS 'table, source, materialized_view, index or sink';
COMMENT ON COLUMN mzcoord.items.schema_name IS 'Schema of the item''s relation';
COMMENT ON COLUMN mzcoord.items.name IS 'Name of the item''s relation';
COMMENT ON COLUMN mzcoord.items.relation IS
'The item''s relation; for a table given at registration, for the other kinds created by the implication (NULL only until then)';
COMMENT ON COLUMN mzcoord.items.owner IS 'Owner of the item (the owner of its relation)';
COMMENT ON COLUMN mzcoord.items.retain_history IS
'Retain history window of the item''s collections; NULL means the default of 1 second';
COMMENT ON COLUMN mzcoord.items.refresh IS
'Refresh schedule of a materialized view (canonical clauses); NULL means continual maintenance';
COMMENT ON COLUMN mzcoord.items.definition IS
'Source: its column definitions; materialized view: its query, schema-qualified';
COMMENT ON COLUMN mzcoord.items.on_item IS 'Index: the indexed item; sink: the exported item';
COMMENT ON COLUMN mzcoord.items.index_keys IS 'Index: its key columns';

CREATE TABLE mzcoord.collections (
    global_id  text NOT NULL,
    item_id    text NOT NULL,
    version    integer NOT NULL DEFAULT 0,
    primary_id text,
    as_of      bigint NOT NULL,
    since      bigint,
    upper      bigint,
    CONSTRAINT collections_pkey PRIMARY KEY (global_id),
    CONSTRAINT collections_item_version_key UNIQUE (item_id, version),
    CONSTRAINT collections_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT collections_primary_id_fkey FOREIGN KEY (primary_id)
        REFERENCES mzcoord.collections (global_id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT collections_global_id_check CHECK (global_id ~ '^u[1-9][0-9]*$'),
    CONSTRAINT collections_version_check CHECK (version >= 0),
    CONSTRAINT collections_as_of_check CHECK (as_of >= 0),
    CONSTRAINT collections_since_check CHECK (since >= 0),
    CONSTRAINT collections_upper_check CHECK (upper >= 0)
);

COMMENT ON TABLE mzcoord.collections IS
'Collections (versions) of the catalog items with their durable frontiers; derived from mzcoord.items';
COMMENT ON COLUMN mzcoord.collections.primary_id IS
'NULL for the primary (current) version of an item; for an alias, the global id of its primary';
COMMENT ON COLUMN mzcoord.collections.as_of IS
'The since chosen when the collection was created (registration time, creation time or as-of)';
COMMENT ON COLUMN mzcoord.collections.since IS
'Durable since, persisted by the controller; NULL means the empty frontier';
COMMENT ON COLUMN mzcoord.collections.upper IS
'Durable upper, persisted by the controller; NULL means the empty frontier';

CREATE TABLE mzcoord.item_inputs (
    item_id         text NOT NULL,
    input_global_id text NOT NULL,
    input_item_id   text NOT NULL,
    CONSTRAINT item_inputs_pkey PRIMARY KEY (item_id, input_global_id),
    CONSTRAINT item_inputs_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT item_inputs_input_global_id_fkey FOREIGN KEY (input_global_id)
        REFERENCES mzcoord.collections (global_id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT item_inputs_input_item_id_fkey FOREIGN KEY (input_item_id)
        REFERENCES mzcoord.items (id) DEFERRABLE INITIALLY DEFERRED
);

CREATE INDEX item_inputs_input_global_id_idx
    ON mzcoord.item_inputs (input_global_id);
CREATE INDEX item_inputs_input_item_id_idx
    ON mzcoord.item_inputs (input_item_id);

COMMENT ON TABLE mzcoord.item_inputs IS
'Collections each item reads: the logical inputs of a materialized view, the indexed item of an index, the exported item of a sink';

CREATE TABLE mzcoord.implication_log (
    seq       bigint GENERATED ALWAYS AS IDENTITY,
    batch     bigint NOT NULL,
    xid       xid8 NOT NULL DEFAULT pg_current_xact_id(),
    logged_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    item_id   text NOT NULL,
    action    text NOT NULL,
    detail    jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT implication_log_pkey PRIMARY KEY (seq)
);

CREATE INDEX implication_log_item_id_idx ON mzcoord.implication_log (item_id);

COMMENT ON TABLE mzcoord.implication_log IS
'Append-only log of every catalog implication, in the order applied';

CREATE VIEW mzcoord.logical_inputs AS
SELECT ii.item_id,
       i.relation AS item,
       i.kind,
       ii.input_global_id,
       ii.input_item_id,
       ip.relation AS input,
       ip.kind AS input_kind
  FROM mzcoord.item_inputs ii
  JOIN mzcoord.items i ON i.id = ii.item_id
  JOIN mzcoord.items ip ON ip.id = ii.input_item_id;

COMMENT ON VIEW mzcoord.logical_inputs IS
'What each item reads, with relations and kinds';

REVOKE ALL ON TABLE mzcoord.items, mzcoord.collections, mzcoord.item_inputs,
    mzcoord.implication_log, mzcoord.logical_inputs FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord.items, mzcoord.collections, mzcoord.item_inputs,
    mzcoord.implication_log, mzcoord.logical_inputs TO PUBLIC;
REVOKE ALL ON SEQUENCE mzcoord.id_seq, mzcoord.implication_batch_seq FROM PUBLIC;
-- Part 20 (continued): the catalog plane's functions.
--
--   * internal C helpers (validation and query analysis: src/catalog/catalog.c,
--     schedule.c, coldefs.c and query.c);
--   * the catalog implications: the statement triggers on mzcoord.items
--     (batching in src/catalog/trigger.c) call _apply_implications
--     (src/catalog/apply.c), which folds and orders the change in
--     the core (src/core/implications.c) and runs the PL/pgSQL leaves
--     below, one per step, which issue the DDL;
--   * the internal catalog writers the DDL functions call;
--   * the DDL functions (src/catalog/ddl.c);
--   * the triggers and event triggers;
--   * mzcoord._catalog_problems(), the catalog part of check_consistency().
--
-- Every internal function pins search_path and is not executable by PUBLIC.
-- The entry points that change the catalog on behalf of others run as the
-- extension owner (SECURITY DEFINER).

-- ---------------------------------------------------------------------------
-- Internal C helpers
-- ---------------------------------------------------------------------------

-- The number of a global id (u123 is 123): ids order as numbers.
CREATE FUNCTION mzcoord._gid_num(global_id text)
RETURNS bigint LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'mzcoord_sql_gid_num';

CREATE FUNCTION mzcoord._retain_history_ms(retain_history interval)
RETURNS bigint LANGUAGE C IMMUTABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_retain_history_ms';

CREATE FUNCTION mzcoord._refresh_canonical(refresh text[])
RETURNS text[] LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_refresh_canonical';

CREATE FUNCTION mzcoord._refresh_first(refresh text[], as_of bigint)
RETURNS bigint LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_refresh_first';

CREATE FUNCTION mzcoord._source_columns(columns text)
RETURNS text LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_source_columns';

CREATE FUNCTION mzcoord._analyze_materialized_view(definition text,
    OUT columns text, OUT inputs text[], OUT input_items text[],
    OUT relations oid[], OUT functions oid[], OUT operators oid[])
RETURNS record LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_analyze_materialized_view';

CREATE FUNCTION mzcoord._query_relation_names(query text)
RETURNS text[] LANGUAGE C IMMUTABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_query_relation_names';

CREATE FUNCTION mzcoord._record_dependencies(depender regclass,
    relations oid[], functions oid[], operators oid[])
RETURNS void LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_sql_record_dependencies';

CREATE FUNCTION mzcoord._index_key_list(rel regclass, keys text[])
RETURNS text LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_index_key_list';

CREATE FUNCTION mzcoord._sink_columns(rel regclass)
RETURNS text LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_sink_columns';

CREATE FUNCTION mzcoord._relation_columns(rel regclass)
RETURNS text LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_relation_columns';

CREATE FUNCTION mzcoord._check_table(rel regclass)
RETURNS void LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_check_table';

CREATE FUNCTION mzcoord._check_new_relation(schema_name name, name name)
RETURNS void LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_check_new_relation';

REVOKE ALL ON FUNCTION
    mzcoord._gid_num(text),
    mzcoord._retain_history_ms(interval),
    mzcoord._refresh_canonical(text[]),
    mzcoord._refresh_first(text[], bigint),
    mzcoord._source_columns(text),
    mzcoord._analyze_materialized_view(text),
    mzcoord._query_relation_names(text),
    mzcoord._record_dependencies(regclass, oid[], oid[], oid[]),
    mzcoord._index_key_list(regclass, text[]),
    mzcoord._sink_columns(regclass),
    mzcoord._relation_columns(regclass),
    mzcoord._check_table(regclass),
    mzcoord._check_new_relation(name, name)
FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- The implication log
-- ---------------------------------------------------------------------------

CREATE FUNCTION mzcoord._log(p_batch bigint, p_item text, p_action text,
                             p_detail jsonb)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO mzcoord.implication_log (batch, item_id, action, detail)
    VALUES (p_batch, p_item, p_action, p_detail);
END
$$;

CREATE FUNCTION mzcoord._log_append_only()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'mzcoord.implication_log is append-only'
        USING ERRCODE = 'feature_not_supported';
END
$$;

CREATE TRIGGER implication_log_append_only
    BEFORE UPDATE OR DELETE ON mzcoord.implication_log
    FOR EACH ROW EXECUTE FUNCTION mzcoord._log_append_only();
CREATE TRIGGER implication_log_no_truncate
    BEFORE TRUNCATE ON mzcoord.implication_log
    FOR EACH STATEMENT EXECUTE FUNCTION mzcoord._log_append_only();

REVOKE ALL ON FUNCTION
    mzcoord._log(bigint, text, text, jsonb),
    mzcoord._log_append_only()
FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- Creating an item: relations and collections
-- ---------------------------------------------------------------------------

-- The relation of a new source, materialized view or sink, owned by the
-- item's owner; records it in the item row.
CREATE FUNCTION mzcoord._create_relation(p_item mzcoord.items, p_columns text)
RETURNS regclass LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_rel regclass;
BEGIN
    PERFORM mzcoord._check_new_relation(p_item.schema_name, p_item.name);
    EXECUTE format('CREATE TABLE %I.%I (%s)',
                   p_item.schema_name, p_item.name, p_columns);
    v_rel := format('%I.%I', p_item.schema_name, p_item.name)::regclass;
    EXECUTE format('ALTER TABLE %s OWNER TO %s', v_rel, p_item.owner);
    UPDATE mzcoord.items SET relation = v_rel WHERE id = p_item.id;
    RETURN v_rel;
END
$$;

-- The collection of a new item (version 0, global id = item id), what it
-- reads, and the controller's creation, staged for commit.
CREATE FUNCTION mzcoord._install_collection(p_batch bigint,
    p_item mzcoord.items, p_rel regclass, p_since bigint, p_upper bigint,
    p_inputs text[], p_input_items text[], p_detail jsonb)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO mzcoord.collections
           (global_id, item_id, version, primary_id, as_of, since, upper)
    VALUES (p_item.id, p_item.id, 0, NULL, p_since, p_since, p_upper);
    -- Its compaction bound starts at its since, with its catalog row; it
    -- goes with that row (ON DELETE CASCADE), so a batch that creates
    -- before it drops keeps both (src/sql/35_authority.sql).
    PERFORM mzcoord._create_bound(p_item.id, p_item.kind, p_since);
    INSERT INTO mzcoord.item_inputs (item_id, input_global_id, input_item_id)
    SELECT p_item.id, u.gid, u.item
      FROM unnest(p_inputs, p_input_items) AS u(gid, item);
    -- A maintained object needs its logical inputs from its as-of on,
    -- recorded before it is installed (refused below an input's bound, D3).
    IF p_item.kind IN ('materialized_view', 'index', 'sink') THEN
        PERFORM mzcoord._record_requirements(p_item.id, p_inputs, p_since);
    END IF;
    PERFORM mzcoord._stage_collection(p_item.id, p_item.id, p_rel, p_item.kind,
                                      p_since, p_upper, p_inputs);
    -- Tables and sources get their history (src/storage/storage.c).
    PERFORM mzcoord._storage_install(p_item.id, p_item.kind, p_rel, p_since);
    PERFORM mzcoord._log(p_batch, p_item.id, 'create',
        jsonb_build_object('kind', p_item.kind,
                           'global_id', p_item.id,
                           'relation', format('%I.%I', p_item.schema_name, p_item.name),
                           'since', p_since,
                           'upper', p_upper,
                           'inputs', to_jsonb(p_inputs))
        || coalesce(p_detail, '{}'));
END
$$;

-- A table: an existing relation, registered at a write timestamp of this
-- transaction; its since starts there (S4) and its registration write (the
-- rows it already has) completes at that time.
CREATE FUNCTION mzcoord._create_table(p_batch bigint, p_item mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_rel   regclass := p_item.relation;
    v_nsp   name;
    v_name  name;
    v_owner oid;
    v_since bigint;
BEGIN
    IF v_rel IS NULL THEN
        v_rel := to_regclass(format('%I.%I', p_item.schema_name, p_item.name));
        IF v_rel IS NULL THEN
            RAISE EXCEPTION 'relation "%.%" does not exist',
                p_item.schema_name, p_item.name
                USING ERRCODE = 'undefined_table';
        END IF;
    END IF;
    PERFORM mzcoord._check_table(v_rel);
    SELECT n.nspname, c.relname, c.relowner INTO v_nsp, v_name, v_owner
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = v_rel;
    IF (v_nsp, v_name, v_owner) IS DISTINCT FROM
       (p_item.schema_name, p_item.name, p_item.owner::oid) THEN
        RAISE EXCEPTION 'table item %.% does not match table %',
            quote_ident(p_item.schema_name), quote_ident(p_item.name), v_rel
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The schema, name and owner of a table item are those of its table.';
    END IF;
    IF p_item.relation IS NULL THEN
        UPDATE mzcoord.items SET relation = v_rel WHERE id = p_item.id;
    END IF;
    v_since := mzcoord._write_ts();
    PERFORM mzcoord._install_collection(p_batch, p_item, v_rel,
                                        v_since, v_since + 1, '{}', '{}', NULL);
END
$$;

-- A source: a new relation with the given columns, fed later by timestamped
-- appends; empty (upper = since) at its creation time.
CREATE FUNCTION mzcoord._create_source(p_batch bigint, p_item mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_rel   regclass;
    v_since bigint;
BEGIN
    v_rel := mzcoord._create_relation(p_item,
                                      mzcoord._source_columns(p_item.definition));
    -- On the extension: DROP EXTENSION needs CASCADE while it exists.
    PERFORM mzcoord._record_dependencies(v_rel, NULL, NULL, NULL);
    v_since := mzcoord._creation_ts();
    PERFORM mzcoord._install_collection(p_batch, p_item, v_rel,
                                        v_since, v_since, '{}', '{}', NULL);
END
$$;

-- A materialized view: its storage table has the query's columns; it reads
-- its logical inputs, holds them, and starts at their least valid read
-- (reference 2.7), rounded up to its first refresh if it has a schedule.
CREATE FUNCTION mzcoord._create_materialized_view(p_batch bigint,
                                                  p_item mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_info   record;
    v_rel    regclass;
    v_as_of  bigint;
    v_detail jsonb := '{}';
BEGIN
    SELECT * INTO v_info
      FROM mzcoord._analyze_materialized_view(p_item.definition);
    v_rel := mzcoord._create_relation(p_item, v_info.columns);
    PERFORM mzcoord._record_dependencies(v_rel, v_info.relations,
                                         v_info.functions, v_info.operators);
    IF cardinality(v_info.inputs) = 0 THEN
        -- Nothing to read: it starts at its creation time, like a source.
        v_as_of := mzcoord._creation_ts();
    ELSE
        -- Not before any input's compaction bound (D6): locked, they stay.
        v_as_of := greatest(mzcoord._lock_input_bounds(v_info.inputs),
                            mzcoord._hold_inputs(v_info.inputs));
    END IF;
    IF p_item.refresh IS NOT NULL THEN
        v_detail := jsonb_build_object('least_valid_read', v_as_of,
                                       'refresh', to_jsonb(p_item.refresh));
        v_as_of := mzcoord._refresh_first(p_item.refresh, v_as_of);
    END IF;
    PERFORM mzcoord._install_collection(p_batch, p_item, v_rel, v_as_of, v_as_of,
                                        v_info.inputs, v_info.input_items,
                                        v_detail);
END
$$;

-- The item an index or a sink reads, with its primary collection.
CREATE FUNCTION mzcoord._read_item(p_item mzcoord.items,
                                   OUT item mzcoord.items, OUT global_id text)
RETURNS record LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    SELECT * INTO item FROM mzcoord.items WHERE id = p_item.on_item;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'item % read by % %.% does not exist',
            p_item.on_item, replace(p_item.kind, '_', ' '),
            quote_ident(p_item.schema_name), quote_ident(p_item.name)
            USING ERRCODE = 'undefined_object';
    END IF;
    IF item.kind NOT IN ('table', 'source', 'materialized_view') THEN
        RAISE EXCEPTION 'cannot create % %.% on % %.%',
            replace(p_item.kind, '_', ' '), p_item.schema_name, p_item.name,
            replace(item.kind, '_', ' '), item.schema_name, item.name
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'Only tables, sources and materialized views can be read.';
    END IF;
    SELECT c.global_id INTO global_id
      FROM mzcoord.collections c
     WHERE c.item_id = item.id AND c.primary_id IS NULL;
    IF item.relation IS NULL OR global_id IS NULL THEN
        RAISE EXCEPTION 'item %.% has no collection yet',
            quote_ident(item.schema_name), quote_ident(item.name)
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
END
$$;

-- An index: a PostgreSQL index on the indexed item's relation, in its
-- schema and owned by its owner; it reads that item from its as-of.
CREATE FUNCTION mzcoord._create_index(p_batch bigint, p_item mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_on    record;
    v_nsp   name;
    v_owner oid;
    v_keys  text;
    v_rel   regclass;
    v_as_of bigint;
BEGIN
    v_on := mzcoord._read_item(p_item);
    SELECT n.nspname, c.relowner INTO v_nsp, v_owner
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = (v_on.item).relation;
    IF v_nsp <> p_item.schema_name OR v_owner <> p_item.owner::oid THEN
        RAISE EXCEPTION 'index %.% must be in the schema of %, and owned by its owner',
            quote_ident(p_item.schema_name), quote_ident(p_item.name),
            (v_on.item).relation
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_keys := mzcoord._index_key_list((v_on.item).relation, p_item.index_keys);
    PERFORM mzcoord._check_new_relation(p_item.schema_name, p_item.name);
    EXECUTE format('CREATE INDEX %I ON %s (%s)',
                   p_item.name, (v_on.item).relation, v_keys);
    v_rel := format('%I.%I', p_item.schema_name, p_item.name)::regclass;
    -- On the extension: DROP EXTENSION needs CASCADE while it exists.
    PERFORM mzcoord._record_dependencies(v_rel, NULL, NULL, NULL);
    UPDATE mzcoord.items SET relation = v_rel WHERE id = p_item.id;
    v_as_of := greatest(mzcoord._lock_input_bounds(ARRAY[v_on.global_id]),
                        mzcoord._hold_inputs(ARRAY[v_on.global_id]));
    PERFORM mzcoord._install_collection(p_batch, p_item, v_rel, v_as_of, v_as_of,
                                        ARRAY[v_on.global_id],
                                        ARRAY[(v_on.item).id],
                                        jsonb_build_object('keys', to_jsonb(p_item.index_keys)));
END
$$;

-- A sink: a relation receiving the updates of the exported item (its
-- columns, then mz_timestamp and mz_diff); it reads that item from its
-- as-of, and its upper is its export progress.
CREATE FUNCTION mzcoord._create_sink(p_batch bigint, p_item mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_on    record;
    v_rel   regclass;
    v_as_of bigint;
BEGIN
    v_on := mzcoord._read_item(p_item);
    v_rel := mzcoord._create_relation(p_item,
                                      mzcoord._sink_columns((v_on.item).relation));
    PERFORM mzcoord._record_dependencies(v_rel,
                                         ARRAY[(v_on.item).relation::oid],
                                         NULL, NULL);
    v_as_of := greatest(mzcoord._lock_input_bounds(ARRAY[v_on.global_id]),
                        mzcoord._hold_inputs(ARRAY[v_on.global_id]));
    PERFORM mzcoord._install_collection(p_batch, p_item, v_rel, v_as_of, v_as_of,
                                        ARRAY[v_on.global_id],
                                        ARRAY[(v_on.item).id], NULL);
END
$$;

-- The read policy of every collection of a created item (I5: only once
-- every creation of the batch is done).
CREATE FUNCTION mzcoord._init_policy(p_batch bigint, p_item mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_ms  bigint := mzcoord._retain_history_ms(p_item.retain_history);
    v_gid text;
BEGIN
    FOR v_gid IN
        SELECT c.global_id FROM mzcoord.collections c
         WHERE c.item_id = p_item.id ORDER BY c.version
    LOOP
        PERFORM mzcoord._stage_policy(v_gid, v_ms);
        PERFORM mzcoord._log(p_batch, p_item.id, 'init_policy',
            jsonb_build_object('kind', p_item.kind,
                               'relation', format('%I.%I', p_item.schema_name, p_item.name),
                               'global_id', v_gid,
                               'retain_history_ms', coalesce(v_ms, 1000)));
    END LOOP;
END
$$;

-- ---------------------------------------------------------------------------
-- Altering and dropping an item
-- ---------------------------------------------------------------------------

-- Which changes of an item row have implications: retain history (a new
-- read policy, I4), the name and the owner (kept in line with the
-- relation).  The relation may only be filled in by the implications.
-- Anything else would be a different item.
CREATE FUNCTION mzcoord._check_alteration(p_prev mzcoord.items,
                                          p_next mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_column text;
BEGIN
    FOR v_column IN
        SELECT p.key
          FROM jsonb_each(to_jsonb(p_prev)) p
          JOIN jsonb_each(to_jsonb(p_next)) n USING (key)
         WHERE p.value IS DISTINCT FROM n.value
         ORDER BY p.key
    LOOP
        IF v_column IN ('retain_history', 'schema_name', 'name', 'owner') THEN
            CONTINUE;
        END IF;
        IF v_column = 'relation' AND p_prev.relation IS NULL THEN
            CONTINUE;
        END IF;
        RAISE EXCEPTION 'cannot alter column "%" of % %.%', v_column,
            replace(p_prev.kind, '_', ' '), quote_ident(p_prev.schema_name),
            quote_ident(p_prev.name)
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Only the retain history, the name and the owner of an item can change; drop the item and create it again instead.';
    END LOOP;
    PERFORM mzcoord._retain_history_ms(p_next.retain_history);
END
$$;

CREATE FUNCTION mzcoord._alter_item(p_batch bigint, p_prev mzcoord.items,
                                    p_next mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_ms      bigint;
    v_gid     text;
    v_nsp     name;
    v_name    name;
    v_owner   oid;
    v_relkind "char";
BEGIN
    IF p_next.retain_history IS DISTINCT FROM p_prev.retain_history THEN
        v_ms := mzcoord._retain_history_ms(p_next.retain_history);
        FOR v_gid IN
            SELECT c.global_id FROM mzcoord.collections c
             WHERE c.item_id = p_next.id ORDER BY c.version
        LOOP
            PERFORM mzcoord._stage_policy(v_gid, v_ms);
        END LOOP;
        PERFORM mzcoord._log(p_batch, p_next.id, 'alter_retain_history',
            jsonb_build_object(
                'kind', p_next.kind,
                'relation', format('%I.%I', p_next.schema_name, p_next.name),
                'from_ms', coalesce(mzcoord._retain_history_ms(p_prev.retain_history), 1000),
                'to_ms', coalesce(v_ms, 1000)));
    END IF;

    IF (p_next.schema_name, p_next.name, p_next.owner)
       IS NOT DISTINCT FROM (p_prev.schema_name, p_prev.name, p_prev.owner) THEN
        RETURN;
    END IF;

    -- Bring the relation in line with the row.  After ALTER TABLE ... RENAME
    -- or OWNER TO, the event trigger updated the row to match the relation,
    -- and there is nothing left to do here.
    SELECT n.nspname, c.relname, c.relowner, c.relkind
      INTO v_nsp, v_name, v_owner, v_relkind
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = p_next.relation;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'relation of % %.% does not exist',
            replace(p_next.kind, '_', ' '), quote_ident(p_prev.schema_name),
            quote_ident(p_prev.name)
            USING ERRCODE = 'undefined_table';
    END IF;
    IF v_nsp <> p_next.schema_name THEN
        IF v_relkind = 'i' THEN
            RAISE EXCEPTION 'cannot move index %.% to another schema',
                quote_ident(p_prev.schema_name), quote_ident(p_prev.name)
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'An index is in the schema of its table.';
        END IF;
        EXECUTE format('ALTER TABLE %s SET SCHEMA %I', p_next.relation,
                       p_next.schema_name);
    END IF;
    IF v_name <> p_next.name THEN
        EXECUTE format('ALTER %s %s RENAME TO %I',
                       CASE v_relkind WHEN 'i' THEN 'INDEX' ELSE 'TABLE' END,
                       p_next.relation, p_next.name);
    END IF;
    IF v_owner <> p_next.owner::oid THEN
        IF v_relkind = 'i' THEN
            RAISE EXCEPTION 'cannot change the owner of index %.%',
                quote_ident(p_prev.schema_name), quote_ident(p_prev.name)
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'An index is owned by the owner of its table.';
        END IF;
        EXECUTE format('ALTER TABLE %s OWNER TO %s', p_next.relation,
                       p_next.owner);
    END IF;
    IF (p_next.schema_name, p_next.name)
       IS DISTINCT FROM (p_prev.schema_name, p_prev.name) THEN
        PERFORM mzcoord._log(p_batch, p_next.id, 'rename',
            jsonb_build_object('kind', p_next.kind,
                               'relation', format('%I.%I', p_next.schema_name, p_next.name),
                               'from', format('%I.%I', p_prev.schema_name, p_prev.name),
                               'to', format('%I.%I', p_next.schema_name, p_next.name)));
    END IF;
    IF p_next.owner IS DISTINCT FROM p_prev.owner THEN
        PERFORM mzcoord._log(p_batch, p_next.id, 'change_owner',
            jsonb_build_object('kind', p_next.kind,
                               'relation', format('%I.%I', p_next.schema_name, p_next.name),
                               'from', p_prev.owner::text,
                               'to', p_next.owner::text));
    END IF;
END
$$;

-- Drop one item: refuse while an item that is not dropped reads it, then
-- stage the drop of its collections (aliases first), delete what was
-- derived from it, and drop its relation unless PostgreSQL already did
-- (DROP TABLE and friends).
CREATE FUNCTION mzcoord._drop_item(p_batch bigint, p_item mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_dependents text;
    v_gid        text;
    v_gids       text[] := '{}';
    v_relkind    "char";
    v_dropped    boolean := false;
BEGIN
    SELECT string_agg(format('%s %I.%I depends on %s %I.%I',
                             replace(d.kind, '_', ' '), d.schema_name, d.name,
                             replace(p_item.kind, '_', ' '),
                             p_item.schema_name, p_item.name),
                      E'\n' ORDER BY mzcoord._gid_num(d.id))
      INTO v_dependents
      FROM mzcoord.item_inputs ii
      JOIN mzcoord.items d ON d.id = ii.item_id
     WHERE ii.input_item_id = p_item.id;
    IF v_dependents IS NOT NULL THEN
        RAISE EXCEPTION 'cannot drop % %.% because other objects depend on it',
            replace(p_item.kind, '_', ' '), quote_ident(p_item.schema_name),
            quote_ident(p_item.name)
            USING ERRCODE = 'dependent_objects_still_exist',
                  DETAIL = v_dependents,
                  HINT = 'Drop the dependent objects too, for example with mzcoord.drop(..., cascade => true).';
    END IF;

    FOR v_gid IN
        SELECT c.global_id FROM mzcoord.collections c
         WHERE c.item_id = p_item.id
         ORDER BY c.primary_id IS NULL, c.version DESC
    LOOP
        PERFORM mzcoord._stage_drop(v_gid);
        v_gids := v_gids || v_gid;
    END LOOP;
    DELETE FROM mzcoord.item_inputs WHERE item_id = p_item.id;
    DELETE FROM mzcoord.collections WHERE item_id = p_item.id;

    SELECT c.relkind INTO v_relkind FROM pg_class c WHERE c.oid = p_item.relation;
    IF FOUND THEN
        EXECUTE format('DROP %s %s',
                       CASE v_relkind WHEN 'i' THEN 'INDEX' ELSE 'TABLE' END,
                       p_item.relation);
        v_dropped := true;
    END IF;

    PERFORM mzcoord._log(p_batch, p_item.id, 'drop',
        jsonb_build_object('kind', p_item.kind,
                           'global_ids', to_jsonb(v_gids),
                           'relation', format('%I.%I', p_item.schema_name, p_item.name),
                           'relation_dropped', v_dropped));
END
$$;

-- ---------------------------------------------------------------------------
-- The catalog implications of one statement (reference I1, I2, I5, I6)
-- ---------------------------------------------------------------------------

-- Consolidates the change, folds it per item into Added, Dropped and
-- Altered, validates, orders the steps (src/core/implications.c) and runs
-- the leaves above, in src/catalog/apply.c.
CREATE FUNCTION mzcoord._apply_implications(p_old mzcoord.items[],
                                            p_new mzcoord.items[])
RETURNS void LANGUAGE C
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'mzcoord_apply_implications';

REVOKE ALL ON FUNCTION
    mzcoord._create_relation(mzcoord.items, text),
    mzcoord._install_collection(bigint, mzcoord.items, regclass, bigint, bigint, text[], text[], jsonb),
    mzcoord._create_table(bigint, mzcoord.items),
    mzcoord._create_source(bigint, mzcoord.items),
    mzcoord._create_materialized_view(bigint, mzcoord.items),
    mzcoord._read_item(mzcoord.items),
    mzcoord._create_index(bigint, mzcoord.items),
    mzcoord._create_sink(bigint, mzcoord.items),
    mzcoord._init_policy(bigint, mzcoord.items),
    mzcoord._check_alteration(mzcoord.items, mzcoord.items),
    mzcoord._alter_item(bigint, mzcoord.items, mzcoord.items),
    mzcoord._drop_item(bigint, mzcoord.items),
    mzcoord._apply_implications(mzcoord.items[], mzcoord.items[])
FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- Statement triggers on mzcoord.items (src/catalog/trigger.c)
-- ---------------------------------------------------------------------------

CREATE FUNCTION mzcoord._items_trigger()
RETURNS trigger LANGUAGE C
AS 'MODULE_PATHNAME', 'mzcoord_items_trigger';

CREATE FUNCTION mzcoord._applying_implications()
RETURNS boolean LANGUAGE C STABLE
AS 'MODULE_PATHNAME', 'mzcoord_applying_implications';

CREATE FUNCTION mzcoord._in_copy()
RETURNS boolean LANGUAGE C STABLE
AS 'MODULE_PATHNAME', 'mzcoord_in_copy';

REVOKE ALL ON FUNCTION mzcoord._items_trigger() FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._in_copy() FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._applying_implications() FROM PUBLIC;

CREATE TRIGGER items_count_statement
    BEFORE INSERT OR UPDATE OR DELETE ON mzcoord.items
    FOR EACH STATEMENT EXECUTE FUNCTION mzcoord._items_trigger();
CREATE TRIGGER items_no_truncate
    BEFORE TRUNCATE ON mzcoord.items
    FOR EACH STATEMENT EXECUTE FUNCTION mzcoord._items_trigger();
CREATE TRIGGER items_implications_insert
    AFTER INSERT ON mzcoord.items
    REFERENCING NEW TABLE AS mzcoord_new_items
    FOR EACH STATEMENT EXECUTE FUNCTION mzcoord._items_trigger();
CREATE TRIGGER items_implications_update
    AFTER UPDATE ON mzcoord.items
    REFERENCING OLD TABLE AS mzcoord_old_items NEW TABLE AS mzcoord_new_items
    FOR EACH STATEMENT EXECUTE FUNCTION mzcoord._items_trigger();
CREATE TRIGGER items_implications_delete
    AFTER DELETE ON mzcoord.items
    REFERENCING OLD TABLE AS mzcoord_old_items
    FOR EACH STATEMENT EXECUTE FUNCTION mzcoord._items_trigger();

-- ---------------------------------------------------------------------------
-- Internal catalog writers, called by the DDL functions after validation
-- ---------------------------------------------------------------------------

CREATE FUNCTION mzcoord._catalog_insert(p_kind text, p_schema_name name,
    p_name name, p_relation regclass, p_owner regrole, p_retain_history interval,
    p_refresh text[], p_definition text, p_on_item text, p_index_keys text[])
RETURNS text LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id text;
BEGIN
    INSERT INTO mzcoord.items (kind, schema_name, name, relation, owner,
                               retain_history, refresh, definition, on_item,
                               index_keys)
    VALUES (p_kind, p_schema_name, p_name, p_relation, p_owner,
            p_retain_history, p_refresh, p_definition, p_on_item, p_index_keys)
    RETURNING id INTO v_id;
    RETURN v_id;
END
$$;

CREATE FUNCTION mzcoord._catalog_set_retain_history(p_item text,
                                                    p_retain_history interval)
RETURNS void LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE mzcoord.items SET retain_history = p_retain_history
     WHERE id = p_item;
END
$$;

REVOKE ALL ON FUNCTION
    mzcoord._catalog_insert(text, name, name, regclass, regrole, interval, text[], text, text, text[]),
    mzcoord._catalog_set_retain_history(text, interval)
FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- DDL functions (src/catalog/ddl.c): SECURITY INVOKER, they check the
-- caller's privileges and write through the internal functions above.
-- ---------------------------------------------------------------------------

CREATE FUNCTION mzcoord.create_table(rel regclass,
                                     retain_history interval DEFAULT NULL)
RETURNS text LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_create_table';

COMMENT ON FUNCTION mzcoord.create_table(regclass, interval) IS
'Register an ordinary table the caller owns as a catalog item; returns its item id';

CREATE FUNCTION mzcoord.create_source(name text, columns text,
                                      retain_history interval DEFAULT NULL)
RETURNS text LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_create_source';

COMMENT ON FUNCTION mzcoord.create_source(text, text, interval) IS
'Create a source, a relation fed by timestamped appends; returns its item id';

CREATE FUNCTION mzcoord.create_materialized_view(name text, query text,
                                                 retain_history interval DEFAULT NULL,
                                                 refresh text[] DEFAULT NULL)
RETURNS text LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_create_materialized_view';

COMMENT ON FUNCTION mzcoord.create_materialized_view(text, text, interval, text[]) IS
'Create a materialized view over mzcoord collections; returns its item id';

CREATE FUNCTION mzcoord.create_index(name text, on_rel regclass, keys text[])
RETURNS text LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_create_index';

COMMENT ON FUNCTION mzcoord.create_index(text, regclass, text[]) IS
'Create an index on a table, source or materialized view; returns its item id';

CREATE FUNCTION mzcoord.create_sink(name text, from_rel regclass)
RETURNS text LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_create_sink';

COMMENT ON FUNCTION mzcoord.create_sink(text, regclass) IS
'Create a sink exporting the updates of a table, source or materialized view; returns its item id';

CREATE FUNCTION mzcoord.set_retain_history(rel regclass, retain_history interval)
RETURNS void LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_set_retain_history';

COMMENT ON FUNCTION mzcoord.set_retain_history(regclass, interval) IS
'Change the retain history of an item (NULL: the default of 1 second)';

CREATE FUNCTION mzcoord.drop(rel regclass, cascade boolean DEFAULT false)
RETURNS void LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_drop';

COMMENT ON FUNCTION mzcoord.drop(regclass, boolean) IS
'Drop an item and its relation (with cascade, also what reads it)';

REVOKE ALL ON FUNCTION
    mzcoord.create_table(regclass, interval),
    mzcoord.create_source(text, text, interval),
    mzcoord.create_materialized_view(text, text, interval, text[]),
    mzcoord.create_index(text, regclass, text[]),
    mzcoord.create_sink(text, regclass),
    mzcoord.set_retain_history(regclass, interval),
    mzcoord.drop(regclass, boolean)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    mzcoord.create_table(regclass, interval),
    mzcoord.create_source(text, text, interval),
    mzcoord.create_materialized_view(text, text, interval, text[]),
    mzcoord.create_index(text, regclass, text[]),
    mzcoord.create_sink(text, regclass),
    mzcoord.set_retain_history(regclass, interval),
    mzcoord.drop(regclass, boolean)
TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Event triggers
-- ---------------------------------------------------------------------------

-- Every event trigger calls the DROP EXTENSION guard before it reads the
-- catalog: the command holds its relations already, and a drop waiting for
-- them must make it fail (55000) rather than wait for the drop (40P01).
CREATE FUNCTION mzcoord._extension_guard()
RETURNS void LANGUAGE C
AS 'MODULE_PATHNAME', 'mzcoord_extension_guard_sql';

-- DROP TABLE, DROP INDEX, DROP SCHEMA ... CASCADE, DROP OWNED BY: the items
-- of the dropped relations are deleted, in one statement.
CREATE FUNCTION mzcoord._on_sql_drop()
RETURNS event_trigger LANGUAGE C
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'mzcoord_on_sql_drop';

-- The objects the definition of a materialized view depends on: what it
-- names (the dependencies recorded at its creation) and, through the rules
-- of the views among them, what those read, transitively; and its own
-- relation.  With the namespace of each, for ALTER SCHEMA.
CREATE FUNCTION mzcoord._definition_objects(p_rel regclass,
    OUT classid oid, OUT objid oid, OUT namespace oid)
RETURNS SETOF record LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH RECURSIVE reach(classid, objid) AS (
        SELECT d.refclassid, d.refobjid
          FROM pg_depend d
         WHERE d.classid = 'pg_class'::regclass AND d.objid = p_rel
           AND d.deptype = 'n' AND d.refclassid <> 'pg_extension'::regclass
        UNION
        SELECT v.classid, v.objid
          FROM reach r,
               LATERAL (SELECT d.refclassid AS classid, d.refobjid AS objid
                          FROM pg_rewrite rw
                          JOIN pg_depend d
                            ON d.classid = 'pg_rewrite'::regclass
                           AND d.objid = rw.oid AND d.deptype = 'n'
                         WHERE r.classid = 'pg_class'::regclass
                           AND rw.ev_class = r.objid) v
    ), objects AS (
        SELECT classid, objid FROM reach
        UNION
        SELECT 'pg_class'::regclass, p_rel
    )
    SELECT o.classid, o.objid,
           CASE o.classid
               WHEN 'pg_class'::regclass THEN
                   (SELECT c.relnamespace FROM pg_class c WHERE c.oid = o.objid)
               WHEN 'pg_proc'::regclass THEN
                   (SELECT p.pronamespace FROM pg_proc p WHERE p.oid = o.objid)
               WHEN 'pg_operator'::regclass THEN
                   (SELECT op.oprnamespace FROM pg_operator op WHERE op.oid = o.objid)
           END
      FROM objects o
$$;

-- A materialized view's stored definition (qualified text) must still mean
-- what it meant: it must analyse, to the columns of its storage table and
-- to the same logical inputs.
CREATE FUNCTION mzcoord._check_definition(p_item mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_info    record;
    v_message text;
    v_detail  text;
BEGIN
    BEGIN
        SELECT * INTO v_info
          FROM mzcoord._analyze_materialized_view(p_item.definition);
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT;
        v_detail := format('Its definition would no longer be valid: %s.', v_message);
    END;
    IF v_detail IS NULL THEN
        IF v_info.columns IS DISTINCT FROM mzcoord._relation_columns(p_item.relation) THEN
            v_detail := format('Its query produces the columns (%s), its relation would have (%s).',
                               v_info.columns, mzcoord._relation_columns(p_item.relation));
        ELSIF ARRAY(SELECT ii.input_global_id FROM mzcoord.item_inputs ii
                     WHERE ii.item_id = p_item.id ORDER BY 1)
              IS DISTINCT FROM ARRAY(SELECT g FROM unnest(v_info.inputs) g ORDER BY 1) THEN
            v_detail := format('Its logical inputs would change from (%s) to (%s).',
                (SELECT string_agg(format('%I.%I', i.schema_name, i.name), ', '
                                   ORDER BY i.schema_name, i.name)
                   FROM mzcoord.item_inputs ii
                   JOIN mzcoord.items i ON i.id = ii.input_item_id
                  WHERE ii.item_id = p_item.id),
                (SELECT string_agg(format('%I.%I', i.schema_name, i.name), ', '
                                   ORDER BY i.schema_name, i.name)
                   FROM unnest(v_info.input_items) x
                   JOIN mzcoord.items i ON i.id = x));
        END IF;
    END IF;
    IF v_detail IS NOT NULL THEN
        RAISE EXCEPTION 'cannot make this change because materialized view %.% depends on it',
            quote_ident(p_item.schema_name), quote_ident(p_item.name)
            USING ERRCODE = 'dependent_objects_still_exist',
                  DETAIL = v_detail,
                  HINT = 'A materialized view keeps the names and columns its definition refers to; drop it first.';
    END IF;
END
$$;

-- ALTER TABLE / INDEX / VIEW ... RENAME, SET SCHEMA, OWNER TO, ALTER
-- COLUMN, DROP COLUMN; ALTER SCHEMA ... RENAME; CREATE OR REPLACE VIEW or
-- FUNCTION; ALTER FUNCTION.  The item rows follow their relations' names and
-- owners (REASSIGN OWNED fires no event trigger; the next of these commands
-- catches up), and the definitions of the materialized views that depend on
-- a changed object must still hold, or the command fails.
CREATE FUNCTION mzcoord._on_ddl_command_end()
RETURNS event_trigger LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_classids oid[];
    v_objids   oid[];
    v_item     mzcoord.items;
BEGIN
    PERFORM mzcoord._extension_guard();
    SELECT array_agg(c.classid), array_agg(c.objid)
      INTO v_classids, v_objids
      FROM pg_event_trigger_ddl_commands() c;

    FOR v_item IN
        SELECT i.* FROM mzcoord.items i
         WHERE i.kind = 'materialized_view'
           AND EXISTS (SELECT 1 FROM mzcoord.collections c WHERE c.item_id = i.id)
           AND EXISTS (SELECT 1
                         FROM mzcoord._definition_objects(i.relation) o,
                              unnest(v_classids, v_objids) AS t(classid, objid)
                        WHERE (t.classid = o.classid AND t.objid = o.objid)
                           OR (t.classid = 'pg_namespace'::regclass
                               AND t.objid = o.namespace))
         ORDER BY mzcoord._gid_num(i.id)
    LOOP
        PERFORM mzcoord._check_definition(v_item);
    END LOOP;

    -- Registered relations stay permanent (their history must survive a
    -- crash like their contents).
    SELECT i.* INTO v_item
      FROM mzcoord.items i JOIN pg_class c ON c.oid = i.relation
     WHERE c.relpersistence <> 'p'
     ORDER BY mzcoord._gid_num(i.id) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'cannot make % %.% unlogged',
            replace(v_item.kind, '_', ' '), quote_ident(v_item.schema_name),
            quote_ident(v_item.name)
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'An unlogged relation is emptied by a crash, which would contradict its history.';
    END IF;

    -- While implications run, they bring relations in line with rows.
    IF mzcoord._applying_implications() THEN
        RETURN;
    END IF;
    UPDATE mzcoord.items i
       SET schema_name = n.nspname, name = c.relname,
           owner = c.relowner::regrole
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = i.relation
       AND (i.schema_name, i.name, i.owner::oid)
           IS DISTINCT FROM (n.nspname, c.relname, c.relowner);
END
$$;

REVOKE ALL ON FUNCTION
    mzcoord._extension_guard(),
    mzcoord._on_sql_drop(),
    mzcoord._definition_objects(regclass),
    mzcoord._check_definition(mzcoord.items),
    mzcoord._on_ddl_command_end()
FROM PUBLIC;

CREATE EVENT TRIGGER mzcoord_sql_drop ON sql_drop
    EXECUTE FUNCTION mzcoord._on_sql_drop();
CREATE EVENT TRIGGER mzcoord_follow_relations ON ddl_command_end
    WHEN TAG IN ('ALTER TABLE', 'ALTER INDEX', 'ALTER SCHEMA', 'ALTER VIEW',
                 'CREATE VIEW', 'ALTER FUNCTION', 'CREATE FUNCTION')
    EXECUTE FUNCTION mzcoord._on_ddl_command_end();

-- ---------------------------------------------------------------------------
-- Catalog consistency: one row per problem.  mzcoord.check_consistency()
-- runs every view named mzcoord._check_*.
-- ---------------------------------------------------------------------------

CREATE VIEW mzcoord._check_catalog AS
SELECT 'item without its relation'::text AS check_name, i.id AS object,
       format('%s %I.%I', i.kind, i.schema_name, i.name) AS detail
  FROM mzcoord.items i
 WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = i.relation)
UNION ALL
SELECT 'item relation of the wrong kind', i.id,
       format('%s %s has relkind %s', i.kind, i.relation, c.relkind)
  FROM mzcoord.items i JOIN pg_catalog.pg_class c ON c.oid = i.relation
 WHERE c.relkind OPERATOR(pg_catalog.<>)
       (CASE i.kind WHEN 'index' THEN 'i' ELSE 'r' END)::"char"
UNION ALL
SELECT 'item relation is not permanent', i.id,
       format('%s %s has persistence %s', i.kind, i.relation, c.relpersistence)
  FROM mzcoord.items i JOIN pg_catalog.pg_class c ON c.oid = i.relation
 WHERE c.relpersistence OPERATOR(pg_catalog.<>) 'p'
UNION ALL
SELECT 'item does not match its relation', i.id,
       format('item %I.%I owned by %s, relation %I.%I owned by %s',
              i.schema_name, i.name, i.owner, n.nspname, c.relname,
              c.relowner::regrole)
  FROM mzcoord.items i
  JOIN pg_catalog.pg_class c ON c.oid = i.relation
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE (i.schema_name, i.name, i.owner::oid)
       IS DISTINCT FROM (n.nspname, c.relname, c.relowner)
UNION ALL
SELECT 'item without exactly one primary collection', i.id,
       format('%s primary collections', p.n)
  FROM mzcoord.items i,
       LATERAL (SELECT pg_catalog.count(*) AS n FROM mzcoord.collections c
                 WHERE c.item_id = i.id AND c.primary_id IS NULL) p
 WHERE p.n OPERATOR(pg_catalog.<>) 1
UNION ALL
SELECT 'collection without its item', c.global_id, c.item_id
  FROM mzcoord.collections c
 WHERE NOT EXISTS (SELECT 1 FROM mzcoord.items i WHERE i.id = c.item_id)
UNION ALL
SELECT 'input that is not a collection', ii.item_id,
       format('input %s of item %s', ii.input_global_id, ii.input_item_id)
  FROM mzcoord.item_inputs ii
 WHERE NOT EXISTS (SELECT 1 FROM mzcoord.collections c
                    WHERE c.global_id = ii.input_global_id
                      AND c.item_id = ii.input_item_id)
UNION ALL
SELECT 'inputs of an item that does not exist', ii.item_id, ii.input_global_id
  FROM mzcoord.item_inputs ii
 WHERE NOT EXISTS (SELECT 1 FROM mzcoord.items i WHERE i.id = ii.item_id)
UNION ALL
SELECT 'index or sink that does not read its item', i.id,
       format('reads %s instead of %s', r.inputs, i.on_item)
  FROM mzcoord.items i,
       LATERAL (SELECT pg_catalog.array_agg(ii.input_item_id) AS inputs
                  FROM mzcoord.item_inputs ii WHERE ii.item_id = i.id) r
 WHERE i.kind IN ('index', 'sink')
   AND r.inputs IS DISTINCT FROM ARRAY[i.on_item]
UNION ALL
SELECT 'table or source with inputs', i.id, NULL
  FROM mzcoord.items i
 WHERE i.kind IN ('table', 'source')
   AND EXISTS (SELECT 1 FROM mzcoord.item_inputs ii WHERE ii.item_id = i.id);

COMMENT ON VIEW mzcoord._check_catalog IS
'Catalog invariants (every item has its relation and one primary collection, inputs are collections); one row per violation';

REVOKE ALL ON TABLE mzcoord._check_catalog FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord._check_catalog TO PUBLIC;
-- Part 30: the controller plane (issue 5): transaction read holds,
-- timestamp selection, introspection of shared-memory frontiers and holds,
-- the staging functions the catalog implications call, and the consistency
-- check.

-- Staging API, called by the catalog implications (SECURITY DEFINER code
-- running as the extension owner); not for users.
CREATE FUNCTION mzcoord._write_ts()
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_write_ts_sql';

CREATE FUNCTION mzcoord._creation_ts()
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_creation_ts_sql';

CREATE FUNCTION mzcoord._hold_inputs(global_ids text[])
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_hold_inputs';

CREATE FUNCTION mzcoord._stage_collection(global_id text, item_id text,
    relation regclass, kind text, since bigint, upper bigint, inputs text[])
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_stage_collection';

CREATE FUNCTION mzcoord._stage_policy(global_id text, retain_history_ms bigint)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_stage_policy';

CREATE FUNCTION mzcoord._stage_drop(global_id text)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_stage_drop';

REVOKE ALL ON FUNCTION mzcoord._write_ts() FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._creation_ts() FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._hold_inputs(text[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._stage_collection(text, text, regclass, text, bigint, bigint, text[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._stage_policy(text, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._stage_drop(text) FROM PUBLIC;

-- Transaction read holds and timestamp selection.
CREATE FUNCTION mzcoord.acquire_read_hold(rels regclass[], at bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_acquire_read_hold';

COMMENT ON FUNCTION mzcoord.acquire_read_hold(regclass[], bigint) IS
'Holds every relation at the given time (default: the least time valid for all) until the transaction ends; returns the time';

CREATE FUNCTION mzcoord.select_timestamp(rels regclass[],
    isolation text DEFAULT 'strict serializable',
    as_of bigint DEFAULT NULL, as_of_at_least bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_select_timestamp';

COMMENT ON FUNCTION mzcoord.select_timestamp(regclass[], text, bigint, bigint) IS
'Chooses the time to read the relations at and holds them there until the transaction ends';

CREATE FUNCTION mzcoord.explain_timestamp(rels regclass[],
    isolation text DEFAULT 'strict serializable',
    as_of bigint DEFAULT NULL, as_of_at_least bigint DEFAULT NULL)
RETURNS text
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_explain_timestamp';

COMMENT ON FUNCTION mzcoord.explain_timestamp(regclass[], text, bigint, bigint) IS
'Explains the timestamp select_timestamp would choose now, in the layout of EXPLAIN TIMESTAMP';

REVOKE ALL ON FUNCTION mzcoord.acquire_read_hold(regclass[], bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord.select_timestamp(regclass[], text, bigint, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord.explain_timestamp(regclass[], text, bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.acquire_read_hold(regclass[], bigint) TO PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.select_timestamp(regclass[], text, bigint, bigint) TO PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.explain_timestamp(regclass[], text, bigint, bigint) TO PUBLIC;

-- Shared-memory state, for the views below and for tests.
CREATE FUNCTION mzcoord._controller_collections(
    OUT global_id text, OUT item_id text, OUT relation regclass, OUT kind text,
    OUT state text, OUT since bigint, OUT upper bigint, OUT implied bigint,
    OUT durable_since bigint, OUT durable_upper bigint,
    OUT retain_history_ms bigint, OUT dependents integer)
RETURNS SETOF record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_controller_collections';

CREATE FUNCTION mzcoord._controller_holds(
    OUT global_id text, OUT relation regclass, OUT holder_kind text,
    OUT pid integer, OUT transaction text, OUT item_id text,
    OUT held_time bigint, OUT held_since timestamptz, OUT behind_policy_ms bigint)
RETURNS SETOF record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_controller_holds';

CREATE FUNCTION mzcoord.controller_status(
    OUT ready boolean, OUT epoch bigint, OUT bootstraps bigint,
    OUT ready_at timestamptz, OUT collections integer,
    OUT max_collections integer, OUT holds integer, OUT max_holds integer,
    OUT oracle_read_ts bigint, OUT bootstrap_error text,
    OUT bootstrap_ms double precision)
RETURNS record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_controller_status';

COMMENT ON FUNCTION mzcoord.controller_status() IS
'Readiness and capacity of the mzcoord controller in shared memory';

CREATE FUNCTION mzcoord._controller_validate(
    OUT check_name text, OUT object text, OUT detail text)
RETURNS SETOF record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_controller_validate';

REVOKE ALL ON FUNCTION mzcoord._controller_collections() FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._controller_holds() FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord.controller_status() FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._controller_validate() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord._controller_collections() TO PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord._controller_holds() TO PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.controller_status() TO PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord._controller_validate() TO PUBLIC;

CREATE FUNCTION mzcoord.writes_in_flight(
    OUT write_ts bigint, OUT pid integer, OUT transaction text,
    OUT committing boolean)
RETURNS SETOF record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_writes_in_flight';

COMMENT ON FUNCTION mzcoord.writes_in_flight() IS
'Transactions writing registered tables: their provisional or commit timestamp; only committing ones hold the table timeline''s upper back';

CREATE FUNCTION mzcoord.last_commit_ts()
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_last_commit_ts';

COMMENT ON FUNCTION mzcoord.last_commit_ts() IS
'Commit timestamp of this session''s last committed transaction that wrote a registered table';

REVOKE ALL ON FUNCTION mzcoord.last_commit_ts() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.last_commit_ts() TO PUBLIC;

REVOKE ALL ON FUNCTION mzcoord.writes_in_flight() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.writes_in_flight() TO PUBLIC;

-- Live frontiers of every collection.
CREATE VIEW mzcoord.frontiers AS
SELECT c.relation,
       c.item_id,
       c.global_id,
       c.kind,
       c.since,
       c.upper,
       i.retain_history,
       c.upper - c.since AS since_lag_ms,
       c.state
  FROM mzcoord._controller_collections() c
  LEFT JOIN mzcoord.items i ON i.id = c.item_id;

COMMENT ON VIEW mzcoord.frontiers IS
'Live since and upper of every collection (NULL: the empty frontier); since_lag_ms is how far since lags upper';

-- Every read hold, with who holds it and how far it keeps the since back.
CREATE VIEW mzcoord.holds AS
SELECT h.relation,
       h.global_id,
       h.holder_kind,
       CASE h.holder_kind
           WHEN 'transaction' THEN format('pid %s, transaction %s', h.pid, h.transaction)
           ELSE h.item_id
       END AS holder,
       h.pid,
       h.transaction,
       h.item_id AS holder_item_id,
       h.held_time,
       h.held_since,
       h.behind_policy_ms
  FROM mzcoord._controller_holds() h;

COMMENT ON VIEW mzcoord.holds IS
'Every read hold: transaction holds (backend pid and transaction) and the holds maintained items keep on their inputs';

GRANT SELECT ON mzcoord.frontiers TO PUBLIC;
GRANT SELECT ON mzcoord.holds TO PUBLIC;

-- Consistency checks of the controller against the catalog.  Every view in
-- schema mzcoord whose name starts with "_check_" is a check: it has the
-- columns (check_name, object, detail) and returns one row per violation.
CREATE VIEW mzcoord._check_controller AS
SELECT check_name, object, detail FROM mzcoord._controller_validate();

CREATE VIEW mzcoord._check_controller_catalog AS
SELECT 'catalog collection in shared memory'::text AS check_name,
       c.global_id AS object,
       'the catalog has the collection, the controller does not'::text AS detail
  FROM mzcoord.collections c
 WHERE c.since IS NOT NULL
   AND (SELECT ready FROM mzcoord.controller_status())
   AND NOT EXISTS (SELECT 1 FROM mzcoord._controller_collections() s
                    WHERE s.global_id = c.global_id)
UNION ALL
SELECT 'shared memory collection in catalog', s.global_id,
       'the controller has an active collection the catalog does not have'
  FROM mzcoord._controller_collections() s
 WHERE s.state = 'active'
   AND NOT EXISTS (SELECT 1 FROM mzcoord.collections c
                    WHERE c.global_id = s.global_id)
UNION ALL
SELECT 'durable since', s.global_id,
       format('the catalog since %s differs from what the controller persisted, %s',
              c.since, s.durable_since)
  FROM mzcoord._controller_collections() s
  JOIN mzcoord.collections c ON c.global_id = s.global_id
 WHERE s.durable_since IS NOT NULL AND c.since IS DISTINCT FROM s.durable_since
UNION ALL
SELECT 'relation', s.global_id,
       format('the controller maps relation %s, the catalog %s', s.relation, i.relation)
  FROM mzcoord._controller_collections() s
  JOIN mzcoord.collections c ON c.global_id = s.global_id
  JOIN mzcoord.items i ON i.id = c.item_id
 WHERE s.state = 'active' AND c.primary_id IS NULL
   AND s.relation IS DISTINCT FROM i.relation
UNION ALL
SELECT 'catalog collection dropped in shared memory', s.global_id,
       format('the catalog has the collection, the controller has it %s', s.state)
  FROM mzcoord._controller_collections() s
  JOIN mzcoord.collections c ON c.global_id = s.global_id
 WHERE s.state <> 'active' AND c.since IS NOT NULL
UNION ALL
-- The tick persists a table's upper from the live timeline, which never
-- goes back; a durable upper beyond it means the timeline did.  (A source's
-- upper is written before the controller publishes it: not comparable.)
SELECT 'upper went back', s.global_id,
       format('the catalog has upper %s, the controller %s', c.upper, s.upper)
  FROM mzcoord._controller_collections() s
  JOIN mzcoord.collections c ON c.global_id = s.global_id
 WHERE s.state = 'active' AND s.kind = 'table' AND c.upper IS NOT NULL
   AND (s.upper IS NOT NULL AND s.upper < c.upper);

-- Documented as callable by PUBLIC, but the checks read relations (the
-- histories, the check views) that only the extension owner may read: it
-- runs as the owner.  It returns only ids, counts and frontiers, and every
-- name in it and in the views is resolved in pg_catalog and mzcoord only.
CREATE FUNCTION mzcoord.check_consistency()
RETURNS TABLE (check_name text, object text, detail text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v record;
BEGIN
    FOR v IN
        SELECT c.relname
          FROM pg_catalog.pg_class c
         WHERE c.relnamespace = 'mzcoord'::regnamespace
           AND c.relkind = 'v'
           AND c.relname LIKE '\_check\_%'
         ORDER BY c.relname
    LOOP
        RETURN QUERY EXECUTE format(
            'SELECT check_name::text, object::text, detail::text FROM mzcoord.%I', v.relname);
    END LOOP;
END
$$;

COMMENT ON FUNCTION mzcoord.check_consistency() IS
'One row per violated invariant of mzcoord (none when healthy)';

REVOKE ALL ON FUNCTION mzcoord.check_consistency() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.check_consistency() TO PUBLIC;
-- Part 35: the catalog as the authority on compaction (issue 11).
--
-- mzcoord.compaction_bounds holds, per collection with history (tables,
-- sources, materialized views), how far it may be compacted: the bound.
-- It never decreases; the live since never passes it; physical compaction
-- reads it in its own transaction and never passes it; after a restart the
-- since is the bound.  mzcoord.read_requirements holds what each maintained
-- object (materialized view, index, sink) needs of each logical input; a
-- bound is never above a requirement on its collection, and a requirement
-- is never committed below the bound of its input (reference D2, D3).  The
-- coordinator publishes bounds under a durable epoch (coordinator_epoch)
-- that fences an older coordinator.  See doc/concepts.md, "The authority".

-- ---------------------------------------------------------------------------
-- The coordinator epoch
-- ---------------------------------------------------------------------------

-- One row.  Every coordinator start increments it in its first transaction
-- and compares it, locked FOR SHARE, before every publication: a coordinator
-- that finds a newer epoch exits without writing.  The publication also
-- takes SHARE ROW EXCLUSIVE on this table; check_consistency() takes SHARE,
-- so that it sees bounds and the controller from one side of a publication.
CREATE TABLE mzcoord.coordinator_epoch (
    singleton  boolean NOT NULL DEFAULT true,
    epoch      bigint NOT NULL,
    started_at timestamptz,
    pid        integer,
    CONSTRAINT coordinator_epoch_pkey PRIMARY KEY (singleton),
    CONSTRAINT coordinator_epoch_singleton_check CHECK (singleton),
    CONSTRAINT coordinator_epoch_epoch_check CHECK (epoch >= 0)
);

INSERT INTO mzcoord.coordinator_epoch (singleton, epoch) VALUES (true, 0);

COMMENT ON TABLE mzcoord.coordinator_epoch IS
'The durable epoch of the coordinator: incremented by every coordinator start; a coordinator that finds a newer one stops';

-- ---------------------------------------------------------------------------
-- Compaction bounds
-- ---------------------------------------------------------------------------

CREATE TABLE mzcoord.compaction_bounds (
    global_id    text NOT NULL,
    bound        bigint,
    epoch        bigint NOT NULL,
    published_at timestamptz NOT NULL,
    CONSTRAINT compaction_bounds_pkey PRIMARY KEY (global_id),
    CONSTRAINT compaction_bounds_global_id_fkey FOREIGN KEY (global_id)
        REFERENCES mzcoord.collections (global_id) ON DELETE CASCADE,
    CONSTRAINT compaction_bounds_bound_check CHECK (bound >= 0),
    CONSTRAINT compaction_bounds_epoch_check CHECK (epoch >= 0)
);

COMMENT ON TABLE mzcoord.compaction_bounds IS
'How far each collection with history may be compacted (the authority; the since of mzcoord.collections mirrors it)';
COMMENT ON COLUMN mzcoord.compaction_bounds.bound IS
'Compaction bound: no history below it needs to be kept; never decreases; NULL means the empty frontier';
COMMENT ON COLUMN mzcoord.compaction_bounds.epoch IS
'Coordinator epoch that published it (the current epoch for a creation)';

-- ---------------------------------------------------------------------------
-- Read requirements
-- ---------------------------------------------------------------------------

CREATE TABLE mzcoord.read_requirements (
    item_id         text NOT NULL,
    input_global_id text NOT NULL,
    at              bigint,
    CONSTRAINT read_requirements_pkey PRIMARY KEY (item_id, input_global_id),
    CONSTRAINT read_requirements_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) ON DELETE CASCADE
        DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT read_requirements_at_check CHECK (at >= 0)
);

CREATE INDEX read_requirements_input_global_id_idx
    ON mzcoord.read_requirements (input_global_id);

COMMENT ON TABLE mzcoord.read_requirements IS
'What each materialized view, index and sink needs of each logical input: its history from time at on';
COMMENT ON COLUMN mzcoord.read_requirements.at IS
'The object needs the input from this time on; it advances with the object''s durable upper; NULL: complete, needs nothing more';

REVOKE ALL ON TABLE mzcoord.coordinator_epoch, mzcoord.compaction_bounds,
    mzcoord.read_requirements FROM PUBLIC;
-- Frontiers and ids only, like mzcoord.collections; compaction reads the
-- bounds as the owner of the history.
GRANT SELECT ON TABLE mzcoord.coordinator_epoch, mzcoord.compaction_bounds,
    mzcoord.read_requirements TO PUBLIC;

SELECT pg_catalog.pg_extension_config_dump('mzcoord.compaction_bounds', '');
SELECT pg_catalog.pg_extension_config_dump('mzcoord.read_requirements', '');

-- ---------------------------------------------------------------------------
-- Guards: monotonic bounds, requirements compatible with bounds (D3)
-- ---------------------------------------------------------------------------

-- The lowest time a read requirement or an active lease (36_leases.sql)
-- keeps on a collection (NULL: none limits it).  PL/pgSQL, so that the
-- lease table of a later part resolves when it runs.  A lease counts while
-- now() (the publishing transaction's start) is before its expiry, which
-- errs on the side of protecting.
CREATE FUNCTION mzcoord._protection_limit(p_global_id text)
RETURNS bigint LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN least(
        (SELECT min(r.at) FROM mzcoord.read_requirements r
          WHERE r.input_global_id = p_global_id AND r.at IS NOT NULL),
        (SELECT min(l.held_at) FROM mzcoord.lease_records l
          WHERE p_global_id = ANY (l.global_ids) AND l.expires_at > now()));
END
$$;

-- A bound never decreases, whoever writes it (NULL, the empty frontier, is
-- final), and is never above a requirement or an active lease on its
-- collection.  The clamp
-- runs after the row is locked, with a fresh snapshot (a volatile
-- function): a creation that recorded a requirement while holding the row
-- FOR SHARE has committed by then, and its requirement is seen.
CREATE FUNCTION mzcoord._bounds_guard()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_limit bigint;
BEGIN
    IF NEW.global_id IS DISTINCT FROM OLD.global_id THEN
        RAISE EXCEPTION 'cannot change the collection of a compaction bound'
            USING ERRCODE = 'feature_not_supported';
    END IF;
    IF OLD.bound IS NULL AND NEW.bound IS NOT NULL OR NEW.bound < OLD.bound THEN
        RAISE EXCEPTION 'compaction bound of collection % cannot decrease from % to %',
            OLD.global_id, coalesce(OLD.bound::text, '{}'),
            coalesce(NEW.bound::text, '{}')
            USING ERRCODE = 'check_violation',
                  DETAIL = 'History up to the bound may already be compacted.';
    END IF;
    v_limit := mzcoord._protection_limit(NEW.global_id);
    IF v_limit IS NOT NULL AND (NEW.bound IS NULL OR NEW.bound > v_limit) THEN
        NEW.bound := CASE WHEN OLD.bound IS NULL THEN NULL
                          ELSE greatest(OLD.bound, v_limit) END;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER compaction_bounds_guard
    BEFORE UPDATE ON mzcoord.compaction_bounds
    FOR EACH ROW EXECUTE FUNCTION mzcoord._bounds_guard();

-- A requirement is never committed below the committed bound of its input
-- (the bound row is locked FOR SHARE, so no publication passes it before
-- this transaction ends), never decreases, and completion (NULL) is final.
CREATE FUNCTION mzcoord._requirements_guard()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bound  bigint;
    v_exists boolean;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF (NEW.item_id, NEW.input_global_id)
           IS DISTINCT FROM (OLD.item_id, OLD.input_global_id) THEN
            RAISE EXCEPTION 'cannot change the object or input of a read requirement'
                USING ERRCODE = 'feature_not_supported';
        END IF;
        IF OLD.at IS NULL AND NEW.at IS NOT NULL OR NEW.at < OLD.at THEN
            RAISE EXCEPTION 'read requirement of % on % cannot go back from % to %',
                OLD.item_id, OLD.input_global_id, coalesce(OLD.at::text, 'complete'),
                coalesce(NEW.at::text, 'complete')
                USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.at IS NOT DISTINCT FROM OLD.at OR NEW.at IS NULL THEN
            RETURN NEW;
        END IF;
    END IF;
    IF NEW.at IS NULL THEN
        RETURN NEW;
    END IF;
    SELECT true, b.bound INTO v_exists, v_bound
      FROM mzcoord.compaction_bounds b
     WHERE b.global_id = NEW.input_global_id
       FOR SHARE;
    IF v_exists AND (v_bound IS NULL OR v_bound > NEW.at) THEN
        RAISE EXCEPTION 'cannot read collection % from time %', NEW.input_global_id, NEW.at
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Its compaction bound is %s: history before it may be compacted.',
                                  coalesce(v_bound::text, 'the empty frontier')),
                  HINT = 'Choose a later as-of.';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER read_requirements_guard
    BEFORE INSERT OR UPDATE ON mzcoord.read_requirements
    FOR EACH ROW EXECUTE FUNCTION mzcoord._requirements_guard();

-- Requirements advance only with the durable output progress of their
-- object: at = join(at, step_back(upper)), complete when the upper is {}.
-- The tick writes durable uppers; so may a superuser, by hand, in tests.
CREATE FUNCTION mzcoord._advance_requirements()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- Once per statement, set-based: the tick moves the upper of every
    -- table at once, and only maintained objects have requirements.
    UPDATE mzcoord.read_requirements r
       SET at = CASE WHEN n.upper IS NULL THEN NULL
                     ELSE greatest(r.at, greatest(n.upper - 1, 0)) END
      FROM advanced_new n JOIN advanced_old o ON o.global_id = n.global_id
     WHERE r.item_id = n.item_id
       AND n.primary_id IS NULL
       AND n.upper IS DISTINCT FROM o.upper
       AND r.at IS NOT NULL
       AND (n.upper IS NULL OR n.upper - 1 > r.at);
    RETURN NULL;
END
$$;

CREATE TRIGGER collections_advance_requirements
    AFTER UPDATE ON mzcoord.collections
    REFERENCING OLD TABLE AS advanced_old NEW TABLE AS advanced_new
    FOR EACH STATEMENT
    EXECUTE FUNCTION mzcoord._advance_requirements();

-- ---------------------------------------------------------------------------
-- Creation: the first bound, the requirements (called by
-- mzcoord._install_collection and the creation functions, as the owner)
-- ---------------------------------------------------------------------------

-- Which kinds have history, and so a compaction bound.
CREATE FUNCTION mzcoord._kind_has_bound(p_kind text)
RETURNS boolean LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT p_kind IN ('table', 'source', 'materialized_view') $$;

-- Lock the bounds of an object's inputs FOR SHARE (until the transaction
-- ends, no publication moves them) and return the latest: the object's
-- as-of is chosen at or after it.
CREATE FUNCTION mzcoord._lock_input_bounds(p_inputs text[])
RETURNS bigint LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_latest bigint := 0;
    v_row    record;
BEGIN
    FOR v_row IN
        SELECT b.global_id, b.bound FROM mzcoord.compaction_bounds b
         WHERE b.global_id = ANY (p_inputs)
         ORDER BY b.global_id
           FOR SHARE
    LOOP
        IF v_row.bound IS NULL THEN
            RAISE EXCEPTION 'cannot read collection %: it is compacted completely',
                v_row.global_id
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'Its compaction bound is the empty frontier.';
        END IF;
        v_latest := greatest(v_latest, v_row.bound);
    END LOOP;
    RETURN v_latest;
END
$$;

-- The first bound of a new collection (its initial since), in the
-- transaction that inserts its catalog row, under the current epoch.
CREATE FUNCTION mzcoord._create_bound(p_global_id text, p_kind text,
                                      p_since bigint)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_epoch bigint;
BEGIN
    IF NOT mzcoord._kind_has_bound(p_kind) THEN
        RETURN;
    END IF;
    SELECT e.epoch INTO v_epoch FROM mzcoord.coordinator_epoch e FOR KEY SHARE;
    INSERT INTO mzcoord.compaction_bounds (global_id, bound, epoch, published_at)
    VALUES (p_global_id, p_since, coalesce(v_epoch, 0), now());
END
$$;

-- The read requirements of a new maintained object: each logical input
-- from its as-of (the guard refuses one below the input's bound, 55000).
CREATE FUNCTION mzcoord._record_requirements(p_item_id text, p_inputs text[],
                                             p_at bigint)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO mzcoord.read_requirements (item_id, input_global_id, at)
    SELECT p_item_id, u.gid, p_at
      FROM unnest(p_inputs) AS u(gid)
     ORDER BY u.gid;
END
$$;

REVOKE ALL ON FUNCTION
    mzcoord._protection_limit(text),
    mzcoord._bounds_guard(),
    mzcoord._requirements_guard(),
    mzcoord._advance_requirements(),
    mzcoord._kind_has_bound(text),
    mzcoord._lock_input_bounds(text[]),
    mzcoord._create_bound(text, text, bigint),
    mzcoord._record_requirements(text, text[], bigint)
FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- Consistency checks
-- ---------------------------------------------------------------------------

-- Takes SHARE on coordinator_epoch first (the publication holds SHARE ROW
-- EXCLUSIVE until it commits), so that the bounds it reads and the live
-- sinces are from the same side of every publication.  PL/pgSQL: its
-- statements resolve mzcoord.storage (part 40) when they run.
CREATE FUNCTION mzcoord._authority_problems(
    OUT check_name text, OUT object text, OUT detail text)
RETURNS SETOF record LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT pg_is_in_recovery() THEN
        LOCK TABLE mzcoord.coordinator_epoch IN SHARE MODE;
    END IF;
    RETURN QUERY
    SELECT 'collection without compaction bound'::text, c.global_id,
           format('%s collection has history but no row in mzcoord.compaction_bounds', i.kind)
      FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id
     WHERE mzcoord._kind_has_bound(i.kind)
       AND NOT EXISTS (SELECT 1 FROM mzcoord.compaction_bounds b
                        WHERE b.global_id = c.global_id)
    UNION ALL
    SELECT 'compaction bound of missing collection', b.global_id,
           'mzcoord.compaction_bounds has a row for a collection that does not exist'
      FROM mzcoord.compaction_bounds b
     WHERE NOT EXISTS (SELECT 1 FROM mzcoord.collections c WHERE c.global_id = b.global_id)
    UNION ALL
    SELECT 'read requirement of missing object', r.item_id,
           format('requirement on %s of an item that does not exist', r.input_global_id)
      FROM mzcoord.read_requirements r
     WHERE NOT EXISTS (SELECT 1 FROM mzcoord.items i WHERE i.id = r.item_id)
    UNION ALL
    SELECT 'read requirement on missing collection', r.item_id,
           format('requirement on %s, which is not a collection', r.input_global_id)
      FROM mzcoord.read_requirements r
     WHERE NOT EXISTS (SELECT 1 FROM mzcoord.collections c
                        WHERE c.global_id = r.input_global_id)
    UNION ALL
    SELECT 'compaction bound above requirement', b.global_id,
           format('bound %s is above the requirement of %s at %s',
                  coalesce(b.bound::text, '{}'), r.item_id, r.at)
      FROM mzcoord.compaction_bounds b
      JOIN mzcoord.read_requirements r ON r.input_global_id = b.global_id
     WHERE r.at IS NOT NULL AND (b.bound IS NULL OR b.bound > r.at)
    UNION ALL
    SELECT 'compaction bound above lease', b.global_id,
           format('bound %s is above lease %s at %s',
                  coalesce(b.bound::text, '{}'), l.name, l.held_at)
      FROM mzcoord.compaction_bounds b
      JOIN mzcoord.lease_records l ON b.global_id = ANY (l.global_ids)
     WHERE l.expires_at > now() AND (b.bound IS NULL OR b.bound > l.held_at)
    UNION ALL
    SELECT 'since mirrors bound', b.global_id,
           format('mzcoord.collections has since %s, the bound is %s',
                  coalesce(c.since::text, '{}'), coalesce(b.bound::text, '{}'))
      FROM mzcoord.compaction_bounds b
      JOIN mzcoord.collections c ON c.global_id = b.global_id
     WHERE c.since IS DISTINCT FROM b.bound
    UNION ALL
    SELECT 'since above compaction bound', s.global_id,
           format('the live since %s is above the committed bound %s',
                  coalesce(s.since::text, '{}'), b.bound)
      FROM mzcoord._controller_collections() s
      JOIN mzcoord.compaction_bounds b ON b.global_id = s.global_id
     WHERE s.state = 'active' AND b.bound IS NOT NULL
       AND (s.since IS NULL OR s.since > b.bound)
    UNION ALL
    SELECT 'compacted above compaction bound', st.global_id,
           format('history compacted to %s, the bound is %s', st.compacted, b.bound)
      FROM mzcoord.storage st
      JOIN mzcoord.compaction_bounds b ON b.global_id = st.global_id
     WHERE b.bound IS NOT NULL AND st.compacted > b.bound
    UNION ALL
    SELECT 'compacted above since', st.global_id,
           format('history compacted to %s, the live since is %s', st.compacted, s.since)
      FROM mzcoord.storage st
      JOIN mzcoord._controller_collections() s ON s.global_id = st.global_id
     WHERE s.state = 'active' AND s.since IS NOT NULL AND st.compacted > s.since
    UNION ALL
    SELECT 'compacted without compaction bound', st.global_id,
           format('history compacted to %s, the collection has no bound', st.compacted)
      FROM mzcoord.storage st
      JOIN mzcoord.collections c ON c.global_id = st.global_id
     WHERE st.compacted > c.as_of
       AND NOT EXISTS (SELECT 1 FROM mzcoord.compaction_bounds b
                        WHERE b.global_id = st.global_id);
END
$$;

REVOKE ALL ON FUNCTION mzcoord._authority_problems() FROM PUBLIC;

CREATE VIEW mzcoord._check_authority AS
SELECT check_name, object, detail FROM mzcoord._authority_problems();

REVOKE ALL ON TABLE mzcoord._check_authority FROM PUBLIC;
-- Part 36: leases (issue 11, item 3; src/controller/lease.c).  Durable read
-- protection of tables and sources for clients outside any one
-- transaction, with an expiry so that an abandoned lease does not pin
-- history forever.

-- The durable records.  Written only by mzcoord._lease_write(), after the
-- checks lease.c makes as the caller; read by the coordinator's bootstrap.
CREATE TABLE mzcoord.lease_records (
    name        text PRIMARY KEY
                CHECK (name <> '' AND octet_length(name) < 64),
    owner       oid NOT NULL,
    global_ids  text[] NOT NULL,
    held_at     bigint NOT NULL CHECK (held_at >= 0),
    ttl         interval NOT NULL CHECK (ttl > interval '0'),
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE mzcoord.lease_records IS
'Durable records of the leases: what each holds, at which time, until when';

REVOKE ALL ON TABLE mzcoord.lease_records FROM PUBLIC;

SELECT pg_catalog.pg_extension_config_dump('mzcoord.lease_records', '');

-- The one writer of mzcoord.lease_records, called through fmgr by the C
-- functions below once they checked the caller's rights; not for users.
-- 'lock' locks the record until the transaction ends and says whether it
-- exists.
CREATE FUNCTION mzcoord._lease_write(p_op text, p_name text, p_owner oid,
    p_global_ids text[], p_held_at bigint, p_ttl interval,
    p_expires_at timestamptz)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bound bigint;
    v_gids  text[];
BEGIN
    CASE p_op
    WHEN 'create' THEN
        -- Never below what compaction is already permitted to discard
        -- (D3), and no publication moves those bounds until this commits.
        v_bound := mzcoord._lock_input_bounds(p_global_ids);
        IF p_held_at < v_bound THEN
            RAISE EXCEPTION 'cannot hold lease "%" at %: below the compaction bound %',
                p_name, p_held_at, v_bound
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'History before the compaction bound may already be compacted.',
                      HINT = 'Create the lease at or after the bound (NULL picks a valid time).';
        END IF;
        BEGIN
            INSERT INTO mzcoord.lease_records (name, owner, global_ids,
                                               held_at, ttl, expires_at)
            VALUES (p_name, p_owner, p_global_ids, p_held_at, p_ttl,
                    p_expires_at);
        EXCEPTION WHEN unique_violation THEN
            RAISE EXCEPTION 'lease "%" already exists', p_name
                USING ERRCODE = 'duplicate_object';
        END;
    WHEN 'lock' THEN
        SELECT l.global_ids INTO v_gids FROM mzcoord.lease_records l
         WHERE l.name = p_name FOR UPDATE;
        IF NOT FOUND THEN
            RETURN false;
        END IF;
        -- No publication moves these bounds until this transaction ends:
        -- a renew that starts while the lease is active stays valid.
        PERFORM 1 FROM mzcoord.compaction_bounds b
          WHERE b.global_id = ANY (v_gids)
          ORDER BY b.global_id FOR SHARE;
        RETURN true;
    WHEN 'renew' THEN
        -- An expired lease stopped protecting: if a bound has passed its
        -- time meanwhile, renewing it would protect history that compaction
        -- is already permitted to discard.
        IF EXISTS (SELECT 1 FROM mzcoord.lease_records l
                     JOIN mzcoord.compaction_bounds b
                       ON b.global_id = ANY (l.global_ids)
                    WHERE l.name = p_name
                      AND (b.bound IS NULL OR b.bound > l.held_at)) THEN
            RAISE EXCEPTION 'lease "%" expired and its time is past the compaction bound', p_name
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Drop the lease and create it again.';
        END IF;
        UPDATE mzcoord.lease_records SET expires_at = p_expires_at
         WHERE name = p_name;
    WHEN 'advance' THEN
        UPDATE mzcoord.lease_records SET held_at = p_held_at
         WHERE name = p_name;
    WHEN 'drop' THEN
        DELETE FROM mzcoord.lease_records WHERE name = p_name;
    END CASE;
    RETURN true;
END
$$;

REVOKE ALL ON FUNCTION
    mzcoord._lease_write(text, text, oid, text[], bigint, interval, timestamptz)
FROM PUBLIC;

-- The SQL surface: SECURITY INVOKER, the caller's rights are checked.
CREATE FUNCTION mzcoord.create_lease(name text, rels regclass[],
    at bigint DEFAULT NULL, ttl interval DEFAULT '5 minutes')
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_create_lease';

COMMENT ON FUNCTION mzcoord.create_lease(text, regclass[], bigint, interval) IS
'Holds the relations at the given time (default: the least time valid for all) until the lease is dropped or expires; returns the time';

CREATE FUNCTION mzcoord.renew_lease(name text)
RETURNS timestamptz
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_renew_lease';

COMMENT ON FUNCTION mzcoord.renew_lease(text) IS
'Extends an active lease to now plus its ttl; returns the new expiry';

CREATE FUNCTION mzcoord.advance_lease(name text, at bigint)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_advance_lease';

COMMENT ON FUNCTION mzcoord.advance_lease(text, bigint) IS
'Moves an active lease forward to a later time (never back); does not renew it';

CREATE FUNCTION mzcoord.drop_lease(name text)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_drop_lease';

COMMENT ON FUNCTION mzcoord.drop_lease(text) IS
'Drops a lease, active or expired, releasing what it holds';

REVOKE ALL ON FUNCTION mzcoord.create_lease(text, regclass[], bigint, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord.renew_lease(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord.advance_lease(text, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord.drop_lease(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.create_lease(text, regclass[], bigint, interval) TO PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.renew_lease(text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.advance_lease(text, bigint) TO PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.drop_lease(text) TO PUBLIC;

-- Shared-memory state of the leases, for the views below and for tests.
CREATE FUNCTION mzcoord._lease_holds(
    OUT global_id text, OUT relation regclass, OUT lease text,
    OUT held_time bigint, OUT held_since timestamptz,
    OUT behind_policy_ms bigint)
RETURNS SETOF record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_lease_holds';

CREATE FUNCTION mzcoord._lease_validate(
    OUT check_name text, OUT object text, OUT detail text)
RETURNS SETOF record
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_lease_validate';

REVOKE ALL ON FUNCTION mzcoord._lease_holds() FROM PUBLIC;
REVOKE ALL ON FUNCTION mzcoord._lease_validate() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord._lease_holds() TO PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord._lease_validate() TO PUBLIC;

-- Every lease; expired ones until they are dropped.  A lease is expired
-- from the instant its expiry passes (not when the tick notices).
CREATE VIEW mzcoord.leases AS
SELECT l.name,
       l.owner::pg_catalog.regrole AS owner,
       ARRAY(SELECT i.relation
               FROM pg_catalog.unnest(l.global_ids) WITH ORDINALITY AS g(gid, ord)
               JOIN mzcoord.collections c ON c.global_id = g.gid
               JOIN mzcoord.items i ON i.id = c.item_id
              ORDER BY g.ord) AS relations,
       l.held_at,
       l.expires_at,
       CASE WHEN pg_catalog.clock_timestamp() > l.expires_at
            THEN 'expired' ELSE 'active' END AS state,
       CASE WHEN pg_catalog.clock_timestamp() > l.expires_at THEN 0::bigint
            ELSE coalesce((SELECT max(h.behind_policy_ms)
                             FROM mzcoord._lease_holds() h
                            WHERE h.lease = l.name), 0::bigint)
       END AS behind_policy_ms
  FROM mzcoord.lease_records l;

COMMENT ON VIEW mzcoord.leases IS
'Every lease: what it holds, at which time, until when; behind_policy_ms is how far it keeps a since behind its policy';

GRANT SELECT ON mzcoord.leases TO PUBLIC;

-- mzcoord.holds (30_controller.sql) with the leases' holds and the read
-- requirements (35_authority.sql) added: every protection in one place.
CREATE OR REPLACE VIEW mzcoord.holds AS
SELECT h.relation,
       h.global_id,
       h.holder_kind,
       CASE h.holder_kind
           WHEN 'transaction' THEN format('pid %s, transaction %s', h.pid, h.transaction)
           ELSE h.item_id
       END AS holder,
       h.pid,
       h.transaction,
       h.item_id AS holder_item_id,
       h.held_time,
       h.held_since,
       h.behind_policy_ms
  FROM mzcoord._controller_holds() h
UNION ALL
SELECT l.relation,
       l.global_id,
       'lease'::text,
       l.lease,
       NULL::integer,
       NULL::text,
       NULL::text,
       l.held_time,
       l.held_since,
       l.behind_policy_ms
  FROM mzcoord._lease_holds() l
UNION ALL
SELECT ii.relation,
       r.input_global_id,
       'requirement'::text,
       r.item_id,
       NULL::integer,
       NULL::text,
       r.item_id,
       r.at,
       NULL::timestamptz,
       greatest(cc.implied - r.at, 0)
  FROM mzcoord.read_requirements r
  JOIN mzcoord.collections c ON c.global_id = r.input_global_id
  JOIN mzcoord.items ii ON ii.id = c.item_id
  LEFT JOIN mzcoord._controller_collections() cc ON cc.global_id = r.input_global_id
 WHERE r.at IS NOT NULL;

COMMENT ON VIEW mzcoord.holds IS
'Every read hold: transaction holds (backend pid and transaction), the holds maintained items keep on their inputs, and active leases (holder: the lease name)';

-- Consistency: every active lease holds what it leases, at or above the
-- since.  (A lease whose relations are all gone holds nothing; one that
-- expires within the second may be released while this runs.)
CREATE VIEW mzcoord._check_leases AS
SELECT check_name, object, detail FROM mzcoord._lease_validate()
UNION ALL
SELECT 'lease record in shared memory', l.name,
       'the catalog has an active lease whose holds the controller does not have'
  FROM mzcoord.lease_records l
 WHERE (SELECT ready FROM mzcoord.controller_status())
   AND l.expires_at > pg_catalog.clock_timestamp() + interval '1 second'
   AND EXISTS (SELECT 1 FROM mzcoord.collections c
                WHERE c.global_id = ANY (l.global_ids))
   AND NOT EXISTS (SELECT 1 FROM mzcoord._lease_holds() h
                    WHERE h.lease = l.name);

REVOKE ALL ON TABLE mzcoord._check_leases FROM PUBLIC;
-- Part 37: why is this pinned?  mzcoord.explain_compaction(rel) names what
-- keeps a collection's since and compaction bound where they are.

-- One line per protection, oldest first: its kind, who holds it, at which
-- time, how far behind the policy that is, and whether it holds the bound
-- (durable: requirements, leases, dependents) or only the live since
-- (transaction holds).  SECURITY INVOKER: it reads only what PUBLIC may
-- read, and only for a relation the caller may SELECT.  PL/pgSQL, so that
-- mzcoord.storage (part 40) resolves when it runs.
CREATE FUNCTION mzcoord.explain_compaction(rel regclass)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_c       record;
    v_bound   record;
    v_compacted bigint;
    v_lines   text[] := '{}';
    v_p       record;
    v_any     boolean := false;
BEGIN
    IF rel IS NULL THEN
        RAISE EXCEPTION 'relation must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_class WHERE oid = rel) THEN
        RAISE EXCEPTION 'relation with OID % does not exist', rel::oid
            USING ERRCODE = 'undefined_table';
    END IF;
    IF NOT has_table_privilege(rel, 'SELECT') THEN
        RAISE EXCEPTION 'permission denied for relation %', rel
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Explaining compaction needs SELECT on the relation.';
    END IF;
    SELECT c.global_id, c.kind, c.since, c.upper, c.implied,
           c.retain_history_ms, c.state
      INTO v_c
      FROM mzcoord._controller_collections() c
     WHERE c.relation = rel AND c.state = 'active';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'relation "%" is not an mzcoord collection', rel
            USING ERRCODE = 'wrong_object_type';
    END IF;
    SELECT b.bound, b.epoch, b.published_at INTO v_bound
      FROM mzcoord.compaction_bounds b WHERE b.global_id = v_c.global_id;
    SELECT s.compacted INTO v_compacted
      FROM mzcoord.storage s WHERE s.global_id = v_c.global_id;

    v_lines := v_lines || format('collection %s (%s %s)', v_c.global_id,
                                 replace(v_c.kind, '_', ' '), rel);
    v_lines := v_lines || format('  upper %s, since %s, compaction bound %s, compacted to %s',
        coalesce(v_c.upper::text, '{}'), coalesce(v_c.since::text, '{}'),
        CASE WHEN v_bound IS NULL THEN 'none (no history)'
             ELSE coalesce(v_bound.bound::text, '{}') END,
        coalesce(v_compacted::text, '-'));
    v_lines := v_lines || format('  policy: retain history %s ms, which alone would allow since %s',
        v_c.retain_history_ms, coalesce(v_c.implied::text, '{}'));

    FOR v_p IN
        SELECT * FROM (
            SELECT r.at AS at,
                   format('requirement of %s %s (%s)', replace(i.kind, '_', ' '),
                          coalesce(i.relation::text, i.id), i.id) AS who,
                   'since and bound' AS holds
              FROM mzcoord.read_requirements r
              JOIN mzcoord.items i ON i.id = r.item_id
             WHERE r.input_global_id = v_c.global_id AND r.at IS NOT NULL
            UNION ALL
            SELECT h.held_time,
                   CASE h.holder_kind
                       WHEN 'transaction' THEN format('transaction hold of %s', h.holder)
                       WHEN 'lease' THEN format('lease "%s" (owner %s, expires %s)',
                                                h.holder, l.owner, l.expires_at)
                       ELSE format('dependency hold of %s', h.holder)
                   END,
                   CASE WHEN h.holder_kind = 'transaction' THEN 'since only'
                        ELSE 'since and bound' END
              FROM mzcoord.holds h
              LEFT JOIN mzcoord.leases l
                ON h.holder_kind = 'lease' AND l.name = h.holder
             WHERE h.global_id = v_c.global_id
               AND h.holder_kind <> 'requirement'
        ) p
        ORDER BY p.at, p.who
    LOOP
        v_any := true;
        v_lines := v_lines || format('  held at %s by %s, %s ms behind policy (holds the %s)',
            v_p.at, v_p.who,
            CASE WHEN v_c.implied IS NULL THEN 'n/a'
                 ELSE greatest(v_c.implied - v_p.at, 0)::text END,
            v_p.holds);
    END LOOP;
    IF NOT v_any THEN
        v_lines := v_lines || '  nothing else holds it: the since follows the policy'::text;
    END IF;
    RETURN array_to_string(v_lines, E'\n');
END
$$;

REVOKE ALL ON FUNCTION mzcoord.explain_compaction(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.explain_compaction(regclass) TO PUBLIC;
-- Part 40: the data plane of tables and sources (issue 6): history
-- relations, capture of table writes, source appends, AS OF reads and
-- physical compaction.  See src/storage/storage.h.

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
    CONSTRAINT storage_kind_check CHECK (kind IN ('table', 'source')),
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
'Contents of a table or source at a time, with multiplicities (read_at(NULL::rel, ts)); holds the relation at that time until the transaction ends';

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
-- Part 50: backup and restore (issue 14).  pg_dump dumps the rows of the
-- catalog tables and the counters, marked here as configuration; the
-- histories are ordinary tables in schema mzcoord and are dumped with their
-- rows.  What a dump cannot carry (the internal capture and source guard
-- triggers, the dependencies of the histories, the controller's state) is
-- re-established by mzcoord.restore_after_dump().  Until then
-- mzcoord.check_consistency() reports the restore as incomplete.

SELECT pg_catalog.pg_extension_config_dump('mzcoord.items', '');
SELECT pg_catalog.pg_extension_config_dump('mzcoord.collections', '');
SELECT pg_catalog.pg_extension_config_dump('mzcoord.item_inputs', '');
SELECT pg_catalog.pg_extension_config_dump('mzcoord.storage', '');
SELECT pg_catalog.pg_extension_config_dump('mzcoord.implication_log', '');
SELECT pg_catalog.pg_extension_config_dump('mzcoord.id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('mzcoord.implication_batch_seq', '');

CREATE FUNCTION mzcoord._storage_reattach(global_id text)
RETURNS integer
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_storage_reattach';

CREATE FUNCTION mzcoord._controller_rebootstrap()
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_controller_rebootstrap';

REVOKE ALL ON FUNCTION
    mzcoord._storage_reattach(text),
    mzcoord._controller_rebootstrap()
FROM PUBLIC;

-- What a restore left undone: a history not attached to its relation and
-- the extension.  (The triggers are checked with the histories, items
-- without collections with the catalog.)
CREATE VIEW mzcoord._check_restore AS
SELECT 'history not attached'::text AS check_name,
       s.global_id AS object,
       format('%s lacks its dependency on %s or on the extension mzcoord',
              s.history, s.relation) AS detail
  FROM mzcoord.storage s
 WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                    WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                      AND d.objid OPERATOR(pg_catalog.=) s.history::pg_catalog.oid
                      AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                      AND d.refobjid OPERATOR(pg_catalog.=) s.relation::pg_catalog.oid
                      AND d.deptype OPERATOR(pg_catalog.=) 'a')
    OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                     JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
                    WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                      AND d.objid OPERATOR(pg_catalog.=) s.history::pg_catalog.oid
                      AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                      AND e.extname OPERATOR(pg_catalog.=) 'mzcoord'
                      AND d.deptype OPERATOR(pg_catalog.=) 'x');

REVOKE ALL ON TABLE mzcoord._check_restore FROM PUBLIC;

-- After restoring a dump: check that the dump was complete, attach every
-- history again (its triggers and dependencies), record the dependencies
-- of materialized views and sinks, move the counters past the restored ids
-- and have the coordinator load the restored catalog (waiting for it).
-- Fails, changing nothing, if a history, a collection or a relation is
-- missing.  Running it again changes nothing.
CREATE FUNCTION mzcoord.restore_after_dump(OUT histories integer,
                                           OUT triggers integer)
RETURNS record
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v        record;
    v_info   record;
    v_status record;
    v_max    bigint;
    v_boots  bigint;
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION 'permission denied to restore mzcoord'
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only a superuser may run mzcoord.restore_after_dump().';
    END IF;
    FOR v IN SELECT * FROM mzcoord._check_storage_orphans LOOP
        RAISE EXCEPTION 'the restore is incomplete: %', v.detail
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Restore the catalog tables of mzcoord with the histories.';
    END LOOP;
    FOR v IN
        SELECT c.global_id FROM mzcoord.collections c
          JOIN mzcoord.items i ON i.id = c.item_id
         WHERE i.kind IN ('table', 'source')
           AND NOT EXISTS (SELECT 1 FROM mzcoord.storage s
                            WHERE s.global_id = c.global_id)
    LOOP
        RAISE EXCEPTION 'the restore is incomplete: collection % has no history',
            v.global_id
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END LOOP;
    FOR v IN
        SELECT i.id FROM mzcoord.items i
         WHERE NOT EXISTS (SELECT 1 FROM mzcoord.collections c
                            WHERE c.item_id = i.id)
    LOOP
        RAISE EXCEPTION 'the restore is incomplete: item % has no collection', v.id
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END LOOP;

    histories := 0;
    triggers := 0;
    FOR v IN SELECT global_id FROM mzcoord.storage
              ORDER BY mzcoord._gid_num(global_id)
    LOOP
        triggers := triggers + mzcoord._storage_reattach(v.global_id);
        histories := histories + 1;
    END LOOP;

    SELECT max(mzcoord._gid_num(x.id)) INTO v_max
      FROM (SELECT id FROM mzcoord.items
            UNION ALL SELECT global_id FROM mzcoord.collections) x;
    IF v_max IS NOT NULL
       AND v_max > (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END
                      FROM mzcoord.id_seq) THEN
        PERFORM setval('mzcoord.id_seq', v_max);
    END IF;
    SELECT max(batch) INTO v_max FROM mzcoord.implication_log;
    IF v_max IS NOT NULL THEN
        PERFORM setval('mzcoord.implication_batch_seq',
                       greatest(v_max, (SELECT last_value FROM mzcoord.implication_batch_seq)));
    END IF;
    SELECT max(seq) INTO v_max FROM mzcoord.implication_log;
    IF v_max IS NOT NULL THEN
        PERFORM setval(pg_get_serial_sequence('mzcoord.implication_log', 'seq'), v_max);
    END IF;

    -- The dependencies of materialized views and sinks on what they read.
    FOR v IN SELECT * FROM mzcoord.items
              WHERE kind IN ('materialized_view', 'sink')
              ORDER BY mzcoord._gid_num(id)
    LOOP
        IF v.kind = 'materialized_view' THEN
            SELECT a.relations, a.functions, a.operators INTO v_info
              FROM mzcoord._analyze_materialized_view(v.definition) a;
        ELSE
            SELECT ARRAY[i.relation::oid] AS relations, NULL::oid[] AS functions,
                   NULL::oid[] AS operators INTO v_info
              FROM mzcoord.items i WHERE i.id = v.on_item;
        END IF;
        PERFORM mzcoord._record_dependencies(v.relation,
            ARRAY(SELECT o FROM unnest(v_info.relations) o
                   WHERE NOT EXISTS (SELECT 1 FROM pg_depend d
                                      WHERE d.classid = 'pg_class'::regclass
                                        AND d.objid = v.relation
                                        AND d.refclassid = 'pg_class'::regclass
                                        AND d.refobjid = o AND d.deptype = 'n')),
            ARRAY(SELECT o FROM unnest(v_info.functions) o
                   WHERE NOT EXISTS (SELECT 1 FROM pg_depend d
                                      WHERE d.classid = 'pg_class'::regclass
                                        AND d.objid = v.relation
                                        AND d.refclassid = 'pg_proc'::regclass
                                        AND d.refobjid = o AND d.deptype = 'n')),
            ARRAY(SELECT o FROM unnest(v_info.operators) o
                   WHERE NOT EXISTS (SELECT 1 FROM pg_depend d
                                      WHERE d.classid = 'pg_class'::regclass
                                        AND d.objid = v.relation
                                        AND d.refclassid = 'pg_operator'::regclass
                                        AND d.refobjid = o AND d.deptype = 'n')));
    END LOOP;

    -- The coordinator loads the restored catalog (committed by the restore)
    -- now; its bootstrap also moves the timeline above every restored table
    -- upper.  Wait for it, so that nothing written after this call can get
    -- a time at or below the restored frontiers.
    v_boots := mzcoord._controller_rebootstrap();
    FOR i IN 1 .. 6000 LOOP
        SELECT st.ready, st.bootstraps, st.bootstrap_error INTO v_status
          FROM mzcoord.controller_status() st;
        EXIT WHEN v_status.ready AND v_status.bootstraps > v_boots;
        PERFORM pg_sleep(0.01);
    END LOOP;
    IF NOT (v_status.ready AND v_status.bootstraps > v_boots) THEN
        RAISE EXCEPTION 'the mzcoord coordinator did not load the restored catalog'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = coalesce('Bootstrap error: ' || v_status.bootstrap_error,
                                    'It did not reload within 60 seconds.'),
                  HINT = 'See mzcoord.worker_status(); run mzcoord.restore_after_dump() again once the coordinator runs.';
    END IF;
END
$$;

COMMENT ON FUNCTION mzcoord.restore_after_dump() IS
'After restoring a dump: attach every history again (capture and guard triggers, dependencies), advance the counters, reload the controller';

REVOKE ALL ON FUNCTION mzcoord.restore_after_dump() FROM PUBLIC;
