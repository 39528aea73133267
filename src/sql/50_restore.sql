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

    -- The guards of sinks' relations (internal triggers, not dumped).
    PERFORM mzcoord._sink_install_guard(relation)
       FROM mzcoord.items WHERE kind = 'sink' AND relation IS NOT NULL;

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
