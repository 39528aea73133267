-- Part 84: replacing a materialized view's definition in place (issue 23;
-- src/compute/replace.c).  New in catalog 0.7.
--
-- mzcoord.create_replacement(target, name, query) creates a maintained
-- view under name, paired with its target here; it is computed like any
-- view, from its own as-of.  mzcoord.apply_replacement(replacement) swaps
-- it in at a time T, the target's upper then: from T on the target's
-- relation, history and upper are the replacement's (its contents at T,
-- its updates after), the target's item takes the new definition and its
-- inputs, the old definition is kept in mzcoord.replaced_definitions with
-- its validity, and the replacement's item and relation go.  The target
-- keeps its relation (OID, name, owner, grants) and everything that reads
-- it.

-- ---------------------------------------------------------------------------
-- Catalog tables
-- ---------------------------------------------------------------------------

CREATE TABLE mzcoord.replacements (
    item_id    text NOT NULL,
    target_id  text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT replacements_pkey PRIMARY KEY (item_id),
    CONSTRAINT replacements_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) ON DELETE CASCADE
        DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT replacements_target_id_fkey FOREIGN KEY (target_id)
        REFERENCES mzcoord.items (id) ON DELETE CASCADE
        DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT replacements_check CHECK (item_id <> target_id)
);

CREATE INDEX replacements_target_id_idx ON mzcoord.replacements (target_id);

COMMENT ON TABLE mzcoord.replacements IS
'Unapplied replacements: the materialized view item_id is a replacement of the materialized view target_id (not one of its inputs)';

CREATE TABLE mzcoord.replaced_definitions (
    item_id     text NOT NULL,
    global_id   text NOT NULL,
    definition  text NOT NULL,
    valid_from  bigint NOT NULL,
    valid_until bigint NOT NULL,
    successor   text NOT NULL,
    CONSTRAINT replaced_definitions_pkey PRIMARY KEY (item_id, valid_until),
    CONSTRAINT replaced_definitions_item_id_fkey FOREIGN KEY (item_id)
        REFERENCES mzcoord.items (id) ON DELETE CASCADE
        DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT replaced_definitions_range_check CHECK (valid_from <= valid_until)
);

COMMENT ON TABLE mzcoord.replaced_definitions IS
'Earlier definitions of materialized views whose definition was replaced: what computed the view''s contents in [valid_from, valid_until)';
COMMENT ON COLUMN mzcoord.replaced_definitions.global_id IS
'The global id of that definition (the item id for the first one, else the replacement''s id)';
COMMENT ON COLUMN mzcoord.replaced_definitions.successor IS
'The global id of the definition that followed (the applied replacement''s id)';

-- Every definition of every materialized view, the current one last
-- (valid_until NULL): which global id computed which definition when.
CREATE VIEW mzcoord.versions AS
SELECT r.item_id, i.schema_name, i.name, r.global_id, r.definition,
       r.valid_from, r.valid_until
  FROM mzcoord.replaced_definitions r
  JOIN mzcoord.items i ON i.id = r.item_id
UNION ALL
SELECT i.id, i.schema_name, i.name,
       coalesce(last.successor, i.id), i.definition,
       coalesce(last.valid_until, c.as_of), NULL::bigint
  FROM mzcoord.items i
  JOIN mzcoord.collections c ON c.item_id = i.id AND c.primary_id IS NULL
  LEFT JOIN LATERAL (
        SELECT r.successor, r.valid_until
          FROM mzcoord.replaced_definitions r
         WHERE r.item_id = i.id
         ORDER BY r.valid_until DESC LIMIT 1) last ON true
 WHERE i.kind = 'materialized_view';

COMMENT ON VIEW mzcoord.versions IS
'Each definition of each materialized view and when it was valid (valid_until NULL: the current one)';

REVOKE ALL ON TABLE mzcoord.replacements, mzcoord.replaced_definitions,
    mzcoord.versions FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord.replacements, mzcoord.replaced_definitions,
    mzcoord.versions TO PUBLIC;

SELECT pg_catalog.pg_extension_config_dump('mzcoord.replacements', '');
SELECT pg_catalog.pg_extension_config_dump('mzcoord.replaced_definitions', '');

-- ---------------------------------------------------------------------------
-- Internal functions
-- ---------------------------------------------------------------------------

-- The controller's side of a new definition: the view's new inputs,
-- published at commit (src/controller/stage.c).
CREATE FUNCTION mzcoord._stage_inputs(global_id text, inputs text[])
RETURNS void LANGUAGE C
AS 'MODULE_PATHNAME', 'mzcoord_stage_inputs';

-- Drop the normal dependencies mzcoord recorded for an item's relation
-- (_record_dependencies), before recording those of a new definition.
CREATE FUNCTION mzcoord._forget_dependencies(depender regclass)
RETURNS void LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'mzcoord_sql_forget_dependencies';

-- The item whose definition this backend is replacing, with the time and
-- the successor's global id (NULL outside apply_replacement): the one
-- change of a definition the implications accept.
CREATE FUNCTION mzcoord._replacing(OUT item_id text, OUT at bigint,
                                   OUT successor text)
RETURNS record LANGUAGE C STABLE
AS 'MODULE_PATHNAME', 'mzcoord_replacing';

-- Pair a new materialized view with its target; called by
-- create_replacement (through fmgr, after its checks as the caller).
CREATE FUNCTION mzcoord._record_replacement(p_item text, p_target text)
RETURNS void LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO mzcoord.replacements (item_id, target_id)
    VALUES (p_item, p_target);
