-- Part 36: leases (issue 11, item 3; src/controller/lease.c).  Durable read
-- protection of tables, sources, materialized views and indexes (issue 23)
-- for clients outside any one transaction, with an expiry so that an
-- abandoned lease does not pin history forever.

-- The durable records.  Written only by mzcoord._lease_write(), after the
-- checks leasefuncs.c makes as the caller; read by the coordinator's
-- bootstrap.
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
