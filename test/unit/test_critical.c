/*
 * Unit tests of src/core/critical.c and test/unit/model_critical.c: the
 * persist reader scenarios K-a..K-h of reference 3.4 (compare-and-downgrade,
 * fencing, rate limiting, tombstones, leases) and the shard since as the
 * meet of readers (K1).
 */
#include "testutil.h"

#include "model_critical.h"

#define CONTROLLER_READER 1
#define MIN15 (15 * 60 * 1000)

static mzc_shard_reader readers[4];
static mzc_shard shard;
static int32_t crit;

/* A shard at {10} with the controller's critical reader, opaque epoch 3. */
static int
setup(void **state)
{
	mzc_shard_init(&shard, readers, 4, AT(10));
	assert_int_equal(mzc_shard_register_critical(&shard, CONTROLLER_READER, 3,
												 &crit, NULL), MZC_OK);
	return 0;
}

static void
test_ka_cas_advances(void **state)
{
	mzc_cas_result r;

	assert_int_equal(mzc_shard_cas(&shard, crit, 3, 3, AT(20), &r, NULL), MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_OK);
	assert_frontier_at(r.since, 20);
	/* K1: the shard since is the meet over readers */
	assert_frontier_at(shard.since, 20);
}

static void
test_kb_cas_no_regress(void **state)
{
	mzc_cas_result r;

	assert_int_equal(mzc_shard_cas(&shard, crit, 3, 3, AT(20), &r, NULL), MZC_OK);
	/* a regression succeeds with the current since; opaque unchanged */
	assert_int_equal(mzc_shard_cas(&shard, crit, 3, 4, AT(15), &r, NULL), MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_OK);
	assert_frontier_at(r.since, 20);
	assert_int_equal(readers[crit].opaque, 3);
	assert_frontier_at(shard.since, 20);
}

static void
test_kc_cas_mismatch(void **state)
{
	mzc_cas_result r;
	mzc_error	err;

	assert_int_equal(mzc_shard_cas(&shard, crit, 3, 4, AT(20), &r, NULL), MZC_OK);
	assert_int_equal(readers[crit].opaque, 4);
	assert_int_equal(mzc_shard_cas(&shard, crit, 3, 3, AT(30), &r, NULL), MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_MISMATCH);
	assert_int_equal(r.opaque, 4);
	assert_frontier_at(r.since, 20);
	assert_frontier_at(shard.since, 20);
	/* the controller's downgrade turns that into "fenced" */
	assert_int_equal(mzc_critical_downgrade(&shard, crit, 3, AT(30), 0, 1000,
											&r, &err), MZC_ERR_FENCED);
	assert_frontier_at(shard.since, 20);
}

static void
test_kd_open_newer_epoch(void **state)
{
	mzc_cas_result r;

	/* epoch 5 opens; stored epoch 3; requested since 17 */
	assert_int_equal(mzc_critical_open(&shard, crit, 5, AT(17), &r, NULL),
					 MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_OK);
	assert_int_equal(readers[crit].opaque, 5);
	assert_frontier_at(r.since, 17);
	/* join(since, requested): a smaller request keeps the since */
	assert_int_equal(mzc_critical_open(&shard, crit, 6, AT(2), &r, NULL), MZC_OK);
	assert_frontier_at(r.since, 17);
	assert_int_equal(readers[crit].opaque, 6);
}

static void
test_ke_open_older_epoch(void **state)
{
	mzc_cas_result r;
	mzc_error	err;

	assert_int_equal(mzc_critical_open(&shard, crit, 2, AT(17), &r, &err),
					 MZC_ERR_FENCED);
	assert_int_equal(readers[crit].opaque, 3);
	assert_frontier_at(shard.since, 10);
}

static void
test_kf_maybe_cas_rate_limited(void **state)
{
	mzc_cas_result r;

	assert_int_equal(mzc_shard_maybe_cas(&shard, crit, 1000, 500, 3, 3, AT(12),
										 &r, NULL), MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_OK);
	/* within the interval: not attempted, nothing changes */
	assert_int_equal(mzc_shard_maybe_cas(&shard, crit, 1200, 500, 3, 3, AT(14),
										 &r, NULL), MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_NOT_ATTEMPTED);
	assert_frontier_at(shard.since, 12);
	/* the controller's downgrade is rate-limited too ... */
	assert_int_equal(mzc_critical_downgrade(&shard, crit, 3, AT(13), 1300, 500,
											&r, NULL), MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_NOT_ATTEMPTED);
	/* after the interval it is attempted again */
	assert_int_equal(mzc_critical_downgrade(&shard, crit, 3, AT(14), 1500, 500,
											&r, NULL), MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_OK);
	assert_frontier_at(shard.since, 14);
	/* ... except to {}, which is never rate-limited (finalization) */
	assert_int_equal(mzc_critical_downgrade(&shard, crit, 3, EMPTY, 1501, 500,
											&r, NULL), MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_OK);
	assert_frontier_empty(shard.since);
}

