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
# rsvg-convert for the pictures' check (shape)
ensure_packages librsvg2-bin
sync_build_tree
build_and_install
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
	*) echo "unknown suite: $s" >&2; exit 2 ;;
	esac
done
say "all suites passed: ${suites[*]}"
