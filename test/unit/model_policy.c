/*-------------------------------------------------------------------------
 *
 * model_policy.c
 *	  Multiple policies and retain-history windows (P5), for the unit tests.
 *
 * IDENTIFICATION
 *	  test/unit/model_policy.c
 *
 *-------------------------------------------------------------------------
 */
#include "model_policy.h"

mzc_status
mzc_policy_multiple(const mzc_policy *members, int32_t n, mzc_policy *out,
					mzc_error *err)
{
	mzc_policy	result;
	int32_t		i,
				j;
	mzc_status	st;

	if (n < 1)
		return mzc_fail(err, MZC_ERR_INVALID,
						"a multiple policy needs at least one member");
	result = mzc_policy_valid_from(mzc_frontier_at(0));
	result.kind = MZC_POLICY_MULTIPLE;
	for (i = 0; i < n; i++)
	{
		const mzc_policy *m = &members[i];

		st = mzc_policy_validate(m, err);
		if (st != MZC_OK)
			return st;
		if (m->kind == MZC_POLICY_MULTIPLE)
		{
			for (j = 0; j < m->nmembers; j++)
			{
				if (result.nmembers == MZC_POLICY_MAX_MEMBERS)
					return mzc_fail(err, MZC_ERR_INVALID,
									"a multiple policy has at most %d members",
									MZC_POLICY_MAX_MEMBERS);
				result.members[result.nmembers++] = m->members[j];
			}
		}
		else
		{
			mzc_policy_term t;

			if (result.nmembers == MZC_POLICY_MAX_MEMBERS)
				return mzc_fail(err, MZC_ERR_INVALID,
								"a multiple policy has at most %d members",
								MZC_POLICY_MAX_MEMBERS);
			t.kind = m->kind;
			t.frontier = m->frontier;
			t.lag_ms = m->lag_ms;
			t.granularity_ms = m->granularity_ms;
			result.members[result.nmembers++] = t;
		}
	}
	*out = result;
	return MZC_OK;
}

mzc_status
mzc_window_policy(mzc_window w, mzc_policy *out, mzc_error *err)
{
	switch (w.kind)
	{
		case MZC_WINDOW_DEFAULT:
			return mzc_policy_lag(MZC_DEFAULT_WINDOW_MS,
								  MZC_SINCE_GRANULARITY_MS, out, err);
		case MZC_WINDOW_DISABLED:
			*out = mzc_policy_disabled();
			return MZC_OK;
		case MZC_WINDOW_DURATION:
			if (w.ms < 0)
				return mzc_fail(err, MZC_ERR_INVALID,
								"retain history must not be negative: %lld",
								(long long) w.ms);
			return mzc_policy_lag(w.ms, MZC_SINCE_GRANULARITY_MS, out, err);
	}
	return mzc_fail(err, MZC_ERR_INVALID, "unrecognized window kind %d",
					(int) w.kind);
}

mzc_ts
mzc_window_comparable_ts(mzc_window w)
{
	switch (w.kind)
	{
		case MZC_WINDOW_DEFAULT:
			return MZC_DEFAULT_WINDOW_MS;
		case MZC_WINDOW_DISABLED:
			return MZC_TS_MAX;
		case MZC_WINDOW_DURATION:
			return w.ms < 0 ? 0 : w.ms;
	}
	return MZC_DEFAULT_WINDOW_MS;
}

mzc_ts
mzc_window_lag_from(mzc_window w, mzc_ts t)
{
	switch (w.kind)
	{
		case MZC_WINDOW_DEFAULT:
			return mzc_ts_sub(t, MZC_DEFAULT_WINDOW_MS);
		case MZC_WINDOW_DISABLED:
			return 0;
		case MZC_WINDOW_DURATION:
			return mzc_ts_sub(t, w.ms < 0 ? 0 : w.ms);
	}
	return mzc_ts_sub(t, MZC_DEFAULT_WINDOW_MS);
}
