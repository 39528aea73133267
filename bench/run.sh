#!/usr/bin/env bash
# mzcoord benchmarks: each workload side by side with a PostgreSQL-native
# baseline in the same run, several rounds, median and spread, ratios.
#
# Usage (as root, on Debian 12):
#   bench/run.sh [--quick] [--only B1,B6,...]
#
#   --quick   small sizes and short runs (a few minutes)
#   --only    run only the listed benchmarks; SCALE (B7, B10 and B14 at
#             1,000, 10,000 and 100,000 tables, drawn as
#             bench/results/scale.svg) runs only when listed
#
# It builds and installs mzcoord (like scripts/test.sh), starts a private
# preloaded cluster in $MZCOORD_BENCH_DIR (default /var/tmp/mzcoord-bench)
# on port $MZCOORD_BENCH_PORT (default 5497), runs the benchmarks, prints a
# table of ratios and writes bench/results/<time>.csv and .json (and
# latest.csv / latest.json), and draws them with bench/plot.sh as
# bench/results/<time>.ratios.svg (and .clients.svg; latest.*.svg).
# See doc/benchmarks.md.
source "$(dirname "$0")/../scripts/common.sh"
source "$(dirname "$0")/scale.sh"

QUICK=0
ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--only) ONLY=$2; shift ;;
	*) echo "usage: $0 [--quick] [--only B1,B2,...]" >&2; exit 2 ;;
	esac
	shift
done

BENCH_DIR=${MZCOORD_BENCH_DIR:-/var/tmp/mzcoord-bench}
PORT=${MZCOORD_BENCH_PORT:-5497}
PGDATA=$BENCH_DIR/data
SOCK=$BENCH_DIR			# the running cluster's socket directory (B10 has its own)
DB=bench
RESULTS_DIR=$MZ_SRC/bench/results
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RAW=$BENCH_DIR/raw.csv

if [ $QUICK = 1 ]; then
	ROUNDS=3; PGB_SECS=2; NCAT=1000; BATCH=50; BULK=100000; TICK_SECS=3
	READ_ROWS=100000; RECENT=20000; COMPACT_UPDATES=200000; COMPACT_KEYS=20000
	NIDX=200; IDX_BATCH=50; NPUB=10000; SINK_UPDATES=100000; LAG_WRITES=50
	MV_ROWS=100000; B18_SECS=5
else
	ROUNDS=5; PGB_SECS=8; NCAT=10000; BATCH=100; BULK=1000000; TICK_SECS=10
	READ_ROWS=1000000; RECENT=100000; COMPACT_UPDATES=1000000; COMPACT_KEYS=100000
	NIDX=1000; IDX_BATCH=100; NPUB=100000; SINK_UPDATES=1000000; LAG_WRITES=200
	MV_ROWS=1000000; B18_SECS=20
fi

want() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }

pgctl() { runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$PGDATA" "$@"; }
sql() {
	runuser -u "$MZ_USER" -- "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 \
		-h "$SOCK" -p "$PORT" -d "$DB" "$@"
}
# CPU time (clock ticks) the running cluster's processes have used: the
# postmaster's own and that of its children it has reaped (backends that
# ended, autovacuum workers), plus that of its children alive now (the
# coordinator, the compactor, the checkpointer, ...).
server_cpu_ticks() {
	local pm
	pm=$(head -n 1 "$PGDATA/postmaster.pid")
	# /proc/<pid>/stat after "<pid> (<comm>) ": state, ppid, ..., utime
	# (12th), stime, cutime, cstime.  A child that ends while the listing
	# is read may be missed or counted twice: a few ticks in a run.
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pm="$pm" '
		{ pid = $1; sub(/^.*\) /, "")
		  if (pid == pm) t += $12 + $13 + $14 + $15
		  else if ($2 == pm) t += $12 + $13 }
		END { print t + 0 }'
}

# Wait until no client backend but the caller's is left (a run's backends
# end after pgbench does; their CPU time counts once they are reaped).
wait_clients_gone() {
	sql -c "DO \$\$ BEGIN WHILE (SELECT count(*) FROM pg_stat_activity
	                             WHERE backend_type = 'client backend'
	                               AND pid <> pg_backend_pid()) > 0
	          LOOP PERFORM pg_sleep(0.02); END LOOP; END \$\$" >/dev/null
}

# pgbench_measured <pgbench arguments...>: runs pgbench as the cluster's
# user; prints its output, then a line "measured <TPS>
# <server µs/tx> <pgbench µs/tx>": the CPU microseconds per transaction of
# the server's processes (server_cpu_ticks, after the run's backends are
# gone) and of pgbench (the shell's time).
pgbench_measured() {
	local out cpu0 cpu1
	cpu0=$(server_cpu_ticks)
	out=$( { TIMEFORMAT='client_cpu %3U %3S'; time runuser -u "$MZ_USER" -- \
		"$@" 2>/dev/null; } 2>&1)
	wait_clients_gone
	cpu1=$(server_cpu_ticks)
	printf '%s\nserver_cpu %s %s\n' "$out" "$((cpu1 - cpu0))" "$(getconf CLK_TCK)" | awk '
		{ print }
		/^tps = / && !tps { tps = $3 }
		/^number of transactions actually processed: / { ntx = $6 + 0 }
		/^client_cpu / { client_s = $2 + $3 }
		/^server_cpu / { server_s = $2 / $3 }
		END {
			if (ntx > 0)
				printf "measured %s %.1f %.1f\n", tps, server_s * 1e6 / ntx, client_s * 1e6 / ntx
			else
				printf "measured %s 0 0\n", tps
		}'
}

pgbench_tps() {
	# pgbench_tps <clients> <script file>: prints the TPS, then the CPU
	# microseconds per transaction of the server's processes and of pgbench
	pgbench_measured "$PG_BIN/pgbench" -n -h "$SOCK" -p "$PORT" \
		-c "$1" -j "$1" -T "$PGB_SECS" -f "$2" "$DB" |
		awk '/^measured / { print $2, $3, $4 }'
}
# record <benchmark> <case> <variant: mzcoord|baseline> <metric> <round> <value>
record() { echo "$1,$2,$3,$4,$5,$6" >>"$RAW"; printf '  %-4s %-22s %-9s round %s: %s %s\n' "$1" "$2" "$3" "$5" "$6" "$4"; }

wait_ready() {
	for _ in $(seq 1 600); do
		[ "$(sql -c 'SELECT ready FROM mzcoord.controller_status()' 2>/dev/null)" = t ] && return 0
		sleep 0.1
	done
	echo "controller did not become ready" >&2
	return 1
}

# start_cluster [<dir> <max_collections>]: a new private cluster in <dir>
# (default $BENCH_DIR), which becomes the one sql() talks to.  The lock
# table has room for a transaction that changes the policy of every
# collection (B10 at 100,000 tables).
start_cluster() {
	SOCK=${1:-$BENCH_DIR}
	PGDATA=$SOCK/data
	say "starting a private cluster in $PGDATA on port $PORT"
	init_private_cluster "$SOCK" "$PORT" "$DB" "\
mzcoord.max_collections = ${2:-25000}
mzcoord.max_collections_per_role = 10000000
mzcoord.max_holds = 100000
max_connections = 60
shared_buffers = 1GB
max_wal_size = 8GB
checkpoint_timeout = 30min
synchronous_commit = off
max_locks_per_transaction = $(( ${2:-25000} / 32 + 256 ))"
	sql -c 'CREATE EXTENSION mzcoord'
	wait_ready
}

# The peers' files (periods, wal2json) are installed by Debian's packages
# into the system installation; a private copy (MZCOORD_PGROOT) made before
# they were installed lacks them: copy what is missing.
install_peers() {
	[ -n "$MZ_PGROOT" ] || return 0
	local f
	for f in $(dpkg -L postgresql-15-periods postgresql-15-wal2json |
		grep -E '^/usr/(lib|share)/postgresql/15/.*\.(so|sql|control)$'); do
		[ -e "$MZ_PGROOT$f" ] || install -D -o "$MZ_USER" -m 644 "$f" "$MZ_PGROOT$f"
	done
}

# pgbench_pair <id> <mzcoord script> <baseline script>: alternate the two,
# round by round, with 1 and 8 clients; TPS, and CPU per transaction (as
# B18 reports it).
pgbench_pair() {
	local id=$1 mz=$2 base=$3
	chown "$MZ_USER" "$mz" "$base"
	for c in 1 8; do
		for r in $(seq 1 "$ROUNDS"); do
			pgbench_pair_run "$id" mzcoord "$mz" "$c" "$r"
			pgbench_pair_run "$id" baseline "$base" "$c" "$r"
		done
	done
}

# pgbench_pair_run <id> <variant> <script> <clients> <round>
pgbench_pair_run() {
	local tps server client
	read -r tps server client < <(pgbench_tps "$4" "$3")
	record "$1" "clients=$4" "$2" tps "$5" "$tps"
	record "$1" "server CPU clients=$4" "$2" us/tx "$5" "$server"
	record "$1" "pgbench CPU clients=$4" "$2" us/tx "$5" "$client"
}

# --------------------------------------------------------------------------
# B1: select_timestamp in a transaction vs pg_advisory_xact_lock_shared
# --------------------------------------------------------------------------
bench_b1() {
	say "B1: transaction with select_timestamp vs pg_advisory_xact_lock_shared"
	sql -c "CREATE TABLE b1 (a int); SELECT mzcoord.create_table('b1')" >/dev/null
	local mz=$BENCH_DIR/b1_mz.sql base=$BENCH_DIR/b1_base.sql
	printf "BEGIN;\nSELECT mzcoord.select_timestamp(ARRAY['b1'::regclass]);\nCOMMIT;\n" >"$mz"
	printf "BEGIN;\nSELECT pg_advisory_xact_lock_shared(1);\nCOMMIT;\n" >"$base"
	pgbench_pair B1 "$mz" "$base"
}

# --------------------------------------------------------------------------
# B2: single-row INSERT into a registered table vs an unregistered one
# --------------------------------------------------------------------------
bench_b2() {
	say "B2: single-row INSERT, registered vs unregistered table"
	sql -c "CREATE TABLE b2r (id bigint, v text); SELECT mzcoord.create_table('b2r');
	        CREATE TABLE b2u (id bigint, v text)" >/dev/null
	local mz=$BENCH_DIR/b2_mz.sql base=$BENCH_DIR/b2_base.sql
	printf "INSERT INTO b2r VALUES (:client_id, 'a short row');\n" >"$mz"
	printf "INSERT INTO b2u VALUES (:client_id, 'a short row');\n" >"$base"
	pgbench_pair B2 "$mz" "$base"
}

# Server-side milliseconds of one statement (run in a DO block), through
# the client function run (sql, or ssql for the B17 standby).
time_sql_with() {
	local run=$1 stmt=$2
	"$run" <<SQL
DO \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE \$q\$$stmt\$q\$;
    PERFORM set_config('bench.ms', (extract(epoch FROM clock_timestamp() - t0) * 1000)::text, false);
END
\$\$;
SELECT round(current_setting('bench.ms')::numeric, 3);
SQL
}
time_sql() { time_sql_with sql "$1"; }

