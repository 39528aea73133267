/*
 * libFuzzer target: mzc_determine_timestamp() on requests decoded from the
 * input bytes (the SQL function reads its jsonb request into the same
 * struct; see src/funcs/timestamp_sql.c).
 *
 * Input: isolation byte (% 4; 3 is not a level), when byte (% 5; 4 is not a
 * kind), the as-of timestamp, a flags byte (bit 0: no timeline, bits 1-3:
 * an oracle / session / real-time-recency timestamp is given, bits 4-5:
 * mode % 3), the oracle, session and real-time-recency timestamps (always
 * read), an input count byte (% 17) and each input's since and upper
 * frontier.  Timestamps and frontiers are decoded as fuzz_util.h says, so
 * negative and extreme values occur.
 *
 * Every request must end in one of three ways, checked independently of the
 * core's own code: MZC_ERR_INVALID exactly when the request breaks a rule
 * tsselect.h states; a success whose timestamp is valid for every input,
 * honours the as-of and the recency bound, and reports the join, the meet
 * and the binding constraints consistently; or a since violation that lists
 * exactly the inputs whose since is beyond the candidate (at least one,
 * unless only the constraint formulation ran).  Anything else
 * (including a crash, which the sanitizers catch) aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsselect.h"
#include "fuzz_util.h"

#define MAX_INPUTS 16

static int
as_of_kind(mzc_when_kind when)
{
	return when == MZC_WHEN_AS_OF || when == MZC_WHEN_AS_OF_AT_LEAST;
}

/* The rules of tsselect.h, restated. */
static int
expect_invalid(const mzc_ts_request *req)
{
	int32_t		i;

	if ((int) req->isolation > MZC_ISO_STRONG_SESSION_SERIALIZABLE ||
		(int) req->when > MZC_WHEN_AS_OF_AT_LEAST)
		return 1;
	if (as_of_kind(req->when) && req->when_ts < 0)
		return 1;
	if (req->has_oracle_ts && req->oracle_ts < 0)
		return 1;
	if (req->has_session_ts &&
		(req->session_ts < 0 ||
		 req->isolation != MZC_ISO_STRONG_SESSION_SERIALIZABLE))
		return 1;
	if (req->has_rtr_ts &&
		(req->rtr_ts < 0 || req->isolation != MZC_ISO_STRICT_SERIALIZABLE ||
		 as_of_kind(req->when)))
		return 1;
	for (i = 0; i < req->ninputs; i++)
		if (frontier_negative(req->inputs[i].since) ||
			frontier_negative(req->inputs[i].upper))
			return 1;
	return 0;
}

