-- mzcoord walkthrough: a registered table keeps its history; read it as of
-- a time; hold a time while compaction runs; a source fed by appends; a
-- continual materialized view over both; a sink exporting its changes; the
-- view's definition replaced in place.
-- See doc/walkthrough.md.  Run with: psql -e -f doc/walkthrough.sql (scripts/demo.sh does).
\set ON_ERROR_STOP on
\pset footer off
SELECT mzcoord.drop(to_regclass('order_totals'), true) WHERE to_regclass('order_totals') IS NOT NULL;
DROP TABLE IF EXISTS orders, prices;
SELECT ready FROM mzcoord.controller_status();

-- 1. Register a table that already has rows; keep one second of history.
CREATE TABLE orders (id int, item text, qty int);
INSERT INTO orders VALUES (1, 'apple', 3), (2, 'pear', 1);
SELECT mzcoord.create_table('orders', retain_history => '1 second') AS item_id;
SELECT history AS hist FROM mzcoord.storage WHERE relation = 'orders'::regclass \gset
SELECT upper - 1 AS t0 FROM mzcoord.frontiers WHERE relation = 'orders'::regclass \gset

-- 2. Write as usual: every change is recorded at the transaction's time.
BEGIN;
UPDATE orders SET qty = 5 WHERE id = 1;
DELETE FROM orders WHERE id = 2;
COMMIT;
INSERT INTO orders VALUES (3, 'plum', 7), (3, 'plum', 7);
SELECT max(ts) AS t1 FROM :hist \gset
SELECT c1 AS id, c2 AS item, c3 AS qty, ts - :t0 AS ms_after_t0, diff
  FROM :hist ORDER BY ts, diff, id;

-- 3. Read as of a time: then, and now.
SELECT * FROM mzcoord.read_at(NULL::orders, :t0) ORDER BY id;
SELECT * FROM mzcoord.read_at(NULL::orders,
    (SELECT upper - 1 FROM mzcoord.frontiers WHERE relation = 'orders'::regclass)) ORDER BY id;

-- 4. A read holds its time until the transaction ends: the since stops
--    there, however far the retain history would let it move.
BEGIN;
SELECT count(*) AS rows_at_t0 FROM mzcoord.read_at(NULL::orders, :t0);
SELECT relation, holder_kind, held_time - :t0 AS held_at FROM mzcoord.holds;
SELECT pg_sleep(2);
SELECT since - :t0 AS since_after_t0, upper - since AS lag_ms
  FROM mzcoord.frontiers WHERE relation = 'orders'::regclass;
SELECT * FROM mzcoord.read_at(NULL::orders, :t0) ORDER BY id;
COMMIT;

-- 5. Released, the since moves on and the coordinator compacts: the
--    retractions below the since and the rows they cancel disappear; the
--    rows nothing retracted keep their times, read as at the frontier.
SELECT set_config('walk.t0', :'t0', false), set_config('walk.t1', :'t1', false) \gset
DO $$
BEGIN
    FOR i IN 1..100 LOOP
        EXIT WHEN (SELECT compacted > current_setting('walk.t1')::bigint
                     FROM mzcoord.storage WHERE relation = 'orders'::regclass);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
SELECT compacted - :t0 AS compacted_after_t0, compactions
  FROM mzcoord.storage WHERE relation = 'orders'::regclass;
SELECT c1 AS id, c2 AS item, c3 AS qty, ts - :t0 AS ms_after_t0, diff
  FROM :hist ORDER BY id;
DO $$
BEGIN
    PERFORM * FROM mzcoord.read_at(NULL::orders, current_setting('walk.t0')::bigint);
EXCEPTION WHEN object_not_in_prerequisite_state THEN
    RAISE NOTICE 'read at t0 refused: %', regexp_replace(SQLERRM, '\d{13}', '<ts>', 'g');
END $$;

-- 6. A source: appends at explicit times, complete once its upper passes.
SELECT mzcoord.create_source('prices', 'item text, price numeric') AS source_id;
SELECT upper AS u FROM mzcoord.frontiers WHERE relation = 'prices'::regclass \gset
SELECT mzcoord.append(NULL::prices, :u, ARRAY[ROW('apple', 1.20), ROW('pear', 0.80)]::prices[]);
SELECT mzcoord.append(NULL::prices, :u + 10, ARRAY[ROW('apple', 1.25)]::prices[],
                      ARRAY[ROW('apple', 1.20)]::prices[]);
