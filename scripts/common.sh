# Shared by scripts/test.sh, scripts/demo.sh and bench/run.sh: set-up on a
# fresh Debian 12 machine, and an out-of-tree build owned by the unprivileged
# user that runs the servers (initdb refuses to run as root).

set -euo pipefail

MZ_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MZ_USER=${MZCOORD_USER:-postgres}
MZ_BUILD=${MZCOORD_BUILD_DIR:-/var/tmp/mzcoord-build}

# MZCOORD_PGROOT=<dir> builds, installs and tests against a private, relocated
# copy of the PostgreSQL 15 installation under <dir> (owned by the test user),
# so that several checkouts can be tested at once without overwriting each
# other's installed extension.  Default: the system installation.
MZ_PGROOT=${MZCOORD_PGROOT:-}
PG_CONFIG=${MZ_PGROOT}/usr/lib/postgresql/15/bin/pg_config
PG_BIN=${MZ_PGROOT}/usr/lib/postgresql/15/bin

say() { printf '\n==> %s\n' "$*"; }

as_user() { runuser -u "$MZ_USER" -- env -C "$MZ_BUILD" "$@"; }

require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "run this as root: it installs packages and the extension" >&2
		exit 1
	fi
}

# Install the Debian packages we need, only those missing.
ensure_packages() {
	local want=(postgresql-15 postgresql-server-dev-15 postgresql-contrib
		libipc-run-perl libcmocka-dev clang-14 llvm-14 make gcc rsync pkg-config
		"$@")
	local missing=()
	local p
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		say "installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
	# The Debian package starts a cluster of its own on 5432; we never use it.
	id "$MZ_USER" >/dev/null 2>&1 || {
		echo "user $MZ_USER does not exist" >&2
		exit 1
	}
	# clang for the fuzzers: Debian names it clang-14.
	command -v clang >/dev/null 2>&1 || ln -sf /usr/bin/clang-14 /usr/local/bin/clang
}

# Debian's prometheus-postgres-exporter, for the metrics test
# (test/t/054_prometheus.pl), which runs its own instance on 127.0.0.1.
# The package would start a service listening on every address: a
# policy-rc.d that refuses keeps it from starting while it is installed.
ensure_exporter() {
	dpkg-query -W -f='${Status}' prometheus-postgres-exporter 2>/dev/null |
		grep -q 'install ok installed' && return 0
	say "installing prometheus-postgres-exporter (its service not started)"
	local guard=/usr/sbin/policy-rc.d
	local had_guard=
	[ -e "$guard" ] && had_guard=1
	[ -n "$had_guard" ] || { printf '#!/bin/sh\nexit 101\n' >"$guard"; chmod +x "$guard"; }
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends prometheus-postgres-exporter >/dev/null
	[ -n "$had_guard" ] || rm -f "$guard"
}

# Copy the source tree to the build directory, owned by the test user.
sync_build_tree() {
	mkdir -p "$MZ_BUILD"
	rsync -a --delete \
		--exclude .git --exclude '*.o' --exclude '*.bc' --exclude '*.so' \
		--exclude '/tmp_*' --exclude '/results' --exclude '/output_iso' \
		--exclude '/log' --exclude '/bench/results' \
		"$MZ_SRC/" "$MZ_BUILD/"
	chown -R "$MZ_USER": "$MZ_BUILD"
}

# Make the private PostgreSQL copy of MZCOORD_PGROOT if it is missing.
ensure_pgroot() {
	[ -n "$MZ_PGROOT" ] || return 0
	[ -x "$PG_CONFIG" ] && return 0
	say "copying PostgreSQL 15 to $MZ_PGROOT"
	mkdir -p "$MZ_PGROOT/usr/lib/postgresql" "$MZ_PGROOT/usr/share/postgresql" "$MZ_PGROOT/usr/include"
	cp -a /usr/lib/postgresql/15 "$MZ_PGROOT/usr/lib/postgresql/"
	cp -a /usr/share/postgresql/15 "$MZ_PGROOT/usr/share/postgresql/"
	cp -a /usr/include/postgresql "$MZ_PGROOT/usr/include/"
	chown -R "$MZ_USER": "$MZ_PGROOT"
}

