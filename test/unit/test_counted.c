/*
 * Unit tests of src/core/counted.c: counted frontiers over a shared node
 * pool (reference 2.1, S7), including random batches checked against a
 * naive model, and all-or-nothing behaviour on every rejection.
 */
#include <string.h>

#include "testutil.h"

#include "counted.h"

static mzc_count_node nodes[64];
static mzc_count_pool pool;

static void
fresh_pool(int32_t capacity)
{
	mzc_count_pool_init(&pool, nodes, capacity);
}

static mzc_status
apply2(mzc_counted *c, mzc_ts t1, int64_t d1, mzc_ts t2, int64_t d2,
	   mzc_counted_effect *eff, mzc_error *err)
{
	mzc_update	u[2];

	u[0].time = t1;
	u[0].diff = d1;
	u[1].time = t2;
	u[1].diff = d2;
	return mzc_counted_apply(&pool, c, u, 2, eff, err);
}

static mzc_status
apply1(mzc_counted *c, mzc_ts t, int64_t d, mzc_counted_effect *eff,
	   mzc_error *err)
{
	mzc_update	u;

	u.time = t;
	u.diff = d;
	return mzc_counted_apply(&pool, c, &u, 1, eff, err);
}

static void
test_basics(void **state)
{
	mzc_counted c;
	mzc_counted_effect eff;
	mzc_error	err;

	fresh_pool(8);
	mzc_counted_init(&c);
	assert_frontier_empty(mzc_counted_frontier(&pool, &c));
	/* an empty counted frontier is closed */
	assert_int_equal(apply1(&c, 5, 1, NULL, &err), MZC_ERR_BEFORE_FRONTIER);
	assert_int_equal(mzc_counted_seed(&pool, &c, 10, 1, NULL), MZC_OK);
	assert_int_equal(mzc_counted_seed(&pool, &c, 10, 1, &err), MZC_ERR_STATE);
	assert_frontier_at(mzc_counted_frontier(&pool, &c), 10);
	assert_int_equal(pool.nfree, 7);

	/* a hold at 10 and one at 15: frontier stays 10 */
	assert_int_equal(apply2(&c, 15, 1, 10, 1, &eff, NULL), MZC_OK);
	assert_false(eff.changed);
	assert_int_equal(eff.nodes_needed, 1);
	assert_int_equal(mzc_counted_count_at(&pool, &c, 10), 2);
	assert_int_equal(mzc_counted_count_at(&pool, &c, 15), 1);
	assert_int_equal(c.ndistinct, 2);

	/* S-g: (5,-1) with count[5] == 0 is rejected */
	assert_int_equal(apply1(&c, 5, -1, NULL, &err), MZC_ERR_NEGATIVE_COUNT);
	assert_string_equal(err.message,
						"count at time 5 would become negative (-1)");
	/* S-h: (3,+1) when the frontier is 10 is rejected */
	assert_int_equal(apply1(&c, 3, 1, NULL, &err), MZC_ERR_BEFORE_FRONTIER);
	assert_string_equal(err.message,
						"cannot install time 3 before the frontier 10");
	/* a pair that cancels is nothing, even below the frontier */
	assert_int_equal(apply2(&c, 3, 1, 3, -1, &eff, NULL), MZC_OK);
	assert_false(eff.changed);

	/* removing both counts at 10 moves the frontier to 15 */
	assert_int_equal(apply1(&c, 10, -2, &eff, NULL), MZC_OK);
	assert_true(eff.changed);
	assert_frontier_at(eff.old_frontier, 10);
	assert_frontier_at(eff.new_frontier, 15);
	assert_int_equal(eff.nodes_freed, 1);
	assert_int_equal(pool.nfree, 7);

	/* releasing the last count empties it and returns the node */
	assert_int_equal(apply1(&c, 15, -1, &eff, NULL), MZC_OK);
	assert_frontier_empty(eff.new_frontier);
	assert_int_equal(pool.nfree, 8);
	assert_int_equal(mzc_counted_validate(&pool, &c, NULL), MZC_OK);
	assert_int_equal(mzc_count_pool_validate(&pool, NULL), MZC_OK);
}