static void
test_kg_tombstone(void **state)
{
	mzc_cas_result r;

	mzc_shard_tombstone(&shard);
	assert_int_equal(mzc_shard_cas(&shard, crit, 99, 3, AT(20), &r, NULL),
					 MZC_OK);
	assert_int_equal(r.outcome, MZC_CAS_OK);
	assert_frontier_empty(r.since);
	assert_int_equal(mzc_critical_open(&shard, crit, 1, AT(3), &r, NULL), MZC_OK);
	assert_frontier_empty(r.since);
}

static void
test_kh_lease_expiry(void **state)
{
	int32_t		leased;
	mzc_error	err;

	assert_int_equal(mzc_shard_register_leased(&shard, 7, 1000, MIN15, &leased,
											   NULL), MZC_OK);
	assert_frontier_at(readers[leased].since, 10);
	/* K6/K7: a downgrade heartbeats and never regresses */
	assert_int_equal(mzc_shard_leased_downgrade(&shard, leased, AT(30), 2000,
												NULL), MZC_OK);
	assert_int_equal(mzc_shard_leased_downgrade(&shard, leased, AT(25), 1500,
												NULL), MZC_OK);
	assert_frontier_at(readers[leased].since, 30);
	assert_int_equal(readers[leased].last_heartbeat_ms, 2000);
	/* the critical reader still holds the shard at 10 */
	assert_frontier_at(shard.since, 10);
	/* exactly at heartbeat + lease: still alive */
	assert_int_equal(mzc_shard_expire(&shard, 2000 + MIN15), 0);
	/* one millisecond later it is gone; critical readers never expire */
	assert_int_equal(mzc_shard_expire(&shard, 2000 + MIN15 + 1), 1);
	assert_false(readers[leased].in_use);
	assert_true(readers[crit].in_use);
	assert_int_equal(mzc_shard_heartbeat(&shard, leased, 5000, &err),
					 MZC_ERR_NOT_FOUND);
	/* expiry does not recompute the shard since */
	assert_frontier_at(shard.since, 10);
}

/* K1: the shard since is the meet of all readers and never regresses. */
static void
test_k1_meet_of_readers(void **state)
{
	int32_t		a;
	mzc_cas_result r;
	mzc_error	err;

	assert_int_equal(mzc_shard_register_leased(&shard, 8, 0, MIN15, &a, NULL),
					 MZC_OK);
	assert_int_equal(mzc_shard_cas(&shard, crit, 3, 3, AT(40), &r, NULL), MZC_OK);
	assert_frontier_at(shard.since, 10);
	assert_int_equal(mzc_shard_leased_downgrade(&shard, a, AT(25), 1, NULL),
					 MZC_OK);
	assert_frontier_at(shard.since, 25);
	assert_int_equal(mzc_shard_leased_downgrade(&shard, a, AT(50), 2, NULL),
					 MZC_OK);
	assert_frontier_at(shard.since, 40);
	/* registering: duplicate ids, wrong kinds, full */
	assert_int_equal(mzc_shard_register_leased(&shard, 8, 0, MIN15, &a, &err),
					 MZC_ERR_INVALID);
	assert_int_equal(mzc_shard_register_critical(&shard, 8, 0, &a, &err),
					 MZC_ERR_INVALID);
	assert_int_equal(mzc_shard_register_critical(&shard, CONTROLLER_READER, 0,
												 &a, NULL), MZC_OK);
	assert_int_equal(a, crit);
	assert_int_equal(mzc_shard_cas(&shard, 3, 3, 3, AT(1), &r, &err),
					 MZC_ERR_NOT_FOUND);
	assert_int_equal(mzc_shard_register_leased(&shard, 9, 0, MIN15, &a, NULL),
					 MZC_OK);
	assert_int_equal(mzc_shard_register_leased(&shard, 10, 0, MIN15, &a, NULL),
					 MZC_OK);
	assert_int_equal(mzc_shard_register_leased(&shard, 11, 0, MIN15, &a, &err),
					 MZC_ERR_NO_SPACE);
	assert_int_equal(mzc_shard_register_leased(&shard, 12, 0, 0, &a, &err),
					 MZC_ERR_INVALID);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_ka_cas_advances, setup),
		cmocka_unit_test_setup(test_kb_cas_no_regress, setup),
		cmocka_unit_test_setup(test_kc_cas_mismatch, setup),
		cmocka_unit_test_setup(test_kd_open_newer_epoch, setup),
		cmocka_unit_test_setup(test_ke_open_older_epoch, setup),
		cmocka_unit_test_setup(test_kf_maybe_cas_rate_limited, setup),
		cmocka_unit_test_setup(test_kg_tombstone, setup),
		cmocka_unit_test_setup(test_kh_lease_expiry, setup),
		cmocka_unit_test_setup(test_k1_meet_of_readers, setup),
	};

	return cmocka_run_group_tests_name("critical", tests, NULL, NULL);
}
