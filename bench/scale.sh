# Sourced by bench/run.sh: the scaling benchmark (SCALE in --only) and the
# SVG charts of the results (scale.svg; b15_lag.svg, drawn by B15).
#
# SCALE registers N tables (default retain history) in a fresh cluster for
# each N of SCALE_SIZES (default 1000 10000 100000; --quick: 1000 10000),
# waits until they are idle (settle_idle), and measures, side by side with
# an empty catalog in the same cluster:
#   B7   mean tick, nothing written                  (ms per tick)
#   B14  WAL the server writes, nothing written      (bytes per second)
#   B10  publication when 1% and 100% of the tables' policies move
#        (pub_tick_ms), vs a plain UPDATE of as many rows (time_sql)
# Results go to the run's CSV (cases "N=<n> ...") and to
# bench/results/scale.csv, which plot_scale draws as bench/results/scale.svg.

# scale_register <n> [<retain history>]: tables p1..pn, registered, and
# b10_rels listing them.
scale_register() {
	local n=$1 retain=${2:-}
	sql <<SQL >/dev/null
DO \$\$
BEGIN
    FOR i IN 1..$n LOOP
        EXECUTE format('CREATE TABLE %I (a int)', 'p' || i);
        PERFORM mzcoord.create_table(('p' || i)::regclass$([ -n "$retain" ] && echo ", '$retain'"));
        IF i % 500 = 0 THEN COMMIT; END IF;
    END LOOP;
END
\$\$;
CREATE TABLE b10_rels AS
SELECT i, ('p' || i)::regclass AS rel, s.global_id
  FROM generate_series(1, $n) i
  JOIN mzcoord.storage s ON s.relation = ('p' || i)::regclass;
CREATE UNIQUE INDEX ON b10_rels (i);
SQL
}

# The plain-UPDATE baseline of B10 for n rows (k = 1%).
scale_baseline_tables() {
	local n=$1 k=$2
	sql <<SQL >/dev/null
CREATE TABLE b10_base (global_id text PRIMARY KEY, bound bigint, epoch bigint,
                       published_at timestamptz);
INSERT INTO b10_base SELECT global_id, 0, 0, now() FROM b10_rels;
CREATE TABLE b10_lists (c int, gids text[], bounds bigint[]);
INSERT INTO b10_lists
SELECT c, array_agg(global_id ORDER BY i), array_agg(i::bigint ORDER BY i)
  FROM b10_rels, (VALUES ($k), ($n)) v(c) WHERE i <= c GROUP BY c;
VACUUM ANALYZE;
SQL
}

bench_scale() {
	local sizes=${SCALE_SIZES:-$([ "$QUICK" = 1 ] && echo "1000 10000" || echo "1000 10000 100000")}
	local out=$RESULTS_DIR/scale.csv
	echo "n,empty_tick_ms,idle_tick_ms,empty_wal_bps,idle_wal_bps,pub1_ms,pub100_ms,base1_ms,base100_ms" >"$out.tmp"
	for n in $sizes; do
		local k=$((n / 100))
		say "SCALE: $n tables"
		pgctl stop -m fast -t 600 >/dev/null 2>&1 || true
		start_cluster "$BENCH_DIR/scale" $((n + 1000))
		local et ew it iw
		et=$(mean_tick_ms); ew=$(wal_bytes_per_s)
		record B7 "N=$n idle tick" baseline ms_per_tick 1 "$et"
		record B14 "N=$n idle WAL" baseline bytes_per_s 1 "$ew"
		local t0=$SECONDS
		scale_register "$n"
		echo "       registered in $((SECONDS - t0)) s"
		settle_idle
		it=$(mean_tick_ms); iw=$(wal_bytes_per_s)
		record B7 "N=$n idle tick" mzcoord ms_per_tick 1 "$it"
		record B14 "N=$n idle WAL" mzcoord bytes_per_s 1 "$iw"
		# B10: the policies go to 30000 days (sinces stay), then pub_tick_ms
		# moves 1% and 100% of them to one second and back.
		sql -c "SELECT count(mzcoord.set_retain_history(rel, '30000 days')) FROM b10_rels" >/dev/null
		scale_baseline_tables "$n" "$k"
		sleep 3
		local base="UPDATE b10_base b SET bound = b.bound + v.bound, epoch = 1, published_at = now()
		              FROM b10_lists l, unnest(l.gids, l.bounds) AS v(gid, bound)
		             WHERE l.c = CNT AND b.global_id = v.gid"
		local m1 b1 ma ba
		m1=$(pub_tick_ms "$k"); b1=$(time_sql "${base//CNT/$k}")
		ma=$(pub_tick_ms "$n"); ba=$(time_sql "${base//CNT/$n}")
		record B10 "N=$n 1% changed" mzcoord ms 1 "$m1"
		record B10 "N=$n 1% changed" baseline ms 1 "$b1"
		record B10 "N=$n 100% changed" mzcoord ms 1 "$ma"
		record B10 "N=$n 100% changed" baseline ms 1 "$ba"
		echo "$n,$et,$it,$ew,$iw,$m1,$ma,$b1,$ba" >>"$out.tmp"
		pgctl stop -m fast -t 600 >/dev/null
	done
	mv "$out.tmp" "$out"
	plot_scale "$out" "$RESULTS_DIR/scale.svg"
}

