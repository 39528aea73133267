/*
 * Unit tests of src/core/tsselect.c: scenarios T1-T14 of reference 3.6, the
 * binding constraints, validation, and the TimestampSelection.tla
 * properties over random requests, with both formulations compared.
 */
#include <string.h>

#include "testutil.h"

#include "tsselect.h"

#define NONE (-1)

typedef struct tcase
{
	mzc_isolation iso;
	mzc_when_kind when;
	mzc_ts		when_ts;
	mzc_ts		since;
	int64_t		upper;			/* NONE for {} */
	int64_t		oracle;			/* NONE for absent */
	int64_t		session;		/* NONE for absent */
	bool		timeline;
} tcase;

static mzc_ts_input in1;
static mzc_ts_constraint lower_buf[16];
static int32_t blocking_buf[8];

static mzc_status
run(const tcase *c, mzc_ts_result *res, mzc_error *err)
{
	mzc_ts_request req;

	memset(&req, 0, sizeof(req));
	in1.since = AT(c->since);
	in1.upper = c->upper == NONE ? EMPTY : AT(c->upper);
	req.isolation = c->iso;
	req.when = c->when;
	req.when_ts = c->when_ts;
	req.inputs = &in1;
	req.ninputs = 1;
	req.timeline = c->timeline;
	req.has_oracle_ts = c->oracle != NONE;
	req.oracle_ts = c->oracle == NONE ? 0 : c->oracle;
	req.has_session_ts = c->session != NONE;
	req.session_ts = c->session == NONE ? 0 : c->session;
	mzc_ts_result_init(res, lower_buf, 16, blocking_buf, 8);
	return mzc_determine_timestamp(&req, res, err);
}

static void
expect_ok(const tcase *c, mzc_ts ts, bool immediately)
{
	mzc_ts_result res;
	mzc_error	err;

	mzc_error_clear(&err);
	if (run(c, &res, &err) != MZC_OK)
		fail_msg("unexpected error: %s", err.message);
	assert_int_equal(res.timestamp, ts);
	assert_int_equal(res.respond_immediately, immediately);
	assert_true(res.formulations_agree);
}

#define SER MZC_ISO_SERIALIZABLE
#define STRICT MZC_ISO_STRICT_SERIALIZABLE
#define SSS MZC_ISO_STRONG_SESSION_SERIALIZABLE
#define IMM MZC_WHEN_IMMEDIATELY
#define FTW MZC_WHEN_FRESHEST_TABLE_WRITE
#define ASOF MZC_WHEN_AS_OF
#define ATLEAST MZC_WHEN_AS_OF_AT_LEAST

static void
test_t1_to_t4(void **state)
{
	tcase		t1 = {SER, IMM, 0, 10, 20, NONE, NONE, true};
	tcase		t2 = {STRICT, IMM, 0, 10, 20, 25, NONE, true};
	tcase		t3 = {STRICT, IMM, 0, 10, 20, 15, NONE, true};
	tcase		t4 = {STRICT, IMM, 0, 10, 20, NONE, NONE, false};

	expect_ok(&t1, 19, true);
	expect_ok(&t2, 25, false);
	expect_ok(&t3, 15, true);
	/* T4: no timeline, no oracle, the upper is allowed */
	expect_ok(&t4, 19, true);
	/* an oracle timestamp handed to a timeline-free read is ignored */
	t4.oracle = 25;
	expect_ok(&t4, 19, true);
}

static void
test_t5_as_of_below_since(void **state)
{
	mzc_isolation isos[] = {SER, STRICT, SSS};
	int			i;

	for (i = 0; i < 3; i++)
	{
		tcase		t5 = {isos[i], ASOF, 5, 10, 20, NONE, NONE, true};
		mzc_ts_result res;
		mzc_error	err;

		assert_int_equal(run(&t5, &res, &err), MZC_ERR_SINCE_VIOLATION);
		assert_string_equal(err.message, "timestamp 5 is not valid for all inputs");
		assert_int_equal(res.candidate, 5);
		assert_int_equal(res.nblocking, 1);
		assert_int_equal(res.blocking[0], 0);
		/* the constraint formulation fails too, with candidate 10 */
		assert_false(res.constraints_ok);
		assert_int_equal(res.constraints_ts, 10);
		assert_true(res.formulations_agree);
	}
}