SELECT mzcoord.advance_upper('prices', :u + 20);
SELECT * FROM prices ORDER BY item;
SELECT * FROM mzcoord.read_at(NULL::prices, :u + 5) ORDER BY item;

-- 7. A continual materialized view: the coordinator keeps it equal to its
--    query at every time, refreshing it after each tick in which its inputs
--    moved; reading it at a write's time waits until it got there.
SELECT mzcoord.create_materialized_view('order_totals',
    'SELECT o.item, sum(o.qty) AS qty, sum(o.qty * p.price) AS amount
       FROM public.orders o JOIN public.prices p USING (item)
      GROUP BY o.item') AS view_id;
SELECT mzcoord.advance_upper('prices', (SELECT upper FROM mzcoord.frontiers
                                         WHERE relation = 'orders'::regclass) + 60000);
INSERT INTO orders (item, qty) VALUES ('pear', 10);
SELECT mzcoord.last_commit_ts() AS t2 \gset
SELECT * FROM mzcoord.read_at(NULL::order_totals, :t2) ORDER BY item;
SELECT * FROM order_totals ORDER BY item;
SELECT name, schedule, upper >= :t2 AS caught_up, steps > 0 AS refreshed, failures
  FROM mzcoord.maintenance_status WHERE name = 'public.order_totals';

-- 8. A sink: the change stream of the view, exported exactly once into a
--    relation (a snapshot at its as-of, then every update at its time);
--    a consumer reads what is complete and deletes what it has processed.
SELECT mzcoord.create_sink('order_totals_out', 'order_totals') AS sink_id;
UPDATE orders SET qty = qty + 1 WHERE item = 'apple';
SELECT mzcoord.last_commit_ts() AS t3 \gset
SELECT set_config('walk.t3', :'t3', false) IS NOT NULL AS noted;
SELECT count(*) AS view_rows FROM mzcoord.read_at(NULL::order_totals, :t3);
DO $$
BEGIN
    FOR i IN 1..200 LOOP
        EXIT WHEN (SELECT upper > current_setting('walk.t3')::bigint
                     FROM mzcoord.frontiers WHERE relation = 'order_totals_out'::regclass);
        PERFORM pg_sleep(0.05);
    END LOOP;
END $$;
SELECT item, qty, amount, mz_timestamp = :t3 AS at_t3, mz_diff
  FROM order_totals_out
 WHERE mz_timestamp >= :t3 ORDER BY mz_diff, item;
BEGIN;
DELETE FROM order_totals_out
 WHERE mz_timestamp < (SELECT upper FROM mzcoord.frontiers
                        WHERE relation = 'order_totals_out'::regclass);
COMMIT;

-- 9. Replace the view's definition in place: a replacement is computed
--    beside it, then swapped in at a time T; before T the view answers
--    with the old definition, from T on with the new one, under the same
--    name and relation (the sink keeps exporting: one update at T).
SELECT mzcoord.create_replacement('order_totals', 'order_totals_v2',
    'SELECT o.item, sum(o.qty) AS qty, sum(o.qty * p.price) AS amount
       FROM public.orders o JOIN public.prices p USING (item)
      WHERE o.item <> ''pear''
      GROUP BY o.item') AS replacement_id;
SELECT mzcoord.apply_replacement('order_totals_v2') AS swapped \gset
SELECT :swapped > :t3 AS after_t3;
SELECT * FROM mzcoord.read_at(NULL::order_totals, :t3) ORDER BY item;
SELECT * FROM mzcoord.read_at(NULL::order_totals, :swapped) ORDER BY item;
SELECT global_id, valid_from IS NOT NULL AS has_start, valid_until = :swapped AS ends_at_swap
  FROM mzcoord.versions WHERE name = 'order_totals' ORDER BY valid_from;

SELECT * FROM mzcoord.check_consistency();

-- orders, prices, order_totals and order_totals_out stay, to explore: SELECT * FROM mzcoord.frontiers;
-- SELECT * FROM mzcoord.holds; SELECT * FROM mzcoord.storage;
