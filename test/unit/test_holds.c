/*
 * Unit tests of test/unit/model_holds.c: the ReadHold scenarios H1-H10 of
 * reference 3.1.  The issuer's accounting is a counted frontier per
 * collection, seeded with the implied capability at 10.
 */
#include "testutil.h"

#include "model_holds.h"

static mzc_count_node nodes[32];
static mzc_count_pool pool;
static mzc_counted counts[2];
static mzc_hold_issuer issuer;

static int
setup(void **state)
{
	mzc_count_pool_init(&pool, nodes, 32);
	mzc_counted_init(&counts[0]);
	mzc_counted_init(&counts[1]);
	assert_int_equal(mzc_counted_seed(&pool, &counts[0], 10, 1, NULL), MZC_OK);
	assert_int_equal(mzc_counted_seed(&pool, &counts[1], 10, 1, NULL), MZC_OK);
	mzc_hold_issuer_init(&issuer, &pool, counts, 2);
	return 0;
}

static void
assert_batch(const mzc_hold_batch *b, int n, mzc_ts t0, int64_t d0, mzc_ts t1,
			 int64_t d1, mzc_ts t2, int64_t d2)
{
	mzc_ts		ts[3] = {t0, t1, t2};
	int64_t		ds[3] = {d0, d1, d2};
	int			i;

	assert_int_equal(b->n, n);
	for (i = 0; i < n; i++)
	{
		assert_int_equal(b->updates[i].time, ts[i]);
		assert_int_equal(b->updates[i].diff, ds[i]);
	}
}

/* A hold at 15: acquire at 10 (H1), downgrade to 15 (H2). */
static void
hold_at_15(mzc_read_hold *h)
{
	mzc_hold_batch b;

	assert_int_equal(mzc_hold_acquire(&issuer, 0, h, &b, NULL), MZC_OK);
	assert_int_equal(mzc_hold_downgrade(h, AT(15), &b, NULL), MZC_OK);
}

static void
test_h1_acquire(void **state)
{
	mzc_read_hold h;
	mzc_hold_batch b;

	assert_int_equal(mzc_hold_acquire(&issuer, 0, &h, &b, NULL), MZC_OK);
	assert_batch(&b, 1, 10, 1, 0, 0, 0, 0);
	assert_true(b.delivered);
	assert_frontier_at(h.since, 10);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 10), 2);
}

static void
test_h2_downgrade(void **state)
{
	mzc_read_hold h;
	mzc_hold_batch b;

	assert_int_equal(mzc_hold_acquire(&issuer, 0, &h, &b, NULL), MZC_OK);
	assert_int_equal(mzc_hold_downgrade(&h, AT(15), &b, NULL), MZC_OK);
	assert_batch(&b, 2, 10, -1, 15, 1, 0, 0);
	assert_frontier_at(h.since, 15);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 10), 1);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 15), 1);
}

static void
test_h3_downgrade_backwards(void **state)
{
	mzc_read_hold h;
	mzc_hold_batch b;
	mzc_error	err;

	hold_at_15(&h);
	assert_int_equal(mzc_hold_downgrade(&h, AT(12), &b, &err),
					 MZC_ERR_SINCE_VIOLATION);
	assert_string_equal(err.message,
						"desired read hold frontier is not beyond the since of collection: 0");
	assert_int_equal(b.n, 0);
	assert_frontier_at(h.since, 15);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 15), 1);
}

static void
test_h4_downgrade_same(void **state)
{
	mzc_read_hold h;
	mzc_hold_batch b;

	hold_at_15(&h);
	assert_int_equal(mzc_hold_downgrade(&h, AT(15), &b, NULL), MZC_OK);
	assert_int_equal(b.n, 0);
	assert_frontier_at(h.since, 15);
}

static void
test_h5_release_twice(void **state)
{
	mzc_read_hold h;
	mzc_hold_batch b;

	hold_at_15(&h);
	assert_int_equal(mzc_hold_release(&h, &b, NULL), MZC_OK);
	assert_batch(&b, 1, 15, -1, 0, 0, 0, 0);
	assert_frontier_empty(h.since);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 15), 0);
	assert_int_equal(mzc_hold_release(&h, &b, NULL), MZC_OK);
	assert_int_equal(b.n, 0);
	/* a released hold cannot come back */
	assert_int_equal(mzc_hold_downgrade(&h, AT(20), &b, NULL),
					 MZC_ERR_SINCE_VIOLATION);
}

/* H6: dropping a token is releasing it. */
static void
test_h6_drop(void **state)
{
	mzc_read_hold h;
	mzc_hold_batch b;

	hold_at_15(&h);
	assert_int_equal(mzc_hold_release(&h, &b, NULL), MZC_OK);
	assert_batch(&b, 1, 15, -1, 0, 0, 0, 0);
	assert_frontier_at(mzc_counted_frontier(&pool, &counts[0]), 10);
}

static void
test_h7_clone(void **state)
{
	mzc_read_hold h,
				copy;
	mzc_hold_batch b;

	hold_at_15(&h);
	assert_int_equal(mzc_hold_clone(&h, &copy, &b, NULL), MZC_OK);
	assert_batch(&b, 1, 15, 1, 0, 0, 0, 0);
	assert_frontier_at(copy.since, 15);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 15), 2);
	/* two live holds: releasing one keeps the other */
	assert_int_equal(mzc_hold_release(&h, &b, NULL), MZC_OK);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 15), 1);
	assert_int_equal(mzc_hold_release(&copy, &b, NULL), MZC_OK);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 15), 0);
}