static void
test_constraint_mode_error(void **state)
{
	mzc_ts_request req;
	mzc_ts_result res;
	mzc_error	err;

	memset(&req, 0, sizeof(req));
	in1.since = AT(10);
	in1.upper = AT(20);
	req.isolation = SER;
	req.when = ASOF;
	req.when_ts = 5;
	req.inputs = &in1;
	req.ninputs = 1;
	req.timeline = true;
	req.mode = MZC_TS_CONSTRAINTS;
	mzc_ts_result_init(&res, lower_buf, 16, blocking_buf, 8);
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err),
					 MZC_ERR_SINCE_VIOLATION);
	/* as the reference notes: candidate 10, no input blocks it */
	assert_string_equal(err.message, "timestamp 10 is not valid for all inputs");
	assert_int_equal(res.nblocking, 0);
}

static void
test_t6_to_t10(void **state)
{
	mzc_isolation isos[] = {SER, STRICT, SSS};
	int			i;

	for (i = 0; i < 3; i++)
	{
		tcase		t6 = {isos[i], ASOF, 12, 10, 20, NONE, NONE, true};
		tcase		t7 = {isos[i], ASOF, 30, 10, 20, NONE, NONE, true};
		tcase		t8 = {isos[i], ATLEAST, 5, 10, 20, NONE, NONE, true};
		tcase		t9 = {isos[i], ATLEAST, 15, 10, 20, NONE, NONE, true};
		tcase		t10 = {isos[i], FTW, 0, 10, 20, 25, NONE, true};

		expect_ok(&t6, 12, true);
		expect_ok(&t7, 30, false);
		expect_ok(&t8, 10, true);
		expect_ok(&t9, 15, true);
		expect_ok(&t10, 25, false);
		/* as-of reads never use the oracle, even when handed one */
		t6.oracle = 25;
		expect_ok(&t6, 12, true);
		t8.oracle = 25;
		expect_ok(&t8, 10, true);
	}
}

static void
test_t11_to_t14(void **state)
{
	tcase		t11 = {SSS, IMM, 0, 10, 20, 25, 12, true};
	tcase		t12 = {SSS, IMM, 0, 10, 20, 15, 12, true};
	tcase		t13 = {SER, IMM, 0, 0, 0, NONE, NONE, true};
	tcase		t14 = {SER, IMM, 0, 10, NONE, NONE, NONE, true};
	mzc_ts_result res;

	expect_ok(&t11, 19, true);
	expect_ok(&t12, 15, true);
	expect_ok(&t13, 0, false);
	expect_ok(&t14, MZC_TS_MAX, true);
	assert_int_equal(run(&t14, &res, NULL), MZC_OK);
	assert_true(res.upper.empty);
	assert_int_equal(res.largest_not_in_advance_of_upper, MZC_TS_MAX);
}

static bool
has_constraint(const mzc_ts_constraint *list, int32_t n, mzc_ts_reason reason,
			   mzc_ts at)
{
	int32_t		i;

	for (i = 0; i < n; i++)
		if (list[i].reason == reason && !list[i].bound.empty &&
			list[i].bound.ts == at)
			return true;
	return false;
}

