/*-------------------------------------------------------------------------
 *
 * tsselect.c
 *	  Timestamp determination for a read (reference 2.5).
 *
 * IDENTIFICATION
 *	  src/core/tsselect.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "tsselect.h"

/* The predicates of a "when" (QueryWhen in Materialize). */
static bool
when_has_ts(mzc_when_kind w)
{
	return w == MZC_WHEN_AS_OF || w == MZC_WHEN_AS_OF_AT_LEAST;
}

static bool
advance_to_since(mzc_when_kind w)
{
	return w != MZC_WHEN_AS_OF;
}

static bool
can_advance_to_upper(mzc_when_kind w)
{
	return w == MZC_WHEN_IMMEDIATELY;
}

static bool
can_advance_to_timeline_ts(mzc_when_kind w)
{
	return w == MZC_WHEN_IMMEDIATELY || w == MZC_WHEN_FRESHEST_TABLE_WRITE;
}

static bool
must_advance_to_timeline_ts(mzc_when_kind w)
{
	return w == MZC_WHEN_FRESHEST_TABLE_WRITE;
}

static bool
constrains_upper(mzc_when_kind w)
{
	return w == MZC_WHEN_AS_OF;
}

bool
mzc_ts_needs_oracle(mzc_isolation isolation, mzc_when_kind when, bool timeline)
{
	if (!timeline)
		return false;
	return must_advance_to_timeline_ts(when) ||
		(can_advance_to_timeline_ts(when) &&
		 (isolation == MZC_ISO_STRICT_SERIALIZABLE ||
		  isolation == MZC_ISO_STRONG_SESSION_SERIALIZABLE));
}

const char *
mzc_isolation_name(mzc_isolation isolation)
{
	switch (isolation)
	{
		case MZC_ISO_SERIALIZABLE:
			return "serializable";
		case MZC_ISO_STRICT_SERIALIZABLE:
			return "strict serializable";
		case MZC_ISO_STRONG_SESSION_SERIALIZABLE:
			return "strong session serializable";
	}
	return "unknown";
}

const char *
mzc_ts_reason_name(mzc_ts_reason reason)
{
	switch (reason)
	{
		case MZC_REASON_STORAGE_INPUT:
			return "storage_input";
		case MZC_REASON_QUERY_AS_OF:
			return "query_as_of";
		case MZC_REASON_ISOLATION_LEVEL:
			return "isolation_level";
		case MZC_REASON_REAL_TIME_RECENCY:
			return "real_time_recency";
	}
	return "unknown";
}

void
mzc_ts_result_init(mzc_ts_result *res, mzc_ts_constraint *lower,
				   int32_t lower_capacity, int32_t *blocking,
				   int32_t blocking_capacity)
{
	memset(res, 0, sizeof(*res));
	res->lower = lower;
	res->lower_capacity = lower_capacity;
	res->blocking = blocking;
	res->blocking_capacity = blocking_capacity;
}

static mzc_status
check_ts(mzc_ts t, const char *what, mzc_error *err)
{
	if (!mzc_ts_valid(t))
		return mzc_fail(err, MZC_ERR_INVALID, "%s must not be negative: %lld",
						what, (long long) t);
	return MZC_OK;
}

