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
