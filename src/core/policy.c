/*-------------------------------------------------------------------------
 *
 * policy.c
 *	  Read policies (P1-P6) and retain-history windows (P5).
 *
 * IDENTIFICATION
 *	  src/core/policy.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "policy.h"

static mzc_policy
policy_simple(mzc_policy_kind kind, mzc_frontier f)
{
	mzc_policy	p;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.frontier = f;
	p.granularity_ms = 1;
	return p;
}

mzc_policy
mzc_policy_no_policy(mzc_frontier initial_since)
{
	return policy_simple(MZC_POLICY_NO_POLICY, initial_since);
}

mzc_policy
mzc_policy_valid_from(mzc_frontier f)
{
	return policy_simple(MZC_POLICY_VALID_FROM, f);
}

mzc_policy
mzc_policy_disabled(void)
{
	return policy_simple(MZC_POLICY_VALID_FROM, mzc_frontier_at(0));
}

mzc_policy
mzc_policy_step_back(void)
{
	return policy_simple(MZC_POLICY_STEP_BACK, mzc_frontier_at(0));
}

static mzc_status
check_lag(int64_t lag_ms, int64_t granularity_ms, mzc_error *err)
{
	if (lag_ms < 0)
		return mzc_fail(err, MZC_ERR_INVALID,
						"lag must not be negative: %lld", (long long) lag_ms);
	if (granularity_ms < 1)
		return mzc_fail(err, MZC_ERR_INVALID,
						"granularity must be positive: %lld",
						(long long) granularity_ms);
	return MZC_OK;
}

mzc_status
mzc_policy_lag(int64_t lag_ms, int64_t granularity_ms, mzc_policy *out,
			   mzc_error *err)
{
	mzc_status	st = check_lag(lag_ms, granularity_ms, err);

	if (st != MZC_OK)
		return st;
	*out = policy_simple(MZC_POLICY_LAG, mzc_frontier_at(0));
	out->lag_ms = lag_ms;
	out->granularity_ms = granularity_ms;
	return MZC_OK;
}

static mzc_status
check_frontier(mzc_frontier f, mzc_error *err)
{
	if (!f.empty && !mzc_ts_valid(f.ts))
		return mzc_fail(err, MZC_ERR_INVALID,
						"timestamp must not be negative: %lld", (long long) f.ts);
	return MZC_OK;
}

static mzc_status
check_term(mzc_policy_kind kind, mzc_frontier f, int64_t lag_ms,
		   int64_t granularity_ms, mzc_error *err)
{
	switch (kind)
	{
		case MZC_POLICY_NO_POLICY:
		case MZC_POLICY_VALID_FROM:
			return check_frontier(f, err);
		case MZC_POLICY_LAG:
			return check_lag(lag_ms, granularity_ms, err);
		case MZC_POLICY_STEP_BACK:
			return MZC_OK;
		case MZC_POLICY_MULTIPLE:
			break;
	}
	return mzc_fail(err, MZC_ERR_INVALID, "unrecognized policy kind %d",
					(int) kind);
}

mzc_status
mzc_policy_validate(const mzc_policy *p, mzc_error *err)
{
	int32_t		i;
	mzc_status	st;

	if (p->kind != MZC_POLICY_MULTIPLE)
		return check_term(p->kind, p->frontier, p->lag_ms, p->granularity_ms,
						  err);
	if (p->nmembers < 1 || p->nmembers > MZC_POLICY_MAX_MEMBERS)
		return mzc_fail(err, MZC_ERR_INVALID,
						"a multiple policy needs 1 to %d members, not %d",
						MZC_POLICY_MAX_MEMBERS, (int) p->nmembers);
	for (i = 0; i < p->nmembers; i++)
	{
		const mzc_policy_term *t = &p->members[i];

		if (t->kind == MZC_POLICY_MULTIPLE)
			return mzc_fail(err, MZC_ERR_INVALID,
							"member %d of a multiple policy is itself multiple",
							(int) i);
		st = check_term(t->kind, t->frontier, t->lag_ms, t->granularity_ms, err);
		if (st != MZC_OK)
			return st;
	}
	return MZC_OK;
}

mzc_frontier
mzc_lag_frontier(mzc_frontier upper, int64_t lag_ms, int64_t granularity_ms)
{
	mzc_ts		t;
	int64_t		g;

	/* P4: both lag policies map the empty upper to the lattice bottom. */
	if (upper.empty)
		return mzc_frontier_at(0);
	if (lag_ms <= 0)
		return upper;
	t = mzc_ts_sub(upper.ts, lag_ms);
	g = granularity_ms < 1 ? 1 : granularity_ms;
	if (lag_ms < g)
		g = lag_ms;
	return mzc_frontier_at(t - t % g);
}