/* The binding constraints are minimised to the tight ones. */
static void
test_binding_constraints(void **state)
{
	mzc_ts_input ins[3];
	mzc_ts_request req;
	mzc_ts_result res;

	memset(&req, 0, sizeof(req));
	ins[0].since = AT(10);
	ins[0].upper = AT(40);
	ins[1].since = AT(17);
	ins[1].upper = AT(30);
	ins[2].since = AT(17);
	ins[2].upper = EMPTY;
	req.inputs = ins;
	req.ninputs = 3;
	req.timeline = true;

	/* strict, oracle 25: only the isolation level binds */
	req.isolation = STRICT;
	req.when = IMM;
	req.has_oracle_ts = true;
	req.oracle_ts = 25;
	mzc_ts_result_init(&res, lower_buf, 16, blocking_buf, 8);
	assert_int_equal(mzc_determine_timestamp(&req, &res, NULL), MZC_OK);
	assert_int_equal(res.timestamp, 25);
	assert_frontier_at(res.since, 17);
	assert_frontier_at(res.upper, 30);
	assert_int_equal(res.largest_not_in_advance_of_upper, 29);
	assert_true(res.oracle_used);
	assert_int_equal(res.nlower, 1);
	assert_true(has_constraint(res.lower, res.nlower,
							   MZC_REASON_ISOLATION_LEVEL, 25));
	assert_int_equal(res.lower[0].isolation, STRICT);
	assert_int_equal(res.nupper, 0);

	/* oracle 5: the two inputs at 17 bind, each named */
	req.oracle_ts = 5;
	assert_int_equal(mzc_determine_timestamp(&req, &res, NULL), MZC_OK);
	assert_int_equal(res.timestamp, 17);
	assert_int_equal(res.nlower, 2);
	assert_int_equal(res.lower[0].reason, MZC_REASON_STORAGE_INPUT);
	assert_int_equal(res.lower[0].input, 1);
	assert_int_equal(res.lower[1].input, 2);

	/* as of 17: the as-of is both a lower and the upper constraint */
	req.when = ASOF;
	req.when_ts = 17;
	assert_int_equal(mzc_determine_timestamp(&req, &res, NULL), MZC_OK);
	assert_int_equal(res.timestamp, 17);
	assert_false(res.oracle_used);
	assert_int_equal(res.nlower, 3);
	assert_true(has_constraint(res.lower, res.nlower, MZC_REASON_QUERY_AS_OF, 17));
	assert_int_equal(res.nupper, 1);
	assert_int_equal(res.upper_constraints[0].reason, MZC_REASON_QUERY_AS_OF);

	/* real-time recency binds when it is the latest */
	req.when = IMM;
	req.has_rtr_ts = true;
	req.rtr_ts = 33;
	assert_int_equal(mzc_determine_timestamp(&req, &res, NULL), MZC_OK);
	assert_int_equal(res.timestamp, 33);
	assert_int_equal(res.nlower, 1);
	assert_int_equal(res.lower[0].reason, MZC_REASON_REAL_TIME_RECENCY);

	/* an input with nothing readable blocks every time */
	req.has_rtr_ts = false;
	ins[1].since = EMPTY;
	assert_int_equal(mzc_determine_timestamp(&req, &res, NULL),
					 MZC_ERR_SINCE_VIOLATION);
	/* candidate 5 (the oracle): every input's since is beyond it */
	assert_int_equal(res.candidate, 5);
	assert_int_equal(res.nblocking, 3);
	assert_int_equal(res.blocking[1], 1);
	assert_true(res.formulations_agree);
}