static mzc_status
validate(const mzc_ts_request *req, const mzc_ts_result *res, mzc_error *err)
{
	int32_t		i;
	mzc_status	st;

	if (req->isolation < MZC_ISO_SERIALIZABLE ||
		req->isolation > MZC_ISO_STRONG_SESSION_SERIALIZABLE)
		return mzc_fail(err, MZC_ERR_INVALID, "unrecognized isolation level %d",
						(int) req->isolation);
	if (req->when < MZC_WHEN_IMMEDIATELY || req->when > MZC_WHEN_AS_OF_AT_LEAST)
		return mzc_fail(err, MZC_ERR_INVALID, "unrecognized when kind %d",
						(int) req->when);
	if (req->mode < MZC_TS_VERIFY || req->mode > MZC_TS_CONSTRAINTS)
		return mzc_fail(err, MZC_ERR_INVALID, "unrecognized mode %d",
						(int) req->mode);
	if (req->ninputs < 0 || (req->ninputs > 0 && req->inputs == NULL))
		return mzc_fail(err, MZC_ERR_INVALID, "invalid input list");
	if (when_has_ts(req->when) &&
		(st = check_ts(req->when_ts, "as-of timestamp", err)) != MZC_OK)
		return st;
	if (req->has_oracle_ts &&
		(st = check_ts(req->oracle_ts, "oracle read timestamp", err)) != MZC_OK)
		return st;
	if (req->has_session_ts)
	{
		if ((st = check_ts(req->session_ts, "session timestamp", err)) != MZC_OK)
			return st;
		if (req->isolation != MZC_ISO_STRONG_SESSION_SERIALIZABLE)
			return mzc_fail(err, MZC_ERR_INVALID,
							"a session timestamp is only used under strong session serializable");
	}
	if (req->has_rtr_ts)
	{
		if ((st = check_ts(req->rtr_ts, "real-time recency timestamp",
						   err)) != MZC_OK)
			return st;
		if (req->isolation != MZC_ISO_STRICT_SERIALIZABLE)
			return mzc_fail(err, MZC_ERR_INVALID,
							"real-time recency requires strict serializable isolation");
		if (!can_advance_to_timeline_ts(req->when))
			return mzc_fail(err, MZC_ERR_INVALID,
							"real-time recency cannot be combined with an as-of");
	}
	for (i = 0; i < req->ninputs; i++)
	{
		const mzc_ts_input *in = &req->inputs[i];

		if ((!in->since.empty && !mzc_ts_valid(in->since.ts)) ||
			(!in->upper.empty && !mzc_ts_valid(in->upper.ts)))
			return mzc_fail(err, MZC_ERR_INVALID,
							"input %d has a negative frontier", (int) i);
	}
	if (res->lower_capacity < req->ninputs + MZC_TS_EXTRA_LOWER ||
		(req->ninputs > 0 && res->lower == NULL))
		return mzc_fail(err, MZC_ERR_NO_SPACE,
						"room for %d lower constraints needed",
						(int) (req->ninputs + MZC_TS_EXTRA_LOWER));
	if (res->blocking_capacity < req->ninputs ||
		(req->ninputs > 0 && res->blocking == NULL))
		return mzc_fail(err, MZC_ERR_NO_SPACE,
						"room for %d blocking inputs needed", (int) req->ninputs);
	return MZC_OK;
}

static mzc_ts
ts_max(mzc_ts a, mzc_ts b)
{
	return a > b ? a : b;
}

static mzc_ts
ts_min(mzc_ts a, mzc_ts b)
{
	return a < b ? a : b;
}

/* Shared inputs of both formulations. */
typedef struct ts_context
{
	mzc_frontier since;			/* S */
	mzc_frontier upper;			/* U */
	mzc_ts		lniaou;			/* L */
	bool		has_oracle;		/* the oracle timestamp is to be used */
	mzc_ts		oracle;
	bool		has_session;
	mzc_ts		session;
} ts_context;

/* The classical formulation; returns whether S <= candidate. */
static bool
classical(const mzc_ts_request *req, const ts_context *cx, mzc_ts *candidate)
{
	mzc_ts		c = 0;

	if (when_has_ts(req->when))
		c = ts_max(c, req->when_ts);
	if (advance_to_since(req->when) && !cx->since.empty)
		c = ts_max(c, cx->since.ts);
	if (cx->has_oracle &&
		(req->isolation != MZC_ISO_STRONG_SESSION_SERIALIZABLE ||
		 must_advance_to_timeline_ts(req->when)))
		c = ts_max(c, cx->oracle);
	if (can_advance_to_upper(req->when) &&
		(req->isolation == MZC_ISO_SERIALIZABLE || !req->timeline))
		c = ts_max(c, cx->lniaou);
	if (req->has_rtr_ts)
		c = ts_max(c, req->rtr_ts);
	if (req->isolation == MZC_ISO_STRONG_SESSION_SERIALIZABLE)
	{
		if (req->timeline && cx->has_session)
			c = ts_max(c, cx->session);
		if (can_advance_to_upper(req->when) &&
			can_advance_to_timeline_ts(req->when))
		{
			mzc_ts		advance_to = cx->lniaou;

			if (cx->has_oracle)
				advance_to = ts_min(advance_to, cx->oracle);
			c = ts_max(c, advance_to);
		}
	}
	*candidate = c;
	return mzc_frontier_le_ts(cx->since, c);
}

