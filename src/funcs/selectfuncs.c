/*-------------------------------------------------------------------------
 *
 * selectfuncs.c
 *	  The SQL faces of timestamp selection: mzcoord.select_timestamp() and
 *	  mzcoord.explain_timestamp() parse their arguments here, select through
 *	  controller/selection.c, and explain_timestamp renders the decision in
 *	  the layout of Materialize's EXPLAIN TIMESTAMP.
 *
 * IDENTIFICATION
 *	  src/funcs/selectfuncs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "acquire.h"
#include "oracle.h"
#include "selection.h"
#include "shmem.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_select_timestamp);
PG_FUNCTION_INFO_V1(mzcoord_explain_timestamp);

/*
 * The arguments (rels regclass[], isolation text, as_of bigint,
 * as_of_at_least bigint) into a selection.
 */
static void
parse_call(FunctionCallInfo fcinfo, MzcTsCall *c)
{
	char	   *iso;
	mzc_isolation isolation;
	mzc_when_kind when = MZC_WHEN_IMMEDIATELY;
	mzc_ts		when_ts = 0;
	MzcTarget  *targets;
	int			n;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relations must not be null")));
	iso = PG_ARGISNULL(1) ? "strict serializable" :
		text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (pg_strcasecmp(iso, "serializable") == 0)
		isolation = MZC_ISO_SERIALIZABLE;
	else if (pg_strcasecmp(iso, "strict serializable") == 0)
		isolation = MZC_ISO_STRICT_SERIALIZABLE;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized isolation level: \"%s\"", iso),
				 errhint("Use \"serializable\" or \"strict serializable\".")));
	if (!PG_ARGISNULL(2) && !PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("as_of and as_of_at_least cannot both be given")));
	if (!PG_ARGISNULL(2))
	{
		when = MZC_WHEN_AS_OF;
		when_ts = PG_GETARG_INT64(2);
	}
	else if (!PG_ARGISNULL(3))
	{
		when = MZC_WHEN_AS_OF_AT_LEAST;
		when_ts = PG_GETARG_INT64(3);
	}
	if (when != MZC_WHEN_IMMEDIATELY && !mzc_ts_valid(when_ts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timestamp must not be negative: " INT64_FORMAT,
						when_ts)));
	targets = mzcoord_targets_from_array(PG_GETARG_ARRAYTYPE_P(0), &n);
	mzcoord_ts_call_init(c, targets, n, isolation, when, when_ts,
						 fcinfo->flinfo->fn_oid);
}

/*
 * mzcoord.select_timestamp(rels regclass[], isolation text,
 *		as_of bigint, as_of_at_least bigint) RETURNS bigint
 */
Datum
mzcoord_select_timestamp(PG_FUNCTION_ARGS)
{
	MzcTsCall	c;

	mzcoord_require_shmem();
	parse_call(fcinfo, &c);
	PG_RETURN_INT64(mzcoord_ts_call_select(&c));
}

/* "1673618185152 (2023-01-13 13:56:25.152)" */
static void
append_ts(StringInfo buf, mzc_ts ts)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int64		secs = ts / 1000;
	Timestamp	t;

	appendStringInfo(buf, INT64_FORMAT, (int64) ts);
	/* Only render dates PostgreSQL can represent. */
	if (secs > (int64) 9000000000000LL / 1000)
		return;
	t = (Timestamp) (ts * 1000) -
		(Timestamp) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
	if (timestamp2tm(t, NULL, &tm, &fsec, NULL, NULL) != 0)
		return;
	appendStringInfo(buf, " (%04d-%02d-%02d %02d:%02d:%02d.%03d)",
					 tm.tm_year, tm.tm_mon, tm.tm_mday,
					 tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (fsec / 1000));
}

static void
append_frontier(StringInfo buf, mzc_frontier f)
{
	appendStringInfoChar(buf, '[');
	if (!f.empty)
		append_ts(buf, f.ts);
	appendStringInfoChar(buf, ']');
}

static void
append_label(StringInfo buf, const char *label)
{
	appendStringInfo(buf, "%31s:", label);
}