static void
test_validation(void **state)
{
	mzc_ts_request req;
	mzc_ts_result res;
	mzc_error	err;

	memset(&req, 0, sizeof(req));
	in1.since = AT(1);
	in1.upper = AT(2);
	req.inputs = &in1;
	req.ninputs = 1;
	req.timeline = true;
	mzc_ts_result_init(&res, lower_buf, 16, blocking_buf, 8);

	req.when = ASOF;
	req.when_ts = -3;
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_ERR_INVALID);
	req.when_ts = 3;
	req.isolation = (mzc_isolation) 9;
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_ERR_INVALID);
	req.isolation = SER;
	req.has_rtr_ts = true;
	req.rtr_ts = 3;
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_ERR_INVALID);
	assert_string_equal(err.message,
						"real-time recency requires strict serializable isolation");
	req.isolation = STRICT;
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_ERR_INVALID);
	assert_string_equal(err.message,
						"real-time recency cannot be combined with an as-of");
	req.has_rtr_ts = false;
	req.has_session_ts = true;
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_ERR_INVALID);
	req.has_session_ts = false;
	in1.since = AT(-1);
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_ERR_INVALID);
	in1.since = AT(1);
	/* buffers too small */
	mzc_ts_result_init(&res, lower_buf, 5, blocking_buf, 8);
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_ERR_NO_SPACE);
	mzc_ts_result_init(&res, lower_buf, 6, blocking_buf, 0);
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_ERR_NO_SPACE);
	mzc_ts_result_init(&res, lower_buf, 6, blocking_buf, 1);
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_OK);
	/* no inputs at all: everything is readable, at the end of time */
	req.ninputs = 0;
	req.when = IMM;
	mzc_ts_result_init(&res, lower_buf, 4, blocking_buf, 0);
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_ERR_NO_SPACE);
	mzc_ts_result_init(&res, lower_buf, 5, blocking_buf, 0);
	req.isolation = SER;
	assert_int_equal(mzc_determine_timestamp(&req, &res, &err), MZC_OK);
	assert_int_equal(res.timestamp, MZC_TS_MAX);
	assert_true(res.respond_immediately);
}

/*
 * TimestampSelection.tla properties over random requests:
 *	- result >= join of the lower bounds (and >= every input since);
 *	- result <= AS OF when given;
 *	- result >= oracle when the oracle was a constraint;
 *	- non-empty interval => success, success => non-empty interval;
 *	- FreshestAvailable returns max(lower, min(upper, L));
 *	- StalestValid returns exactly lower;
 * and both formulations agree on every success.
 */
