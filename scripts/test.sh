#!/usr/bin/env bash
# Runs every test suite of mzcoord; exits non-zero on the first failure.
#
#   shape       the tree's shape: planes, one owner per header, no include
#               cycle (scripts/check_shape.pl, doc/architecture.md); and
#               the pictures: every SVG of the docs and charts renders,
#               every picture link resolves (scripts/check_svgs.sh); the
#               Grafana dashboard names only exported metrics
#               (scripts/check_dashboard.pl)
#   unit        cmocka tests of the pure core (src/core)
#   fuzz        libFuzzer targets, FUZZ_SECONDS each (default 15)
#   regress     pg_regress on a temporary preloaded cluster
#   isolation   isolation specs on a temporary preloaded cluster
#   tap         restart, crash and worker-life tests; the metrics through
#               prometheus-postgres-exporter (installed, its service not
#               started)
#   package     the Debian package postgresql-15-mzcoord: built with
#               dpkg-buildpackage, installed with dpkg -i, the regress suite
#               against the installed files, removed with dpkg -r (not in the
#               default list; see package_suite below)
#
# Usage (as root, on Debian 12): scripts/test.sh [suite...]
#
# A subset of one suite, while working on it: ONLY="name ..." runs only
# those regress tests (after setup), isolation specs or TAP files
# (e.g. ONLY=leases scripts/test.sh regress; ONLY=018_leases scripts/test.sh tap).
source "$(dirname "$0")/common.sh"

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(shape unit fuzz regress isolation tap)

require_root
# rsvg-convert for the pictures' check (shape); the package suite's build
# dependencies.
case " ${suites[*]} " in
*" package "*) ensure_packages librsvg2-bin build-essential debhelper dpkg-dev postgresql-server-dev-all ;;
*) ensure_packages librsvg2-bin ;;
esac
sync_build_tree
# shape and package use no installation of the build tree: when they are
# all that runs, nothing is built or installed.
for s in "${suites[@]}"; do
	case $s in shape | package) ;; *)
		build_and_install
		break
		;;
	esac
done
# The 0.1 library, for the upgrade test (test/t/019_upgrade.pl).
case " ${suites[*]} " in *" tap "*) build_old_install; ensure_exporter ;; esac

