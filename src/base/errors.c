/*-------------------------------------------------------------------------
 *
 * errors.c
 *	  Error reports shared by the SQL functions of mzcoord.
 *
 * Rejecting a read time below some input's since is the same error wherever
 * it happens (determine_timestamp, select_timestamp, read_at, ...): one
 * message, one SQLSTATE, a detail that names every blocking input with its
 * since, and a hint that says what to do (Materialize issue #3792: an opaque
 * list of ids and antichains helps nobody).
 *
 * IDENTIFICATION
 *	  src/base/errors.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"

#include "errors.h"

/* At most this many inputs are named in the detail; the rest are counted. */
#define MZC_VIOLATION_LIST_MAX 20

void
mzcoord_report_since_violation(mzc_ts ts, int n, const char *const *names,
							   const mzc_frontier *sinces)
{
	StringInfoData detail;
	int			shown = Min(n, MZC_VIOLATION_LIST_MAX);
	int			i;

	initStringInfo(&detail);
	for (i = 0; i < shown; i++)
	{
		if (i > 0)
			appendStringInfoString(&detail, ", ");
		if (sinces[i].empty)
			appendStringInfo(&detail, "\"%s\" (no readable time)", names[i]);
		else
			appendStringInfo(&detail, "\"%s\" (since " INT64_FORMAT ")",
							 names[i], (int64) sinces[i].ts);
	}
	if (n > shown)
		appendStringInfo(&detail, " and %d more", n - shown);

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("timestamp " INT64_FORMAT " is not valid for all inputs",
					(int64) ts),
			 n > 0 ? errdetail_plural("The input whose since is beyond the timestamp is %s.",
									  "The inputs whose since is beyond the timestamp are %s.",
									  n, detail.data) : 0,
			 errhint("Use as_of_at_least to read at the earliest valid timestamp, or retain more history on these inputs to keep older timestamps readable.")));
	pg_unreachable();
}
