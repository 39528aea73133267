/*
 * Unit tests of src/core/policy.c and test/unit/model_policy.c: the policy
 * table of reference 3.2 (P1-P4), retain-history windows (P5) and the
 * implied-capability rule (P6).
 */
#include "testutil.h"

#include "model_policy.h"

static mzc_policy
lag(int64_t l, int64_t g)
{
	mzc_policy	p;

	assert_int_equal(mzc_policy_lag(l, g, &p, NULL), MZC_OK);
	return p;
}

/* 3.2: lag_writes_by(lag, g) rows. */
static void
test_lag_table(void **state)
{
	mzc_policy	p;

	p = lag(1000, 1000);
	assert_frontier_at(mzc_policy_frontier(&p, AT(12345)), 11000);
	assert_frontier_at(mzc_policy_frontier(&p, AT(1000)), 0);
	assert_frontier_at(mzc_policy_frontier(&p, AT(500)), 0);
	/* P4: the empty upper maps to the lattice bottom */
	assert_frontier_at(mzc_policy_frontier(&p, EMPTY), 0);

	p = lag(500, 1000);
	assert_frontier_at(mzc_policy_frontier(&p, AT(12345)), 11500);
	p = lag(5, 1);
	assert_frontier_at(mzc_policy_frontier(&p, AT(20)), 15);
	p = lag(15, 1);
	assert_frontier_at(mzc_policy_frontier(&p, AT(20)), 5);
	p = lag(3600000, 1000);
	assert_frontier_at(mzc_policy_frontier(&p, AT(1700000123456LL)),
					   1699996523000LL);
	/* lag 0: no step back, no rounding, but {} still maps to {0} */
	p = lag(0, 1000);
	assert_frontier_at(mzc_policy_frontier(&p, AT(12345)), 12345);
	assert_frontier_at(mzc_policy_frontier(&p, EMPTY), 0);

	/* the same through the bare function */
	assert_frontier_at(mzc_lag_frontier(AT(12345), 1000, 1000), 11000);
	assert_frontier_at(mzc_lag_frontier(EMPTY, 1000, 1000), 0);
	assert_frontier_at(mzc_lag_frontier(AT(MZC_TS_MAX), 1, 1), MZC_TS_MAX - 1);
	assert_frontier_at(mzc_lag_frontier(AT(7), MZC_TS_MAX, 1000), 0);
}

/* 3.2: step_back, ValidFrom, NoPolicy and Multiple rows. */
static void
test_other_policies(void **state)
{
	mzc_policy	p = mzc_policy_step_back();
	mzc_policy	members[2];
	mzc_policy	m;

	assert_frontier_at(mzc_policy_frontier(&p, AT(20)), 19);
	assert_frontier_at(mzc_policy_frontier(&p, AT(0)), 0);
	assert_frontier_at(mzc_policy_frontier(&p, EMPTY), 0);

	p = mzc_policy_valid_from(AT(7));
	assert_frontier_at(mzc_policy_frontier(&p, EMPTY), 7);
	assert_frontier_at(mzc_policy_frontier(&p, AT(3)), 7);
	p = mzc_policy_no_policy(AT(7));
	assert_frontier_at(mzc_policy_frontier(&p, EMPTY), 7);
	p = mzc_policy_disabled();
	assert_frontier_at(mzc_policy_frontier(&p, AT(99)), 0);
	p = mzc_policy_valid_from(EMPTY);
	assert_frontier_empty(mzc_policy_frontier(&p, AT(99)));

	members[0] = mzc_policy_valid_from(AT(7));
	members[1] = lag(5, 1);
	assert_int_equal(mzc_policy_multiple(members, 2, &m, NULL), MZC_OK);
	assert_frontier_at(mzc_policy_frontier(&m, AT(20)), 7);
	assert_frontier_at(mzc_policy_frontier(&m, AT(10)), 5);
	/* meet with {} as identity */
	members[0] = mzc_policy_valid_from(EMPTY);
	assert_int_equal(mzc_policy_multiple(members, 2, &m, NULL), MZC_OK);
	assert_frontier_at(mzc_policy_frontier(&m, AT(20)), 15);
}