show_failure() {
	local f
	for f in "$MZ_BUILD"/regression.diffs "$MZ_BUILD"/output_iso/regression.diffs; do
		[ -f "$f" ] && { echo "---- $f"; head -300 "$f"; }
	done
	for f in "$MZ_BUILD"/tmp_check/log/regress_log_* ; do
		[ -f "$f" ] && grep -q 'not ok\|Dubious\|died' "$f" && { echo "---- $f"; tail -80 "$f"; }
	done
	for f in "$MZ_BUILD"/tmp_check/log/*.log "$MZ_BUILD"/log/postmaster.log "$MZ_BUILD"/output_iso/log/postmaster.log; do
		[ -f "$f" ] && grep -q 'PANIC\|TRAP\|terminated by signal' "$f" && { echo "---- $f"; grep -B5 -A5 'PANIC\|TRAP\|terminated by signal' "$f" | head -80; }
	done
	return 0
}

run_suite() {
	local name=$1
	shift
	say "suite: $name"
	local t0=$SECONDS
	if ! as_user "$@"; then
		show_failure
		echo "FAILED: $name" >&2
		exit 1
	fi
	echo "suite $name passed in $((SECONDS - t0))s"
}

# The package suite (issue 24).  It builds postgresql-15-mzcoord from a clean
# copy of the tree with "dpkg-buildpackage -us -uc -b" (debian/rules: dh with
# pg_buildext), installs it with "dpkg -i", runs the regress suite on a
# temporary preloaded instance of the system's PostgreSQL 15 against the
# files dpkg installed, then removes it with "dpkg -r".  Everything is done in
# ${MZ_BUILD}-deb: src/ (the package build, the .deb files beside it) and
# check/ (the regress run: "make installcheck" in a copy that is never built
# nor installed, so the server can only load the package's library and SQL
# scripts; the suite checks that no object was built there).
#
# What it decides about the machine:
# - The package installs into the system's PostgreSQL 15, whatever
#   MZCOORD_PGROOT says (a private copy is for "make install", not for dpkg).
# - The other suites run "make install": into MZCOORD_PGROOT when it is set,
#   otherwise into those same system directories, as files no package owns.
#   dpkg -i would take such files over silently and dpkg -r delete them.  So
#   the suite moves mzcoord files that no package owns aside (to
#   ${MZ_BUILD}-deb/stash) before dpkg -i, and puts them back after dpkg -r,
#   also when it fails: a suite run after it finds what was there before.  An
#   installed postgresql-15-mzcoord (a run that was killed) is removed first.
#   Do not run it while another checkout tests against the system
#   installation (without MZCOORD_PGROOT).
# - After dpkg -r no mzcoord file may remain in the system directories.
# - It is not in the default list (and so not in CI): the full run is close
#   to the time CI allows, and the suite installs into the system, which the
#   default list does not need.  Run it on its own: scripts/test.sh package.
PKG_NAME=postgresql-15-mzcoord
PKG_DIR=${MZ_BUILD}-deb
SYS_PG=/usr/lib/postgresql/15
SYS_PG_CONFIG=$SYS_PG/bin/pg_config
SYS_EXT=/usr/share/postgresql/15/extension

# mzcoord's entries in the system directories (the bitcode folder as one).
system_mzcoord_entries() {
	find "$SYS_PG/lib" "$SYS_PG/lib/bitcode" "$SYS_EXT" -maxdepth 1 -name 'mzcoord*' 2>/dev/null | sort
}

pkg_installed() {
	dpkg-query -W -f='${Status}' "$PKG_NAME" 2>/dev/null | grep -q 'install ok installed'
}

stash_unowned() {
	local e owner
	mkdir -p "$PKG_DIR/stash"
	: >"$PKG_DIR/stash.list"
	for e in $(system_mzcoord_entries); do
		if owner=$(dpkg -S "$e" 2>/dev/null); then
			echo "$e belongs to a package (${owner%%:*}); remove it first" >&2
			return 1
		fi
		mkdir -p "$PKG_DIR/stash$(dirname "$e")"
		mv "$e" "$PKG_DIR/stash$e"
		echo "$e" >>"$PKG_DIR/stash.list"
	done
	[ ! -s "$PKG_DIR/stash.list" ] ||
		echo "moved aside $(wc -l <"$PKG_DIR/stash.list") mzcoord entries that no package owns (a make install)"
}

# Puts back what stash_unowned moved aside; also after a run that was killed.
restore_stash() {
	local e
	[ -f "$PKG_DIR/stash.list" ] || return 0
	while read -r e; do
		if [ -e "$PKG_DIR/stash$e" ]; then
			rm -rf "$e"
			mv "$PKG_DIR/stash$e" "$e"
		fi
	done <"$PKG_DIR/stash.list"
	rm -rf "$PKG_DIR/stash" "$PKG_DIR/stash.list"
}

package_cleanup() {
	if pkg_installed; then
		dpkg -r "$PKG_NAME" >/dev/null || true
	fi
	restore_stash
}

package_fail() {
	echo "$*" >&2
	echo "FAILED: package" >&2
	exit 1
}

# A copy of the source tree without .git and without anything a build makes.
copy_source() {
	mkdir -p "$2"
	rsync -a --delete --exclude .git --exclude '*.o' --exclude '*.bc' --exclude '*.so' \
		--exclude '/mzcoord--*.sql' --exclude '/tmp_*' --exclude '/results' \
		--exclude '/output_iso' --exclude '/log' --exclude '/bench/results' \
		--exclude '/debian/.debhelper' --exclude '/debian/postgresql-*-mzcoord' \
		--exclude '/debian/files' --exclude '/debian/*.substvars' \
		--exclude '/debian/debhelper-build-stamp' \
		"$1/" "$2/"
}

package_suite() {
	say "suite: package"
	local t0=$SECONDS
	local version deb e owner n=0
	version=$(sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" "$MZ_SRC/mzcoord.control")
	[ "$(dpkg-parsechangelog -l "$MZ_SRC/debian/changelog" -S Version)" = "$version" ] ||
		package_fail "debian/changelog's version is not default_version '$version' of mzcoord.control"

	package_cleanup
	trap package_cleanup EXIT
	rm -rf "$PKG_DIR"
	mkdir -p "$PKG_DIR"
	copy_source "$MZ_SRC" "$PKG_DIR/src"
	copy_source "$MZ_SRC" "$PKG_DIR/check"
	chown -R "$MZ_USER": "$PKG_DIR"

	echo "dpkg-buildpackage -us -uc -b in $PKG_DIR/src (log: $PKG_DIR/build.log)"
	if ! runuser -u "$MZ_USER" -- env -C "$PKG_DIR/src" \
		dpkg-buildpackage -us -uc -b -jauto >"$PKG_DIR/build.log" 2>&1; then
		tail -60 "$PKG_DIR/build.log"
		package_fail "dpkg-buildpackage failed"
	fi
	deb=$PKG_DIR/${PKG_NAME}_${version}_$(dpkg --print-architecture).deb
	[ -f "$deb" ] || package_fail "no $deb"
	echo "built $deb"

	# The package holds the library and every SQL script the Makefile
	# installs: the control file, the current install script, the frozen
	# install scripts and one upgrade script per src/sql/upgrade/*.replace.
	local want=("$SYS_PG/lib/mzcoord.so" "$SYS_EXT/mzcoord.control" "$SYS_EXT/mzcoord--$version.sql")
	for e in "$MZ_SRC"/src/sql/frozen/mzcoord--*.sql; do want+=("$SYS_EXT/$(basename "$e")"); done
	for e in "$MZ_SRC"/src/sql/upgrade/*.replace; do want+=("$SYS_EXT/mzcoord--$(basename "$e" .replace).sql"); done
	local contents
	contents=$(dpkg-deb -c "$deb" | awk '{ print substr($6, 2) }')
	for e in "${want[@]}"; do
		grep -qxF "$e" <<<"$contents" || package_fail "$deb lacks $e"
	done
	echo "the package holds the ${#want[@]} files the Makefile installs (library, control file, SQL scripts) and $(grep -c '\.bc$' <<<"$contents") bitcode files"

	stash_unowned
	dpkg -i "$deb"
	local entries
	entries=$(system_mzcoord_entries)
	[ -n "$entries" ] || package_fail "dpkg -i installed no mzcoord file"
	for e in $(find $entries -type f); do
		owner=$(dpkg -S "$e" 2>/dev/null) || package_fail "$e is not from $PKG_NAME"
		[ "${owner%%:*}" = "$PKG_NAME" ] || package_fail "$e is from ${owner%%:*}"
		n=$((n + 1))
	done
	echo "$n mzcoord files in $SYS_PG and $SYS_EXT, all from $PKG_NAME"

	echo "regress against the installed package (make installcheck in $PKG_DIR/check, not built)"
	if ! runuser -u "$MZ_USER" -- env -C "$PKG_DIR/check" make -s PG_CONFIG="$SYS_PG_CONFIG" \
		installcheck ISOLATION= TAP_TESTS= "${only_regress[@]}"; then
		[ -f "$PKG_DIR/check/regression.diffs" ] && head -300 "$PKG_DIR/check/regression.diffs"
		package_fail "regress against the installed package failed"
	fi
	[ -z "$(find "$PKG_DIR/check" \( -name '*.so' -o -name '*.o' -o -name "mzcoord--*.sql" \) -not -path '*/src/sql/*')" ] ||
		package_fail "something was built in $PKG_DIR/check: the regress run did not use the package alone"

	dpkg -r "$PKG_NAME"
	[ -z "$(system_mzcoord_entries)" ] ||
		package_fail "dpkg -r left: $(system_mzcoord_entries | tr '\n' ' ')"
	echo "removed: no mzcoord file left in $SYS_PG or $SYS_EXT"
	restore_stash
	trap - EXIT
	echo "suite package passed in $((SECONDS - t0))s"
}

M=(make -s PG_CONFIG="$PG_CONFIG" WERROR=1)
only_regress=() only_iso=() only_tap=()
if [ -n "${ONLY:-}" ]; then
	only_regress=(REGRESS="setup ${ONLY}")
	only_iso=(ISOLATION="${ONLY}")
	only_tap=(PROVE_TESTS="$(printf 'test/t/%s.pl ' ${ONLY})")
fi
for s in "${suites[@]}"; do
	case $s in
	shape)
		run_suite shape perl scripts/check_shape.pl
		# The Grafana dashboard names only metrics the exporter exposes.
		run_suite "shape (dashboard)" perl scripts/check_dashboard.pl .
		# The pictures, in the source tree itself: the build tree has no
		# bench/results and no git to say which charts are committed.
		say "suite: shape (pictures)"
		t0=$SECONDS
		"$MZ_SRC/scripts/check_svgs.sh" "$MZ_SRC" || { echo "FAILED: shape (pictures)" >&2; exit 1; }
		echo "suite shape (pictures) passed in $((SECONDS - t0))s" ;;
	unit) run_suite unit "${M[@]}" unitcheck ;;
	fuzz) run_suite fuzz "${M[@]}" fuzzcheck FUZZ_SECONDS="${FUZZ_SECONDS:-15}" ;;
	regress) run_suite regress "${M[@]}" installcheck ISOLATION= TAP_TESTS= "${only_regress[@]}" ;;
	isolation) run_suite isolation "${M[@]}" installcheck REGRESS= TAP_TESTS= "${only_iso[@]}" ;;
	tap) run_suite tap "${M[@]}" installcheck REGRESS= ISOLATION= PROVE_FLAGS=--timer "${only_tap[@]}" ;;
	package) package_suite ;;
	*) echo "unknown suite: $s" >&2; exit 2 ;;
	esac
done
say "all suites passed: ${suites[*]}"