static void
add_constraint(mzc_ts_constraint *list, int32_t *n, mzc_frontier bound,
			   mzc_ts_reason reason, int32_t input, mzc_isolation isolation)
{
	list[*n].bound = bound;
	list[*n].reason = reason;
	list[*n].input = input;
	list[*n].isolation = isolation;
	(*n)++;
}

/*
 * The constraint formulation.  Fills res->lower / res->upper_constraints
 * (minimised) and returns whether a valid candidate exists.
 */
static bool
constraints(const mzc_ts_request *req, const ts_context *cx,
			mzc_ts_result *res, mzc_ts *candidate)
{
	mzc_frontier lower_bound = mzc_frontier_at(0);
	mzc_frontier upper_bound = mzc_frontier_empty();
	mzc_ts		best_finite = 0;
	int32_t		nlower = 0,
				nupper = 0,
				i,
				kept;
	mzc_ts		c;
	bool		freshest;

	for (i = 0; i < req->ninputs; i++)
		add_constraint(res->lower, &nlower, req->inputs[i].since,
					   MZC_REASON_STORAGE_INPUT, i, req->isolation);
	if (when_has_ts(req->when))
	{
		add_constraint(res->lower, &nlower, mzc_frontier_at(req->when_ts),
					   MZC_REASON_QUERY_AS_OF, -1, req->isolation);
		if (constrains_upper(req->when))
			add_constraint(res->upper_constraints, &nupper,
						   mzc_frontier_at(req->when_ts),
						   MZC_REASON_QUERY_AS_OF, -1, req->isolation);
	}
	if (cx->has_oracle &&
		(req->isolation != MZC_ISO_STRONG_SESSION_SERIALIZABLE ||
		 must_advance_to_timeline_ts(req->when)))
		add_constraint(res->lower, &nlower, mzc_frontier_at(cx->oracle),
					   MZC_REASON_ISOLATION_LEVEL, -1, req->isolation);
	if (req->has_rtr_ts)
		add_constraint(res->lower, &nlower, mzc_frontier_at(req->rtr_ts),
					   MZC_REASON_REAL_TIME_RECENCY, -1, req->isolation);
	if (req->isolation == MZC_ISO_STRONG_SESSION_SERIALIZABLE && req->timeline)
	{
		if (cx->has_session)
			add_constraint(res->lower, &nlower, mzc_frontier_at(cx->session),
						   MZC_REASON_ISOLATION_LEVEL, -1, req->isolation);
		if (can_advance_to_upper(req->when) &&
			can_advance_to_timeline_ts(req->when))
		{
			mzc_ts		advance_to = cx->lniaou;

			if (cx->has_oracle)
				advance_to = ts_min(advance_to, cx->oracle);
			add_constraint(res->lower, &nlower, mzc_frontier_at(advance_to),
						   MZC_REASON_ISOLATION_LEVEL, -1, req->isolation);
		}
	}

	for (i = 0; i < nlower; i++)
	{
		lower_bound = mzc_frontier_join(lower_bound, res->lower[i].bound);
		if (!res->lower[i].bound.empty)
			best_finite = ts_max(best_finite, res->lower[i].bound.ts);
	}
	for (i = 0; i < nupper; i++)
		upper_bound = mzc_frontier_meet(upper_bound,
										res->upper_constraints[i].bound);

	/* Minimise: keep only the tight constraints. */
	kept = 0;
	for (i = 0; i < nlower; i++)
		if (mzc_frontier_eq(res->lower[i].bound, lower_bound))
			res->lower[kept++] = res->lower[i];
	res->nlower = kept;
	kept = 0;
	for (i = 0; i < nupper; i++)
		if (mzc_frontier_eq(res->upper_constraints[i].bound, upper_bound))
			res->upper_constraints[kept++] = res->upper_constraints[i];
	res->nupper = kept;

	/* An empty lower bound (an input with nothing readable) admits no time. */
	if (lower_bound.empty)
	{
		*candidate = best_finite;
		return false;
	}
	c = lower_bound.ts;
	freshest = can_advance_to_upper(req->when) &&
		(req->isolation == MZC_ISO_SERIALIZABLE || !req->timeline);
	if (freshest)
	{
		mzc_frontier m = mzc_frontier_meet(upper_bound,
										   mzc_frontier_at(cx->lniaou));

		c = ts_max(c, m.ts);
	}
	*candidate = c;
	/* Infeasible if some upper bound is below the candidate. */
	return upper_bound.empty || c <= upper_bound.ts;
}

