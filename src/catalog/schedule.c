/*-------------------------------------------------------------------------
 *
 * schedule.c
 *	  Retain history windows and refresh schedules, parsed into their
 *	  canonical forms.
 *
 * Both are checked by the DDL functions, before anything changes, and again
 * by the catalog implications, on the row that was written; neither changes
 * the catalog itself.
 *
 * The SQL-callable functions (mzcoord_sql_*) are internal (EXECUTE is
 * revoked from PUBLIC); the implications call them.
 *
 * IDENTIFICATION
 *	  src/catalog/schedule.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/pg_type.h"
#include "common/int.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/formatting.h"
#include "utils/timestamp.h"

#include "ids.h"
#include "oracle.h"
#include "schedule.h"
#include "settings.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_sql_retain_history_ms);
PG_FUNCTION_INFO_V1(mzcoord_sql_refresh_canonical);
PG_FUNCTION_INFO_V1(mzcoord_sql_refresh_first);

/* Milliseconds between the PostgreSQL epoch (2000) and the Unix epoch. */
#define MZC_PG_EPOCH_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/* ----------------------------------------------------------------
 * Retain history
 * ----------------------------------------------------------------
 */

/*
 * Convert a retain history window to milliseconds, rejecting windows that
 * cannot be honoured: months (no fixed length), zero (which would disable
 * the window rather than keep none), negative windows, and windows below the
 * minimum (the since granularity).  Sub-millisecond parts are dropped.
 */
int64
mzcoord_retain_history_ms(Interval *iv)
{
	int64		us;
	int64		day_us;

	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retain history cannot be given in months or years"),
				 errdetail("A month has no fixed length."),
				 errhint("Use days instead, for example '30 days'.")));
	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &day_us) ||
		pg_add_s64_overflow(day_us, iv->time, &us))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retain history is out of range")));
	if (us == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retain history cannot be disabled or set to 0"),
				 errhint("Pass NULL for the default of %d ms.",
						 MZC_DEFAULT_RETAIN_MS)));
	if (us < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retain history must be positive")));
	if (us / 1000 < MZC_MIN_RETAIN_MS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retain history cannot be set lower than %d ms",
						MZC_MIN_RETAIN_MS)));
	return us / 1000;
}

/* SQL: mzcoord._retain_history_ms(interval) RETURNS bigint, STRICT */
Datum
mzcoord_sql_retain_history_ms(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(mzcoord_retain_history_ms(PG_GETARG_INTERVAL_P(0)));
}

/* ----------------------------------------------------------------
 * Refresh schedules
 *
 * A schedule is a non-empty list of clauses:
 *
 *		at creation
 *		at <time>
 *		every <interval> [aligned to <time>]
 *
 * where <time> is milliseconds since the Unix epoch or a timestamptz
 * literal, and <interval> is a positive interval without months.  The
 * canonical form, which is what the catalog stores, spells times in
 * milliseconds and intervals as "<n> milliseconds", so that it means the
 * same whatever the session's time zone.  An "every" clause without
 * "aligned to" is aligned to the materialized view's as-of.
 * ----------------------------------------------------------------
 */

typedef enum MzcRefreshKind
{
	MZC_REFRESH_AT_CREATION,
	MZC_REFRESH_AT,
	MZC_REFRESH_EVERY
} MzcRefreshKind;

typedef struct MzcRefreshClause
{
	MzcRefreshKind kind;
	int64		at;				/* MZC_REFRESH_AT */
	int64		every_ms;		/* MZC_REFRESH_EVERY */
	bool		aligned;		/* MZC_REFRESH_EVERY: aligned_to given? */
	int64		aligned_to;
} MzcRefreshClause;

static void
refresh_syntax_error(const char *clause)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid refresh clause: \"%s\"", clause),
			 errhint("Use 'at creation', 'at <timestamp>' or 'every <interval> [aligned to <timestamp>]'.")));
}

/* A time in a refresh clause: epoch milliseconds or a timestamptz. */
static int64
parse_refresh_time(const char *s, const char *clause)
{
	const char *p = s;
	TimestampTz ts;
	int64		ms;

	while (isdigit((unsigned char) *p))
		p++;
	if (*s != '\0' && *p == '\0')
		return pg_strtoint64(s);

	ts = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
												 CStringGetDatum(s),
												 ObjectIdGetDatum(InvalidOid),
												 Int32GetDatum(-1)));
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("refresh time must be finite: \"%s\"", clause)));
	/* Round down to whole milliseconds, also for times before 2000. */
	ms = ts / 1000;
	if (ts < 0 && ts % 1000 != 0)
		ms--;
	ms += MZC_PG_EPOCH_MS;
	if (ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("refresh time must not be before 1970-01-01: \"%s\"",
						clause)));
	return ms;
}

