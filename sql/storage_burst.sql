--
-- Write timestamps under a burst of more than one write per millisecond:
-- once the oracle is ahead of the wall clock, writes that nobody can have
-- read yet share one timestamp (group commit), so the oracle stays close to
-- the clock and the since keeps following the writes.
--
CREATE TABLE wb (n int);
SELECT mzcoord.create_table('wb') IS NOT NULL AS registered;
SELECT history AS wb_hist FROM mzcoord.storage WHERE relation = 'wb'::regclass \gset

CREATE TEMP TABLE burst (started timestamptz, ended timestamptz);
DO $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    FOR i IN 1..3000 LOOP
        INSERT INTO wb VALUES (i);
        COMMIT;
    END LOOP;
    INSERT INTO burst VALUES (t0, clock_timestamp());
END $$;

-- Every write is in the history, each at one timestamp; there are at most
-- about as many distinct timestamps as milliseconds went by (plus the slack
-- allowed ahead of the clock and one per tick that closed a timestamp), not
-- one per write.
SELECT count(*) AS writes,
       count(DISTINCT ts) <= (SELECT extract(epoch FROM ended - started) * 1000 * 1.02 + 12
                              FROM burst) AS about_one_time_per_ms
  FROM :wb_hist WHERE diff = 1 AND c1 IS NOT NULL;
-- The timestamps never went back.
SELECT bool_and(ts >= prev) AS monotone
  FROM (SELECT ts, lag(ts) OVER (ORDER BY c1) AS prev FROM :wb_hist WHERE diff = 1) s;
-- The read at the last write sees all of them, and the since follows.
SELECT count(*) AS rows_at_last_write
  FROM mzcoord.read_at(NULL::wb, (SELECT max(ts) FROM :wb_hist));
-- Compaction advances the rows below the since to the since, so "past the
-- burst" is: no write is left above the since.
SELECT wait_until(format($$SELECT NOT EXISTS (SELECT 1 FROM %s WHERE ts > since)
                            FROM mzcoord.frontiers WHERE relation = 'wb'::regclass$$,
                         :'wb_hist'), 120) AS since_passed_the_burst;
DROP TABLE wb;
SELECT * FROM mzcoord.check_consistency();
