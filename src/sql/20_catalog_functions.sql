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
    -- Tables and sources get their history (src/storage/install.c).
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
        -- 'at creation' refreshes at the creation's strict serializable
        -- time, seeing every write committed before it (the inputs are
        -- held above, and the as-of keeps that time readable after).
        IF 'at creation' = ANY (p_item.refresh) AND cardinality(v_info.inputs) > 0 THEN
            v_as_of := greatest(v_as_of,
                                mzcoord._creation_refresh_ts(v_info.inputs));
        END IF;
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
    -- Only the export writes rows; consumers delete them (61_sinks.sql).
    PERFORM mzcoord._sink_install_guard(v_rel);
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
-- relation), and a materialized view's definition while
-- apply_replacement swaps it (_replace_definition, part 84, refuses it
-- otherwise).  The relation may only be filled in by the implications.
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
        IF v_column = 'definition' AND p_prev.kind = 'materialized_view' THEN
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
    IF p_next.definition IS DISTINCT FROM p_prev.definition THEN
        PERFORM mzcoord._replace_definition(p_batch, p_prev, p_next);
    END IF;
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

-- The sink's options go to mzcoord.sink_options (src/sql/61_sinks.sql).
CREATE FUNCTION mzcoord.create_sink(name text, from_rel regclass,
                                    snapshot boolean DEFAULT true)
RETURNS text LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_create_sink';

COMMENT ON FUNCTION mzcoord.create_sink(text, regclass, boolean) IS
'Create a sink exporting the updates of a table, source or materialized view (with snapshot, starting with its contents at the as-of); returns its item id';

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
    mzcoord.create_sink(text, regclass, boolean),
    mzcoord.set_retain_history(regclass, interval),
    mzcoord.drop(regclass, boolean)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    mzcoord.create_table(regclass, interval),
    mzcoord.create_source(text, text, interval),
    mzcoord.create_materialized_view(text, text, interval, text[]),
    mzcoord.create_index(text, regclass, text[]),
    mzcoord.create_sink(text, regclass, boolean),
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