static const char *
iso_label(mzc_isolation iso)
{
	switch (iso)
	{
		case MZC_ISO_SERIALIZABLE:
			return "Serializable";
		case MZC_ISO_STRICT_SERIALIZABLE:
			return "StrictSerializable";
		case MZC_ISO_STRONG_SESSION_SERIALIZABLE:
			return "StrongSessionSerializable";
	}
	return "?";
}

static void
append_constraint(StringInfo buf, MzcTsCall *c, const mzc_ts_constraint *k)
{
	appendStringInfoString(buf, "  (");
	switch (k->reason)
	{
		case MZC_REASON_STORAGE_INPUT:
			appendStringInfo(buf, "StorageInput([u" INT64_FORMAT "])",
							 c->targets[k->input].gid);
			break;
		case MZC_REASON_QUERY_AS_OF:
			appendStringInfoString(buf, "QueryAsOf");
			break;
		case MZC_REASON_ISOLATION_LEVEL:
			appendStringInfo(buf, "IsolationLevel(%s)", iso_label(k->isolation));
			break;
		case MZC_REASON_REAL_TIME_RECENCY:
			appendStringInfoString(buf, "RealTimeRecency");
			break;
	}
	appendStringInfoString(buf, "): ");
	append_frontier(buf, k->bound);
	appendStringInfoChar(buf, '\n');
}

/*
 * mzcoord.explain_timestamp(...) RETURNS text: the decision select_timestamp
 * would take now, in the layout of EXPLAIN TIMESTAMP.  Takes no holds.
 */
Datum
mzcoord_explain_timestamp(PG_FUNCTION_ARGS)
{
	MzcTsCall	c;
	StringInfoData buf;

	mzcoord_require_shmem();
	parse_call(fcinfo, &c);
	mzcoord_ts_call_explain(&c);

	initStringInfo(&buf);
	append_label(&buf, "query timestamp");
	appendStringInfoChar(&buf, ' ');
	append_ts(&buf, c.res.timestamp);
	appendStringInfoChar(&buf, '\n');
	if (c.res.oracle_used)
	{
		append_label(&buf, "oracle read timestamp");
		appendStringInfoChar(&buf, ' ');
		append_ts(&buf, c.oracle_ts);
		appendStringInfoChar(&buf, '\n');
	}
	append_label(&buf, "largest not in advance of upper");
	appendStringInfoChar(&buf, ' ');
	append_ts(&buf, c.res.largest_not_in_advance_of_upper);
	appendStringInfoChar(&buf, '\n');
	append_label(&buf, "upper");
	append_frontier(&buf, c.res.upper);
	appendStringInfoChar(&buf, '\n');
	append_label(&buf, "since");
	append_frontier(&buf, c.res.since);
	appendStringInfoChar(&buf, '\n');
	append_label(&buf, "can respond immediately");
	appendStringInfo(&buf, " %s\n", c.res.respond_immediately ? "true" : "false");
	append_label(&buf, "timeline");
	appendStringInfoString(&buf, " Some(EpochMilliseconds)\n");
	append_label(&buf, "session wall time");
	appendStringInfoChar(&buf, ' ');
	append_ts(&buf, mzcoord_now_ms());
	appendStringInfoString(&buf, "\n");

	for (int i = 0; i < c.n; i++)
	{
		appendStringInfo(&buf, "\nsource %s (u" INT64_FORMAT ", storage):\n",
						 mzcoord_qualified_relname(c.targets[i].relid), c.targets[i].gid);
		append_label(&buf, "read frontier");
		append_frontier(&buf, c.targets[i].since);
		appendStringInfoChar(&buf, '\n');
		append_label(&buf, "write frontier");
		append_frontier(&buf, c.targets[i].upper);
		appendStringInfoChar(&buf, '\n');
	}

	appendStringInfoString(&buf, "\nbinding constraints:\nlower:\n");
	for (int i = 0; i < c.res.nlower; i++)
		append_constraint(&buf, &c, &c.res.lower[i]);
	if (c.res.nupper > 0)
	{
		appendStringInfoString(&buf, "upper:\n");
		for (int i = 0; i < c.res.nupper; i++)
			append_constraint(&buf, &c, &c.res.upper_constraints[i]);
	}

	PG_RETURN_TEXT_P(cstring_to_text(buf.data));
}
