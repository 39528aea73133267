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

-- What a restore left undone: an item without its collection, a history
-- not attached to its relation and the extension.  (Ids above the counter
-- are allowed: a superuser may insert items with ids of his choosing.)
CREATE VIEW mzcoord._check_restore AS
SELECT 'item without collection'::text AS check_name,
       i.id AS object,
       format('item %s has no collection in mzcoord.collections', i.id) AS detail
  FROM mzcoord.items i
 WHERE NOT EXISTS (SELECT 1 FROM mzcoord.collections c
                    WHERE c.item_id OPERATOR(pg_catalog.=) i.id)
UNION ALL
SELECT 'history not attached'::text,
       s.global_id,
       format('%s lacks its dependency on %s or on the extension mzcoord',
              s.history, s.relation)
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
-- history again (its triggers and dependencies), move the counters past
-- the restored ids and have the coordinator load the restored catalog.
-- Fails, changing nothing, if a history, a collection or a relation is
-- missing.
CREATE FUNCTION mzcoord.restore_after_dump(OUT histories integer,
                                           OUT triggers integer)
RETURNS record
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v record;
    v_max bigint;
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
              ORDER BY substr(global_id, 2)::bigint
    LOOP
        triggers := triggers + mzcoord._storage_reattach(v.global_id);
        histories := histories + 1;
    END LOOP;

    SELECT max(substr(x.id, 2)::bigint) INTO v_max
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
    PERFORM mzcoord._controller_rebootstrap();
END
$$;

COMMENT ON FUNCTION mzcoord.restore_after_dump() IS
'After restoring a dump: attach every history again (capture and guard triggers, dependencies), advance the counters, reload the controller';

REVOKE ALL ON FUNCTION mzcoord.restore_after_dump() FROM PUBLIC;
