/*
 * Unit tests of src/core/asof.c: the eight as-of selection scenarios of
 * reference 3.5 (Materialize's as_of_selection.rs tests, newest revision)
 * and property tests over random dataflow graphs.
 */
#include <string.h>

#include "testutil.h"

#include "asof.h"

#define SEALED (-1)
#define MAXN 16

/* A scenario in the notation of the reference. */
typedef struct sc_storage
{
	const char *id;
	int64_t		since;			/* SEALED for {} */
	int64_t		upper;
} sc_storage;

typedef struct sc_dataflow
{
	const char *id;
	const char *inputs[4];		/* NULL-terminated */
	int			policy;			/* 0 none, 1 lag, 2 valid_from */
	int64_t		a,
				b;				/* lag/granularity, or the valid_from time */
	int64_t		expect;			/* SEALED for {} */
} sc_dataflow;

static mzc_frontier
fr(int64_t v)
{
	return v == SEALED ? EMPTY : AT(v);
}

static int
find_storage(const sc_storage *s, int n, const char *id)
{
	int			i;

	for (i = 0; i < n; i++)
		if (strcmp(s[i].id, id) == 0)
			return i;
	return -1;
}

static int
find_dataflow(const sc_dataflow *d, int n, const char *id)
{
	int			i;

	for (i = 0; i < n; i++)
		if (strcmp(d[i].id, id) == 0)
			return i;
	return -1;
}

static void
run_scenario(const sc_storage *s, int ns, const sc_dataflow *d, int nd,
			 mzc_ts now, bool read_only)
{
	mzc_asof_storage storage[MAXN];
	mzc_asof_dataflow flows[MAXN];
	int32_t		sin[MAXN][4],
				cin[MAXN][4];
	mzc_asof_request req;
	mzc_asof_stats stats;
	int			i,
				j;

	for (i = 0; i < ns; i++)
	{
		storage[i].since = fr(s[i].since);
		storage[i].upper = fr(s[i].upper);
	}
	memset(flows, 0, sizeof(flows));
	for (i = 0; i < nd; i++)
	{
		mzc_asof_dataflow *f = &flows[i];

		for (j = 0; d[i].inputs[j] != NULL; j++)
		{
			int			k = find_storage(s, ns, d[i].inputs[j]);

			if (k >= 0)
				sin[i][f->nstorage_inputs++] = k;
			else
			{
				k = find_dataflow(d, nd, d[i].inputs[j]);
				assert_true(k >= 0);
				cin[i][f->ncompute_inputs++] = k;
			}
		}
		f->storage_inputs = sin[i];
		f->compute_inputs = cin[i];
		f->export_storage = find_storage(s, ns, d[i].id);
		if (d[i].policy == 1)
		{
			f->has_policy = true;
			assert_int_equal(mzc_policy_lag(d[i].a, d[i].b, &f->policy, NULL),
							 MZC_OK);
		}
		else if (d[i].policy == 2)
		{
			f->has_policy = true;
			f->policy = mzc_policy_valid_from(AT(d[i].a));
		}
	}
	req.storage = storage;
	req.nstorage = ns;
	req.dataflows = flows;
	req.ndataflows = nd;
	req.now = now;
	req.read_only = read_only;
	assert_int_equal(mzc_select_as_ofs(&req, &stats, NULL), MZC_OK);
	/* Materialize's tests soft-panic on a failed hard constraint. */
	assert_int_equal(stats.hard_failures, 0);
	for (i = 0; i < nd; i++)
	{
		if (!mzc_frontier_eq(flows[i].as_of, fr(d[i].expect)))
			fail_msg("%s: as-of %s%lld, expected %lld", d[i].id,
					 flows[i].as_of.empty ? "{}" : "",
					 (long long) flows[i].as_of.ts, (long long) d[i].expect);
	}
}

#define NS(a) ((int) (sizeof(a) / sizeof((a)[0])))

static void
test_upstream_storage_constraints(void **state)
{
	sc_storage	s[] = {{"s1", 10, 20}, {"s2", 20, 30}};
	sc_dataflow d[] = {
		{"u1", {"s1"}, 0, 0, 0, 10},
		{"u2", {"s2"}, 0, 0, 0, 20},
		{"u3", {"s1", "s2"}, 0, 0, 0, 20},
		{"u4", {"u1", "u2"}, 0, 0, 0, 20},
	};

	run_scenario(s, NS(s), d, NS(d), 0, false);
}