static void
test_multiple_building(void **state)
{
	mzc_policy	members[MZC_POLICY_MAX_MEMBERS + 1];
	mzc_policy	inner,
				outer;
	mzc_error	err;
	int			i;

	for (i = 0; i <= MZC_POLICY_MAX_MEMBERS; i++)
		members[i] = mzc_policy_valid_from(AT(10 + i));
	/* too many members */
	assert_int_equal(mzc_policy_multiple(members, MZC_POLICY_MAX_MEMBERS + 1,
										 &outer, &err), MZC_ERR_INVALID);
	/* no members */
	assert_int_equal(mzc_policy_multiple(members, 0, &outer, &err),
					 MZC_ERR_INVALID);
	/* nested multiples are flattened */
	assert_int_equal(mzc_policy_multiple(members, 2, &inner, NULL), MZC_OK);
	members[0] = inner;
	members[1] = mzc_policy_valid_from(AT(3));
	assert_int_equal(mzc_policy_multiple(members, 2, &outer, NULL), MZC_OK);
	assert_int_equal(outer.nmembers, 3);
	assert_frontier_at(mzc_policy_frontier(&outer, AT(50)), 3);
	assert_int_equal(mzc_policy_validate(&outer, NULL), MZC_OK);
	/* a hand-built nested member is rejected by validation */
	outer.members[0].kind = MZC_POLICY_MULTIPLE;
	assert_int_equal(mzc_policy_validate(&outer, &err), MZC_ERR_INVALID);
}

static void
test_invalid_lag(void **state)
{
	mzc_policy	p;
	mzc_error	err;

	assert_int_equal(mzc_policy_lag(-1, 1000, &p, &err), MZC_ERR_INVALID);
	assert_string_equal(err.message, "lag must not be negative: -1");
	assert_int_equal(mzc_policy_lag(10, 0, &p, &err), MZC_ERR_INVALID);
	assert_int_equal(mzc_policy_lag(0, 0, &p, &err), MZC_ERR_INVALID);
	p = mzc_policy_valid_from(AT(-4));
	assert_int_equal(mzc_policy_validate(&p, &err), MZC_ERR_INVALID);
	/* a broken hand-made policy never divides by zero */
	p = mzc_policy_step_back();
	p.kind = MZC_POLICY_LAG;
	p.lag_ms = 10;
	p.granularity_ms = 0;
	assert_frontier_at(mzc_policy_frontier(&p, AT(25)), 15);
}

/* P5: retain history windows. */
static void
test_windows(void **state)
{
	mzc_window	w;
	mzc_policy	p;

	w.kind = MZC_WINDOW_DEFAULT;
	w.ms = 0;
	assert_int_equal(mzc_window_policy(w, &p, NULL), MZC_OK);
	assert_int_equal(p.kind, MZC_POLICY_LAG);
	assert_int_equal(p.lag_ms, 1000);
	assert_int_equal(p.granularity_ms, 1000);
	assert_int_equal(mzc_window_comparable_ts(w), 1000);
	assert_int_equal(mzc_window_lag_from(w, 5000), 4000);
	assert_int_equal(mzc_window_lag_from(w, 500), 0);

	w.kind = MZC_WINDOW_DURATION;
	w.ms = 7200000;
	assert_int_equal(mzc_window_policy(w, &p, NULL), MZC_OK);
	assert_int_equal(p.lag_ms, 7200000);
	assert_int_equal(p.granularity_ms, 1000);
	assert_int_equal(mzc_window_comparable_ts(w), 7200000);
	assert_int_equal(mzc_window_lag_from(w, 7200005), 5);

	w.kind = MZC_WINDOW_DISABLED;
	assert_int_equal(mzc_window_policy(w, &p, NULL), MZC_OK);
	assert_int_equal(p.kind, MZC_POLICY_VALID_FROM);
	assert_frontier_at(p.frontier, 0);
	assert_int_equal(mzc_window_comparable_ts(w), MZC_TS_MAX);
	assert_int_equal(mzc_window_lag_from(w, 5000), 0);

	w.kind = MZC_WINDOW_DURATION;
	w.ms = -1;
	assert_int_equal(mzc_window_policy(w, &p, NULL), MZC_ERR_INVALID);
}

/* P6 and the 3.2 implied-capability cases. */
static void
test_implied_rule(void **state)
{
	mzc_frontier implied = AT(11000);
	mzc_policy	p;

	/* sealed upper: the lag policy yields {0}; implied stays */
	p = lag(1000, 1000);
	assert_false(mzc_implied_advance(&implied,
									 mzc_policy_frontier(&p, EMPTY)));
	assert_frontier_at(implied, 11000);
	/* DisableCompaction yields {0}: frozen */
	p = mzc_policy_disabled();
	assert_false(mzc_implied_advance(&implied,
									 mzc_policy_frontier(&p, AT(20000))));
	assert_frontier_at(implied, 11000);
	/* window shrunk: the policy yields {11900}; implied advances */
	p = lag(100, 100);
	assert_true(mzc_implied_advance(&implied,
									mzc_policy_frontier(&p, AT(12000))));
	assert_frontier_at(implied, 11900);
	/* same value: no change */
	assert_false(mzc_implied_advance(&implied, AT(11900)));
	/* growing a window does not recover history */
	p = lag(5000, 1000);
	assert_false(mzc_implied_advance(&implied,
									 mzc_policy_frontier(&p, AT(12000))));
	assert_frontier_at(implied, 11900);
	/* drop: ValidFrom({}) takes implied to {} */
	p = mzc_policy_valid_from(EMPTY);
	assert_true(mzc_implied_advance(&implied, mzc_policy_frontier(&p, AT(1))));
	assert_frontier_empty(implied);
	/* and nothing comes back from {} */
	assert_false(mzc_implied_advance(&implied, AT(5)));
	assert_frontier_empty(implied);
}

