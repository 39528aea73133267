#!/usr/bin/env bash
# Builds and installs mzcoord, starts a private preloaded cluster, and shows
# the system working.  Usage (as root, on Debian 12):
#
#   scripts/demo.sh          build, install, (re)start the demo cluster, demo
#   scripts/demo.sh standby  the same cluster with a streaming hot standby
#                            (port + 1): reads on the standby (doc/replication.md)
#   scripts/demo.sh stop     stop the demo cluster (and its standby)
#
# Settings: MZCOORD_DEMO_DIR (default /var/tmp/mzcoord-demo),
#           MZCOORD_DEMO_PORT (default 5499).
source "$(dirname "$0")/common.sh"

DEMO_DIR=${MZCOORD_DEMO_DIR:-/var/tmp/mzcoord-demo}
PORT=${MZCOORD_DEMO_PORT:-5499}
PGDATA="$DEMO_DIR/data"
DB=mzdemo

STANDBY_DIR="$DEMO_DIR/standby"
SPORT=$((PORT + 1))

pgctl() { runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$PGDATA" "$@"; }
psql_demo() {
	runuser -u "$MZ_USER" -- "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 \
		-h "$DEMO_DIR" -p "$PORT" -d "$DB" "$@"
}
psql_standby() {
	runuser -u "$MZ_USER" -- "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 \
		-h "$STANDBY_DIR" -p "$SPORT" -d "$DB" "$@"
}

require_root

if [ "${1:-}" = stop ]; then
	if [ -f "$STANDBY_DIR/data/postmaster.pid" ]; then
		runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$STANDBY_DIR/data" stop -m fast
	fi
	if [ -f "$PGDATA/postmaster.pid" ]; then
		pgctl stop -m fast
	else
		echo "no demo cluster running in $PGDATA"
	fi
	exit 0
fi
MODE=${1:-}
if [ -n "$MODE" ] && [ "$MODE" != standby ]; then
	echo "usage: $0 [standby|stop]" >&2
	exit 2
fi
if [ -f "$STANDBY_DIR/data/postmaster.pid" ]; then
	runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$STANDBY_DIR/data" stop -m fast >/dev/null || true
fi

ensure_packages
sync_build_tree
build_and_install

say "starting a private cluster in $PGDATA on port $PORT"
init_private_cluster "$DEMO_DIR" "$PORT" "$DB" "mzcoord.tick_interval = 200"

say "CREATE EXTENSION mzcoord"
psql_demo -c 'CREATE EXTENSION mzcoord'

say "waiting for the coordinator to tick"
for _ in $(seq 1 100); do
	st=$(psql_demo -At -c "SELECT state FROM mzcoord.worker_status()")
	[ "$st" = running ] && break
	sleep 0.1
done
psql_demo -x -c 'SELECT * FROM mzcoord.worker_status()'
psql_demo -c "SELECT pid, backend_type, datname FROM pg_stat_activity WHERE backend_type LIKE 'mzcoord%' ORDER BY 2"

if [ "$MODE" = standby ]; then
	say "a registered table with rows written at two times"
	psql_demo -c "CREATE TABLE orders (id int, item text, qty int)" \
		-c "INSERT INTO orders VALUES (1, 'apples', 3), (2, 'pears', 5)" \
		-c "SELECT mzcoord.create_table('orders', '1 hour')"
	say "a streaming hot standby on port $SPORT (pg_basebackup -R)"
	start_streaming_standby "$DEMO_DIR" "$PORT" "$STANDBY_DIR" "$SPORT"
	t1=$(psql_demo -At -c "UPDATE orders SET qty = qty + 1 WHERE id = 1" -c "SELECT mzcoord.last_commit_ts()")
	t2=$(psql_demo -At -c "INSERT INTO orders VALUES (3, 'plums', 7)" -c "DELETE FROM orders WHERE id = 2" \
		-c "SELECT mzcoord.last_commit_ts()")
	say "on the primary, as of t1 = $t1 and t2 = $t2"
	psql_demo -e -c "SELECT * FROM mzcoord.read_at(NULL::orders, $t1) ORDER BY id" \
		-c "SELECT * FROM mzcoord.read_at(NULL::orders, $t2) ORDER BY id"
	say "on the standby: the same reads (each waits until the standby replayed its time)"
	psql_standby -e -c "SELECT * FROM mzcoord.read_at(NULL::orders, $t1) ORDER BY id" \
		-c "SELECT * FROM mzcoord.read_at(NULL::orders, $t2) ORDER BY id" \
		-c "SELECT mz_timestamp, mz_diff, (\"row\").* FROM mzcoord.changes(NULL::orders, $t1 - 1, $t2) ORDER BY 1, 2"
	say "on the standby: a strict serializable time (asked of the primary) and a serializable one"
	psql_demo -At -c "INSERT INTO orders VALUES (4, 'figs', 1)"
	psql_standby -e <<'SQL'
SELECT mzcoord.select_timestamp(ARRAY['orders'::regclass]) AS t \gset
SELECT * FROM mzcoord.read_at(NULL::orders, :t) ORDER BY id;
SELECT mzcoord.explain_timestamp(ARRAY['orders'::regclass], 'serializable');
SQL
	say "on the standby: everything else is refused as a write in recovery"
	psql_standby -c "SELECT mzcoord.create_lease('l', ARRAY['orders'::regclass])" || true
	cat <<TXT

==> the demo cluster and its standby are running
    primary:  psql -h $DEMO_DIR -p $PORT -U $MZ_USER $DB
    standby:  psql -h $STANDBY_DIR -p $SPORT -U $MZ_USER $DB
    stop:     $0 stop
TXT
	exit 0
fi

if [ -f "$MZ_SRC/doc/walkthrough.sql" ]; then
	say "walkthrough (doc/walkthrough.sql)"
	psql_demo -e -f "$MZ_BUILD/doc/walkthrough.sql"
fi

cat <<TXT

==> the demo cluster is running
    connect:  psql -h $DEMO_DIR -p $PORT -U $MZ_USER $DB
    log:      $DEMO_DIR/server.log
    stop:     $0 stop
TXT
