-- B8 baseline: read the catalog tables once, with the query the controller's
-- bootstrap runs, and print the time it took in milliseconds.
DO $$
DECLARE
    t0 timestamptz := clock_timestamp();
    n bigint;
BEGIN
    SELECT count(*) INTO n FROM (
        SELECT c.global_id, c.item_id, i.kind, i.relation::oid, c.primary_id IS NULL,
               coalesce(c.since, c.as_of), c.upper,
               (extract(epoch FROM i.retain_history) * 1000)::bigint,
               (SELECT array_agg(ii.input_global_id ORDER BY ii.input_global_id)
                  FROM mzcoord.item_inputs ii WHERE ii.item_id = c.item_id)
          FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id) q;
    PERFORM set_config('bench.ms',
                       (extract(epoch FROM clock_timestamp() - t0) * 1000)::text, false);
END
$$;
SELECT round(current_setting('bench.ms')::numeric, 3);