/* Properties over random uppers: results bounded, monotone for {t}. */
static void
test_lag_properties(void **state)
{
	test_rng	r;
	int			i;

	rng_seed(&r, 42);
	for (i = 0; i < 20000; i++)
	{
		int64_t		l = rng_range(&r, 0, 5000);
		int64_t		g = rng_range(&r, 1, 3000);
		mzc_ts		u1 = rng_range(&r, 0, 100000);
		mzc_ts		u2 = u1 + rng_range(&r, 0, 5000);
		mzc_frontier f1 = mzc_lag_frontier(AT(u1), l, g);
		mzc_frontier f2 = mzc_lag_frontier(AT(u2), l, g);
		int64_t		gg = l < g ? l : g;

		assert_false(f1.empty);
		assert_true(f1.ts <= u1);
		assert_true(mzc_frontier_le(f1, f2));
		if (l > 0)
		{
			assert_true(f1.ts <= (u1 > l ? u1 - l : 0));
			assert_int_equal(f1.ts % gg, 0);
			/* never more than one granule below the exact lag */
			assert_true(f1.ts + gg > (u1 > l ? u1 - l : 0));
		}
		else
			assert_int_equal(f1.ts, u1);
	}
}


/* The next change of a policy's frontier: nothing moves before it, and a
 * single term moves exactly at it. */
static void
check_next_change(const mzc_policy *p, mzc_ts u, bool exact)
{
	mzc_ts		next = mzc_policy_next_change(p, AT(u));
	mzc_frontier at_u = mzc_policy_frontier(p, AT(u));

	assert_true(next > u);
	for (mzc_ts v = u + 1; v < next && v < u + 200; v++)
		assert_true(mzc_frontier_eq(mzc_policy_frontier(p, AT(v)), at_u));
	if (exact && next != MZC_TS_MAX)
		assert_false(mzc_frontier_eq(mzc_policy_frontier(p, AT(next)), at_u));
}

static void
test_next_change(void **state)
{
	mzc_policy	p;
	mzc_policy	members[2];
	mzc_policy	m;

	p = lag(1000, 1000);
	assert_int_equal(mzc_policy_next_change(&p, AT(12345)), 13000);
	assert_int_equal(mzc_policy_next_change(&p, AT(500)), 2000);
	assert_int_equal(mzc_policy_next_change(&p, EMPTY), MZC_TS_MAX);
	p = lag(0, 1000);
	assert_int_equal(mzc_policy_next_change(&p, AT(7)), 8);
	/* a lag longer than any time: never */
	p = lag(MZC_TS_MAX, 1000);
	assert_int_equal(mzc_policy_next_change(&p, AT(7)), MZC_TS_MAX);
	p = mzc_policy_step_back();
	assert_int_equal(mzc_policy_next_change(&p, AT(7)), 8);
	p = mzc_policy_valid_from(AT(7));
	assert_int_equal(mzc_policy_next_change(&p, AT(3)), MZC_TS_MAX);
	p = mzc_policy_disabled();
	assert_int_equal(mzc_policy_next_change(&p, AT(99)), MZC_TS_MAX);

	for (int64_t l = 0; l < 40; l += 3)
		for (int64_t g = 1; g < 30; g += 4)
			for (mzc_ts u = 0; u < 120; u += 7)
			{
				p = lag(l, g);
				check_next_change(&p, u, true);
			}

	members[0] = mzc_policy_valid_from(AT(7));
	members[1] = lag(5, 3);
	assert_int_equal(mzc_policy_multiple(members, 2, &m, NULL), MZC_OK);
	for (mzc_ts u = 0; u < 60; u++)
		check_next_change(&m, u, false);
	members[0] = lag(50, 10);
	members[1] = lag(5, 3);
	assert_int_equal(mzc_policy_multiple(members, 2, &m, NULL), MZC_OK);
	for (mzc_ts u = 0; u < 120; u++)
		check_next_change(&m, u, false);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lag_table),
		cmocka_unit_test(test_other_policies),
		cmocka_unit_test(test_multiple_building),
		cmocka_unit_test(test_invalid_lag),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_implied_rule),
		cmocka_unit_test(test_lag_properties),
		cmocka_unit_test(test_next_change),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
