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
