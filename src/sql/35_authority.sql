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

-- Its table comment is in part 83 (catalog 0.6 stopped mirroring it).
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
-- collection.  The clamp runs after the row is locked, with a fresh
-- snapshot: a creation that recorded a requirement while holding the row
-- FOR SHARE has committed by then, and its requirement is seen.  In C
-- (src/controller/authority.c), because the coordinator publishes many
-- bounds in one statement: its publication clamps them itself, set-based,
-- and the guard then only checks that none decreases.
CREATE FUNCTION mzcoord._bounds_guard()
RETURNS trigger LANGUAGE c
AS 'MODULE_PATHNAME', 'mzcoord_bounds_guard';

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