static void
check_constraint(const mzc_ts_constraint *c, const mzc_ts_request *req)
{
	check((int) c->reason >= MZC_REASON_STORAGE_INPUT &&
		  (int) c->reason <= MZC_REASON_REAL_TIME_RECENCY, "constraint reason");
	if (c->reason == MZC_REASON_STORAGE_INPUT)
		check(c->input >= 0 && c->input < req->ninputs, "constraint input");
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_reader r = {data, size};
	mzc_ts_input inputs[MAX_INPUTS];
	mzc_ts_constraint lower[MAX_INPUTS + MZC_TS_EXTRA_LOWER];
	int32_t		blocking[MAX_INPUTS];
	mzc_ts_request req;
	mzc_ts_result res;
	mzc_frontier since = mzc_frontier_at(0),
				upper = mzc_frontier_empty();
	mzc_error	err;
	mzc_status	st;
	uint8_t		flags;
	int32_t		i,
				n;

	fuzz_target_name = "fuzz_determine_timestamp";
	memset(&req, 0, sizeof(req));
	req.isolation = (mzc_isolation) fz_below(&r, 4);
	req.when = (mzc_when_kind) fz_below(&r, 5);
	req.when_ts = fz_ts(&r);
	flags = fz_byte(&r);
	req.timeline = (flags & 1) == 0;
	req.has_oracle_ts = (flags & 2) != 0;
	req.has_session_ts = (flags & 4) != 0;
	req.has_rtr_ts = (flags & 8) != 0;
	req.mode = (mzc_ts_mode) (((flags >> 4) & 3) % 3);
	req.oracle_ts = fz_ts(&r);
	req.session_ts = fz_ts(&r);
	req.rtr_ts = fz_ts(&r);
	req.ninputs = fz_below(&r, MAX_INPUTS + 1);
	for (i = 0; i < req.ninputs; i++)
	{
		inputs[i].since = fz_frontier(&r);
		inputs[i].upper = fz_frontier(&r);
		since = mzc_frontier_join(since, inputs[i].since);
		upper = mzc_frontier_meet(upper, inputs[i].upper);
	}
	req.inputs = inputs;
	n = req.ninputs;

	mzc_ts_result_init(&res, lower, n + MZC_TS_EXTRA_LOWER, blocking, n);
	mzc_error_clear(&err);
	st = mzc_determine_timestamp(&req, &res, &err);

	check((st == MZC_ERR_INVALID) == expect_invalid(&req),
		  "invalid exactly when a rule is broken");
	if (st == MZC_OK)
	{
		check(res.timestamp >= 0, "negative timestamp");
		for (i = 0; i < n; i++)
			check(mzc_frontier_le_ts(inputs[i].since, res.timestamp),
				  "timestamp below an input's since");
		if (req.when == MZC_WHEN_AS_OF)
			check(res.timestamp == req.when_ts, "as-of not honoured");
		if (req.when == MZC_WHEN_AS_OF_AT_LEAST)
			check(res.timestamp >= req.when_ts, "as-of-at-least not honoured");
		if (req.has_rtr_ts)
			check(res.timestamp >= req.rtr_ts, "below real-time recency");
		check(mzc_frontier_eq(res.since, since), "since is not the join");
		check(mzc_frontier_eq(res.upper, upper), "upper is not the meet");
		check(res.largest_not_in_advance_of_upper ==
			  mzc_largest_not_in_advance_of_upper(upper), "F6");
		check(res.respond_immediately ==
			  (!req.timeline || !mzc_frontier_le_ts(upper, res.timestamp)),
			  "respond_immediately");
		check(res.formulations_agree, "formulations disagree on a success");
		check(res.nlower >= 0 && res.nlower <= n + MZC_TS_EXTRA_LOWER,
			  "lower constraint count");
		check(res.nupper >= 0 && res.nupper <= 1, "upper constraint count");
		for (i = 0; i < res.nlower; i++)
		{
			check_constraint(&res.lower[i], &req);
			check(mzc_frontier_le_ts(res.lower[i].bound, res.timestamp),
				  "a binding lower bound above the timestamp");
		}
		for (i = 0; i < res.nupper; i++)
		{
			check_constraint(&res.upper_constraints[i], &req);
			check(res.upper_constraints[i].bound.empty ||
				  res.timestamp <= res.upper_constraints[i].bound.ts,
				  "a binding upper bound below the timestamp");
		}
	}
	else if (st == MZC_ERR_SINCE_VIOLATION)
	{
		int32_t		beyond = 0;

		for (i = 0; i < n; i++)
			beyond += !mzc_frontier_le_ts(inputs[i].since, res.candidate);
		/*
		 * The classical formulation fails only below an input's since.  The
		 * constraint formulation fails at the join of its lower bounds when
		 * an upper bound (the as-of) is below it, and that join need not be
		 * below any since (the reference's T5 note), so it may list none.
		 */
		if (req.mode != MZC_TS_CONSTRAINTS)
			check(res.nblocking >= 1, "a violation lists its inputs");
		check(res.nblocking == beyond, "a violation lists every blocking input");
		for (i = 0; i < res.nblocking; i++)
		{
			check(res.blocking[i] >= 0 && res.blocking[i] < n, "blocking index");
			check(i == 0 || res.blocking[i] > res.blocking[i - 1],
				  "blocking inputs in order, each once");
			check(!mzc_frontier_le_ts(inputs[res.blocking[i]].since,
									  res.candidate),
				  "a listed input does not block");
		}
	}
	else
		check(st == MZC_ERR_INVALID, "unexpected status");
	return 0;
}