static void
test_full_pool(void **state)
{
	mzc_counted a,
				b;
	mzc_counted_effect eff;
	mzc_error	err;

	fresh_pool(2);
	mzc_counted_init(&a);
	mzc_counted_init(&b);
	assert_int_equal(mzc_counted_seed(&pool, &a, 10, 1, NULL), MZC_OK);
	assert_int_equal(mzc_counted_seed(&pool, &b, 20, 1, NULL), MZC_OK);
	assert_int_equal(mzc_counted_seed(&pool, &b, 20, 1, &err), MZC_ERR_STATE);
	/* no node for a new time */
	assert_int_equal(apply1(&a, 11, 1, NULL, &err), MZC_ERR_NO_SPACE);
	assert_int_equal(mzc_counted_count_at(&pool, &a, 11), 0);
	/* but a downgrade (free one, take one) fits in a full pool */
	assert_int_equal(apply2(&a, 10, -1, 12, 1, &eff, NULL), MZC_OK);
	assert_frontier_at(eff.new_frontier, 12);
	/* adding to an existing time needs no node */
	assert_int_equal(apply1(&b, 20, 3, NULL, NULL), MZC_OK);
	assert_int_equal(mzc_counted_count_at(&pool, &b, 20), 4);
	mzc_counted_clear(&pool, &b);
	assert_int_equal(pool.nfree, 1);
	assert_frontier_empty(mzc_counted_frontier(&pool, &b));
}

static void
test_invalid_batches(void **state)
{
	mzc_counted c;
	mzc_update	u[3];
	mzc_error	err;
	int32_t		n;

	fresh_pool(8);
	mzc_counted_init(&c);
	assert_int_equal(mzc_counted_seed(&pool, &c, 10, 1, NULL), MZC_OK);
	u[0].time = -1;
	u[0].diff = 1;
	assert_int_equal(mzc_counted_apply(&pool, &c, u, 1, NULL, &err),
					 MZC_ERR_INVALID);
	/* overflowing sums */
	u[0].time = 12;
	u[0].diff = INT64_MAX;
	u[1].time = 12;
	u[1].diff = 1;
	assert_int_equal(mzc_counted_apply(&pool, &c, u, 2, NULL, &err),
					 MZC_ERR_INVALID);
	u[0].time = 10;
	u[0].diff = INT64_MAX;
	assert_int_equal(mzc_counted_apply(&pool, &c, u, 1, NULL, &err),
					 MZC_ERR_INVALID);
	assert_int_equal(mzc_counted_count_at(&pool, &c, 10), 1);
	/* unconsolidated input to the consolidated entry point */
	u[0].time = 12;
	u[0].diff = 1;
	u[1].time = 11;
	u[1].diff = 1;
	assert_int_equal(mzc_counted_check(&pool, &c, u, 2, NULL, &err),
					 MZC_ERR_INVALID);
	/* consolidation itself */
	u[0].time = 12;
	u[0].diff = 1;
	u[1].time = 11;
	u[1].diff = 1;
	u[2].time = 12;
	u[2].diff = -1;
	n = 3;
	assert_int_equal(mzc_updates_consolidate(u, &n, NULL), MZC_OK);
	assert_int_equal(n, 1);
	assert_int_equal(u[0].time, 11);
	assert_int_equal(u[0].diff, 1);
	/* seeding rules */
	mzc_counted_clear(&pool, &c);
	assert_int_equal(mzc_counted_seed(&pool, &c, -5, 1, &err), MZC_ERR_INVALID);
	assert_int_equal(mzc_counted_seed(&pool, &c, 5, 0, &err), MZC_ERR_INVALID);
}

/* The naive model, over NCOUNTED counted frontiers that share one pool. */
#define MODEL_TIMES 48
#define NCOUNTED 3
#define MODEL_COUNTED NCOUNTED
#include "model_counted.h"

