/*-------------------------------------------------------------------------
 *
 * frontier.c
 *	  Frontier comparisons and lattice operations (F1-F7).
 *
 * IDENTIFICATION
 *	  src/core/frontier.c
 *
 *-------------------------------------------------------------------------
 */
#include "frontier.h"

bool
mzc_frontier_le(mzc_frontier a, mzc_frontier b)
{
	if (b.empty)
		return true;
	if (a.empty)
		return false;
	return a.ts <= b.ts;
}

bool
mzc_frontier_eq(mzc_frontier a, mzc_frontier b)
{
	if (a.empty || b.empty)
		return a.empty == b.empty;
	return a.ts == b.ts;
}

bool
mzc_frontier_lt(mzc_frontier a, mzc_frontier b)
{
	return mzc_frontier_le(a, b) && !mzc_frontier_eq(a, b);
}

bool
mzc_frontier_le_ts(mzc_frontier a, mzc_ts t)
{
	return !a.empty && a.ts <= t;
}

mzc_frontier
mzc_frontier_meet(mzc_frontier a, mzc_frontier b)
{
	return mzc_frontier_le(a, b) ? a : b;
}

mzc_frontier
mzc_frontier_join(mzc_frontier a, mzc_frontier b)
{
	return mzc_frontier_le(a, b) ? b : a;
}

mzc_frontier
mzc_frontier_step_back(mzc_frontier a)
{
	if (a.empty)
		return a;
	return mzc_frontier_at(mzc_ts_sub(a.ts, 1));
}

mzc_ts
mzc_largest_not_in_advance_of_upper(mzc_frontier upper)
{
	if (upper.empty)
		return MZC_TS_MAX;
	return mzc_ts_sub(upper.ts, 1);
}

mzc_ts
mzc_ts_sub(mzc_ts t, int64_t d)
{
	if (d <= 0)
		return d == 0 ? t : mzc_ts_add(t, d == INT64_MIN ? INT64_MAX : -d);
	return t > d ? t - d : 0;
}

mzc_ts
mzc_ts_add(mzc_ts t, int64_t d)
{
	if (d <= 0)
		return d == 0 ? t : mzc_ts_sub(t, d == INT64_MIN ? INT64_MAX : -d);
	return t > MZC_TS_MAX - d ? MZC_TS_MAX : t + d;
}
