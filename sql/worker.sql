--
-- The coordinator background worker and mzcoord.worker_status().
--
SELECT wait_until($$SELECT state = 'running' FROM mzcoord.worker_status()$$);
-- The coordinator starts its workers after its first tick.
SELECT wait_until($$SELECT count(*) = 3 FROM pg_stat_activity
                     WHERE backend_type IN ('mzcoord maintenance worker',
                                            'mzcoord compactor')$$);

-- One launcher, one coordinator, its two maintenance workers and its
-- compactor, visible as such, connected to the database named by
-- mzcoord.database (but the launcher).
SELECT backend_type, datname, application_name
  FROM pg_stat_activity
 WHERE backend_type LIKE 'mzcoord%'
 ORDER BY backend_type;

SELECT s.state, s.database,
       s.pid = a.pid AS pid_matches,
       s.launcher_pid IS NOT NULL AS has_launcher,
       s.started_at <= now() AS started_before_now,
       s.ticks > 0 AS ticked,
       s.last_tick_ms >= 0 AS tick_measured,
       s.last_error IS NULL AS no_error
  FROM mzcoord.worker_status() s
  JOIN pg_stat_activity a ON a.backend_type = 'mzcoord coordinator';

-- Ticks keep coming.  (Earlier files may have restarted the coordinator:
-- starts is compared with its value now.)
CREATE TEMP TABLE t0 AS SELECT ticks, last_tick_at, starts FROM mzcoord.worker_status();
SELECT wait_until($$SELECT s.ticks > t0.ticks + 3 AND s.last_tick_at > t0.last_tick_at
                      FROM mzcoord.worker_status() s, t0$$);

-- Without the extension the worker does nothing; with it back, it ticks again.
-- The library's status function is reachable without the extension through
-- a function of our own.
DROP EXTENSION mzcoord;
CREATE FUNCTION public.probe_status(OUT state text, OUT database text,
    OUT launcher_pid integer, OUT pid integer, OUT started_at timestamptz,
    OUT ticks bigint, OUT last_tick_at timestamptz, OUT last_tick_ms float8,
    OUT starts bigint, OUT last_error text, OUT last_error_at timestamptz)
RETURNS record LANGUAGE C AS 'mzcoord', 'mzcoord_worker_status';
SELECT wait_until($$SELECT state = 'waiting for extension' FROM probe_status()$$);
CREATE TEMP TABLE t1 AS SELECT ticks FROM probe_status();
SELECT pg_sleep(0.3);
SELECT p.ticks = t1.ticks AS no_ticks_without_extension FROM probe_status() p, t1;
DROP FUNCTION public.probe_status();
CREATE EXTENSION mzcoord;
SELECT wait_until($$SELECT state = 'running' FROM mzcoord.worker_status()$$);
SELECT s.starts = t0.starts AS same_coordinator FROM mzcoord.worker_status() s, t0;

-- While another transaction drops the extension (not yet committed), the
-- worker must not tick; this is covered by the isolation suite.

-- The status function is read-only and callable by anyone.
CREATE ROLE mzc_reader;
SET ROLE mzc_reader;
SELECT state FROM mzcoord.worker_status();
RESET ROLE;
DROP ROLE mzc_reader;