static void
compare(const model *m, mzc_counted *cs)
{
	int			k,
				t;

	assert_int_equal(pool.nfree, m->nfree);
	assert_int_equal(mzc_count_pool_validate(&pool, NULL), MZC_OK);
	for (k = 0; k < NCOUNTED; k++)
	{
		int			f = model_frontier(m, k);

		assert_int_equal(mzc_counted_validate(&pool, &cs[k], NULL), MZC_OK);
		assert_int_equal(cs[k].ndistinct, model_distinct(m, k));
		if (f < 0)
			assert_frontier_empty(mzc_counted_frontier(&pool, &cs[k]));
		else
			assert_frontier_at(mzc_counted_frontier(&pool, &cs[k]), f);
		for (t = 0; t < MODEL_TIMES; t++)
			assert_int_equal(mzc_counted_count_at(&pool, &cs[k], t),
							 m->count[k][t]);
	}
}

static void
test_random_vs_model(void **state)
{
	test_rng	r;
	model		m;
	mzc_counted cs[NCOUNTED];
	int			iter,
				k;
	int			outcomes[16];

	memset(outcomes, 0, sizeof(outcomes));
	rng_seed(&r, 20261130);
	for (iter = 0; iter < 400; iter++)
	{
		int32_t		cap = (int32_t) rng_range(&r, 1, 24);
		int			step;

		fresh_pool(cap);
		memset(&m, 0, sizeof(m));
		m.nfree = cap;
		for (k = 0; k < NCOUNTED; k++)
			mzc_counted_init(&cs[k]);

		for (step = 0; step < 200; step++)
		{
			mzc_update	u[8];
			int32_t		n = (int32_t) rng_range(&r, 0, 8);
			int			i;
			mzc_status	want,
						got;
			mzc_counted_effect eff;
			int			old_f;

			k = (int) rng_range(&r, 0, NCOUNTED - 1);
			old_f = model_frontier(&m, k);
			if (old_f < 0 && rng_chance(&r, 60))
			{
				mzc_ts		t = rng_range(&r, 0, MODEL_TIMES / 2);

				want = m.nfree > 0 ? MZC_OK : MZC_ERR_NO_SPACE;
				got = mzc_counted_seed(&pool, &cs[k], t, 1, NULL);
				assert_int_equal(got, want);
				if (got == MZC_OK)
				{
					m.count[k][t] = 1;
					m.nfree--;
				}
				compare(&m, cs);
				continue;
			}
			for (i = 0; i < n; i++)
			{
				/* times mostly near the frontier, diffs small */
				int			base = old_f < 0 ? 0 : old_f;

				u[i].time = rng_range(&r, base > 3 ? base - 3 : 0,
									  base + 10 < MODEL_TIMES - 1 ? base + 10 : MODEL_TIMES - 1);
				u[i].diff = rng_range(&r, -2, 3);
				if (rng_chance(&r, 1))
					u[i].time = -1;
			}
			want = model_apply(&m, k, u, n);
			got = mzc_counted_apply(&pool, &cs[k], u, n, &eff, NULL);
			assert_int_equal(got, want);
			outcomes[got]++;
			if (got == MZC_OK)
			{
				int			new_f = model_frontier(&m, k);

				assert_int_equal(eff.changed, old_f != new_f);
				if (old_f < 0)
					assert_true(eff.old_frontier.empty);
				else
					assert_frontier_at(eff.old_frontier, old_f);
			}
			/* on rejection, compare() proves nothing changed */
			compare(&m, cs);
		}
	}
	/* every outcome was exercised */
	assert_true(outcomes[MZC_OK] > 1000);
	assert_true(outcomes[MZC_ERR_NEGATIVE_COUNT] > 100);
	assert_true(outcomes[MZC_ERR_BEFORE_FRONTIER] > 100);
	assert_true(outcomes[MZC_ERR_NO_SPACE] > 100);
	assert_true(outcomes[MZC_ERR_INVALID] > 10);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basics),
		cmocka_unit_test(test_full_pool),
		cmocka_unit_test(test_invalid_batches),
		cmocka_unit_test(test_random_vs_model),
	};

	return cmocka_run_group_tests_name("counted", tests, NULL, NULL);
}