static int64
parse_refresh_interval(const char *s, const char *clause)
{
	Interval   *iv;
	int64		day_us;
	int64		us;

	iv = DatumGetIntervalP(DirectFunctionCall3(interval_in,
											   CStringGetDatum(s),
											   ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("refresh interval cannot be given in months or years: \"%s\"",
						clause)));
	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &day_us) ||
		pg_add_s64_overflow(day_us, iv->time, &us))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("refresh interval is out of range: \"%s\"", clause)));
	if (us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("refresh interval must be positive: \"%s\"", clause)));
	if (us % 1000 != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("refresh interval must be a whole number of milliseconds: \"%s\"",
						clause)));
	return us / 1000;
}

/*
 * Parse one clause.  Keywords are case-insensitive and separated by any
 * whitespace; the literals are handed to the timestamptz and interval
 * input functions.
 */
static void
parse_refresh_clause(const char *text, MzcRefreshClause *out)
{
	StringInfoData norm;
	char	   *lower;
	const char *p;
	bool		space = false;

	/* Collapse runs of whitespace into one space and trim both ends. */
	initStringInfo(&norm);
	for (p = text; *p; p++)
	{
		if (isspace((unsigned char) *p))
			space = true;
		else
		{
			if (space && norm.len > 0)
				appendStringInfoChar(&norm, ' ');
			space = false;
			appendStringInfoChar(&norm, *p);
		}
	}
	lower = asc_tolower(norm.data, norm.len);

	memset(out, 0, sizeof(*out));
	if (strcmp(lower, "at creation") == 0)
		out->kind = MZC_REFRESH_AT_CREATION;
	else if (strncmp(lower, "at ", 3) == 0)
	{
		out->kind = MZC_REFRESH_AT;
		out->at = parse_refresh_time(norm.data + 3, text);
		mzcoord_check_user_time(out->at, "refresh time");
	}
	else if (strncmp(lower, "every ", 6) == 0)
	{
		char	   *aligned = strstr(lower, " aligned to ");
		char	   *iv;

		out->kind = MZC_REFRESH_EVERY;
		if (aligned != NULL)
		{
			iv = pnstrdup(norm.data + 6, aligned - (lower + 6));
			out->aligned = true;
			out->aligned_to =
				parse_refresh_time(norm.data + (aligned - lower) +
								   strlen(" aligned to "), text);
		}
		else
			iv = pstrdup(norm.data + 6);
		out->every_ms = parse_refresh_interval(iv, text);
	}
	else
		refresh_syntax_error(text);
}

/* Parse a refresh schedule (a text[]) into a palloc'd array of clauses. */
static MzcRefreshClause *
parse_refresh(ArrayType *arr, int *nclauses)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	MzcRefreshClause *clauses;

	mzcoord_text_array_elems(arr, "refresh schedule", &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("refresh schedule must not be empty"),
				 errhint("Pass NULL for continual maintenance.")));
	clauses = palloc(sizeof(MzcRefreshClause) * n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("refresh clauses must not be null")));
		parse_refresh_clause(TextDatumGetCString(elems[i]), &clauses[i]);
	}
	*nclauses = n;
	return clauses;
}

/*
 * The canonical form of a refresh schedule, as stored in the catalog.
 */
ArrayType *
mzcoord_refresh_canonical(ArrayType *arr)
{
	int			n;
	MzcRefreshClause *clauses = parse_refresh(arr, &n);
	Datum	   *out = palloc(sizeof(Datum) * n);

	for (int i = 0; i < n; i++)
	{
		MzcRefreshClause *c = &clauses[i];
		char	   *s;

		switch (c->kind)
		{
			case MZC_REFRESH_AT_CREATION:
				s = pstrdup("at creation");
				break;
			case MZC_REFRESH_AT:
				s = psprintf("at " INT64_FORMAT, c->at);
				break;
			default:

				/*
				 * The coordinator refreshes at most once per tick: a
				 * shorter interval could never be kept.  Checked here, for
				 * new schedules only, so that raising the setting later
				 * leaves existing views working.
				 */
				if (c->every_ms < mzcoord_tick_interval)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("refresh interval of " INT64_FORMAT " ms is below mzcoord.tick_interval (%d ms)",
									c->every_ms, mzcoord_tick_interval),
							 errdetail("Views are refreshed at most once per tick of the coordinator."),
							 errhint("Use an interval of at least %d ms.",
									 mzcoord_tick_interval)));
				if (c->aligned)
					s = psprintf("every " INT64_FORMAT " milliseconds aligned to " INT64_FORMAT,
								 c->every_ms, c->aligned_to);
				else
					s = psprintf("every " INT64_FORMAT " milliseconds",
								 c->every_ms);
				break;
		}
		out[i] = CStringGetTextDatum(s);
	}
	return construct_array(out, n, TEXTOID, -1, false, TYPALIGN_INT);
}