static void
test_downstream_storage_constraints(void **state)
{
	sc_storage	s[] = {{"s1", 10, 20}, {"u3", 10, 15}, {"u4", 10, 13}};
	sc_dataflow d[] = {
		{"u1", {"s1"}, 0, 0, 0, 19},
		{"u2", {"s1"}, 0, 0, 0, 12},
		{"u3", {"u2"}, 0, 0, 0, 14},
		{"u4", {"u2"}, 0, 0, 0, 12},
	};

	run_scenario(s, NS(s), d, NS(d), 100, false);
}

static void
test_warmup_constraints(void **state)
{
	sc_storage	s[] = {{"s1", 10, 20}, {"s2", 10, 30}, {"s3", 10, 40},
	{"s4", 10, 50}};
	sc_dataflow d[] = {
		{"u1", {"s1"}, 0, 0, 0, 19},
		{"u2", {"s2"}, 0, 0, 0, 19},
		{"u3", {"s3"}, 0, 0, 0, 39},
		{"u4", {"s4"}, 0, 0, 0, 39},
		{"u5", {"u1", "u2"}, 0, 0, 0, 19},
		{"u6", {"u3", "u4"}, 0, 0, 0, 39},
	};

	run_scenario(s, NS(s), d, NS(d), 100, false);
}

static void
test_index_read_policy_constraints(void **state)
{
	sc_storage	s[] = {{"s1", 10, 20}, {"u6", 10, 18}};
	sc_dataflow d[] = {
		{"u1", {"s1"}, 1, 5, 1, 15},
		{"u2", {"s1"}, 1, 15, 1, 10},
		{"u3", {"s1"}, 2, 13, 0, 13},
		{"u4", {"s1"}, 2, 5, 0, 10},
		{"u5", {NULL}, 1, 5, 1, 95},
		{"u6", {"s1"}, 2, 13, 0, 17},
	};

	run_scenario(s, NS(s), d, NS(d), 100, false);
}

static void
test_index_current_time_constraints(void **state)
{
	sc_storage	s[] = {{"s1", 10, 20}, {"s2", 20, 30}, {"u4", 10, 12},
	{"u5", 10, 18}};
	sc_dataflow d[] = {
		{"u1", {"s1"}, 0, 0, 0, 15},
		{"u2", {"s2"}, 0, 0, 0, 20},
		{"u3", {"s1"}, 0, 0, 0, 11},
		{"u4", {"u3"}, 0, 0, 0, 11},
		{"u5", {"s1"}, 0, 0, 0, 17},
		{"u6", {NULL}, 0, 0, 0, 15},
	};

	run_scenario(s, NS(s), d, NS(d), 15, false);
}

static void
test_sealed_storage_sink(void **state)
{
	sc_storage	s[] = {{"s1", 10, 20}, {"u1", 10, SEALED}};
	sc_dataflow d[] = {
		{"u1", {"s1"}, 0, 0, 0, SEALED},
	};

	run_scenario(s, NS(s), d, NS(d), 100, false);
}

static void
test_read_only_dropped_storage_inputs(void **state)
{
	sc_storage	s[] = {{"s1", 10, 20}, {"s2", SEALED, SEALED}, {"u4", 10, 20}};
	sc_dataflow d[] = {
		{"u1", {"s1"}, 0, 0, 0, 15},
		{"u2", {"s2"}, 0, 0, 0, SEALED},
		{"u3", {"s1", "s2"}, 0, 0, 0, SEALED},
		{"u4", {"u2"}, 0, 0, 0, SEALED},
	};

	run_scenario(s, NS(s), d, NS(d), 15, true);
}

static void
test_github_9273(void **state)
{
	sc_storage	s[] = {{"s1", 10, 20}, {"u3", 14, 15}};
	sc_dataflow d[] = {
		{"u1", {"s1"}, 1, 1, 1, 14},
		{"u2", {"u1"}, 1, 1, 1, 19},
		{"u3", {"u1"}, 0, 0, 0, 14},
	};

	run_scenario(s, NS(s), d, NS(d), 100, false);
}

