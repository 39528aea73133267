/*-------------------------------------------------------------------------
 *
 * frontier_sql.c
 *	  SQL wrappers of the pure core's frontier arithmetic.
 *
 *	  mzcoord.lag_frontier(upper, lag_ms, granularity_ms)	  P2 read policy
 *	  mzcoord.largest_not_in_advance_of_upper(upper)		  F6
 *
 * Frontier arguments and results are bigint, NULL meaning the empty
 * frontier {}.  These functions touch no shared memory and no catalog: they
 * only compute, so they are immutable and safe to call anywhere.
 *
 * IDENTIFICATION
 *	  src/funcs/frontier_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "frontier.h"
#include "policy.h"

PG_FUNCTION_INFO_V1(mzcoord_lag_frontier);
PG_FUNCTION_INFO_V1(mzcoord_largest_not_in_advance_of_upper);

/* A nullable bigint frontier argument; negative times are rejected. */
static mzc_frontier
frontier_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	int64		t;

	if (PG_ARGISNULL(argno))
		return mzc_frontier_empty();
	t = PG_GETARG_INT64(argno);
	if (t < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative: " INT64_FORMAT, name, t),
				 errhint("Timestamps are milliseconds since the Unix epoch; NULL is the empty frontier.")));
	return mzc_frontier_at(t);
}

static int64
required_int64_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	return PG_GETARG_INT64(argno);
}

/*
 * SQL: mzcoord.lag_frontier(upper bigint, lag_ms bigint,
 *							 granularity_ms bigint DEFAULT 1000) RETURNS bigint
 *
 * The since that a lag read policy asks for at this upper (P2, P4): a NULL
 * (empty) upper gives 0, a lag of 0 gives the upper itself.
 */
Datum
mzcoord_lag_frontier(PG_FUNCTION_ARGS)
{
	mzc_frontier upper = frontier_arg(fcinfo, 0, "upper");
	int64		lag = required_int64_arg(fcinfo, 1, "lag_ms");
	int64		granularity = required_int64_arg(fcinfo, 2, "granularity_ms");
	mzc_policy	policy;
	mzc_error	err;
	mzc_frontier result;

	if (mzc_policy_lag(lag, granularity, &policy, &err) != MZC_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid lag policy: %s", err.message),
				 errhint("lag_ms must be zero or more and granularity_ms at least 1.")));
	result = mzc_policy_frontier(&policy, upper);
	/* A lag policy never yields {} (P4 maps {} to {0}). */
	Assert(!result.empty);
	PG_RETURN_INT64(result.ts);
}

/*
 * SQL: mzcoord.largest_not_in_advance_of_upper(upper bigint) RETURNS bigint
 *
 * F6: upper - 1 (0 for 0); the empty upper (NULL) gives 2^63-1.
 */
Datum
mzcoord_largest_not_in_advance_of_upper(PG_FUNCTION_ARGS)
{
	mzc_frontier upper = frontier_arg(fcinfo, 0, "upper");

	PG_RETURN_INT64(mzc_largest_not_in_advance_of_upper(upper));
}