# --------------------------------------------------------------------------
# B3: bulk INSERT of BULK rows into a registered table vs an unregistered one
# --------------------------------------------------------------------------
bench_b3() {
	say "B3: bulk INSERT of $BULK rows"
	local gen="SELECT g, g % 1000, md5(g::text) FROM generate_series(1, $BULK) g"
	for r in $(seq 1 "$ROUNDS"); do
		sql -c "DROP TABLE IF EXISTS b3r, b3u;
		        CREATE TABLE b3r (id bigint, k int, v text); SELECT mzcoord.create_table('b3r');
		        CREATE TABLE b3u (id bigint, k int, v text)" >/dev/null
		record B3 "$BULK rows" mzcoord ms "$r" "$(time_sql "INSERT INTO b3r $gen")"
		record B3 "$BULK rows" baseline ms "$r" "$(time_sql "INSERT INTO b3u $gen")"
	done
	sql -c "DROP TABLE b3r, b3u" >/dev/null
}

# Wait until a registered table's history is compacted up to its since.
wait_compacted() {
	local rel=$1
	for _ in $(seq 1 600); do
		[ "$(sql -c "SELECT s.compacted >= f.since - 1000 AND f.since > s.compacted - 1000
		              FROM mzcoord.storage s JOIN mzcoord.frontiers f ON f.relation = s.relation
		             WHERE s.relation = '$rel'::regclass")" = t ] && return 0
		sleep 0.2
	done
}