static mzc_frontier
term_frontier(mzc_policy_kind kind, mzc_frontier f, int64_t lag_ms,
			  int64_t granularity_ms, mzc_frontier upper)
{
	switch (kind)
	{
		case MZC_POLICY_NO_POLICY:
		case MZC_POLICY_VALID_FROM:
			return f;
		case MZC_POLICY_LAG:
			return mzc_lag_frontier(upper, lag_ms, granularity_ms);
		case MZC_POLICY_STEP_BACK:
			if (upper.empty)
				return mzc_frontier_at(0);
			return mzc_frontier_step_back(upper);
		case MZC_POLICY_MULTIPLE:
			break;
	}
	/* Not reachable for a validated policy; the bottom is the safe answer. */
	return mzc_frontier_at(0);
}

mzc_frontier
mzc_policy_frontier(const mzc_policy *p, mzc_frontier upper)
{
	mzc_frontier result;
	int32_t		i,
				n;

	if (p->kind != MZC_POLICY_MULTIPLE)
		return term_frontier(p->kind, p->frontier, p->lag_ms,
							 p->granularity_ms, upper);
	n = p->nmembers;
	if (n > MZC_POLICY_MAX_MEMBERS)
		n = MZC_POLICY_MAX_MEMBERS;
	result = mzc_frontier_empty();
	for (i = 0; i < n; i++)
	{
		const mzc_policy_term *t = &p->members[i];

		if (t->kind == MZC_POLICY_MULTIPLE)
			result = mzc_frontier_meet(result, mzc_frontier_at(0));
		else
			result = mzc_frontier_meet(result,
									   term_frontier(t->kind, t->frontier,
													 t->lag_ms,
													 t->granularity_ms,
													 upper));
	}
	return result;
}

/*
 * The next upper at which one term's frontier may move (see
 * mzc_policy_next_change).
 */
static mzc_ts
term_next_change(mzc_policy_kind kind, int64_t lag_ms, int64_t granularity_ms,
				 mzc_ts upper)
{
	mzc_ts		t;
	mzc_ts		f;
	int64_t		g;

	switch (kind)
	{
		case MZC_POLICY_NO_POLICY:
		case MZC_POLICY_VALID_FROM:
			return MZC_TS_MAX;
		case MZC_POLICY_STEP_BACK:
			return mzc_ts_add(upper, 1);
		case MZC_POLICY_LAG:
			if (lag_ms <= 0)
				return mzc_ts_add(upper, 1);
			g = granularity_ms < 1 ? 1 : granularity_ms;
			if (lag_ms < g)
				g = lag_ms;
			t = mzc_ts_sub(upper, lag_ms);
			f = t - t % g;
			/* The frontier reaches f + g once upper - lag does. */
			return mzc_ts_add(mzc_ts_add(f, g), lag_ms);
		case MZC_POLICY_MULTIPLE:
			break;
	}
	return mzc_ts_add(upper, 1);	/* not reachable: the safe answer */
}

mzc_ts
mzc_policy_next_change(const mzc_policy *p, mzc_frontier upper)
{
	mzc_ts		next = MZC_TS_MAX;
	int32_t		n;

	if (upper.empty)
		return MZC_TS_MAX;
	if (p->kind != MZC_POLICY_MULTIPLE)
		return term_next_change(p->kind, p->lag_ms, p->granularity_ms,
								upper.ts);
	n = p->nmembers;
	if (n > MZC_POLICY_MAX_MEMBERS)
		n = MZC_POLICY_MAX_MEMBERS;
	for (int32_t i = 0; i < n; i++)
	{
		mzc_ts		m = term_next_change(p->members[i].kind,
										 p->members[i].lag_ms,
										 p->members[i].granularity_ms,
										 upper.ts);

		if (m < next)
			next = m;
	}
	return next;
}

bool
mzc_implied_advance(mzc_frontier *implied, mzc_frontier proposed)
{
	if (!mzc_frontier_le(*implied, proposed) ||
		mzc_frontier_eq(*implied, proposed))
		return false;
	*implied = proposed;
	return true;
}
