
-- Part 70: hardening (issue 19), new in catalog 0.4.  Objects created here
-- are new in 0.4: the whole fragment goes into mzcoord--0.3--0.4.sql.
-- Functions of older fragments that changed in 0.4 are listed in
-- src/sql/upgrade/0.3--0.4.replace instead.

-- The time of an 'at creation' refresh: the creation's strict serializable
-- time over the view's inputs (src/controller/stage.c).  Called by
-- _create_materialized_view; not for users.
CREATE FUNCTION mzcoord._creation_refresh_ts(global_ids text[])
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_creation_refresh_ts';

REVOKE ALL ON FUNCTION mzcoord._creation_refresh_ts(text[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- Guards of the authority's tables (issue 19, defect 8)
-- ---------------------------------------------------------------------------

-- The coordinator epoch only advances, by the coordinator's start or by an
-- operator fencing the coordinator (doc/operations.md), and its one row
-- stays: without it no coordinator starts, and a lower epoch could let a
-- fenced coordinator publish again.  The cap leaves room for restarts
-- (MZC_EPOCH_MAX in src/controller/authority.c).  Inserting the row back
-- is allowed: it is the repair the coordinator's start asks for.
CREATE FUNCTION mzcoord._epoch_guard()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'TRUNCATE') THEN
        RAISE EXCEPTION 'cannot delete the coordinator epoch'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'The coordinator cannot start without the row of mzcoord.coordinator_epoch.',
                  HINT = 'To fence the running coordinator, advance the epoch: UPDATE mzcoord.coordinator_epoch SET epoch = epoch + 1;';
    END IF;
    IF NEW.epoch < OLD.epoch THEN
        RAISE EXCEPTION 'coordinator epoch cannot decrease from % to %',
            OLD.epoch, NEW.epoch
            USING ERRCODE = 'check_violation',
                  DETAIL = 'A lower epoch could let a fenced coordinator publish again.';
    END IF;
    IF NEW.epoch > 4611686018427387904 THEN
        RAISE EXCEPTION 'coordinator epoch % is above the maximum of 4611686018427387904',
            NEW.epoch
            USING ERRCODE = 'check_violation',
                  HINT = 'To fence the running coordinator, advance the epoch by one.';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER coordinator_epoch_guard
    BEFORE INSERT OR UPDATE OR DELETE ON mzcoord.coordinator_epoch
    FOR EACH ROW EXECUTE FUNCTION mzcoord._epoch_guard();
CREATE TRIGGER coordinator_epoch_no_truncate
    BEFORE TRUNCATE ON mzcoord.coordinator_epoch
    FOR EACH STATEMENT EXECUTE FUNCTION mzcoord._epoch_guard();

-- Bounds and requirements go with their collections and objects (foreign
-- keys with ON DELETE CASCADE); emptying them would let compaction pass
-- what maintained objects still read.
CREATE FUNCTION mzcoord._authority_no_truncate()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'cannot truncate %.%', TG_TABLE_SCHEMA, TG_TABLE_NAME
        USING ERRCODE = 'feature_not_supported',
              DETAIL = 'Compaction bounds and read requirements protect the history that maintained objects read.',
              HINT = 'Use mzcoord.drop(), which removes an object''s bounds and requirements with it.';
END
$$;

CREATE TRIGGER compaction_bounds_no_truncate
    BEFORE TRUNCATE ON mzcoord.compaction_bounds
    FOR EACH STATEMENT EXECUTE FUNCTION mzcoord._authority_no_truncate();
CREATE TRIGGER read_requirements_no_truncate
    BEFORE TRUNCATE ON mzcoord.read_requirements
    FOR EACH STATEMENT EXECUTE FUNCTION mzcoord._authority_no_truncate();

REVOKE ALL ON FUNCTION mzcoord._epoch_guard(), mzcoord._authority_no_truncate()
FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- session_replication_role = replica (issue 19, defect 9)
-- ---------------------------------------------------------------------------

-- Triggers and event triggers fire only in origin mode unless ALWAYS.  The
-- DDL functions refuse to run under replica (foreign keys do not fire then
-- either: src/catalog/catalog.c, mzcoord_require_origin_role), and every
-- catalog trigger fires ALWAYS, so that a direct write is guarded (the
-- statement trigger of mzcoord.items refuses it under replica) and a DROP,
-- a rename or a column change of a registered relation is followed whatever
-- the mode.  The internal triggers of registered relations (capture, guards
-- of sources, views and sinks) are created ALWAYS already: a logical
-- replication apply worker runs as replica, and the writes it applies to a
-- registered table must be captured.
-- ALTER TABLE refuses a table with pending trigger events: an update from
-- an older catalog has queued checks of the catalog's deferred foreign
-- keys.  They are run now, and the constraints deferred again after.
DO $$
DECLARE
    v record;
    v_fkeys text;
BEGIN
    SELECT pg_catalog.string_agg(format('%I.%I', 'mzcoord', c.conname), ', '
                                 ORDER BY c.conname)
      INTO v_fkeys
      FROM pg_catalog.pg_constraint c
     WHERE c.connamespace = 'mzcoord'::regnamespace
       AND c.condeferrable AND c.condeferred;
    IF v_fkeys IS NOT NULL THEN
        EXECUTE 'SET CONSTRAINTS ' || v_fkeys || ' IMMEDIATE';
    END IF;
    FOR v IN SELECT t.tgrelid::regclass AS rel, t.tgname
               FROM pg_catalog.pg_trigger t
               JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
              WHERE c.relnamespace = 'mzcoord'::regnamespace
                AND NOT t.tgisinternal
              ORDER BY 1, 2
    LOOP
        EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', v.rel, v.tgname);
    END LOOP;
    FOR v IN SELECT e.evtname
               FROM pg_catalog.pg_event_trigger e
               JOIN pg_catalog.pg_depend d
                 ON d.classid = 'pg_catalog.pg_event_trigger'::regclass
                AND d.objid = e.oid AND d.deptype = 'e'
                AND d.refclassid = 'pg_catalog.pg_extension'::regclass
               JOIN pg_catalog.pg_extension x ON x.oid = d.refobjid
              WHERE x.extname = 'mzcoord'
              ORDER BY 1
    LOOP
        EXECUTE format('ALTER EVENT TRIGGER %I ENABLE ALWAYS', v.evtname);
    END LOOP;
    IF v_fkeys IS NOT NULL THEN
        EXECUTE 'SET CONSTRAINTS ' || v_fkeys || ' DEFERRED';
    END IF;
END
$$;

-- ---------------------------------------------------------------------------
-- Relations a dump would not carry (issue 19, defect 7)
-- ---------------------------------------------------------------------------

-- pg_dump dumps no relation of a schema named pg_* or information_schema,
-- and mzcoord's own schema holds the catalog: an item whose relation is
-- there would be in the dumped catalog without its relation, and the dump
-- would not restore.  The DDL functions refuse these schemas
-- (mzcoord_reserved_namespace in src/catalog/catalog.c); a relation can
-- still be moved there afterwards (ALTER TABLE ... SET SCHEMA).
CREATE VIEW mzcoord._check_dumpable AS
SELECT 'item relation in a schema that is not dumped'::text AS check_name,
       i.id AS object,
       format('%s %I.%I', i.kind, n.nspname, c.relname) AS detail
  FROM mzcoord.items i
  JOIN pg_catalog.pg_class c ON c.oid = i.relation
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname OPERATOR(pg_catalog.~~) 'pg\_%'
    OR n.nspname OPERATOR(pg_catalog.=) 'information_schema'
    OR n.nspname OPERATOR(pg_catalog.=) 'mzcoord';

COMMENT ON VIEW mzcoord._check_dumpable IS
'Items whose relation is in a schema pg_dump does not dump (pg_*, information_schema) or in mzcoord''s own; one row per item';

REVOKE ALL ON TABLE mzcoord._check_dumpable FROM PUBLIC;
GRANT SELECT ON TABLE mzcoord._check_dumpable TO PUBLIC;

-- ---------------------------------------------------------------------------
-- The per-role collection limit (issue 19, defect 4)
-- ---------------------------------------------------------------------------

-- Every creation counts the items of its owner (mzcoord.max_collections_per_role,
-- src/catalog/ddl.c): an index keeps that count proportional to what the
-- role owns, not to the catalog.
CREATE INDEX items_owner_idx ON mzcoord.items (owner);