# plot_scale <scale.csv> <svg>: three panels over the number of tables
# (log scale): tick time, WAL per second, publication time.
plot_scale() {
	local csv=$1 svg=$2
	ensure_packages gnuplot-nox
	gnuplot <<GP
set terminal svg size 1200,400 font "sans,11" background rgb "white"
set output "$svg"
set datafile separator ","
set key top left
set logscale x
set xlabel "registered idle tables"
set grid
set multiplot layout 1,3 title "mzcoord: cost of idle tables (bench/run.sh --only SCALE)"
set title "B7: mean tick (ms)"
plot "$csv" every ::1 using 1:3 with linespoints lw 2 title "mzcoord", \
     "$csv" every ::1 using 1:2 with linespoints lw 2 dt 2 title "empty catalog"
set title "B14: WAL written (bytes/s)"
plot "$csv" every ::1 using 1:5 with linespoints lw 2 title "mzcoord", \
     "$csv" every ::1 using 1:4 with linespoints lw 2 dt 2 title "empty catalog", \
     65536 with lines dt 3 title "goal: 64 KiB/s"
set title "B10: publication (ms)"
set logscale y
plot "$csv" every ::1 using 1:7 with linespoints lw 2 title "mzcoord, 100% changed", \
     "$csv" every ::1 using 1:6 with linespoints lw 2 title "mzcoord, 1% changed", \
     "$csv" every ::1 using 1:9 with linespoints lw 2 dt 2 title "plain UPDATE, 100%", \
     "$csv" every ::1 using 1:8 with linespoints lw 2 dt 2 title "plain UPDATE, 1%"
unset multiplot
GP
	echo "drawn: $svg"
}

# plot_b15 <b15_lag.csv> <svg>: B15's lag of both views over the run.
plot_b15() {
	local csv=$1 svg=$2
	ensure_packages gnuplot-nox
	gnuplot <<GP
set terminal svg size 900,400 font "sans,11" background rgb "white"
set output "$svg"
set datafile separator ","
set key top left
set xlabel "seconds since the writers started"
set ylabel "lag (ms): the table's upper minus the view's"
set grid
set title "B15: view lag while 4 clients write the input (bench/run.sh --only B15)"
plot "$csv" every ::1 using 1:2 with lines lw 2 title "incremental (count/sum by group)", \
     "$csv" every ::1 using 1:3 with lines lw 2 title "recomputed (min/max/avg of numeric)", \
     2000 with lines dt 3 title "goal p99, incremental", \
     5000 with lines dt 2 title "goal p99, recomputed"
GP
	echo "drawn: $svg"
}