/* Invalid requests: out of range inputs and cycles. */
static void
test_invalid_requests(void **state)
{
	mzc_asof_storage storage[1];
	mzc_asof_dataflow flows[3];
	int32_t		c0[1] = {2},
				c1[1] = {0},
				c2[1] = {1},
				bad[1] = {7};
	mzc_asof_request req;
	mzc_asof_stats stats;
	mzc_error	err;

	storage[0].since = AT(1);
	storage[0].upper = AT(5);
	memset(flows, 0, sizeof(flows));
	flows[0].compute_inputs = c0;
	flows[0].ncompute_inputs = 1;
	flows[0].export_storage = -1;
	flows[1].compute_inputs = c1;
	flows[1].ncompute_inputs = 1;
	flows[1].export_storage = -1;
	flows[2].compute_inputs = c2;
	flows[2].ncompute_inputs = 1;
	flows[2].export_storage = -1;
	req.storage = storage;
	req.nstorage = 1;
	req.dataflows = flows;
	req.ndataflows = 3;
	req.now = 10;
	req.read_only = false;
	assert_int_equal(mzc_select_as_ofs(&req, &stats, &err), MZC_ERR_INVALID);
	assert_true(stats.invalid_dataflow >= 0);
	assert_non_null(strstr(err.message, "cycle"));

	/* a self loop */
	req.ndataflows = 1;
	c0[0] = 0;
	assert_int_equal(mzc_select_as_ofs(&req, &stats, &err), MZC_ERR_INVALID);
	assert_int_equal(stats.invalid_dataflow, 0);

	/* out of range */
	flows[0].compute_inputs = bad;
	assert_int_equal(mzc_select_as_ofs(&req, &stats, &err), MZC_ERR_INVALID);
	flows[0].ncompute_inputs = 0;
	flows[0].storage_inputs = bad;
	flows[0].nstorage_inputs = 1;
	assert_int_equal(mzc_select_as_ofs(&req, &stats, &err), MZC_ERR_INVALID);
	flows[0].nstorage_inputs = 0;
	flows[0].export_storage = 3;
	assert_int_equal(mzc_select_as_ofs(&req, &stats, &err), MZC_ERR_INVALID);
	flows[0].export_storage = -1;
	req.now = -1;
	assert_int_equal(mzc_select_as_ofs(&req, &stats, &err), MZC_ERR_INVALID);
	req.now = 0;
	assert_int_equal(mzc_select_as_ofs(&req, &stats, &err), MZC_OK);
	assert_frontier_at(flows[0].as_of, 0);
}

/* A fixed as-of starts the bounds at [a .. a]. */
static void
test_fixed_as_of(void **state)
{
	mzc_asof_storage storage[1];
	mzc_asof_dataflow flows[2];
	int32_t		s0[1] = {0},
				c0[1] = {0};
	mzc_asof_request req;
	mzc_asof_stats stats;

	storage[0].since = AT(10);
	storage[0].upper = AT(50);
	memset(flows, 0, sizeof(flows));
	flows[0].storage_inputs = s0;
	flows[0].nstorage_inputs = 1;
	flows[0].export_storage = -1;
	flows[0].has_fixed_as_of = true;
	flows[0].fixed_as_of = AT(30);
	flows[1].compute_inputs = c0;
	flows[1].ncompute_inputs = 1;
	flows[1].export_storage = -1;
	req.storage = storage;
	req.nstorage = 1;
	req.dataflows = flows;
	req.ndataflows = 2;
	req.now = 100;
	req.read_only = false;
	assert_int_equal(mzc_select_as_ofs(&req, &stats, NULL), MZC_OK);
	assert_frontier_at(flows[0].as_of, 30);
	/* downstream lower bound is at least 30; warmup 49 */
	assert_frontier_at(flows[1].as_of, 49);
	assert_int_equal(stats.hard_failures, 0);

	/* a fixed as-of below the input since is a hard failure, not an abort */
	flows[0].fixed_as_of = AT(5);
	assert_int_equal(mzc_select_as_ofs(&req, &stats, NULL), MZC_OK);
	assert_true(stats.hard_failures > 0);
	assert_frontier_at(flows[0].as_of, 5);
	assert_true(flows[0].sealed);
}

/*
 * Properties over random graphs: for every dataflow edge x -> y,
 * as_of(x) <= as_of(y) unless one of them is pruned; every as-of is at
 * least the since of each storage input unless a hard constraint failed
 * for it; selection terminates (bounded passes).
 */