static void
test_tla_properties(void **state)
{
	test_rng	r;
	int			iter;
	int			ok_count = 0,
				fail_count = 0;

	rng_seed(&r, 99);
	for (iter = 0; iter < 50000; iter++)
	{
		mzc_ts_input ins[5];
		mzc_ts_request req;
		mzc_ts_result res;
		mzc_ts		lower = 0;
		mzc_frontier upper_c = EMPTY;
		mzc_frontier s = AT(0),
					u = EMPTY;
		bool		lower_empty = false;
		bool		freshest;
		mzc_ts		l;
		int			i;
		mzc_status	st;

		memset(&req, 0, sizeof(req));
		req.ninputs = (int32_t) rng_range(&r, 0, 5);
		for (i = 0; i < req.ninputs; i++)
		{
			ins[i].since = rng_chance(&r, 3) ? EMPTY : AT(rng_range(&r, 0, 50));
			ins[i].upper = rng_chance(&r, 10) ? EMPTY : AT(rng_range(&r, 0, 60));
			s = mzc_frontier_join(s, ins[i].since);
			u = mzc_frontier_meet(u, ins[i].upper);
		}
		req.inputs = ins;
		req.isolation = (mzc_isolation) rng_range(&r, 0, 2);
		req.when = (mzc_when_kind) rng_range(&r, 0, 3);
		req.when_ts = rng_range(&r, 0, 60);
		req.timeline = rng_chance(&r, 85);
		req.has_oracle_ts = rng_chance(&r, 70);
		req.oracle_ts = rng_range(&r, 0, 70);
		if (req.isolation == SSS && rng_chance(&r, 50))
		{
			req.has_session_ts = true;
			req.session_ts = rng_range(&r, 0, 60);
		}
		if (req.isolation == STRICT && req.when <= FTW && rng_chance(&r, 20))
		{
			req.has_rtr_ts = true;
			req.rtr_ts = rng_range(&r, 0, 70);
		}
		mzc_ts_result_init(&res, lower_buf, 16, blocking_buf, 8);
		st = mzc_determine_timestamp(&req, &res, NULL);
		assert_true(st == MZC_OK || st == MZC_ERR_SINCE_VIOLATION);
		/* the formulations agree on success and on failure */
		assert_true(res.formulations_agree);

		/* recompute the interval independently */
		l = mzc_largest_not_in_advance_of_upper(u);
		if (s.empty)
			lower_empty = true;
		else
			lower = s.ts;
		if (req.when == ASOF || req.when == ATLEAST)
			lower = lower > req.when_ts ? lower : req.when_ts;
		if (req.when == ASOF)
			upper_c = AT(req.when_ts);
		if (mzc_ts_needs_oracle(req.isolation, req.when, req.timeline) &&
			req.has_oracle_ts)
		{
			if (req.isolation != SSS || req.when == FTW)
				lower = lower > req.oracle_ts ? lower : req.oracle_ts;
		}
		if (req.has_rtr_ts)
			lower = lower > req.rtr_ts ? lower : req.rtr_ts;
		if (req.isolation == SSS && req.timeline)
		{
			if (req.has_session_ts && req.when != ASOF)
				lower = lower > req.session_ts ? lower : req.session_ts;
			if (req.when == IMM)
			{
				mzc_ts		a = l;

				if (req.has_oracle_ts && a > req.oracle_ts)
					a = req.oracle_ts;
				lower = lower > a ? lower : a;
			}
		}
		freshest = req.when == IMM && (req.isolation == SER || !req.timeline);

		if (!lower_empty && mzc_frontier_le_ts(AT(lower), upper_c.empty ? MZC_TS_MAX : upper_c.ts))
		{
			/* non-empty interval => success */
			assert_int_equal(st, MZC_OK);
		}
		if (st == MZC_OK)
		{
			ok_count++;
			/* success => non-empty interval */
			assert_false(lower_empty);
			assert_true(upper_c.empty || lower <= upper_c.ts);
			assert_true(res.timestamp >= lower);
			for (i = 0; i < req.ninputs; i++)
				assert_true(mzc_frontier_le_ts(ins[i].since, res.timestamp));
			if (req.when == ASOF)
				assert_true(res.timestamp <= req.when_ts);
			if (res.oracle_used && (req.isolation != SSS || req.when == FTW))
				assert_true(res.timestamp >= req.oracle_ts);
			if (freshest)
			{
				mzc_ts		m = upper_c.empty || upper_c.ts > l ? l : upper_c.ts;

				assert_int_equal(res.timestamp, lower > m ? lower : m);
			}
			else
				assert_int_equal(res.timestamp, lower);
			/* every binding lower constraint sits at the join */
			for (i = 0; i < res.nlower; i++)
				assert_frontier_at(res.lower[i].bound, lower);
			assert_true(res.nlower >= 1 || (req.ninputs == 0 && lower == 0));
			/* respond immediately iff the time is below the upper */
			assert_int_equal(res.respond_immediately,
							 !req.timeline || !mzc_frontier_le_ts(u, res.timestamp));
		}
		else
		{
			fail_count++;
			assert_true(res.nblocking >= 1);
			for (i = 0; i < res.nblocking; i++)
				assert_false(mzc_frontier_le_ts(ins[res.blocking[i]].since,
												res.candidate));
		}
	}
	assert_true(ok_count > 10000);
	assert_true(fail_count > 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_t1_to_t4),
		cmocka_unit_test(test_t5_as_of_below_since),
		cmocka_unit_test(test_constraint_mode_error),
		cmocka_unit_test(test_t6_to_t10),
		cmocka_unit_test(test_t11_to_t14),
		cmocka_unit_test(test_binding_constraints),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_tla_properties),
	};

	return cmocka_run_group_tests_name("tsselect", tests, NULL, NULL);
}
