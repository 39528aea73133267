#!/usr/bin/env bash
# Builds and installs mzcoord, starts a private preloaded cluster, and shows
# the system working.  Usage (as root, on Debian 12):
#
#   scripts/demo.sh          build, install, (re)start the demo cluster, demo
#   scripts/demo.sh stop     stop the demo cluster
#
# Settings: MZCOORD_DEMO_DIR (default /var/tmp/mzcoord-demo),
#           MZCOORD_DEMO_PORT (default 5499).
source "$(dirname "$0")/common.sh"

DEMO_DIR=${MZCOORD_DEMO_DIR:-/var/tmp/mzcoord-demo}
PORT=${MZCOORD_DEMO_PORT:-5499}
PGDATA="$DEMO_DIR/data"
DB=mzdemo

pgctl() { runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$PGDATA" "$@"; }
psql_demo() {
	runuser -u "$MZ_USER" -- "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 \
		-h "$DEMO_DIR" -p "$PORT" -d "$DB" "$@"
}

require_root

if [ "${1:-}" = stop ]; then
	if [ -f "$PGDATA/postmaster.pid" ]; then
		pgctl stop -m fast
	else
		echo "no demo cluster running in $PGDATA"
	fi
	exit 0
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
