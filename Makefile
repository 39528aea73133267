# mzcoord: PGXS build, pinned to PostgreSQL 15.
#
#   make                 build mzcoord.so and the install script
#   make install         install into PostgreSQL 15 (as root)
#   make installcheck    pg_regress, isolation and TAP suites, each on its own
#                        temporary, preloaded cluster (run as an unprivileged user)
#   make unitcheck       cmocka unit tests of the pure core (src/core) and of
#                        the test-only models (test/unit/model_*)
#   make fuzzcheck       libFuzzer targets for a bounded time (FUZZ_SECONDS)
#
# scripts/test.sh runs all of them the way CI does.

PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config

MODULE_big = mzcoord
# src/core is the pure core; every other folder under src is one plane of
# the PostgreSQL glue (see doc/architecture.md).  Each plane's headers are
# included by their bare names, so no plane folder shadows a server header.
PLANES = base records timeline controller funcs storage catalog compute worker init
CORE_SRCS = $(sort $(wildcard src/core/*.c))
GLUE_SRCS = $(sort $(foreach p,$(PLANES),$(wildcard src/$(p)/*.c)))
OBJS = $(CORE_SRCS:.c=.o) $(GLUE_SRCS:.c=.o)

EXTENSION = mzcoord

# The catalog version: mzcoord.control's default_version, which must equal
# MZC_CATALOG_VERSION in src/base/ids.h (the library runs against that
# catalog only; checked when the install script is built).
CATALOG_VERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" mzcoord.control)

# The install script of the current version is assembled from one fragment
# per subsystem, in name order.  The install script of 0.1 is kept frozen,
# so that CREATE EXTENSION mzcoord VERSION '0.1' still works; an older
# catalog than the current one (VERSION '0.2' and later) is installed from
# it and the upgrade scripts, which PostgreSQL chains.
# Upgrade scripts are assembled from the new fragments (verbatim), the
# changed functions of older fragments (extracted by name, as CREATE OR
# REPLACE) and a hand-written backfill: see src/sql/upgrade.
SQL_PARTS = $(sort $(wildcard src/sql/*.sql))
DATA = src/sql/frozen/mzcoord--0.1.sql
DATA_built = mzcoord--$(CATALOG_VERSION).sql mzcoord--0.1--0.2.sql \
	mzcoord--0.2--0.3.sql mzcoord--0.3--0.4.sql mzcoord--0.4--0.5.sql \
	mzcoord--0.5--0.6.sql mzcoord--0.6--0.7.sql mzcoord--0.7--0.8.sql \
	mzcoord--0.8--0.9.sql

# Fragments that are new in 0.2: all of their objects are created by the
# upgrade from 0.1, in this order.
UPGRADE_0.1--0.2_NEW = src/sql/35_authority.sql src/sql/36_leases.sql src/sql/37_explain.sql
# Fragments new in 0.3 (issue 12: maintained objects at work).
UPGRADE_0.2--0.3_NEW = src/sql/60_maintenance.sql src/sql/61_sinks.sql
# Fragments new in 0.4 (issue 19: hardening).
UPGRADE_0.3--0.4_NEW = src/sql/70_hardening.sql
# Fragments new in 0.5 (issue 20: keeping up).
UPGRADE_0.4--0.5_NEW = src/sql/80_publication.sql src/sql/81_compute.sql \
	src/sql/82_maintenance_workers.sql
# Fragments new in 0.6 (issue 20: one durable since, one table upper).
UPGRADE_0.5--0.6_NEW = src/sql/83_shared_timeline.sql
# Fragments new in 0.7 (issue 23: replacing a view's definition; issue 24:
# metrics).
UPGRADE_0.6--0.7_NEW = src/sql/84_replacement.sql src/sql/85_metrics.sql
# No fragment is new in 0.8 (one changed function: apply_replacement's
# error ranges are written by src/records).
UPGRADE_0.7--0.8_NEW =
# No fragment is new in 0.9, nor any function changed: each history's index
# of every row on ts becomes an index of its insertions (issue 21), which
# the backfill does.
UPGRADE_0.8--0.9_NEW =

PG_CPPFLAGS = $(foreach p,core $(PLANES),-I$(srcdir)/src/$(p))
PG_CFLAGS = -Wall -Wmissing-prototypes -Wpointer-arith -Wendif-labels \
	-Wmissing-format-attribute -Wformat-security $(if $(WERROR),-Werror)

# pg_regress: every sql/*.sql, "setup" first (it creates the extension and
# the helpers the others use), the rest in name order.
REGRESS = setup $(filter-out setup,$(sort $(basename $(notdir $(wildcard $(srcdir)/sql/*.sql)))))
REGRESS_OPTS = --temp-config=$(srcdir)/test/regress.conf \
	--temp-instance=./tmp_regress

ISOLATION = $(sort $(basename $(notdir $(wildcard $(srcdir)/test/specs/*.spec))))
ISOLATION_OPTS = --inputdir=$(srcdir)/test \
	--temp-config=$(srcdir)/test/isolation.conf \
	--temp-instance=./tmp_isolation --load-extension=mzcoord

TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

EXTRA_CLEAN = tmp_regress tmp_isolation $(UNIT_BINS) \
	$(FUZZ_BINS) results regression.diffs regression.out

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

mzcoord--$(CATALOG_VERSION).sql: $(SQL_PARTS) src/base/ids.h mzcoord.control
	@grep -q '^#define MZC_CATALOG_VERSION "$(CATALOG_VERSION)"$$' src/base/ids.h || \
		{ echo "MZC_CATALOG_VERSION in src/base/ids.h is not default_version '$(CATALOG_VERSION)' of mzcoord.control" >&2; exit 1; }
	cat $(SQL_PARTS) > $@

# mzcoord--A--B.sql, the upgrade from catalog A to B: the fragments new in
# B (UPGRADE_A--B_NEW, verbatim), the changed functions of older fragments
# (src/sql/upgrade/A--B.replace), then the hand-written backfill
# (src/sql/upgrade/A--B-backfill.sql).
mzcoord--0.1--0.2.sql: $(UPGRADE_0.1--0.2_NEW)
mzcoord--0.2--0.3.sql: $(UPGRADE_0.2--0.3_NEW)
mzcoord--0.3--0.4.sql: $(UPGRADE_0.3--0.4_NEW)
mzcoord--0.4--0.5.sql: $(UPGRADE_0.4--0.5_NEW)
mzcoord--0.5--0.6.sql: $(UPGRADE_0.5--0.6_NEW)
mzcoord--0.6--0.7.sql: $(UPGRADE_0.6--0.7_NEW)
mzcoord--0.7--0.8.sql: $(UPGRADE_0.7--0.8_NEW)
mzcoord--0.8--0.9.sql: $(UPGRADE_0.8--0.9_NEW)
mzcoord--%.sql: src/sql/upgrade/%.replace src/sql/upgrade/%-backfill.sql \
		$(SQL_PARTS) scripts/extract_sql.pl
	set -e; { \
	  printf '%s\n' '-- mzcoord upgrade from catalog $(subst --, to ,$*), assembled by the Makefile.' \
		'\echo Use "ALTER EXTENSION mzcoord UPDATE" to load this file. \quit'; \
	  for f in $(UPGRADE_$*_NEW); do printf '\n-- From %s\n' $$f; cat $$f; done; \
	  printf '\n-- Changed functions of older fragments (src/sql/upgrade/$*.replace)\n\n'; \
	  perl scripts/extract_sql.pl src/sql/upgrade/$*.replace $(SQL_PARTS); \
	  printf '\n'; \
	  cat src/sql/upgrade/$*-backfill.sql; \
	} > $@.tmp
	mv $@.tmp $@

# ---------------------------------------------------------------------------
# Unit tests of the pure core: no PostgreSQL headers, linked with cmocka.
# ---------------------------------------------------------------------------
UNIT_SRCS = $(sort $(wildcard test/unit/test_*.c))
UNIT_BINS = $(patsubst test/unit/test_%.c,test/unit/run_%,$(UNIT_SRCS))
# Models that only the unit tests use (test/unit/model_*.c): linked into
# each test program, never into mzcoord.so.
MODEL_SRCS = $(sort $(wildcard test/unit/model_*.c))
UNIT_CFLAGS = -std=c99 -O1 -g -Wall -Wextra -Wno-unused-parameter \
	$(if $(WERROR),-Werror) -Isrc/core -Itest/unit

test/unit/run_%: test/unit/test_%.c $(CORE_SRCS) $(MODEL_SRCS) $(wildcard src/core/*.h) $(wildcard test/unit/*.h)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(CORE_SRCS) $(MODEL_SRCS) -lcmocka -lm

.PHONY: unitcheck
unitcheck: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

# ---------------------------------------------------------------------------
# Fuzzing with libFuzzer (clang), each target for FUZZ_SECONDS seconds.
# ---------------------------------------------------------------------------
FUZZ_SECONDS ?= 20
FUZZ_SRCS = $(sort $(wildcard test/fuzz/fuzz_*.c))
FUZZ_BINS = $(FUZZ_SRCS:.c=)
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc/core

test/fuzz/fuzz_%: test/fuzz/fuzz_%.c $(CORE_SRCS) $(wildcard src/core/*.h)
	clang $(FUZZ_CFLAGS) -o $@ $< $(CORE_SRCS)

.PHONY: fuzzcheck
fuzzcheck: $(FUZZ_BINS)
	@set -e; for f in $(FUZZ_BINS); do \
		echo "fuzzing $$f for $(FUZZ_SECONDS)s"; \
		rm -rf $$f.corpus; mkdir -p $$f.corpus; \
		if [ -d $$f.seeds ]; then cp $$f.seeds/* $$f.corpus/; fi; \
		$$f -max_total_time=$(FUZZ_SECONDS) -seed=1 -print_final_stats=1 $$f.corpus >$$f.log 2>&1 \
			|| { tail -60 $$f.log; exit 1; }; \
		grep -E '^stat::number_of_executed_units' $$f.log || true; \
	done
