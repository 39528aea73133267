/*
 * Unit tests of src/core/frontier.c: F1-F7 of the semantics reference,
 * with the edge cases at {0} and at the empty frontier.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "frontier.h"

#define AT(t) mzc_frontier_at(t)
#define EMPTY mzc_frontier_empty()

static void
assert_frontier(mzc_frontier f, bool empty, mzc_ts ts)
{
	assert_int_equal(f.empty, empty);
	if (!empty)
		assert_int_equal(f.ts, ts);
}

/* F2/F3: order, with {} as the top and {0} as the bottom. */
static void
test_order(void **state)
{
	assert_true(mzc_frontier_le(AT(3), AT(3)));
	assert_true(mzc_frontier_le(AT(3), AT(4)));
	assert_false(mzc_frontier_le(AT(4), AT(3)));
	assert_true(mzc_frontier_le(AT(MZC_TS_MAX), EMPTY));
	assert_true(mzc_frontier_le(AT(0), EMPTY));
	assert_false(mzc_frontier_le(EMPTY, AT(MZC_TS_MAX)));
	assert_true(mzc_frontier_le(EMPTY, EMPTY));
	assert_true(mzc_frontier_le(AT(0), AT(0)));

	assert_true(mzc_frontier_lt(AT(3), AT(4)));
	assert_false(mzc_frontier_lt(AT(3), AT(3)));
	assert_true(mzc_frontier_lt(AT(3), EMPTY));
	assert_false(mzc_frontier_lt(EMPTY, EMPTY));

	assert_true(mzc_frontier_eq(EMPTY, EMPTY));
	assert_false(mzc_frontier_eq(EMPTY, AT(0)));
	assert_true(mzc_frontier_eq(AT(7), AT(7)));

	assert_true(mzc_frontier_le_ts(AT(5), 5));
	assert_true(mzc_frontier_le_ts(AT(5), 6));
	assert_false(mzc_frontier_le_ts(AT(5), 4));
	assert_false(mzc_frontier_le_ts(EMPTY, MZC_TS_MAX));
}

/* F4: meet is min with {} as identity, join is max with {} absorbing. */
static void
test_meet_join(void **state)
{
	assert_frontier(mzc_frontier_meet(AT(3), AT(9)), false, 3);
	assert_frontier(mzc_frontier_meet(AT(9), AT(3)), false, 3);
	assert_frontier(mzc_frontier_meet(AT(9), EMPTY), false, 9);
	assert_frontier(mzc_frontier_meet(EMPTY, AT(9)), false, 9);
	assert_frontier(mzc_frontier_meet(EMPTY, EMPTY), true, 0);

	assert_frontier(mzc_frontier_join(AT(3), AT(9)), false, 9);
	assert_frontier(mzc_frontier_join(AT(9), AT(3)), false, 9);
	assert_frontier(mzc_frontier_join(AT(9), EMPTY), true, 0);
	assert_frontier(mzc_frontier_join(EMPTY, AT(9)), true, 0);
	assert_frontier(mzc_frontier_join(AT(0), AT(0)), false, 0);
}

/* F6 and F7. */
static void
test_step_back_and_lniaou(void **state)
{
	assert_frontier(mzc_frontier_step_back(AT(20)), false, 19);
	assert_frontier(mzc_frontier_step_back(AT(1)), false, 0);
	assert_frontier(mzc_frontier_step_back(AT(0)), false, 0);
	assert_frontier(mzc_frontier_step_back(EMPTY), true, 0);

	assert_int_equal(mzc_largest_not_in_advance_of_upper(AT(20)), 19);
	assert_int_equal(mzc_largest_not_in_advance_of_upper(AT(0)), 0);
	assert_int_equal(mzc_largest_not_in_advance_of_upper(AT(1)), 0);
	assert_int_equal(mzc_largest_not_in_advance_of_upper(EMPTY), MZC_TS_MAX);
	assert_int_equal(mzc_largest_not_in_advance_of_upper(AT(MZC_TS_MAX)),
					 MZC_TS_MAX - 1);
}

static void
test_saturating(void **state)
{
	assert_int_equal(mzc_ts_sub(10, 3), 7);
	assert_int_equal(mzc_ts_sub(3, 10), 0);
	assert_int_equal(mzc_ts_sub(0, 1), 0);
	assert_int_equal(mzc_ts_sub(5, -2), 7);
	assert_int_equal(mzc_ts_sub(5, INT64_MIN), MZC_TS_MAX);
	assert_int_equal(mzc_ts_add(MZC_TS_MAX, 1), MZC_TS_MAX);
	assert_int_equal(mzc_ts_add(MZC_TS_MAX - 1, 1), MZC_TS_MAX);
	assert_int_equal(mzc_ts_add(5, -7), 0);
	assert_int_equal(mzc_ts_add(5, INT64_MIN), 0);
	assert_true(mzc_ts_valid(0));
	assert_false(mzc_ts_valid(-1));
}

/* Lattice laws over a grid of values that includes both ends. */
static void
test_lattice_laws(void **state)
{
	mzc_frontier v[] = {AT(0), AT(1), AT(2), AT(1000), AT(MZC_TS_MAX - 1),
	AT(MZC_TS_MAX), EMPTY};
	int			n = sizeof(v) / sizeof(v[0]);

	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
		{
			mzc_frontier m = mzc_frontier_meet(v[i], v[j]);
			mzc_frontier J = mzc_frontier_join(v[i], v[j]);

			/* total order: exactly one of <, =, > */
			assert_int_equal(mzc_frontier_lt(v[i], v[j]) +
							 mzc_frontier_eq(v[i], v[j]) +
							 mzc_frontier_lt(v[j], v[i]), 1);
			assert_true(mzc_frontier_le(m, v[i]) && mzc_frontier_le(m, v[j]));
			assert_true(mzc_frontier_le(v[i], J) && mzc_frontier_le(v[j], J));
			assert_true(mzc_frontier_eq(m, mzc_frontier_meet(v[j], v[i])));
			assert_true(mzc_frontier_eq(J, mzc_frontier_join(v[j], v[i])));
			/* absorption */
			assert_true(mzc_frontier_eq(mzc_frontier_meet(v[i], J), v[i]));
			assert_true(mzc_frontier_eq(mzc_frontier_join(v[i], m), v[i]));
			/* step back is monotone */
			if (mzc_frontier_le(v[i], v[j]))
				assert_true(mzc_frontier_le(mzc_frontier_step_back(v[i]),
											mzc_frontier_step_back(v[j])));
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_meet_join),
		cmocka_unit_test(test_step_back_and_lniaou),
		cmocka_unit_test(test_saturating),
		cmocka_unit_test(test_lattice_laws),
	};

	return cmocka_run_group_tests_name("frontier", tests, NULL, NULL);
}