# --------------------------------------------------------------------------
# B4: read_at of a fully compacted table vs SELECT * of the same rows
# B5: read_at after recent, not yet compacted updates vs SELECT *
# --------------------------------------------------------------------------
bench_reads() {
	local now_read="(SELECT upper - 1 FROM mzcoord.frontiers WHERE relation = 'REL'::regclass)"
	if want B4; then
		say "B4: read_at of $READ_ROWS compacted rows vs SELECT *"
		sql -c "CREATE TABLE b4 (id bigint, k int, v text);
		        INSERT INTO b4 SELECT g, g % 1000, md5(g::text) FROM generate_series(1, $READ_ROWS) g;
		        SELECT mzcoord.create_table('b4')" >/dev/null
		sleep 2
		sql -c "SELECT mzcoord.compact('b4')" >/dev/null
		for r in $(seq 1 "$ROUNDS"); do
			record B4 "$READ_ROWS rows" mzcoord ms "$r" \
				"$(time_sql "COPY (SELECT * FROM mzcoord.read_at(NULL::b4, ${now_read//REL/b4})) TO '/dev/null'")"
			record B4 "$READ_ROWS rows" baseline ms "$r" \
				"$(time_sql "COPY (SELECT * FROM b4) TO '/dev/null'")"
		done
	fi
	if want B5; then
		say "B5: read_at after $RECENT recent updates vs SELECT *"
		sql -c "CREATE TABLE b5 (id bigint, k int, v text);
		        INSERT INTO b5 SELECT g, g % 1000, md5(g::text) FROM generate_series(1, $READ_ROWS) g;
		        SELECT mzcoord.create_table('b5', '1 hour')" >/dev/null
		# RECENT single-row updates in batches of 1000 transactions' worth.
		sql -c "DO \$\$ BEGIN FOR i IN 1..$((RECENT / 1000)) LOOP
		          UPDATE b5 SET v = 'updated' WHERE id BETWEEN (i - 1) * 1000 + 1 AND i * 1000;
		          COMMIT; END LOOP; END \$\$" >/dev/null
		for r in $(seq 1 "$ROUNDS"); do
			record B5 "$RECENT updates" mzcoord ms "$r" \
				"$(time_sql "COPY (SELECT * FROM mzcoord.read_at(NULL::b5, ${now_read//REL/b5})) TO '/dev/null'")"
			record B5 "$RECENT updates" baseline ms "$r" \
				"$(time_sql "COPY (SELECT * FROM b5) TO '/dev/null'")"
		done
	fi
}

# --------------------------------------------------------------------------
# B9: compaction of COMPACT_UPDATES updates down to COMPACT_KEYS rows vs the
# equivalent DELETE ... RETURNING + INSERT ... SELECT ... GROUP BY on a copy
# of the same history
# --------------------------------------------------------------------------
bench_b9() {
	local k=$COMPACT_KEYS n=$COMPACT_UPDATES
	local passes=$(((n - k) / (2 * k)))
	local rest=$(((n - k - 2 * k * passes) / 2))
	say "B9: compacting $n updates down to $k rows"
	for r in $(seq 1 "$ROUNDS"); do
		# The coordinator must not compact first: pause it for the round.
		sql -c "ALTER SYSTEM SET mzcoord.auto_compact = off" -c "SELECT pg_reload_conf()" >/dev/null
		sleep 0.5
		sql -q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS b9, b9_base;
		        CREATE TABLE b9 (k int, v int);
		        SELECT mzcoord.create_table('b9');
		        INSERT INTO b9 SELECT g, 0 FROM generate_series(1, $k) g" >/dev/null
		for p in $(seq 1 "$passes"); do sql -c "UPDATE b9 SET v = v + 1" >/dev/null; done
		[ "$rest" -gt 0 ] && sql -c "UPDATE b9 SET v = v + 1 WHERE k <= $rest" >/dev/null
		local hist
		hist=$(sql -c "SELECT history FROM mzcoord.storage WHERE relation = 'b9'::regclass")
		for _ in $(seq 1 600); do
			[ "$(sql -c "SELECT since > (SELECT max(ts) FROM $hist) FROM mzcoord.frontiers
			             WHERE relation = 'b9'::regclass")" = t ] && break
			sleep 0.2
		done
		local since
		since=$(sql -c "SELECT since FROM mzcoord.frontiers WHERE relation = 'b9'::regclass")
		sql -c "CREATE TABLE b9_base AS SELECT * FROM $hist" -c "CREATE INDEX ON b9_base (ts)" \
			-c "VACUUM ANALYZE b9_base" -c "VACUUM ANALYZE $hist" >/dev/null
		local base_stmt="WITH d AS (DELETE FROM b9_base WHERE ts < $since RETURNING c1, c2, diff)
			INSERT INTO b9_base SELECT c1, c2, $since, sum(diff) FROM d
			GROUP BY c1, c2 HAVING sum(diff) <> 0"
		if [ $((r % 2)) = 1 ]; then
			record B9 "$n updates" baseline ms "$r" "$(time_sql "$base_stmt")"
			record B9 "$n updates" mzcoord ms "$r" "$(time_sql "SELECT mzcoord.compact('b9')")"
		else
			record B9 "$n updates" mzcoord ms "$r" "$(time_sql "SELECT mzcoord.compact('b9')")"
			record B9 "$n updates" baseline ms "$r" "$(time_sql "$base_stmt")"
		fi
		echo "       rows after: mzcoord $(sql -c "SELECT count(*) FROM $hist"), baseline $(sql -c "SELECT count(*) FROM b9_base")"
		sql -c "ALTER SYSTEM RESET mzcoord.auto_compact" -c "SELECT pg_reload_conf()" >/dev/null
	done
	sql -c "DROP TABLE b9, b9_base" >/dev/null
}

# --------------------------------------------------------------------------
# B11: the coordinator's refresh of a continual materialized view (join +
# GROUP BY over MV_ROWS rows) after 1% of the rows changed, recomputed
# (mzcoord.incremental = off) and incremental, vs REFRESH MATERIALIZED VIEW
# of the same query on the same data
# --------------------------------------------------------------------------
B11_QUERY="SELECT d.grp, count(*) AS n, count(f.v) AS nv, sum(f.v) AS sv
             FROM public.b11_fact f JOIN public.b11_dim d ON d.d = f.d GROUP BY d.grp"

# Set mzcoord.incremental for the coordinator (it reads postgresql.auto.conf).
b11_incremental() {
	sql -c "ALTER SYSTEM SET mzcoord.incremental = $1" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 1
}

# Change 1% of the rows (the r-th 1%), wait until the view has refreshed
# that time and print the coordinator's step time for it
# (mzcoord.maintenance.last_step_ms), or nothing if another step may have
# replaced it before it was read: polled every millisecond on the server,
# the figure counts only if exactly one step committed since the poll
# before, and that step refreshed a time.
b11_try_step_ms() {
	sql <<SQL
DO \$\$
DECLARE
    b_times bigint;
    p_steps bigint;
    s bigint;
    t bigint;
    ms float8;
    res text := '';
BEGIN
    SELECT m.steps, m.times INTO p_steps, b_times
      FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
     WHERE i.name = 'b11_mv';
    UPDATE b11_fact SET v = v + 1 WHERE id % 100 = $1;
    COMMIT;
    FOR k IN 1..60000 LOOP
        SELECT m.steps, m.times, m.last_step_ms INTO s, t, ms
          FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
         WHERE i.name = 'b11_mv';
        IF t > b_times THEN
            IF s = p_steps + 1 THEN
                res := ms::text;
            END IF;
            EXIT;
        END IF;
        p_steps := s;
        PERFORM pg_sleep(0.001);
    END LOOP;
    PERFORM set_config('bench.ms', res, false);
END
\$\$;
SELECT current_setting('bench.ms');
SQL
}

b11_step_ms() {
	local r=$1 got
	for try in 1 2 3; do
		got=$(b11_try_step_ms $((r * 3 + try)) | tail -1)
		[ -n "$got" ] && { echo "$got"; return 0; }
	done
	echo "B11: could not tell the refresh step apart" >&2
	echo nan
}

bench_b11() {
	local n=$MV_ROWS
	say "B11: refresh of a join + GROUP BY over $n rows after 1% changed, vs REFRESH MATERIALIZED VIEW"
	# Ticks a second apart: the step of a change stays the last one long
	# enough to read.
	sql -c "ALTER SYSTEM SET mzcoord.tick_interval = 1000" -c "SELECT pg_reload_conf()" >/dev/null
	sql -c "CREATE TABLE b11_dim (d int PRIMARY KEY, name text, grp int);
	        INSERT INTO b11_dim SELECT g, 'd' || g, g % 100 FROM generate_series(1, 1000) g;
	        CREATE TABLE b11_fact (id bigint PRIMARY KEY, d int, v int);
	        INSERT INTO b11_fact SELECT g, 1 + g % 1000, CASE WHEN g % 10 = 0 THEN NULL ELSE g % 97 END
	          FROM generate_series(1, $n) g" \
		-c "VACUUM ANALYZE b11_dim" -c "VACUUM ANALYZE b11_fact" \
		-c "SELECT mzcoord.create_table('b11_dim'), mzcoord.create_table('b11_fact')" \
		-c "CREATE MATERIALIZED VIEW b11_native AS $B11_QUERY" \
		-c "SELECT mzcoord.create_materialized_view('b11_mv', \$q\$$B11_QUERY\$q\$)" >/dev/null
	local r=0
	for variant in recompute incremental; do
		b11_incremental "$([ $variant = incremental ] && echo on || echo off)"
		for round in $(seq 1 "$ROUNDS"); do
			r=$((r + 1))
			record B11 "$variant 1%" mzcoord ms "$round" "$(b11_step_ms $r)"
			record B11 "$variant 1%" baseline ms "$round" \
				"$(time_sql "REFRESH MATERIALIZED VIEW b11_native")"
		done
	done
	# Both give the same rows.
	echo "       rows differing from the native view: $(sql -c "SELECT count(*) FROM
	        ((TABLE b11_mv EXCEPT ALL TABLE b11_native) UNION ALL (TABLE b11_native EXCEPT ALL TABLE b11_mv)) x")"
	sql -c "ALTER SYSTEM RESET mzcoord.incremental" -c "ALTER SYSTEM RESET mzcoord.tick_interval" \
		-c "SELECT pg_reload_conf()" >/dev/null
	sql -c "SELECT mzcoord.drop('b11_mv')" -c "DROP MATERIALIZED VIEW b11_native" \
		-c "DROP TABLE b11_fact, b11_dim" >/dev/null
}

# --------------------------------------------------------------------------
# B6, B7, B8: the catalog at scale
# --------------------------------------------------------------------------

# Create and register tables <prefix><from>..<prefix><to>; prints ms per item
# (one transaction per item, timed on the server).
create_items() {
	local prefix=$1 from=$2 to=$3
	sql -c "CREATE TABLE IF NOT EXISTS bench_times (label text, ms float8)" >/dev/null
	sql <<SQL
DELETE FROM bench_times WHERE label = 'create';
DO \$\$
DECLARE
    t0 timestamptz;
    total float8 := 0;
BEGIN
    FOR i IN $from..$to LOOP
        EXECUTE format('CREATE TABLE %I (a int)', '$prefix' || i);
        COMMIT;
        t0 := clock_timestamp();
        PERFORM mzcoord.create_table(('$prefix' || i)::regclass);
        COMMIT;
        total := total + extract(epoch FROM clock_timestamp() - t0) * 1000;
    END LOOP;
    INSERT INTO bench_times VALUES ('create', total / ($to - $from + 1));
END
\$\$;
SQL
	sql -c "SELECT round(ms::numeric, 4) FROM bench_times WHERE label = 'create'"
}

# Register a table and create NIDX identical indexes on it with
# mzcoord.create_index, one transaction each (timed on the server); prints
# the mean ms per item of the first IDX_BATCH and of the last IDX_BATCH.
# Drops them all afterwards.
create_indexes() {
	sql -c "CREATE TABLE IF NOT EXISTS bench_times (label text, ms float8)" \
		-c "CREATE TABLE b6ix (a int, b int)" -c "SELECT mzcoord.create_table('b6ix')" >/dev/null
	sql <<SQL
DELETE FROM bench_times WHERE label IN ('idx first', 'idx last');
DO \$\$
DECLARE
    t0 timestamptz;
    ms float8[] := '{}';
BEGIN
    FOR i IN 1..$NIDX LOOP
        t0 := clock_timestamp();
        PERFORM mzcoord.create_index('b6ix_' || i, 'b6ix'::regclass, ARRAY['a']);
        COMMIT;
        ms := ms || extract(epoch FROM clock_timestamp() - t0) * 1000;
    END LOOP;
    INSERT INTO bench_times SELECT 'idx first', avg(x) FROM unnest(ms[1:$IDX_BATCH]) x;
    INSERT INTO bench_times SELECT 'idx last', avg(x) FROM unnest(ms[$((NIDX - IDX_BATCH + 1)):$NIDX]) x;
END
\$\$;
SQL
	sql -c "SELECT mzcoord.drop('b6ix', true)" -c "DROP TABLE IF EXISTS b6ix" >/dev/null
	sql -F ' ' -c "SELECT round(f.ms::numeric, 4), round(l.ms::numeric, 4)
	                 FROM bench_times f, bench_times l
	                WHERE f.label = 'idx first' AND l.label = 'idx last'"
}

drop_items() {
	local prefix=$1 from=$2 to=$3
	sql <<SQL >/dev/null
DO \$\$
BEGIN
    FOR i IN $from..$to LOOP
        EXECUTE format('DROP TABLE %I', '$prefix' || i);
        COMMIT;
    END LOOP;
END
\$\$;
SQL
}

# Wait until every table's compaction bound has passed its registration
# (the last thing written to it) and the compaction step has examined every
# published bound (mzcoord.compaction_status().pending = 0): the steady
# state of an idle catalog.  Prints nothing.
settle_idle() {
	for _ in $(seq 1 2400); do
		[ "$(sql -c "SELECT coalesce(bool_and(b.bound > c.as_of + 1), true)
		                    AND (SELECT pending = 0 FROM mzcoord.compaction_status())
		               FROM mzcoord.collections c
		               JOIN mzcoord.compaction_bounds b USING (global_id)
		               JOIN mzcoord.items i ON i.id = c.item_id
		              WHERE i.kind = 'table'")" = t ] && return 0
		sleep 0.5
	done
	echo "the bounds did not settle" >&2
	return 1
}

# Mean tick duration over TICK_SECS seconds.
mean_tick_ms() {
	local t0 m0 t1 m1
	read -r t0 m0 < <(sql -F ' ' -c 'SELECT ticks, total_tick_ms FROM mzcoord.worker_status()')
	sleep "$TICK_SECS"
	read -r t1 m1 < <(sql -F ' ' -c 'SELECT ticks, total_tick_ms FROM mzcoord.worker_status()')
	awk -v a="$t0" -v b="$t1" -v x="$m0" -v y="$m1" \
		'BEGIN { if (b > a) printf "%.4f\n", (y - x) / (b - a); else print "nan" }'
}

# WAL bytes per second the server writes over TICK_SECS seconds (nothing
# else runs meanwhile: only the coordinator, checkpoints and autovacuum).
wal_bytes_per_s() {
	local l0
	l0=$(sql -c 'SELECT pg_current_wal_insert_lsn()')
	sleep "$TICK_SECS"
	sql -c "SELECT round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$l0') / $TICK_SECS)"
}

bench_catalog() {
	local first_big=$((NCAT - BATCH + 1))

	if want B7; then
		say "B7: empty tick"
		for r in $(seq 1 "$ROUNDS"); do
			record B7 "no writes" baseline ms_per_tick "$r" "$(mean_tick_ms)"
		done
	fi
	if want B14; then
		say "B14: WAL per second, empty catalog, nothing written"
		for r in $(seq 1 "$ROUNDS"); do
			record B14 "idle" baseline bytes_per_s "$r" "$(wal_bytes_per_s)"
		done
	fi
	if want B6; then
		say "B6: creating items 1-$BATCH in an empty catalog"
		for r in $(seq 1 "$ROUNDS"); do
			record B6 "per item" baseline ms "$r" "$(create_items e 1 "$BATCH")"
			drop_items e 1 "$BATCH"
		done
	fi

	if want B6; then
		say "B6: $NIDX identical indexes on one relation, last $IDX_BATCH vs first $IDX_BATCH"
		for r in $(seq 1 "$ROUNDS"); do
			local times
			times=$(create_indexes)
			record B6 "$NIDX indexes per item" baseline ms "$r" "${times% *}"
			record B6 "$NIDX indexes per item" mzcoord ms "$r" "${times#* }"
		done
	fi

	say "filling the catalog to $((first_big - 1)) items"
	create_items fill 1 $((first_big - 1)) >/dev/null

	if want B6; then
		say "B6: creating items $first_big-$NCAT in a catalog of $NCAT"
		for r in $(seq 1 "$ROUNDS"); do
			record B6 "per item" mzcoord ms "$r" "$(create_items big "$first_big" "$NCAT")"
			drop_items big "$first_big" "$NCAT"
		done
	fi
	create_items big "$first_big" "$NCAT" >/dev/null
	say "waiting until the $NCAT tables are idle (bounds past their registration, nothing pending compaction)"
	settle_idle

	if want B7; then
		say "B7: tick with $NCAT registered tables"
		for r in $(seq 1 "$ROUNDS"); do
			record B7 "no writes" mzcoord ms_per_tick "$r" "$(mean_tick_ms)"
		done
		say "B7: tick with $NCAT registered tables, 1% of them written"
		local nw=$((NCAT / 100)) f=$BENCH_DIR/b7_writes.sql
		printf '\\set k random(1, %d)\nINSERT INTO fill:k VALUES (1);\n' "$nw" >"$f"
		chown "$MZ_USER" "$f"
		for r in $(seq 1 "$ROUNDS"); do
			runuser -u "$MZ_USER" -- "$PG_BIN/pgbench" -n -h "$SOCK" -p "$PORT" \
				-c 2 -j 2 -R 200 -T $((TICK_SECS + 2)) -f "$f" "$DB" >/dev/null 2>&1 &
			local pid=$!
			sleep 1
			record B7 "1% written" mzcoord ms_per_tick "$r" "$(mean_tick_ms)"
			wait $pid || true
		done
	fi

	if want B14; then
		say "B14: WAL per second, $NCAT registered tables, nothing written"
		settle_idle
		for r in $(seq 1 "$ROUNDS"); do
			record B14 "idle" mzcoord bytes_per_s "$r" "$(wal_bytes_per_s)"
		done
	fi

	if want B8; then
		say "B8: bootstrap after restart with $NCAT collections"
		for r in $(seq 1 "$ROUNDS"); do
			pgctl restart -m fast -w -l "$BENCH_DIR/server.log" >/dev/null
			wait_ready
			record B8 "$NCAT collections" mzcoord ms "$r" \
				"$(sql -c 'SELECT round(bootstrap_ms::numeric, 3) FROM mzcoord.controller_status()')"
			record B8 "$NCAT collections" baseline ms "$r" "$(sql -f "$MZ_BUILD/bench/read_catalog.sql")"
		done
	fi
}

# --------------------------------------------------------------------------
# B10: publication of compaction bounds, 1% and 100% of NPUB collections
# changed, vs one UPDATE of as many rows of a plain table from unnest lists
# --------------------------------------------------------------------------

# The duration of the tick that publishes the bounds of collections 1..$1 of
# b10_rels after their policies moved (retain history from 30000 days, under
# which the since never moves, to 1 second): the policies are changed in
# one transaction, then the tick whose commit makes the bound of the last of
# them visible is the one measured (worker_status().last_tick_ms).  The
# policies are moved back afterwards (the since stays where it is).
pub_tick_ms() {
	local c=$1
	sql <<SQL
DO \$\$
DECLARE
    probe text;
    old bigint;
    cur bigint;
    t_prev bigint;
    t_now bigint;
    ms float8;
BEGIN
    SELECT global_id INTO probe FROM b10_rels WHERE i = $c;
    SELECT bound INTO old FROM mzcoord.compaction_bounds WHERE global_id = probe;
    PERFORM mzcoord.set_retain_history(rel, '1 second') FROM b10_rels WHERE i <= $c;
    COMMIT;
    -- t_prev: the tick count read before a read that did not see the
    -- publication, so the publishing tick ends after it (ticks are a
    -- second apart; a poll takes a few ms).
    SELECT ticks INTO t_prev FROM mzcoord.worker_status();
    FOR n IN 1..60000 LOOP
        SELECT bound INTO cur FROM mzcoord.compaction_bounds WHERE global_id = probe;
        EXIT WHEN cur > old;
        SELECT ticks INTO t_prev FROM mzcoord.worker_status();
        PERFORM pg_sleep(0.002);
    END LOOP;
    LOOP
        SELECT ticks, last_tick_ms INTO t_now, ms FROM mzcoord.worker_status();
        EXIT WHEN t_now > t_prev;
        PERFORM pg_sleep(0.002);
    END LOOP;
    PERFORM set_config('bench.ms', CASE WHEN cur > old AND t_now = t_prev + 1
                                        THEN ms::text ELSE 'nan' END, false);
    PERFORM mzcoord.set_retain_history(rel, '30000 days') FROM b10_rels WHERE i <= $c;
    COMMIT;
END
\$\$;
SELECT round(current_setting('bench.ms')::numeric, 3);
SQL
	sleep 1.5	# the next publication of these collections is not rate-limited
}

bench_b10() {
	local n=$NPUB k=$((NPUB / 100))
	say "B10: publication with $n collections, $k (1%) and $n (100%) changed"
	pgctl stop -m fast -t 600 >/dev/null
	start_cluster "$BENCH_DIR/b10" $((n + 1000))
	say "B10: registering $n tables (retain history 30000 days: their sinces stay)"
	local t0=$SECONDS
	scale_register "$n" '30000 days'
	# The baseline: a plain table shaped like mzcoord.compaction_bounds, and
	# the lists its UPDATE reads.
	scale_baseline_tables "$n" "$k"
	echo "       registered in $((SECONDS - t0)) s"
	wait_ready
	sleep 3
	local base="UPDATE b10_base b SET bound = b.bound + v.bound, epoch = 1, published_at = now()
	              FROM b10_lists l, unnest(l.gids, l.bounds) AS v(gid, bound)
	             WHERE l.c = CNT AND b.global_id = v.gid"
	for r in $(seq 1 "$ROUNDS"); do
		record B10 "idle tick ($n colls)" mzcoord ms_per_tick "$r" "$(mean_tick_ms)"
		local m1 b1 ma ba
		m1=$(pub_tick_ms "$k"); record B10 "1% ($k) changed" mzcoord ms "$r" "$m1"
		b1=$(time_sql "${base//CNT/$k}"); record B10 "1% ($k) changed" baseline ms "$r" "$b1"
		ma=$(pub_tick_ms "$n"); record B10 "100% ($n) changed" mzcoord ms "$r" "$ma"
		ba=$(time_sql "${base//CNT/$n}"); record B10 "100% ($n) changed" baseline ms "$r" "$ba"
		record B10 "1%/100% (fraction)" mzcoord ratio "$r" \
			"$(awk -v a="$m1" -v b="$ma" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.4f\n", a / b; else print "nan" }')"
		record B10 "1%/100% (fraction)" baseline ratio "$r" \
			"$(awk -v a="$b1" -v b="$ba" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.4f\n", a / b; else print "nan" }')"
	done
}

# --------------------------------------------------------------------------
# B12: a sink exporting SINK_UPDATES updates vs an AFTER trigger writing the
# same rows to an outbox table
# --------------------------------------------------------------------------
# The sink's export runs in the coordinator, in transactions of at most
# 100000 updates, one per maintenance pass (after each tick).  Its work is
# the sum of the durations of those transactions (mzcoord.maintenance
# last_step_ms, read after each step: steps are a tick apart, the poll runs
# every 5 ms, and the steps counted are checked), from the write's commit
# until the sink's upper passes the write's time; it includes the steps
# that only advance the upper.  The trigger's work is the difference
# between the INSERT into a plain table with the trigger and without it.
# "write + export" adds the INSERT into the registered table (the capture,
# as in B3) and compares it with the INSERT with the trigger.  The latency
# from commit to exported (waits for ticks included) is reported for
# mzcoord only.

# sink_export <table> <sink> <generator query>: INSERT the generator's rows
# into the registered table <table>, which the sink <sink> (snapshot =>
# false) exports, and wait until the sink's upper passes the write's time.
# Prints "write_ms export_ms latency_ms export_steps exported_rows": the
# INSERT (server-side), the sum of the sink's step times
# (mzcoord.maintenance.last_step_ms) meanwhile, the time from the commit to
# the sink's upper passing it, how many steps were counted and how many
# rows the sink exported.
sink_export() {
	local tbl=$1 sink=$2 gen=$3
	# The write and the wait in one session: last_commit_ts() is the session's.
	sql <<SQL | tail -1
DO \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    INSERT INTO $tbl $gen;
    PERFORM set_config('bench.write', (extract(epoch FROM clock_timestamp() - t0) * 1000)::text, false);
END
\$\$;
SELECT set_config('bench.ts', mzcoord.last_commit_ts()::text, false) IS NULL;
DO \$\$
DECLARE
    t0 timestamptz := clock_timestamp();
    ts bigint := current_setting('bench.ts')::bigint;
    sid text := (SELECT id FROM mzcoord.items WHERE relation = '$sink'::regclass);
    u bigint; s bigint; ms float8; rows bigint;
    last_s bigint; rows0 bigint; work float8 := 0; counted bigint := 0;
BEGIN
    SELECT coalesce(steps, 0), coalesce(updates, 0) INTO last_s, rows0
      FROM mzcoord.items i LEFT JOIN mzcoord.maintenance m ON m.item_id = i.id WHERE i.id = sid;
    LOOP
        SELECT c.upper, m.steps, m.last_step_ms, m.updates INTO u, s, ms, rows
          FROM mzcoord.collections c LEFT JOIN mzcoord.maintenance m ON m.item_id = c.item_id
         WHERE c.global_id = sid;
        IF s > last_s THEN
            work := work + ms;
            counted := counted + 1;
            IF s > last_s + 1 THEN RAISE WARNING 'B12: % steps between two polls', s - last_s; END IF;
            last_s := s;
        END IF;
        EXIT WHEN u > ts;
        IF clock_timestamp() > t0 + interval '10 minutes' THEN
            RAISE EXCEPTION 'B12: the sink did not pass % in 10 minutes', ts;
        END IF;
        PERFORM pg_sleep(0.005);
    END LOOP;
    PERFORM set_config('bench.out', format('%s %s %s %s %s',
        round(current_setting('bench.write')::numeric, 3), round(work::numeric, 3),
        round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 3),
        counted, rows - rows0), false);
END
\$\$;
SELECT current_setting('bench.out');
SQL
}

bench_b12() {
	local n=$SINK_UPDATES
	local gen="SELECT g, g % 1000, md5(g::text) FROM generate_series(1, $n) g"
	say "B12: sink export of $n updates vs an AFTER trigger writing an outbox"
	sql -q -c "SET client_min_messages = warning;
	        DROP TABLE IF EXISTS b12p, b12q, b12_outbox;
	        DROP FUNCTION IF EXISTS b12_outbox_write();
	        CREATE TABLE b12_outbox (id bigint, k int, v text, mz_diff bigint);
	        CREATE FUNCTION b12_outbox_write() RETURNS trigger LANGUAGE plpgsql AS
	        \$f\$ BEGIN INSERT INTO b12_outbox VALUES (NEW.id, NEW.k, NEW.v, 1); RETURN NULL; END \$f\$;" >/dev/null
	for r in $(seq 1 "$ROUNDS"); do
		sql -q -c "SET client_min_messages = warning;
		        SELECT mzcoord.drop(to_regclass('b12'), true) WHERE to_regclass('b12') IS NOT NULL;
		        DROP TABLE IF EXISTS b12p, b12q; TRUNCATE b12_outbox;
		        CREATE TABLE b12 (id bigint, k int, v text); SELECT mzcoord.create_table('b12');
		        SELECT mzcoord.create_sink('b12_out', 'b12', false);
		        CREATE TABLE b12p (id bigint, k int, v text);
		        CREATE TRIGGER b12p_outbox AFTER INSERT ON b12p
		            FOR EACH ROW EXECUTE FUNCTION b12_outbox_write();
		        CREATE TABLE b12q (id bigint, k int, v text)" >/dev/null
		sleep 1
		local out write work latency steps exported trig plain
		out=$(sink_export b12 b12_out "$gen")
		read -r write work latency steps exported <<<"$out"
		echo "       export: $exported rows in $steps transactions"
		[ "$exported" = "$n" ] || { echo "B12: the sink exported $exported rows, not $n" >&2; exit 1; }
		if [ $((r % 2)) = 1 ]; then
			trig=$(time_sql "INSERT INTO b12p $gen"); plain=$(time_sql "INSERT INTO b12q $gen")
		else
			plain=$(time_sql "INSERT INTO b12q $gen"); trig=$(time_sql "INSERT INTO b12p $gen")
		fi
		record B12 "$n updates export" mzcoord ms "$r" "$work"
		record B12 "$n updates export" baseline ms "$r" "$(awk -v a="$trig" -v b="$plain" 'BEGIN { print a - b }')"
		record B12 "$n updates write+export" mzcoord ms "$r" "$(awk -v a="$write" -v b="$work" 'BEGIN { print a + b }')"
		record B12 "$n updates write+export" baseline ms "$r" "$trig"
		record B12 "$n commit->exported" mzcoord ms "$r" "$latency"
	done
	sql -q -c "SET client_min_messages = warning; SELECT mzcoord.drop('b12', cascade => true);
	        DROP TABLE b12p, b12q, b12_outbox;
	        DROP FUNCTION b12_outbox_write()" >/dev/null
}

# --------------------------------------------------------------------------
# B13: continual materialized view lag at an idle coordinator: from an input
# write's commit returning to the view being readable at the write's time
# (read_at of the view at last_commit_ts(), which waits for its upper), over
# LAG_WRITES single-row updates at a random phase of the tick, at the
# default tick interval (1000 ms) and at 100 ms.  Baseline: the same update
# of a plain table whose summary table a row trigger maintains, and a read
# of the summary after the commit returned.  Reported per write
# distribution: median and p99 of the lag, and of write + readable (from
# the start of the update).
# --------------------------------------------------------------------------
bench_b13() {
	local n=$LAG_WRITES
	say "B13: continual materialized view lag, $n writes per tick interval"
	sql >/dev/null <<'SQL'
CREATE TABLE b13 (k int, v int);
SELECT mzcoord.create_table('b13');
INSERT INTO b13 SELECT g, 0 FROM generate_series(1, 1000) g;
SELECT mzcoord.create_materialized_view('b13_mv',
    'SELECT k % 10 AS g, count(*) AS n, sum(v) AS s FROM b13 GROUP BY 1');
CREATE TABLE b13_base (k int, v int);
INSERT INTO b13_base SELECT g, 0 FROM generate_series(1, 1000) g;
CREATE INDEX ON b13_base (k);
CREATE TABLE b13_sum (g int PRIMARY KEY, n bigint, s bigint);
INSERT INTO b13_sum SELECT k % 10, count(*), sum(v) FROM b13_base GROUP BY 1;
CREATE FUNCTION b13_maintain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE b13_sum SET s = s - OLD.v WHERE g = OLD.k % 10;
    UPDATE b13_sum SET s = s + NEW.v WHERE g = NEW.k % 10;
    RETURN NULL;
END $$;
CREATE TRIGGER b13_maintain AFTER UPDATE ON b13_base
    FOR EACH ROW EXECUTE FUNCTION b13_maintain();
CREATE TABLE b13_lag (variant text, tick int, i int, lag_ms float8, e2e_ms float8);
VACUUM ANALYZE b13, b13_base, b13_sum;
SQL
	local tick
	for tick in 1000 100; do
		sql -c "ALTER SYSTEM SET mzcoord.tick_interval = $tick" -c "SELECT pg_reload_conf()" >/dev/null
		sleep 2
		sql <<SQL >/dev/null
DO \$\$
DECLARE
    t0 timestamptz; t1 timestamptz; t2 timestamptz; ts bigint; key int;
BEGIN
    FOR i IN 1..$n LOOP
        key := 1 + (i * 37) % 1000;
        -- Idle in between, at a random phase of the tick.
        PERFORM pg_sleep(random() * $tick / 1000.0 + 0.01);
        t0 := clock_timestamp();
        UPDATE b13 SET v = v + 1 WHERE k = key;
        COMMIT;
        t1 := clock_timestamp();
        ts := mzcoord.last_commit_ts();
        PERFORM count(*) FROM mzcoord.read_at(NULL::b13_mv, ts);
        t2 := clock_timestamp();
        INSERT INTO b13_lag VALUES ('mzcoord', $tick, i,
            extract(epoch FROM t2 - t1) * 1000, extract(epoch FROM t2 - t0) * 1000);
        COMMIT;
        t0 := clock_timestamp();
        UPDATE b13_base SET v = v + 1 WHERE k = key;
        COMMIT;
        t1 := clock_timestamp();
        PERFORM s FROM b13_sum WHERE g = key % 10;
        t2 := clock_timestamp();
        INSERT INTO b13_lag VALUES ('baseline', $tick, i,
            extract(epoch FROM t2 - t1) * 1000, extract(epoch FROM t2 - t0) * 1000);
        COMMIT;
    END LOOP;
END
\$\$;
SQL
		local variant stat
		for variant in mzcoord baseline; do
			for stat in 0.5 0.99; do
				local name
				name=$([ "$stat" = 0.5 ] && echo p50 || echo p99)
				record B13 "lag $name tick=${tick}ms" "$variant" ms 1 "$(sql -c "
					SELECT round(percentile_cont($stat) WITHIN GROUP (ORDER BY lag_ms)::numeric, 3)
					  FROM b13_lag WHERE variant = '$variant' AND tick = $tick")"
				record B13 "write+read $name tick=${tick}ms" "$variant" ms 1 "$(sql -c "
					SELECT round(percentile_cont($stat) WITHIN GROUP (ORDER BY e2e_ms)::numeric, 3)
					  FROM b13_lag WHERE variant = '$variant' AND tick = $tick")"
			done
		done
	done
	# The view is right at the end (a benchmark of a wrong answer is none).
	echo "       view equals its query: $(sql -c "
		SELECT count(*) = 0 FROM ((TABLE b13_mv EXCEPT ALL SELECT k % 10, count(*), sum(v) FROM b13 GROUP BY 1)
		                          UNION ALL (SELECT k % 10, count(*), sum(v) FROM b13 GROUP BY 1 EXCEPT ALL TABLE b13_mv)) x")"
	sql -c "ALTER SYSTEM RESET mzcoord.tick_interval" -c "SELECT pg_reload_conf()" >/dev/null
	sql -c "SELECT mzcoord.drop('b13_mv'); DROP TABLE b13, b13_base, b13_sum, b13_lag; DROP FUNCTION b13_maintain()" >/dev/null
}

# B16: a view's lag while another owner's view sleeps 20 s in every step
# (an IMMUTABLE function over its input), vs the same without it.  Lag as
# in B13 (commit to a read as of the commit time returning), default tick.
# "baseline" is the run without the slow neighbour, "mzcoord" the run with
# it, so the ratio is the slow-down it causes (goal <= 1.2).
bench_b16() {
	local n=$LAG_WRITES
	say "B16: view lag next to another owner's view that sleeps 20 s per step, $n writes"
	sql >/dev/null <<'SQL'
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'b16_slow') THEN CREATE ROLE b16_slow; END IF;
END $$;
GRANT CREATE ON SCHEMA public TO b16_slow;
CREATE FUNCTION public.b16_slowf(k int) RETURNS int IMMUTABLE LANGUAGE plpgsql
    AS $f$ BEGIN IF k > 0 THEN PERFORM pg_sleep(20); END IF; RETURN k; END $f$;
CREATE TABLE b16 (k int, v int);
SELECT mzcoord.create_table('b16');
INSERT INTO b16 SELECT g, 0 FROM generate_series(1, 1000) g;
SELECT mzcoord.create_materialized_view('b16_mv',
    'SELECT k % 10 AS g, count(*) AS n, sum(v) AS s FROM b16 GROUP BY 1');
SET ROLE b16_slow;
CREATE TABLE b16_slow (k int);
SELECT mzcoord.create_table('b16_slow');
SELECT mzcoord.create_materialized_view('b16_slow_mv',
    'SELECT k, public.b16_slowf(k) AS v FROM b16_slow');
RESET ROLE;
CREATE TABLE b16_lag (variant text, i int, lag_ms float8);
VACUUM ANALYZE b16;
SQL
	sleep 2
	local variant
	for variant in baseline mzcoord; do
		sql <<SQL >/dev/null
DO \$\$
DECLARE
    t1 timestamptz; t2 timestamptz; ts bigint; key int;
BEGIN
    FOR i IN 1..$n LOOP
        -- With the neighbour: it always has a new time to evaluate.
        IF '$variant' = 'mzcoord' AND i % 10 = 1 THEN
            INSERT INTO b16_slow VALUES (i);
            COMMIT;
        END IF;
        key := 1 + (i * 37) % 1000;
        PERFORM pg_sleep(random() + 0.01);
        UPDATE b16 SET v = v + 1 WHERE k = key;
        COMMIT;
        t1 := clock_timestamp();
        ts := mzcoord.last_commit_ts();
        PERFORM count(*) FROM mzcoord.read_at(NULL::b16_mv, ts);
        t2 := clock_timestamp();
        INSERT INTO b16_lag VALUES ('$variant', i, extract(epoch FROM t2 - t1) * 1000);
        COMMIT;
    END LOOP;
END
\$\$;
SQL
		local stat name
		for stat in 0.5 0.99; do
			name=$([ "$stat" = 0.5 ] && echo p50 || echo p99)
			record B16 "lag $name" "$variant" ms 1 "$(sql -c "
				SELECT round(percentile_cont($stat) WITHIN GROUP (ORDER BY lag_ms)::numeric, 3)
				  FROM b16_lag WHERE variant = '$variant'")"
		done
	done
	echo "       slow steps running at the end: $(sql -c "
		SELECT count(*) FROM pg_stat_activity
		 WHERE backend_type = 'mzcoord maintenance worker' AND query LIKE 'mzcoord refresh %' AND state = 'active'")"
	echo "       slow view failures (step timeout): $(sql -c "
		SELECT coalesce(failures, 0) FROM mzcoord.maintenance_status WHERE name = 'public.b16_slow_mv'")"
	sql -c "SELECT mzcoord.drop('b16_slow_mv')" -c "SELECT mzcoord.drop('b16_mv')" >/dev/null
	sql -c "DROP TABLE b16, b16_slow, b16_lag; DROP FUNCTION public.b16_slowf(int)" >/dev/null
}

# --------------------------------------------------------------------------
# B15: lag of continual views while 4 clients write their input
# --------------------------------------------------------------------------
# An incremental view (count/sum by group) and a recomputed one (min, max
# and avg of numeric by group: an avg of numeric is not incremental) over one table that 4 pgbench clients write with single-row
# transactions (each commit a time of its own) for B15_SECS seconds.  The
# lag (the table's upper minus the view's, ms) is sampled every second;
# p50/p99 over the run, and whether it grows (mean of the last third vs
# the first third).  The series goes to bench/results/b15_lag.csv.
bench_b15() {
	local secs=$([ $QUICK = 1 ] && echo 45 || echo 300)
	say "B15: view lag under 4 writers for ${secs}s"
	sql >/dev/null <<'SQL'
CREATE TABLE b15 (k int, g int, v int);
INSERT INTO b15 SELECT i, i % 100, i % 1000 FROM generate_series(1, 10000) i;
CREATE INDEX ON b15 (k);
SELECT mzcoord.create_table('b15');
SELECT mzcoord.create_materialized_view('b15_inc',
    'SELECT g, count(*) AS n, sum(v) AS s, count(v) AS nv FROM b15 GROUP BY g');
SELECT mzcoord.create_materialized_view('b15_rec',
    'SELECT g, min(v) AS lo, max(v) AS hi, avg(v::numeric) AS a FROM b15 GROUP BY g');
CREATE TABLE b15_lag (sec int, view text, lag_ms bigint);
VACUUM ANALYZE b15;
SQL
	local script=$BENCH_DIR/b15.sql
	cat >"$script" <<'PGB'
\set k random(1, 12000)
\set g random(0, 99)
\set v random(0, 999)
\set op random(1, 10)
\if :op <= 3
INSERT INTO b15 VALUES (:k, :g, :v);
\elif :op <= 8
UPDATE b15 SET v = :v WHERE k = :k;
\else
DELETE FROM b15 WHERE k = :k;
\endif
PGB
	chown "$MZ_USER" "$script"
	runuser -u "$MZ_USER" -- "$PG_BIN/pgbench" -n -h "$SOCK" -p "$PORT" \
		-c 4 -j 4 -T "$secs" -f "$script" "$DB" >"$BENCH_DIR/b15_pgbench.out" 2>&1 &
	local pgb=$! i=0 t0=$SECONDS
	# Sample while the writers write, each sample at its second of the run.
	while kill -0 "$pgb" 2>/dev/null; do
		sleep 1
		i=$((SECONDS - t0))
		[ "$i" -le "$secs" ] || break
		sql -c "INSERT INTO b15_lag
		        SELECT $i, i.name, t.upper - f.upper
		          FROM mzcoord.items i JOIN mzcoord.frontiers f ON f.item_id = i.id,
		               mzcoord.frontiers t JOIN mzcoord.items ti ON ti.id = t.item_id
		         WHERE i.name IN ('b15_inc', 'b15_rec') AND ti.name = 'b15'" >/dev/null
	done
	wait "$pgb" || true
	secs=$(sql -c "SELECT max(sec) FROM b15_lag")
	record B15 "writer tps (4 clients)" mzcoord tps 1 \
		"$(awk '/^tps = / { print $3; exit }' "$BENCH_DIR/b15_pgbench.out")"
	local view stat
	for view in b15_inc b15_rec; do
		for stat in 0.5 0.99; do
			record B15 "$view lag p$([ "$stat" = 0.5 ] && echo 50 || echo 99)" mzcoord ms 1 "$(sql -c "
				SELECT round(percentile_cont($stat) WITHIN GROUP (ORDER BY lag_ms)::numeric)
				  FROM b15_lag WHERE view = '$view'")"
		done
		record B15 "$view lag mean first third" mzcoord ms 1 "$(sql -c "
			SELECT round(avg(lag_ms)) FROM b15_lag WHERE view = '$view' AND sec <= $secs / 3")"
		record B15 "$view lag mean last third" mzcoord ms 1 "$(sql -c "
			SELECT round(avg(lag_ms)) FROM b15_lag WHERE view = '$view' AND sec > $secs - $secs / 3")"
	done
	mkdir -p "$RESULTS_DIR"
	sql -c "COPY (SELECT sec,
	                     max(lag_ms) FILTER (WHERE view = 'b15_inc') AS incremental_lag_ms,
	                     max(lag_ms) FILTER (WHERE view = 'b15_rec') AS recomputed_lag_ms
	                FROM b15_lag GROUP BY sec ORDER BY sec) TO STDOUT WITH (FORMAT csv, HEADER)" \
		>"$RESULTS_DIR/b15_lag.csv"
	plot_b15 "$RESULTS_DIR/b15_lag.csv" "$RESULTS_DIR/b15_lag.svg"
	# Right at the end (a benchmark of a wrong answer is none), once caught up.
	local ts
	ts=$(sql -c "INSERT INTO b15 VALUES (0, 0, 0)" -c "SELECT mzcoord.last_commit_ts()" | tail -1)
	echo "       views equal their queries: $(sql -c "
		SELECT (SELECT count(*) FROM ((SELECT * FROM mzcoord.read_at(NULL::b15_inc, $ts)
		          EXCEPT ALL SELECT g, count(*), sum(v), count(v) FROM mzcoord.read_at(NULL::b15, $ts) GROUP BY g)
		        UNION ALL (SELECT g, count(*), sum(v), count(v) FROM mzcoord.read_at(NULL::b15, $ts) GROUP BY g
		          EXCEPT ALL SELECT * FROM mzcoord.read_at(NULL::b15_inc, $ts))) x) = 0
		   AND (SELECT count(*) FROM ((SELECT * FROM mzcoord.read_at(NULL::b15_rec, $ts)
		          EXCEPT ALL SELECT g, min(v), max(v), avg(v::numeric) FROM mzcoord.read_at(NULL::b15, $ts) GROUP BY g)
		        UNION ALL (SELECT g, min(v), max(v), avg(v::numeric) FROM mzcoord.read_at(NULL::b15, $ts) GROUP BY g
		          EXCEPT ALL SELECT * FROM mzcoord.read_at(NULL::b15_rec, $ts))) x) = 0")"
	echo "       unevaluated ranges of b15_rec: $(sql -c "
		SELECT unevaluated_ranges FROM mzcoord.maintenance_status WHERE name = 'public.b15_rec'")"
	sql -c "SELECT mzcoord.drop('b15_inc'), mzcoord.drop('b15_rec'); DROP TABLE b15, b15_lag" >/dev/null
}

# --------------------------------------------------------------------------
# The peers a user would pick instead: periods (SQL:2011 system versioning,
# a history table written by row triggers, <table>__as_of(timestamptz)
# reads) for time travel, and wal2json (logical decoding) for change
# capture.  Debian packages; see install_peers.
# --------------------------------------------------------------------------

# A table (id bigint, k int, v text) with periods' system versioning: two
# timestamptz columns, its history table <name>_history and the function
# <name>__as_of(timestamptz).
periods_table() {
	sql -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS periods CASCADE" \
		-c "CREATE TABLE $1 (id bigint, k int, v text)" \
		-c "SELECT periods.add_system_time_period('$1')" \
		-c "SELECT periods.add_system_versioning('$1')" >/dev/null
}

drop_periods_table() {
	sql -c "SELECT periods.drop_system_versioning('$1', 'CASCADE', true)" \
		-c "DROP TABLE $1" >/dev/null
}

# B3p: bulk INSERT ... SELECT of BULK rows, registered vs periods
bench_b3p() {
	say "B3p: bulk INSERT of $BULK rows, registered table vs a periods table"
	local gen="SELECT g, g % 1000, md5(g::text) FROM generate_series(1, $BULK) g"
	for r in $(seq 1 "$ROUNDS"); do
		sql -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS b3pr" \
			-c "CREATE TABLE b3pr (id bigint, k int, v text); SELECT mzcoord.create_table('b3pr')" >/dev/null
		periods_table b3pp
		if [ $((r % 2)) = 1 ]; then
			record B3p "$BULK rows" mzcoord ms "$r" "$(time_sql "INSERT INTO b3pr $gen")"
			record B3p "$BULK rows" baseline ms "$r" "$(time_sql "INSERT INTO b3pp (id, k, v) $gen")"
		else
			record B3p "$BULK rows" baseline ms "$r" "$(time_sql "INSERT INTO b3pp (id, k, v) $gen")"
			record B3p "$BULK rows" mzcoord ms "$r" "$(time_sql "INSERT INTO b3pr $gen")"
		fi
		sql -c "DROP TABLE b3pr" >/dev/null
		drop_periods_table b3pp
	done
}

# B2p: single-row INSERT (pgbench, 1 and 8 clients), registered vs periods
bench_b2p() {
	say "B2p: single-row INSERT, registered table vs a periods table"
	sql -c "CREATE TABLE b2pr (id bigint, k int, v text); SELECT mzcoord.create_table('b2pr')" >/dev/null
	periods_table b2pp
	local mz=$BENCH_DIR/b2p_mz.sql base=$BENCH_DIR/b2p_base.sql
	printf "INSERT INTO b2pr VALUES (:client_id, 1, 'a short row');\n" >"$mz"
	printf "INSERT INTO b2pp (id, k, v) VALUES (:client_id, 1, 'a short row');\n" >"$base"
	pgbench_pair B2p "$mz" "$base"
	sql -c "DROP TABLE b2pr" >/dev/null
	drop_periods_table b2pp
}

# VACUUM ANALYZE a registered table and its history.
vacuum_registered() {
	sql -c "VACUUM ANALYZE $1" \
		-c "VACUUM ANALYZE $(sql -c "SELECT history FROM mzcoord.storage WHERE relation = '$1'::regclass")" >/dev/null
}

# Whether read_at of <registered table> at <mzcoord time> and <periods
# table>__as_of(<timestamptz>) give the same multiset of rows.
same_contents() {
	sql -c "SELECT count(*) = 0 FROM
	          ((SELECT * FROM mzcoord.read_at(NULL::$1, $2) EXCEPT ALL SELECT id, k, v FROM $3__as_of($4))
	           UNION ALL
	           (SELECT id, k, v FROM $3__as_of($4) EXCEPT ALL SELECT * FROM mzcoord.read_at(NULL::$1, $2))) x"
}

# B4p: read_at of READ_ROWS compacted rows vs periods' __as_of(now()) of
# the same rows (an empty history).  B5p: the same after RECENT updates
# (RECENT / 1000 transactions of 1,000 rows each) of both tables: read as
# of now, and as of the time after the first half of the updates.
bench_reads_periods() {
	local gen="SELECT g, g % 1000, md5(g::text) FROM generate_series(1, $READ_ROWS) g"
	if want B4p; then
		say "B4p: read_at of $READ_ROWS compacted rows vs periods' __as_of"
		sql -c "CREATE TABLE b4pm (id bigint, k int, v text); INSERT INTO b4pm $gen;
		        SELECT mzcoord.create_table('b4pm')" >/dev/null
		periods_table b4pp
		sql -c "INSERT INTO b4pp (id, k, v) $gen" >/dev/null
		sleep 2
		sql -c "SELECT mzcoord.compact('b4pm')" >/dev/null
		vacuum_registered b4pm
		sql -c "VACUUM ANALYZE b4pp" -c "VACUUM ANALYZE b4pp_history" >/dev/null
		local now_mz="(SELECT upper - 1 FROM mzcoord.frontiers WHERE relation = 'b4pm'::regclass)"
		local mz="COPY (SELECT * FROM mzcoord.read_at(NULL::b4pm, $now_mz)) TO '/dev/null'"
		local base="COPY (SELECT id, k, v FROM b4pp__as_of(now())) TO '/dev/null'"
		for r in $(seq 1 "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then
				record B4p "$READ_ROWS rows" mzcoord ms "$r" "$(time_sql "$mz")"
				record B4p "$READ_ROWS rows" baseline ms "$r" "$(time_sql "$base")"
			else
				record B4p "$READ_ROWS rows" baseline ms "$r" "$(time_sql "$base")"
				record B4p "$READ_ROWS rows" mzcoord ms "$r" "$(time_sql "$mz")"
			fi
		done
		echo "       same rows: $(same_contents b4pm "$now_mz" b4pp 'now()')"
		sql -c "DROP TABLE b4pm" >/dev/null
		drop_periods_table b4pp
	fi
	if want B5p; then
		local half=$((RECENT / 2000))
		say "B5p: read_at after $RECENT updates vs periods' __as_of, now and after $((half * 1000))"
		sql -c "CREATE TABLE b5pm (id bigint, k int, v text); INSERT INTO b5pm $gen;
		        SELECT mzcoord.create_table('b5pm', '1 hour')" >/dev/null
		periods_table b5pp
		sql -c "INSERT INTO b5pp (id, k, v) $gen" \
			-c "CREATE TABLE b5p_mid (mz bigint, pg timestamptz)" >/dev/null
		sql -c "DO \$\$ BEGIN FOR i IN 1..$((RECENT / 1000)) LOOP
		          UPDATE b5pm SET v = 'updated' WHERE id BETWEEN (i - 1) * 1000 + 1 AND i * 1000;
		          COMMIT;
		          IF i = $half THEN INSERT INTO b5p_mid VALUES (mzcoord.last_commit_ts(), NULL); COMMIT; END IF;
		          UPDATE b5pp SET v = 'updated' WHERE id BETWEEN (i - 1) * 1000 + 1 AND i * 1000;
		          COMMIT;
		          IF i = $half THEN UPDATE b5p_mid SET pg = clock_timestamp(); COMMIT; END IF;
		        END LOOP; END \$\$" >/dev/null
		vacuum_registered b5pm
		sql -c "VACUUM ANALYZE b5pp" -c "VACUUM ANALYZE b5pp_history" >/dev/null
		local now_mz="(SELECT upper - 1 FROM mzcoord.frontiers WHERE relation = 'b5pm'::regclass)"
		local mid_mz="(SELECT mz FROM b5p_mid)" mid_pg="(SELECT pg FROM b5p_mid)"
		local at mz base
		for at in now mid; do
			if [ $at = now ]; then
				mz="COPY (SELECT * FROM mzcoord.read_at(NULL::b5pm, $now_mz)) TO '/dev/null'"
				base="COPY (SELECT id, k, v FROM b5pp__as_of(now())) TO '/dev/null'"
			else
				mz="COPY (SELECT * FROM mzcoord.read_at(NULL::b5pm, $mid_mz)) TO '/dev/null'"
				base="COPY (SELECT id, k, v FROM b5pp__as_of($mid_pg)) TO '/dev/null'"
			fi
			for r in $(seq 1 "$ROUNDS"); do
				if [ $((r % 2)) = 1 ]; then
					record B5p "$RECENT updates as of $at" mzcoord ms "$r" "$(time_sql "$mz")"
					record B5p "$RECENT updates as of $at" baseline ms "$r" "$(time_sql "$base")"
				else
					record B5p "$RECENT updates as of $at" baseline ms "$r" "$(time_sql "$base")"
					record B5p "$RECENT updates as of $at" mzcoord ms "$r" "$(time_sql "$mz")"
				fi
			done
		done
		echo "       same rows as of now: $(same_contents b5pm "$now_mz" b5pp 'now()'), as of the middle: $(same_contents b5pm "$mid_mz" b5pp "$mid_pg")"
		sql -c "DROP TABLE b5pm, b5p_mid" >/dev/null
		drop_periods_table b5pp
	fi
}

# Server-side milliseconds of one query and the count(*) of its rows:
# prints "ms rows".
time_count_sql() {
	sql <<SQL
DO \$\$
DECLARE t0 timestamptz := clock_timestamp(); n bigint;
BEGIN
    EXECUTE \$q\$SELECT count(*) FROM ($1) x\$q\$ INTO n;
    PERFORM set_config('bench.ms', (extract(epoch FROM clock_timestamp() - t0) * 1000)::text, false);
    PERFORM set_config('bench.n', n::text, false);
END
\$\$;
SELECT round(current_setting('bench.ms')::numeric, 3) || ' ' || current_setting('bench.n');
SQL
}

# The cluster's wal_level is replica, as for every other benchmark; B12w
# needs logical: it switches the cluster to logical (and allows wal2json
# as an output plugin) for its own rounds and back to replica after them.
set_wal_level() {
	if [ "$1" = logical ]; then
		sql -c "ALTER SYSTEM SET wal_level = logical" \
			-c "ALTER SYSTEM SET output_plugin_libraries = 'pgoutput', 'test_decoding', 'wal2json'" >/dev/null
	else
		sql -c "ALTER SYSTEM RESET wal_level" -c "ALTER SYSTEM RESET output_plugin_libraries" >/dev/null
	fi
	pgctl restart -m fast -w -l "$BENCH_DIR/server.log" >/dev/null
	wait_ready
	echo "       wal_level = $(sql -c 'SHOW wal_level')"
}

# B12w: a sink exporting SINK_UPDATES updates (one INSERT ... SELECT into a
# registered table) vs decoding the same INSERT into a plain table from a
# wal2json slot (pg_logical_slot_get_changes, format 2: one row per change,
# only that table), both at wal_level = logical.  "export": the sink's
# steps (as in B12) vs the get_changes call; "write+export": plus the
# INSERT into the registered table vs plus the INSERT into the plain one.
bench_b12w() {
	local n=$SINK_UPDATES
	local gen="SELECT g, g % 1000, md5(g::text) FROM generate_series(1, $n) g"
	say "B12w: sink export of $n updates vs a wal2json slot"
	set_wal_level logical
	for r in $(seq 1 "$ROUNDS"); do
		sql -q -c "SET client_min_messages = warning;
		        SELECT mzcoord.drop(to_regclass('b12w'), true) WHERE to_regclass('b12w') IS NOT NULL;
		        DROP TABLE IF EXISTS b12w_q, b12w_flush;
		        CREATE TABLE b12w_flush (a int);
		        CREATE TABLE b12w (id bigint, k int, v text); SELECT mzcoord.create_table('b12w');
		        SELECT mzcoord.create_sink('b12w_out', 'b12w', false);
		        CREATE TABLE b12w_q (id bigint, k int, v text)" >/dev/null
		sleep 1
		local out write work latency steps exported pwrite decode rows
		out=$(sink_export b12w b12w_out "$gen")
		read -r write work latency steps exported <<<"$out"
		[ "$exported" = "$n" ] || { echo "B12w: the sink exported $exported rows, not $n" >&2; exit 1; }
		sql -c "SELECT 1 FROM pg_create_logical_replication_slot('b12w', 'wal2json')" >/dev/null
		pwrite=$(time_sql "INSERT INTO b12w_q $gen")
		# Decoding reads only WAL flushed to disk (synchronous_commit is off):
		# a write committed with synchronous_commit = on flushes it.
		sql -c "SET synchronous_commit = on" -c "INSERT INTO b12w_flush VALUES (1)" >/dev/null
		read -r decode rows <<<"$(time_count_sql "SELECT * FROM pg_logical_slot_get_changes('b12w', NULL, NULL,
			'format-version', '2', 'add-tables', 'public.b12w_q')
			WHERE data LIKE '{\"action\":\"I\"%'" | tail -1)"
		sql -c "SELECT pg_drop_replication_slot('b12w')" >/dev/null
		echo "       sink: $exported rows in $steps transactions; wal2json: $rows insertions"
		[ "$rows" = "$n" ] || { echo "B12w: wal2json gave $rows insertions, not $n" >&2; exit 1; }
		record B12w "$n updates export" mzcoord ms "$r" "$work"
		record B12w "$n updates export" baseline ms "$r" "$decode"
		record B12w "$n updates write+export" mzcoord ms "$r" "$(awk -v a="$write" -v b="$work" 'BEGIN { print a + b }')"
		record B12w "$n updates write+export" baseline ms "$r" "$(awk -v a="$pwrite" -v b="$decode" 'BEGIN { print a + b }')"
	done
	sql -q -c "SET client_min_messages = warning; SELECT mzcoord.drop('b12w', cascade => true);
	        DROP TABLE b12w_q, b12w_flush" >/dev/null
	set_wal_level replica
}

# B17: a streaming hot standby of the bench cluster (pg_basebackup -R, port
# PORT + 1, hot_standby_feedback on).
#  - read: read_at of READ_ROWS rows after RECENT updates, at one time, on
#    the standby (mzcoord) vs the same read on the primary (baseline);
#  - replay wait: from a write's commit on the primary until a standby read
#    at its commit timestamp answers (mzcoord), vs until the same row of a
#    plain table is visible on the standby (baseline, polled every
#    millisecond): the read waits for the table timeline's upper, which the
#    primary's coordinator logs at its tick (mzcoord.tick_interval);
#  - strict read: from a write's commit on the primary until a strict
#    serializable read on the standby (select_timestamp, which asks the
#    primary for its read timestamp, then read_at there) answers, vs the
#    same baseline.
ssql() {
	runuser -u "$MZ_USER" -- "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 \
		-h "$BENCH_DIR/standby" -p "$((PORT + 1))" -d "$DB" "$@"
}
# stime_sql <statement>: its time in ms on the standby (as time_sql)
stime_sql() { time_sql_with ssql "$1"; }

bench_b17() {
	local t n i
	say "B17: read_at on a streaming standby vs on the primary"
	sql -c "CREATE TABLE b17 (id bigint, k int, v text);
	        INSERT INTO b17 SELECT g, g % 1000, md5(g::text) FROM generate_series(1, $READ_ROWS) g;
	        SELECT mzcoord.create_table('b17', '1 hour');
	        CREATE TABLE b17p (id bigint)" >/dev/null
	sql -c "DO \$\$ BEGIN FOR i IN 1..$((RECENT / 1000)) LOOP
	          UPDATE b17 SET v = 'updated' WHERE id BETWEEN (i - 1) * 1000 + 1 AND i * 1000;
	          COMMIT; END LOOP; END \$\$" >/dev/null
	start_streaming_standby "$SOCK" "$PORT" "$BENCH_DIR/standby" "$((PORT + 1))"
	t=$(sql -c "SELECT mzcoord.select_timestamp(ARRAY['b17'::regclass])")
	# The first read waits until the standby replayed past t.
	n=$(ssql -c "SELECT count(*) FROM mzcoord.read_at(NULL::b17, $t)")
	[ "$n" = "$READ_ROWS" ] || { echo "B17: the standby read $n rows, not $READ_ROWS" >&2; exit 1; }
	for r in $(seq 1 "$ROUNDS"); do
		record B17 "read $READ_ROWS rows" mzcoord ms "$r" \
			"$(stime_sql "COPY (SELECT * FROM mzcoord.read_at(NULL::b17, $t)) TO '/dev/null'")"
		record B17 "read $READ_ROWS rows" baseline ms "$r" \
			"$(time_sql "COPY (SELECT * FROM mzcoord.read_at(NULL::b17, $t)) TO '/dev/null'")"
	done
	for r in $(seq 1 "$ROUNDS"); do
		i=$((READ_ROWS + r))
		t=$(sql -c "INSERT INTO b17 VALUES ($i, 0, 'new')" -c "SELECT mzcoord.last_commit_ts()")
		record B17 "replay wait" mzcoord ms "$r" \
			"$(stime_sql "SELECT count(*) FROM mzcoord.read_at(NULL::b17, $t) WHERE id = $i")"
		sql -c "INSERT INTO b17p VALUES ($i)"
		record B17 "replay wait" baseline ms "$r" \
			"$(stime_sql "DO \$d\$ BEGIN WHILE NOT EXISTS (SELECT FROM b17p WHERE id = $i) LOOP PERFORM pg_sleep(0.001); END LOOP; END \$d\$ ")"
	done
	for r in $(seq 1 "$ROUNDS"); do
		i=$((READ_ROWS + ROUNDS + r))
		sql -c "INSERT INTO b17 VALUES ($i, 0, 'new')"
		record B17 "strict read" mzcoord ms "$r" \
			"$(stime_sql "SELECT count(*) FROM mzcoord.read_at(NULL::b17, mzcoord.select_timestamp(ARRAY['b17'::regclass])) WHERE id = $i")"
		sql -c "INSERT INTO b17p VALUES ($i)"
		record B17 "strict read" baseline ms "$r" \
			"$(stime_sql "DO \$d\$ BEGIN WHILE NOT EXISTS (SELECT FROM b17p WHERE id = $i) LOOP PERFORM pg_sleep(0.001); END LOOP; END \$d\$ ")"
	done
	runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$BENCH_DIR/standby/data" stop -m fast >/dev/null
	sql -q -c "SET client_min_messages = warning; SELECT mzcoord.drop('b17'); DROP TABLE IF EXISTS b17, b17p" >/dev/null
}

# B18: pgbench TPC-B (the built-in tpcb-like script) at scale 10, 1, 4 and
# 8 clients: the four pgbench tables registered with mzcoord.create_table
# (schema b18r) vs the same tables plain (schema b18p), one after the other
# in each round (the order alternating), B18_SECS seconds each.  Besides the
# TPS, each run records the WAL a TPC-B transaction writes, read back with
# pg_waldump: the records carrying the transaction id of a transaction that
# inserted into pgbench_history (every TPC-B transaction does, once), commit
# record included, and their bytes without full-page images (those depend
# on when the last checkpoint was).  Cases "WAL records clients=<n>" and
# "WAL clients=<n>": medians over the transactions of a run's WAL, which
# neither the machine's load nor background work (autovacuum, compaction)
# changes.
pgbench_tpcb() {
	# pgbench_tpcb <schema> <clients>: prints the TPS, the WAL bytes and
	# records per transaction, and the CPU microseconds per transaction of
	# the server's processes and of pgbench
	local start end out rel
	rel=$(sql -c "SELECT d.oid || '/' || pg_relation_filenode('$1.pgbench_history')
	                FROM pg_database d WHERE d.datname = current_database()")
	start=$(sql -c "SELECT pg_current_wal_insert_lsn()")
	out=$(pgbench_measured env PGOPTIONS="-c search_path=$1" "$PG_BIN/pgbench" -n \
		-h "$SOCK" -p "$PORT" -c "$2" -j "$2" -T "$B18_SECS" -b tpcb-like "$DB")
	end=$(sql -c "SELECT pg_current_wal_insert_lsn()")
	# pg_waldump reads WAL files: wait for the WAL writer to flush the run.
	sql -c "DO \$\$ BEGIN WHILE pg_current_wal_flush_lsn() < '$end' LOOP PERFORM pg_sleep(0.05); END LOOP; END \$\$" >/dev/null
	{
		echo "$out"
		runuser -u "$MZ_USER" -- "$PG_BIN/pg_waldump" -p "$PGDATA/pg_wal" \
			-s "$start" -e "$end" 2>/dev/null
	} | awk -v rel="/$rel blk" '
		# The median of the values counted in hist (value -> how many),
		# of n in all: few distinct values, many transactions.
		function median(hist, n,    v, m, i, j, t, seen) {
			m = 0
			for (v in hist) keys[++m] = v + 0
			for (i = 2; i <= m; i++) { t = keys[i]; for (j = i - 1; j >= 1 && keys[j] > t; j--) keys[j + 1] = keys[j]; keys[j + 1] = t }
			seen = 0
			for (i = 1; i <= m; i++) { seen += hist[keys[i]]; if (seen * 2 >= n) return keys[i] }
			return 0
		}
		/^measured / { tps = $2; cpu = $3 " " $4 }
		/^rmgr: / {
			if (!match($0, /tx: +[0-9]+/)) next
			x = substr($0, RSTART + 4) + 0
			if (x == 0 || !match($0, /len \(rec\/tot\): +[0-9]+/)) next
			recs[x]++; bytes[x] += substr($0, RSTART + 14) + 0
			if (index($0, "desc: INSERT") && index($0, rel)) tpcb[x] = 1
		}
		END {
			for (x in tpcb) { n++; rh[recs[x]]++; bh[bytes[x]]++ }
			printf "%s %s ", tps, median(bh, n)
			delete keys
			printf "%s %s\n", median(rh, n), cpu
		}'
}

# b18_run <variant: mzcoord|baseline> <schema> <clients> <round>
b18_run() {
	local tps bytes records server client
	read -r tps bytes records server client < <(pgbench_tpcb "$2" "$3")
	record B18 "clients=$3" "$1" tps "$4" "$tps"
	record B18 "WAL clients=$3" "$1" bytes/tx "$4" "$bytes"
	record B18 "WAL records clients=$3" "$1" records/tx "$4" "$records"
	record B18 "server CPU clients=$3" "$1" us/tx "$4" "$server"
	record B18 "pgbench CPU clients=$3" "$1" us/tx "$4" "$client"
}

bench_b18() {
	say "B18: pgbench TPC-B scale 10, registered vs plain tables"
	local s
	for s in b18r b18p; do
		sql -c "CREATE SCHEMA $s" >/dev/null
		runuser -u "$MZ_USER" -- env PGOPTIONS="-c search_path=$s" "$PG_BIN/pgbench" -i -q \
			-s 10 -h "$SOCK" -p "$PORT" "$DB" >/dev/null 2>&1
	done
	sql -c "SELECT mzcoord.create_table(('b18r.' || t)::regclass)
	          FROM unnest(ARRAY['pgbench_accounts', 'pgbench_branches', 'pgbench_tellers', 'pgbench_history']) t" >/dev/null
	for s in accounts branches tellers history; do
		vacuum_registered "b18r.pgbench_$s"
		sql -c "VACUUM ANALYZE b18p.pgbench_$s" >/dev/null
	done
	local c r
	for c in 1 4 8; do
		for r in $(seq 1 "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then
				b18_run mzcoord b18r "$c" "$r"
				b18_run baseline b18p "$c" "$r"
			else
				b18_run baseline b18p "$c" "$r"
				b18_run mzcoord b18r "$c" "$r"
			fi
		done
	done
	sql -q -c "SET client_min_messages = warning" -c "DROP SCHEMA b18r, b18p CASCADE" >/dev/null
}

# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------

# Higher is better for TPS; lower for times and bytes.  The ratio is mzcoord/baseline
# of the medians; the spread is (max - min) / median per variant.  The round
# ratio is the median over the rounds of that round's mzcoord/baseline: the
# two run one after the other within a round, so it is not moved by the
# machine's speed drifting from round to round, which the ratio of the
# medians can be (both medians may come from different rounds).
report() {
	local csv=$RESULTS_DIR/$STAMP.csv json=$RESULTS_DIR/$STAMP.json
	mkdir -p "$RESULTS_DIR"
	awk -F, -v quick="$QUICK" '
	function median(arr, n,    i, j, t) {
		for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
		return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
	}
	{
		k = $1 SUBSEP $2 SUBSEP $3; key[$1 SUBSEP $2] = 1; metric[$1 SUBSEP $2] = $4
		n[k]++; v[k, n[k]] = $6; at[k, $5] = $6; rnd[$1 SUBSEP $2, $5] = 1
		if (!(k in mn) || $6 < mn[k]) mn[k] = $6
		if (!(k in mx) || $6 > mx[k]) mx[k] = $6
	}
	END {
		print "benchmark,case,metric,mzcoord_median,mzcoord_spread,baseline_median,baseline_spread,ratio,rounds,quick,round_ratio"
		for (kk in key) {
			split(kk, p, SUBSEP)
			for (w = 0; w < 2; w++) {
				var = w ? "baseline" : "mzcoord"; k = p[1] SUBSEP p[2] SUBSEP var
				if (n[k] == 0) { med[w] = ""; spr[w] = ""; continue }
				delete a; for (i = 1; i <= n[k]; i++) a[i] = v[k, i]
				med[w] = median(a, n[k]); spr[w] = med[w] ? (mx[k] - mn[k]) / med[w] : 0
			}
			ratio = (med[0] != "" && med[1] != "" && med[1] != 0) ? med[0] / med[1] : ""
			km = kk SUBSEP "mzcoord"; kb = kk SUBSEP "baseline"; m = 0; delete a
			for (rk in rnd) {
				split(rk, q, SUBSEP)
				if (q[1] SUBSEP q[2] != kk || !((km, q[3]) in at) || !((kb, q[3]) in at) || at[kb, q[3]] == 0) continue
				a[++m] = at[km, q[3]] / at[kb, q[3]]
			}
			rratio = m ? median(a, m) : ""
			printf "%s,%s,%s,%s,%s,%s,%s,%s,%d,%d,%s\n", p[1], p[2], metric[kk], med[0], spr[0], med[1], spr[1], ratio, n[k], quick, rratio
		}
	}' "$RAW" | { IFS= read -r header; echo "$header"; sort -t, -k1,1V -k2,2; } >"$csv"

	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[i] = $i; print "["; next }
		{ printf "%s  {", (NR > 2 ? ",\n" : "");
		  for (i = 1; i <= NF; i++) printf "%s\"%s\": %s", (i > 1 ? ", " : ""), h[i], ($i ~ /^-?[0-9.]+(e-?[0-9]+)?$/ ? $i : "\"" $i "\"");
		  printf "}" }
		END { print "\n]" }' "$csv" >"$json"
	cp "$csv" "$RESULTS_DIR/latest.csv"
	cp "$json" "$RESULTS_DIR/latest.json"

	say "results ($(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), PostgreSQL $("$PG_BIN/postgres" -V | awk '{print $3}'), $([ $QUICK = 1 ] && echo quick || echo full))"
	column -t -s, "$csv"
	echo
	echo "written: $csv"
	echo "         $json"

	# The charts of this run (bench/plot.sh): <time>.ratios.svg and, with
	# cases at several client counts, <time>.clients.svg; copied to
	# latest.*.svg.  A chart that cannot be drawn costs the run nothing.
	local stem=${csv%.csv} chart
	rm -f "$RESULTS_DIR"/latest.ratios.svg "$RESULTS_DIR"/latest.clients.svg
	if "$MZ_SRC/bench/plot.sh" "$csv" "$stem."; then
		for chart in ratios clients; do
			if [ -f "$stem.$chart.svg" ]; then cp "$stem.$chart.svg" "$RESULTS_DIR/latest.$chart.svg"; fi
		done
	else
		echo "no charts drawn (bench/plot.sh failed)" >&2
	fi
}

require_root
# column(1) for the report; the peers periods and wal2json; gnuplot for
# the charts (bench/plot.sh, bench/scale.sh)
ensure_packages bsdextrautils postgresql-15-periods postgresql-15-wal2json gnuplot-nox
sync_build_tree
build_and_install
install_peers
# A B10 cluster left running by an interrupted run would lose its files to
# start_cluster (which empties $BENCH_DIR) and keep running: stop it first.
if [ -f "$BENCH_DIR/b10/data/postmaster.pid" ]; then
	runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$BENCH_DIR/b10/data" stop -m fast >/dev/null || true
fi
start_cluster
: >"$RAW"

want B1 && bench_b1
want B2 && bench_b2
want B3 && bench_b3
if want B4 || want B5; then bench_reads; fi
want B9 && bench_b9
want B11 && bench_b11
want B12 && bench_b12
want B12w && bench_b12w
want B3p && bench_b3p
want B2p && bench_b2p
if want B4p || want B5p; then bench_reads_periods; fi
want B17 && bench_b17
want B18 && bench_b18
if want B6 || want B7 || want B8 || want B14; then bench_catalog; fi
want B13 && bench_b13
want B15 && bench_b15
want B16 && bench_b16
want B10 && bench_b10	# it replaces the cluster with one of its own
# Only when asked for (--only SCALE): it registers up to 100,000 tables.
[[ ",$ONLY," == *",SCALE,"* ]] && bench_scale

report
# The last cluster started (SCALE and B10 stop theirs themselves).
[ -f "$PGDATA/postmaster.pid" ] && pgctl stop -m fast -t 600 >/dev/null
exit 0