mzc_status
mzc_determine_timestamp(const mzc_ts_request *req, mzc_ts_result *res,
						mzc_error *err)
{
	ts_context	cx;
	int32_t		i;
	bool		ok;
	mzc_status	st;

	if ((st = validate(req, res, err)) != MZC_OK)
		return st;

	cx.since = mzc_frontier_at(0);
	cx.upper = mzc_frontier_empty();
	for (i = 0; i < req->ninputs; i++)
	{
		cx.since = mzc_frontier_join(cx.since, req->inputs[i].since);
		cx.upper = mzc_frontier_meet(cx.upper, req->inputs[i].upper);
	}
	cx.lniaou = mzc_largest_not_in_advance_of_upper(cx.upper);
	cx.has_oracle = req->has_oracle_ts &&
		mzc_ts_needs_oracle(req->isolation, req->when, req->timeline);
	cx.oracle = req->oracle_ts;
	/*
	 * An exact AS OF is outside the session's linearisation: Materialize's
	 * classical code would move it to the session timestamp while its
	 * constraint code rejects it; we keep the as-of (result <= AS OF, as the
	 * TLA specification requires) by not using the session timestamp there.
	 */
	cx.has_session = req->has_session_ts &&
		req->isolation == MZC_ISO_STRONG_SESSION_SERIALIZABLE &&
		req->timeline && req->when != MZC_WHEN_AS_OF;
	cx.session = req->session_ts;

	res->since = cx.since;
	res->upper = cx.upper;
	res->largest_not_in_advance_of_upper = cx.lniaou;
	res->oracle_used = cx.has_oracle &&
		(req->isolation != MZC_ISO_STRONG_SESSION_SERIALIZABLE ||
		 must_advance_to_timeline_ts(req->when) ||
		 can_advance_to_upper(req->when));
	res->session_used = cx.has_session;
	res->nblocking = 0;

	res->classical_ok = classical(req, &cx, &res->classical_ts);
	res->constraints_ok = constraints(req, &cx, res, &res->constraints_ts);
	res->formulations_agree = res->classical_ok == res->constraints_ok &&
		(!res->classical_ok || res->classical_ts == res->constraints_ts);

	if (req->mode == MZC_TS_CONSTRAINTS)
	{
		ok = res->constraints_ok;
		res->candidate = res->constraints_ts;
	}
	else
	{
		ok = res->classical_ok;
		res->candidate = res->classical_ts;
	}

	if (!ok)
	{
		for (i = 0; i < req->ninputs; i++)
			if (!mzc_frontier_le_ts(req->inputs[i].since, res->candidate))
				res->blocking[res->nblocking++] = i;
		return mzc_fail(err, MZC_ERR_SINCE_VIOLATION,
						"timestamp %lld is not valid for all inputs",
						(long long) res->candidate);
	}
	res->timestamp = res->candidate;
	res->respond_immediately = !req->timeline ||
		!mzc_frontier_le_ts(cx.upper, res->timestamp);
	return MZC_OK;
}
