/*-------------------------------------------------------------------------
 *
 * core_sql.c
 *	  SQL wrappers of mzcoord's pure core (src/core).
 *
 *	  mzcoord.lag_frontier(upper, lag_ms, granularity_ms)	  P2 read policy
 *	  mzcoord.largest_not_in_advance_of_upper(upper)		  F6
 *	  mzcoord.determine_timestamp(request jsonb)			  2.5
 *	  mzcoord.select_as_ofs(request jsonb)					  2.6
 *
 * Frontier arguments and results are bigint, NULL meaning the empty
 * frontier {}.  These functions touch no shared memory and no catalog: they
 * only compute, so they are immutable and safe to call anywhere.  The JSON
 * functions hand the request text to the core's JSON entry points, which
 * check it strictly and name the offending path in their errors.
 *
 * IDENTIFICATION
 *	  src/controller/core_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "frontier.h"
#include "json.h"
#include "jsonapi.h"
#include "mzcoord.h"
#include "policy.h"
#include "status.h"

PG_FUNCTION_INFO_V1(mzcoord_lag_frontier);
PG_FUNCTION_INFO_V1(mzcoord_largest_not_in_advance_of_upper);
PG_FUNCTION_INFO_V1(mzcoord_determine_timestamp);
PG_FUNCTION_INFO_V1(mzcoord_select_as_ofs);

/* The arena for one request starts at the core's guess and doubles up to: */
#define MZC_ARENA_START_MAX ((size_t) 64 * 1024 * 1024)
#define MZC_ARENA_MAX ((size_t) 2 * 1024 * 1024 * 1024)

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

/* A JSON entry point of the core. */
typedef enum json_call
{
	CALL_DETERMINE_TIMESTAMP,
	CALL_SELECT_AS_OFS
} json_call;

/*
 * Runs a JSON entry point on the request, growing the arena while the core
 * reports that it is too small, and turns every failure into an ERROR with
 * an explicit SQLSTATE.  Returns the result as jsonb.
 */
static Datum
call_json(Jsonb *request, json_call which)
{
	char	   *text = JsonbToCString(NULL, &request->root, VARSIZE(request));
	size_t		len = strlen(text);
	size_t		cap = Min(mzc_json_arena_size(len), MZC_ARENA_START_MAX);
	mzc_since_violation violation;
	const char *out = NULL;
	size_t		out_len = 0;
	mzc_error	err;
	mzc_status	st;

	for (;;)
	{
		char	   *mem = palloc_extended(cap, MCXT_ALLOC_HUGE);
		mzc_arena	arena;

		mzc_arena_init(&arena, mem, cap);
		mzc_error_clear(&err);
		if (which == CALL_DETERMINE_TIMESTAMP)
			st = mzc_json_determine_timestamp(text, len, &arena, &out, &out_len,
											  &violation, &err);
		else
			st = mzc_json_select_as_ofs(text, len, &arena, &out, &out_len, &err);
		if (st != MZC_ERR_NO_SPACE)
			break;
		pfree(mem);
		if (cap >= MZC_ARENA_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("request is too large")));
		cap = Min(cap * 2, MZC_ARENA_MAX);
	}

	switch (st)
	{
		case MZC_OK:
			return DirectFunctionCall1(jsonb_in, CStringGetDatum(out));
		case MZC_ERR_SINCE_VIOLATION:
			mzcoord_report_since_violation(violation.timestamp, violation.n,
										   violation.ids, violation.sinces);
			break;
		case MZC_ERR_INVALID:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid request: %s", err.message)));
			break;
		default:
			break;
	}
	/* Not expected from these entry points; still a clean, coded error. */
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("could not process request: %s", err.message)));
	return (Datum) 0;
}

/*
 * SQL: mzcoord.determine_timestamp(request jsonb) RETURNS jsonb
 *
 * Timestamp selection (reference 2.5); see src/core/jsonapi.h for the
 * request and result shapes.
 */
Datum
mzcoord_determine_timestamp(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(call_json(PG_GETARG_JSONB_P(0), CALL_DETERMINE_TIMESTAMP));
}

/*
 * SQL: mzcoord.select_as_ofs(request jsonb) RETURNS jsonb
 *
 * As-of selection for maintained dataflows (reference 2.6); see
 * src/core/jsonapi.h for the request and result shapes.
 */
Datum
mzcoord_select_as_ofs(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(call_json(PG_GETARG_JSONB_P(0), CALL_SELECT_AS_OFS));
}