/* SQL: mzcoord._refresh_canonical(text[]) RETURNS text[], STRICT */
Datum
mzcoord_sql_refresh_canonical(PG_FUNCTION_ARGS)
{
	PG_RETURN_ARRAYTYPE_P(mzcoord_refresh_canonical(PG_GETARG_ARRAYTYPE_P(0)));
}

static void
refresh_out_of_range(int64 as_of)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("the first refresh at or after " INT64_FORMAT " is out of range",
					as_of)));
}

/*
 * The first refresh at or after as_of (reference 2.7: the as-of of a
 * materialized view with a schedule is rounded up to its next refresh).
 * Errors if the schedule never refreshes at or after as_of.
 */
static int64
refresh_first(MzcRefreshClause *clauses, int n, int64 as_of)
{
	bool		found = false;
	int64		first = 0;
	int64		last = -1;

	for (int i = 0; i < n; i++)
	{
		MzcRefreshClause *c = &clauses[i];
		int64		t;

		switch (c->kind)
		{
			case MZC_REFRESH_AT_CREATION:
				t = as_of;
				break;
			case MZC_REFRESH_AT:
				last = Max(last, c->at);
				if (c->at < as_of)
					continue;
				t = c->at;
				break;
			default:
				if (!c->aligned)
					t = as_of;
				else
				{
					/*
					 * The least aligned_to + k * every_ms >= as_of, k any.
					 * Near the ends of the time line that refresh may not
					 * be representable: refuse rather than wrap around.
					 */
					int64		d;
					int64		k;
					int64		step;

					if (pg_sub_s64_overflow(as_of, c->aligned_to, &d))
						refresh_out_of_range(as_of);
					k = d / c->every_ms;
					if (d > 0 && d % c->every_ms != 0)
						k++;
					if (pg_mul_s64_overflow(k, c->every_ms, &step) ||
						pg_add_s64_overflow(c->aligned_to, step, &t))
						refresh_out_of_range(as_of);
				}
				break;
		}
		if (!found || t < first)
			first = t;
		found = true;
	}
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("materialized view would never refresh"),
				 errdetail("Its last refresh time " INT64_FORMAT " is before its earliest possible as-of " INT64_FORMAT ".",
						   last, as_of)));
	return first;
}

/*
 * The least refresh time after `after` of a schedule whose view started at
 * as_of (an unaligned 'every' counts from there; 'at creation' was the
 * first refresh only).  Returns false when the schedule has no refresh
 * after `after` (or none that is representable): the view's upper becomes
 * the empty frontier, every later time being complete.
 */
bool
mzcoord_refresh_next(ArrayType *schedule, int64 as_of, int64 after,
					 int64 *next)
{
	int			n;
	MzcRefreshClause *clauses = parse_refresh(schedule, &n);
	bool		found = false;

	for (int i = 0; i < n; i++)
	{
		MzcRefreshClause *c = &clauses[i];
		int64		base;
		int64		d;
		int64		k;
		int64		step;
		int64		t;

		if (c->kind == MZC_REFRESH_AT_CREATION)
			continue;
		if (c->kind == MZC_REFRESH_AT)
		{
			if (c->at <= after)
				continue;
			t = c->at;
		}
		else
		{
			/* The least base + k * every_ms > after. */
			base = c->aligned ? c->aligned_to : as_of;
			if (pg_sub_s64_overflow(after, base, &d))
				continue;
			k = d < 0 ? -((-d) / c->every_ms) : d / c->every_ms + 1;
			if (pg_mul_s64_overflow(k, c->every_ms, &step) ||
				pg_add_s64_overflow(base, step, &t))
				continue;
			if (t <= after)		/* d < 0 and a multiple: one step more */
				t += c->every_ms;
		}
		if (!found || t < *next)
			*next = t;
		found = true;
	}
	return found;
}

/* SQL: mzcoord._refresh_first(schedule text[], as_of bigint) RETURNS bigint */
Datum
mzcoord_sql_refresh_first(PG_FUNCTION_ARGS)
{
	int			n;
	MzcRefreshClause *clauses = parse_refresh(PG_GETARG_ARRAYTYPE_P(0), &n);

	PG_RETURN_INT64(refresh_first(clauses, n, PG_GETARG_INT64(1)));
}