static void
test_h8_merge(void **state)
{
	mzc_read_hold a,
				b;
	mzc_hold_batch batch;

	assert_int_equal(mzc_hold_acquire(&issuer, 0, &a, &batch, NULL), MZC_OK);
	assert_int_equal(mzc_hold_acquire(&issuer, 0, &b, &batch, NULL), MZC_OK);
	assert_int_equal(mzc_hold_downgrade(&b, AT(20), &batch, NULL), MZC_OK);
	assert_int_equal(mzc_hold_merge(&a, &b, &batch, NULL), MZC_OK);
	/* one batch: (10,-1), (20,-1), (10,+1) */
	assert_batch(&batch, 3, 10, -1, 20, -1, 10, 1);
	assert_frontier_at(a.since, 10);
	assert_frontier_empty(b.since);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 10), 2);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 20), 0);
	/* dropping B emits nothing */
	assert_int_equal(mzc_hold_release(&b, &batch, NULL), MZC_OK);
	assert_int_equal(batch.n, 0);
	/* merging a hold with itself is refused */
	assert_int_equal(mzc_hold_merge(&a, &a, &batch, NULL), MZC_ERR_INVALID);
}

static void
test_h9_merge_different_ids(void **state)
{
	mzc_read_hold a,
				b;
	mzc_hold_batch batch;
	mzc_error	err;

	assert_int_equal(mzc_hold_acquire(&issuer, 0, &a, &batch, NULL), MZC_OK);
	assert_int_equal(mzc_hold_acquire(&issuer, 1, &b, &batch, NULL), MZC_OK);
	assert_int_equal(mzc_hold_merge(&a, &b, &batch, &err), MZC_ERR_INVALID);
	assert_int_equal(batch.n, 0);
	assert_frontier_at(a.since, 10);
	assert_frontier_at(b.since, 10);
}

static void
test_h10_issuer_gone(void **state)
{
	mzc_read_hold h,
				copy;
	mzc_hold_batch b;

	hold_at_15(&h);
	issuer.gone = true;
	assert_int_equal(mzc_hold_downgrade(&h, AT(18), &b, NULL), MZC_OK);
	assert_false(b.delivered);
	assert_frontier_at(h.since, 18);
	assert_int_equal(mzc_hold_release(&h, &b, NULL), MZC_OK);
	assert_frontier_empty(h.since);
	/* clone needs the issuer (R7) */
	h.since = AT(18);
	assert_int_equal(mzc_hold_clone(&h, &copy, &b, NULL), MZC_ERR_ISSUER_GONE);
	assert_int_equal(mzc_hold_acquire(&issuer, 0, &copy, &b, NULL),
					 MZC_ERR_ISSUER_GONE);
}

/* R9 and all-or-nothing delivery. */
static void
test_errors(void **state)
{
	mzc_read_hold h;
	mzc_hold_batch b;
	mzc_error	err;
	mzc_counted empty;

	assert_int_equal(mzc_hold_acquire(&issuer, 7, &h, &b, &err),
					 MZC_ERR_NOT_FOUND);
	assert_string_equal(err.message, "collection does not exist: 7");
	/* a collection whose frontier is {} does not exist any more */
	mzc_counted_init(&empty);
	mzc_hold_issuer_init(&issuer, &pool, &empty, 1);
	assert_int_equal(mzc_hold_acquire(&issuer, 0, &h, &b, &err),
					 MZC_ERR_NOT_FOUND);

	/* a full pool: the downgrade fails and the token is unchanged */
	mzc_count_pool_init(&pool, nodes, 1);
	mzc_counted_init(&counts[0]);
	assert_int_equal(mzc_counted_seed(&pool, &counts[0], 10, 1, NULL), MZC_OK);
	mzc_hold_issuer_init(&issuer, &pool, counts, 1);
	assert_int_equal(mzc_hold_acquire(&issuer, 0, &h, &b, NULL), MZC_OK);
	assert_int_equal(mzc_hold_downgrade(&h, AT(12), &b, &err), MZC_ERR_NO_SPACE);
	assert_frontier_at(h.since, 10);
	assert_int_equal(b.n, 0);
	assert_int_equal(mzc_counted_count_at(&pool, &counts[0], 10), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_h1_acquire, setup),
		cmocka_unit_test_setup(test_h2_downgrade, setup),
		cmocka_unit_test_setup(test_h3_downgrade_backwards, setup),
		cmocka_unit_test_setup(test_h4_downgrade_same, setup),
		cmocka_unit_test_setup(test_h5_release_twice, setup),
		cmocka_unit_test_setup(test_h6_drop, setup),
		cmocka_unit_test_setup(test_h7_clone, setup),
		cmocka_unit_test_setup(test_h8_merge, setup),
		cmocka_unit_test_setup(test_h9_merge_different_ids, setup),
		cmocka_unit_test_setup(test_h10_issuer_gone, setup),
		cmocka_unit_test_setup(test_errors, setup),
	};

	return cmocka_run_group_tests_name("holds", tests, NULL, NULL);
}