build_and_install() {
	ensure_pgroot
	say "building mzcoord in $MZ_BUILD"
	# Always from scratch: rsync keeps the sources' times, and PGXS tracks no
	# header dependencies, so objects of an earlier tree could survive.
	as_user make -s PG_CONFIG="$PG_CONFIG" clean >/dev/null
	as_user make -s PG_CONFIG="$PG_CONFIG" WERROR=1 -j"$(nproc)"
	say "installing mzcoord into $("$PG_CONFIG" --pkglibdir)"
	if [ -n "$MZ_PGROOT" ]; then
		as_user make -s PG_CONFIG="$PG_CONFIG" install >/dev/null
	else
		make -s -C "$MZ_BUILD" PG_CONFIG="$PG_CONFIG" install >/dev/null
	fi
}

# A private, preloaded cluster for the demo and the benchmarks, owned by the
# test user, reachable only through a socket in its own directory.
#   init_private_cluster <dir> <port> <database> [postgresql.conf lines]
# Any cluster already running in <dir> is stopped and removed first.
init_private_cluster() {
	local dir=$1 port=$2 db=$3 extra=${4:-}
	local data=$dir/data
	if [ -f "$data/postmaster.pid" ]; then
		runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$data" stop -m fast >/dev/null || true
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	chown "$MZ_USER": "$dir"
	runuser -u "$MZ_USER" -- "$PG_BIN/initdb" -D "$data" --auth=trust \
		--username="$MZ_USER" >/dev/null
	cat >>"$data/postgresql.conf" <<CONF
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'mzcoord'
mzcoord.database = '$db'
$extra
CONF
	runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$data" start -w \
		-l "$dir/server.log" >/dev/null
	runuser -u "$MZ_USER" -- "$PG_BIN/createdb" -h "$dir" -p "$port" "$db"
}

# start_streaming_standby <primary socket dir> <primary port> <dir> <port>:
# a hot standby of the running private cluster in <dir>/data
# (pg_basebackup -R, hot_standby_feedback on), started on <port> with its
# socket in <dir>.  Anything in <dir> is removed first.
start_streaming_standby() {
	local psock=$1 pport=$2 dir=$3 port=$4
	rm -rf "$dir"
	mkdir -p "$dir"
	chown "$MZ_USER": "$dir"
	runuser -u "$MZ_USER" -- "$PG_BIN/pg_basebackup" -h "$psock" -p "$pport" \
		-D "$dir/data" -R -X stream -c fast
	cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
unix_socket_directories = '$dir'
hot_standby_feedback = on
CONF
	runuser -u "$MZ_USER" -- "$PG_BIN/pg_ctl" -D "$dir/data" start -w \
		-l "$dir/server.log" >/dev/null
}

# The last commit whose catalog is version 0.1 (its library and install
# script): test/t/019_upgrade.pl upgrades a cluster that ran it.
MZ_CATALOG_0_1_COMMIT=f9976c3

# Build and install the 0.1 library, from the repository's history, into a
# PostgreSQL copy of its own next to the build tree (${MZ_BUILD}-0.1/pgroot),
# once per commit; MZCOORD_OLD_INSTALL then names its installation for the
# TAP suite.  Without git history (a plain copy of the tree) nothing is
# built and 019_upgrade.pl skips the part that needs the old library.
build_old_install() {
	local old=${MZ_BUILD}-0.1
	local root=$old/pgroot
	local bin=$root/usr/lib/postgresql/15
	local stamp=$old/installed-commit
	if ! git -C "$MZ_SRC" rev-parse -q --verify "$MZ_CATALOG_0_1_COMMIT^{commit}" >/dev/null 2>&1; then
		echo "no git history: the 0.1 library is not built, 019_upgrade.pl skips its old-library part" >&2
		return 0
	fi
	if [ "$(cat "$stamp" 2>/dev/null)" != "$MZ_CATALOG_0_1_COMMIT" ]; then
		say "building the 0.1 library ($MZ_CATALOG_0_1_COMMIT) into $root"
		rm -rf "$old"
		mkdir -p "$old/src" "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/usr/include"
		cp -a /usr/lib/postgresql/15 "$root/usr/lib/postgresql/"
		cp -a /usr/share/postgresql/15 "$root/usr/share/postgresql/"
		cp -a /usr/include/postgresql "$root/usr/include/"
		git -C "$MZ_SRC" archive "$MZ_CATALOG_0_1_COMMIT" | tar -x -C "$old/src"
		chown -R "$MZ_USER": "$old"
		runuser -u "$MZ_USER" -- make -s -C "$old/src" PG_CONFIG="$bin/bin/pg_config" -j"$(nproc)" >/dev/null
		runuser -u "$MZ_USER" -- make -s -C "$old/src" PG_CONFIG="$bin/bin/pg_config" install >/dev/null
		echo "$MZ_CATALOG_0_1_COMMIT" >"$stamp"
	fi
	export MZCOORD_OLD_INSTALL=$bin
}