END
$$;

-- The catalog side of apply_replacement (called through fmgr, after its
-- checks as the caller and after the target adopted the replacement's
-- contents): the old definition is kept with its validity and the target's
-- item takes the new one (the implications change its inputs, see
-- _replace_definition).  The caller then moves the error ranges
-- (mzcoord_rec_view_errors_swap, the one writer of mzcoord.view_errors
-- besides a view's refresh) and drops the replacement's relation, as its
-- owner.  Changed in catalog 0.8: it wrote the error ranges itself.
CREATE FUNCTION mzcoord._swap_definition(p_target text, p_replacement text,
                                         p_at bigint)
RETURNS void LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_target mzcoord.items;
    v_new    text;
    v_from   bigint;
    v_gid    text;
BEGIN
    SELECT * INTO v_target FROM mzcoord.items WHERE id = p_target;
    SELECT definition INTO v_new FROM mzcoord.items WHERE id = p_replacement;
    SELECT v.global_id, v.valid_from INTO v_gid, v_from
      FROM mzcoord.versions v
     WHERE v.item_id = p_target AND v.valid_until IS NULL;
    INSERT INTO mzcoord.replaced_definitions
           (item_id, global_id, definition, valid_from, valid_until, successor)
    VALUES (p_target, v_gid, v_target.definition, least(v_from, p_at), p_at,
            p_replacement);
    UPDATE mzcoord.items SET definition = v_new WHERE id = p_target;
    DELETE FROM mzcoord.replacements WHERE item_id = p_replacement;
END
$$;

-- The implication of a new definition (from _alter_item, only while
-- apply_replacement runs for this item): the item reads the new
-- definition's inputs from now on, needs them from where it reads next
-- (its durable upper - 1, which the adoption set), and its relation depends
-- on what the new definition names.
CREATE FUNCTION mzcoord._replace_definition(p_batch bigint,
                                            p_prev mzcoord.items,
                                            p_next mzcoord.items)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_info  record;
    v_upper bigint;
    v_repl  record;
BEGIN
    SELECT * INTO v_repl FROM mzcoord._replacing();
    IF v_repl.item_id IS DISTINCT FROM p_next.id OR p_next.kind <> 'materialized_view' THEN
        RAISE EXCEPTION 'cannot alter column "definition" of % %.%',
            replace(p_prev.kind, '_', ' '), quote_ident(p_prev.schema_name),
            quote_ident(p_prev.name)
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Replace a materialized view''s definition with mzcoord.create_replacement() and mzcoord.apply_replacement().';
    END IF;
    SELECT * INTO v_info
      FROM mzcoord._analyze_materialized_view(p_next.definition);
    SELECT c.upper INTO v_upper FROM mzcoord.collections c
     WHERE c.global_id = p_next.id;
    DELETE FROM mzcoord.read_requirements WHERE item_id = p_next.id;
    DELETE FROM mzcoord.item_inputs WHERE item_id = p_next.id;
    INSERT INTO mzcoord.item_inputs (item_id, input_global_id, input_item_id)
    SELECT p_next.id, u.gid, u.item
      FROM unnest(v_info.inputs, v_info.input_items) AS u(gid, item);
    IF v_upper IS NOT NULL AND cardinality(v_info.inputs) > 0 THEN
        PERFORM mzcoord._record_requirements(p_next.id, v_info.inputs,
                                             greatest(v_upper - 1, 0));
    END IF;
    PERFORM mzcoord._forget_dependencies(p_next.relation);
    PERFORM mzcoord._record_dependencies(p_next.relation, v_info.relations,
                                         v_info.functions, v_info.operators);
    PERFORM mzcoord._stage_inputs(p_next.id, v_info.inputs);
    PERFORM mzcoord._log(p_batch, p_next.id, 'replace_definition',
        jsonb_build_object('kind', p_next.kind,
                           'relation', format('%I.%I', p_next.schema_name, p_next.name),
                           'at', v_repl.at,
                           'successor', v_repl.successor,
                           'inputs', to_jsonb(v_info.inputs)));
END
$$;

REVOKE ALL ON FUNCTION
    mzcoord._stage_inputs(text, text[]),
    mzcoord._forget_dependencies(regclass),
    mzcoord._replacing(),
    mzcoord._record_replacement(text, text),
    mzcoord._swap_definition(text, text, bigint),
    mzcoord._replace_definition(bigint, mzcoord.items, mzcoord.items)
FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- The SQL surface (SECURITY INVOKER: the caller's rights are checked)
-- ---------------------------------------------------------------------------

CREATE FUNCTION mzcoord.create_replacement(target regclass, name text,
                                           query text)
RETURNS text LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_create_replacement';

COMMENT ON FUNCTION mzcoord.create_replacement(regclass, text, text) IS
'Creates a materialized view under name that computes query and can replace the definition of the materialized view target (same columns); returns its item id';

CREATE FUNCTION mzcoord.apply_replacement(replacement regclass)
RETURNS bigint LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_apply_replacement';

COMMENT ON FUNCTION mzcoord.apply_replacement(regclass) IS
'Swaps a replacement in for its target at the time it returns: from then on the target computes the replacement''s definition, before it the old one; the replacement''s own name goes';

REVOKE ALL ON FUNCTION mzcoord.create_replacement(regclass, text, text),
    mzcoord.apply_replacement(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mzcoord.create_replacement(regclass, text, text),
    mzcoord.apply_replacement(regclass) TO PUBLIC;