static void
test_random_properties(void **state)
{
	test_rng	r;
	int			iter;
	int			hard_total = 0,
				pruned_total = 0,
				checked = 0;

	rng_seed(&r, 7);
	for (iter = 0; iter < 3000; iter++)
	{
		mzc_asof_storage storage[8];
		mzc_asof_dataflow flows[12];
		int32_t		sin[12][3],
					cin[12][3];
		mzc_asof_request req;
		mzc_asof_stats stats;
		int			ns = (int) rng_range(&r, 1, 8);
		int			nd = (int) rng_range(&r, 1, 12);
		int			i,
					j;

		for (i = 0; i < ns; i++)
		{
			int64_t		since = rng_range(&r, 0, 60);

			storage[i].since = rng_chance(&r, 5) ? EMPTY : AT(since);
			storage[i].upper = rng_chance(&r, 8) ? EMPTY :
				AT(rng_range(&r, 0, 90));
		}
		memset(flows, 0, sizeof(flows));
		for (i = 0; i < nd; i++)
		{
			mzc_asof_dataflow *f = &flows[i];
			int			k = (int) rng_range(&r, 0, 3);

			for (j = 0; j < k; j++)
			{
				/* dataflow inputs only from earlier ones: acyclic */
				if (i > 0 && rng_chance(&r, 50))
				{
					int32_t		in = (int32_t) rng_range(&r, 0, i - 1);
					int			q,
								dup = 0;

					for (q = 0; q < f->ncompute_inputs; q++)
						dup |= cin[i][q] == in;
					if (!dup)
						cin[i][f->ncompute_inputs++] = in;
				}
				else
					sin[i][f->nstorage_inputs++] = (int32_t) rng_range(&r, 0, ns - 1);
			}
			f->storage_inputs = sin[i];
			f->compute_inputs = cin[i];
			f->export_storage = rng_chance(&r, 30) ?
				(int32_t) rng_range(&r, 0, ns - 1) : -1;
			if (f->export_storage < 0 && rng_chance(&r, 40))
			{
				f->has_policy = true;
				if (rng_chance(&r, 50))
					assert_int_equal(mzc_policy_lag(rng_range(&r, 0, 30),
													rng_range(&r, 1, 7),
													&f->policy, NULL), MZC_OK);
				else
					f->policy = mzc_policy_valid_from(AT(rng_range(&r, 0, 80)));
			}
		}
		req.storage = storage;
		req.nstorage = ns;
		req.dataflows = flows;
		req.ndataflows = nd;
		req.now = rng_range(&r, 0, 100);
		req.read_only = rng_chance(&r, 20);
		assert_int_equal(mzc_select_as_ofs(&req, &stats, NULL), MZC_OK);
		hard_total += stats.hard_failures;
		/* termination: passes bounded by a small multiple of the size */
		assert_true(stats.passes < 64 + 8 * nd * nd);

		for (i = 0; i < nd; i++)
		{
			mzc_asof_dataflow *x = &flows[i];

			if (x->pruned)
			{
				pruned_total++;
				assert_true(x->as_of.empty);
				continue;
			}
			/* bounds stay ordered */
			assert_true(mzc_frontier_le(x->lower, x->upper));
			for (j = 0; j < x->ncompute_inputs; j++)
			{
				mzc_asof_dataflow *y = &flows[x->compute_inputs[j]];

				/* a pruned input prunes its dependants */
				assert_false(y->pruned);
				assert_true(mzc_frontier_le(y->as_of, x->as_of));
				checked++;
			}
			if (stats.hard_failures == 0)
				for (j = 0; j < x->nstorage_inputs; j++)
					assert_true(mzc_frontier_le(storage[x->storage_inputs[j]].since,
												x->as_of));
		}
	}
	/* the generator exercised edges, pruning and hard failures */
	assert_true(checked > 1000);
	assert_true(pruned_total > 100);
	assert_true(hard_total > 10);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upstream_storage_constraints),
		cmocka_unit_test(test_downstream_storage_constraints),
		cmocka_unit_test(test_warmup_constraints),
		cmocka_unit_test(test_index_read_policy_constraints),
		cmocka_unit_test(test_index_current_time_constraints),
		cmocka_unit_test(test_sealed_storage_sink),
		cmocka_unit_test(test_read_only_dropped_storage_inputs),
		cmocka_unit_test(test_github_9273),
		cmocka_unit_test(test_invalid_requests),
		cmocka_unit_test(test_fixed_as_of),
		cmocka_unit_test(test_random_properties),
	};

	return cmocka_run_group_tests_name("asof", tests, NULL, NULL);
}
