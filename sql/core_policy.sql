--
-- Read policies through mzcoord.lag_frontier (reference 3.2, P2/P4), and
-- every error of the function with its SQLSTATE.
--

-- The lag_writes_by table of reference 3.2.
SELECT lag, g, upper, mzcoord.lag_frontier(upper, lag, g) AS since
  FROM (VALUES (1000, 1000, 12345),
               (1000, 1000, 1000),
               (1000, 1000, 500),
               (1000, 1000, NULL),   -- {}: the lattice bottom
               (500, 1000, 12345),   -- granularity = min(500, 1000)
               (5, 1, 20),
               (15, 1, 20),
               (3600000, 1000, 1700000123456),
               (0, 1000, 12345),     -- no lag, no rounding
               (0, 1000, NULL)) AS t(lag, g, upper);

-- The default granularity is 1000 ms, the default window 1000 ms.
SELECT mzcoord.lag_frontier(12345, 1000) AS default_window;
SELECT mzcoord.lag_frontier(upper => 1700007200123, lag_ms => 7200000) AS two_hours;

-- Saturation at both ends.
SELECT mzcoord.lag_frontier(9223372036854775807, 1, 1) AS max_minus_one,
       mzcoord.lag_frontier(7, 9223372036854775807) AS huge_lag;

-- Errors.
SELECT try($$SELECT mzcoord.lag_frontier(-1, 1000)$$);
SELECT try($$SELECT mzcoord.lag_frontier(100, -1)$$);
SELECT try($$SELECT mzcoord.lag_frontier(100, 10, 0)$$);
SELECT try($$SELECT mzcoord.lag_frontier(100, NULL)$$);
SELECT try($$SELECT mzcoord.lag_frontier(100, 10, NULL)$$);
SELECT mzcoord.lag_frontier(-5, 1000);

-- The function is immutable and callable by anyone.
SELECT provolatile, proisstrict, proparallel
  FROM pg_proc WHERE proname = 'lag_frontier';
SELECT has_function_privilege('public', 'mzcoord.lag_frontier(bigint, bigint, bigint)', 'EXECUTE');
