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

-- The checks that need a collection's durable since, which is its
-- compaction bound when it has one, are in part 83.
CREATE VIEW mzcoord._check_controller_catalog AS
SELECT 'shared memory collection in catalog'::text AS check_name,
       s.global_id AS object,
       'the controller has an active collection the catalog does not have'::text AS detail
  FROM mzcoord._controller_collections() s
 WHERE s.state = 'active'
   AND NOT EXISTS (SELECT 1 FROM mzcoord.collections c
                    WHERE c.global_id = s.global_id)
UNION ALL
SELECT 'relation', s.global_id,
       format('the controller maps relation %s, the catalog %s', s.relation, i.relation)
  FROM mzcoord._controller_collections() s
  JOIN mzcoord.collections c ON c.global_id = s.global_id
  JOIN mzcoord.items i ON i.id = c.item_id
 WHERE s.state = 'active' AND c.primary_id IS NULL
   AND s.relation IS DISTINCT FROM i.relation
UNION ALL
-- A table's durable upper comes from the live timeline, which never goes
-- back; a durable upper beyond it means the timeline did.  (A source's
-- upper is written before the controller publishes it: not comparable.)
-- Since catalog 0.6 the tables share one durable upper (part 83); the row
-- keeps what catalog 0.5 last wrote.
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
