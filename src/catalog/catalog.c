/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  Validation and analysis for the catalog plane, shared by the DDL
 *	  functions and the catalog implications.
 *
 * Everything here checks or derives something from a catalog row or from a
 * DDL argument, and never changes the catalog itself:
 *
 * - retain history windows and refresh schedules, parsed into their
 *   canonical forms;
 * - the column definitions of a source, parsed with the PostgreSQL grammar
 *   and printed back fully qualified;
 * - the analysis of a materialized view's query: its output columns, the
 *   relations and functions it names (its dependencies), and its logical
 *   inputs (reference D4 and the 2026-09-08 milestone): the collections it
 *   reads once PostgreSQL views are expanded transitively, stopping at
 *   collections (an upstream materialized view is a leaf), found by walking
 *   every range table entry of the rewritten query, including subqueries,
 *   CTEs and sublinks.  The query is never planned, so inputs that planning
 *   would eliminate (WHERE false, LIMIT 0, a join with an empty side, an
 *   unused CTE) are kept: recovery must protect them all.
 *
 * The analysis runs twice for every materialized view: in the DDL function,
 * with the caller's search_path and privileges, where it also yields the
 * definition that is stored (deparsed with every name qualified), and in the
 * implication, on the stored definition, with the pinned search_path of the
 * extension's code.  A superuser who inserts an item row directly therefore
 * gets exactly what the DDL function would have produced, as long as the
 * definition qualifies its names.
 *
 * The SQL-callable functions at the end are internal (EXECUTE is revoked
 * from PUBLIC); the implications call them.
 *
 * IDENTIFICATION
 *	  src/catalog/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/catalog.h"
#include "catalog/dependency.h"
#include "catalog/heap.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "parser/parse_type.h"
#include "rewrite/rewriteHandler.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/formatting.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "extension.h"
#include "ids.h"
#include "oracle.h"

PG_FUNCTION_INFO_V1(mzcoord_sql_retain_history_ms);
PG_FUNCTION_INFO_V1(mzcoord_sql_refresh_canonical);
PG_FUNCTION_INFO_V1(mzcoord_sql_refresh_first);
PG_FUNCTION_INFO_V1(mzcoord_sql_source_columns);
PG_FUNCTION_INFO_V1(mzcoord_sql_analyze_materialized_view);
PG_FUNCTION_INFO_V1(mzcoord_sql_query_relation_names);
PG_FUNCTION_INFO_V1(mzcoord_sql_record_dependencies);
PG_FUNCTION_INFO_V1(mzcoord_sql_index_key_list);
PG_FUNCTION_INFO_V1(mzcoord_sql_sink_columns);
PG_FUNCTION_INFO_V1(mzcoord_sql_relation_columns);
PG_FUNCTION_INFO_V1(mzcoord_sql_check_table);
PG_FUNCTION_INFO_V1(mzcoord_sql_check_new_relation);

/* Milliseconds between the PostgreSQL epoch (2000) and the Unix epoch. */
#define MZC_PG_EPOCH_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/* ----------------------------------------------------------------
 * Catalog lookups
 * ----------------------------------------------------------------
 */

/*
 * OID of the extension's schema.
 */
Oid
mzcoord_catalog_namespace(void)
{
	return get_namespace_oid("mzcoord", false);
}

/*
 * Find the item whose relation is relid, and the global id of its primary
 * collection.  Like PostgreSQL's own catalog lookups, this reads the latest
 * committed catalog plus what this transaction wrote so far (e.g. earlier
 * implications of the same batch), whatever the isolation level.
 */
void
mzcoord_catalog_lookup(Oid relid, MzcItemRef *ref)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		values[1];
	SPIPlanPtr	plan;
	int			ret;

	memset(ref, 0, sizeof(*ref));
	values[0] = ObjectIdGetDatum(relid);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare("SELECT i.id, i.kind, c.global_id"
					   "  FROM mzcoord.items i"
					   "  LEFT JOIN mzcoord.collections c"
					   "    ON c.item_id OPERATOR(pg_catalog.=) i.id"
					   "   AND c.primary_id IS NULL"
					   " WHERE i.relation OPERATOR(pg_catalog.=) $1",
					   1, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare the catalog lookup: %s",
			 SPI_result_code_string(SPI_result));
	ret = SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							   InvalidSnapshot, true, false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "catalog lookup failed: %s", SPI_result_code_string(ret));
	if (SPI_processed > 0)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *gid = SPI_getvalue(tup, desc, 3);

		ref->found = true;
		ref->id = MemoryContextStrdup(caller, SPI_getvalue(tup, desc, 1));
		ref->kind = MemoryContextStrdup(caller, SPI_getvalue(tup, desc, 2));
		ref->global_id = gid ? MemoryContextStrdup(caller, gid) : NULL;
	}
	SPI_finish();
}

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
mzc_refresh_syntax_error(const char *clause)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid refresh clause: \"%s\"", clause),
			 errhint("Use 'at creation', 'at <timestamp>' or 'every <interval> [aligned to <timestamp>]'.")));
}

/* A time in a refresh clause: epoch milliseconds or a timestamptz. */
static int64
mzc_parse_refresh_time(const char *s, const char *clause)
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
mzc_parse_refresh_interval(const char *s, const char *clause)
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
mzc_parse_refresh_clause(const char *text, MzcRefreshClause *out)
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
		out->at = mzc_parse_refresh_time(norm.data + 3, text);
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
				mzc_parse_refresh_time(norm.data + (aligned - lower) +
									   strlen(" aligned to "), text);
		}
		else
			iv = pstrdup(norm.data + 6);
		out->every_ms = mzc_parse_refresh_interval(iv, text);
	}
	else
		mzc_refresh_syntax_error(text);
}

/* Parse a refresh schedule (a text[]) into a palloc'd array of clauses. */
static MzcRefreshClause *
mzc_parse_refresh(ArrayType *arr, int *nclauses)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	MzcRefreshClause *clauses;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("refresh schedule must be a one-dimensional array")));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
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
		mzc_parse_refresh_clause(TextDatumGetCString(elems[i]), &clauses[i]);
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
	MzcRefreshClause *clauses = mzc_parse_refresh(arr, &n);
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

static void
mzc_refresh_out_of_range(int64 as_of)
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
mzc_refresh_first(MzcRefreshClause *clauses, int n, int64 as_of)
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
						mzc_refresh_out_of_range(as_of);
					k = d / c->every_ms;
					if (d > 0 && d % c->every_ms != 0)
						k++;
					if (pg_mul_s64_overflow(k, c->every_ms, &step) ||
						pg_add_s64_overflow(c->aligned_to, step, &t))
						mzc_refresh_out_of_range(as_of);
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

/* ----------------------------------------------------------------
 * Column definitions
 * ----------------------------------------------------------------
 */

/*
 * Append "name type [COLLATE coll]" with every name qualified, so that the
 * text means the same under any search_path.
 */
static void
mzc_append_column(StringInfo buf, const char *name, Oid typid, int32 typmod,
				  Oid collid)
{
	if (buf->len > 0)
		appendStringInfoString(buf, ", ");
	appendStringInfo(buf, "%s %s", quote_identifier(name),
					 format_type_extended(typid, typmod,
										  FORMAT_TYPE_TYPEMOD_GIVEN |
										  FORMAT_TYPE_FORCE_QUALIFY));
	if (OidIsValid(collid) && collid != get_typcollation(typid))
	{
		HeapTuple	tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(collid));
		Form_pg_collation coll;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for collation %u", collid);
		coll = (Form_pg_collation) GETSTRUCT(tup);
		appendStringInfo(buf, " COLLATE %s",
						 quote_qualified_identifier(get_namespace_name(coll->collnamespace),
													NameStr(coll->collname)));
		ReleaseSysCache(tup);
	}
}

static void
mzc_check_column(const char *name, Oid typid, List **seen)
{
	ListCell   *lc;

	if (SystemAttributeByName(name) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_COLUMN),
				 errmsg("column name \"%s\" conflicts with a system column name",
						name)));
	foreach(lc, *seen)
	{
		if (strcmp((char *) lfirst(lc), name) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("column \"%s\" specified more than once", name)));
	}
	*seen = lappend(*seen, (void *) name);
	if (get_typtype(typid) == TYPTYPE_PSEUDO)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
				 errmsg("column \"%s\" has pseudo-type %s",
						name, format_type_be(typid))));
}

typedef struct MzcParseContext
{
	const char *what;			/* for the context line */
	const char *text;			/* what the user gave */
	int			offset;			/* length of our prefix in the parsed string */
} MzcParseContext;

/*
 * Report errors inside a query or column list against that text, not
 * against the statement that called the DDL function.
 */
static void
mzc_parse_error_context(void *arg)
{
	MzcParseContext *ctx = (MzcParseContext *) arg;
	int			pos = geterrposition();

	if (pos > 0)
	{
		errposition(0);
		if (pos > ctx->offset)
			internalerrposition(pos - ctx->offset);
	}
	internalerrquery(ctx->text);
	errcontext("%s", ctx->what);
}

/*
 * Parse the column definitions of a source with the CREATE TABLE grammar
 * and print them back canonically.  Only plain columns are accepted: a
 * name, a type, optionally a collation and NOT NULL.  Types are resolved
 * with the active search_path; when check_user is valid, it must have USAGE
 * on every type.
 */
char *
mzcoord_source_columns(const char *columns, Oid check_user)
{
	ErrorContextCallback errcb;
	MzcParseContext ctx;
	List	   *raw;
	CreateStmt *stmt;
	ListCell   *lc;
	List	   *seen = NIL;
	StringInfoData buf;

	ctx.what = "column definitions of a source";
	ctx.text = columns;
	ctx.offset = strlen("CREATE TABLE mzcoord_source (");
	errcb.callback = mzc_parse_error_context;
	errcb.arg = &ctx;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	raw = raw_parser(psprintf("CREATE TABLE mzcoord_source (%s)", columns),
					 RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1 ||
		!IsA(linitial_node(RawStmt, raw)->stmt, CreateStmt))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid column definitions for a source")));
	stmt = (CreateStmt *) linitial_node(RawStmt, raw)->stmt;
	if (stmt->inhRelations != NIL || stmt->partbound != NULL ||
		stmt->partspec != NULL || stmt->ofTypename != NULL ||
		stmt->constraints != NIL || stmt->options != NIL ||
		stmt->oncommit != ONCOMMIT_NOOP || stmt->tablespacename != NULL ||
		stmt->accessMethod != NULL ||
		strcmp(stmt->relation->relname, "mzcoord_source") != 0 ||
		stmt->relation->schemaname != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid column definitions for a source"),
				 errdetail("Only a list of column definitions is accepted.")));
	if (stmt->tableElts == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a source needs at least one column")));

	initStringInfo(&buf);
	foreach(lc, stmt->tableElts)
	{
		ColumnDef  *col = (ColumnDef *) lfirst(lc);
		bool		not_null = false;
		ListCell   *lc2;
		Oid			typid;
		int32		typmod;
		Oid			collid;

		if (!IsA(col, ColumnDef))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("source columns cannot have table constraints or LIKE clauses")));
		if (col->raw_default != NULL || col->identity != 0 ||
			col->generated != 0 || col->compression != NULL ||
			col->storage != 0 || col->fdwoptions != NIL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("source column \"%s\" cannot have a default, identity, generation, storage or compression clause",
							col->colname)));
		foreach(lc2, col->constraints)
		{
			Constraint *con = lfirst_node(Constraint, lc2);

			if (con->contype == CONSTR_NOTNULL)
				not_null = true;
			else if (con->contype != CONSTR_NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("source column \"%s\" can only be constrained to NOT NULL",
								col->colname)));
		}

		typenameTypeIdAndMod(NULL, col->typeName, &typid, &typmod);
		if (OidIsValid(check_user))
		{
			AclResult	aclresult = pg_type_aclcheck(typid, check_user, ACL_USAGE);

			if (aclresult != ACLCHECK_OK)
				aclcheck_error_type(aclresult, typid);
		}
		mzc_check_column(col->colname, typid, &seen);
		collid = GetColumnDefCollation(NULL, col, typid);

		mzc_append_column(&buf, col->colname, typid, typmod, collid);
		if (not_null)
			appendStringInfoString(&buf, " NOT NULL");
	}

	error_context_stack = errcb.previous;
	return buf.data;
}

/*
 * Column definitions of an existing relation, in the canonical form; for
 * a sink that exports it, followed by the sink's time and diff columns.
 */
static char *
mzc_relation_columns(Oid relid, bool for_sink)
{
	Relation	rel = try_table_open(relid, AccessShareLock);
	TupleDesc	desc;
	StringInfoData buf;

	/* An internal function, but a bad OID must not be an internal error. */
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	desc = RelationGetDescr(rel);

	initStringInfo(&buf);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		if (for_sink &&
			(strcmp(NameStr(att->attname), MZC_SINK_TIME_COLUMN) == 0 ||
			 strcmp(NameStr(att->attname), MZC_SINK_DIFF_COLUMN) == 0))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("cannot create a sink from \"%s\": its column \"%s\" collides with a column of the sink",
							RelationGetRelationName(rel), NameStr(att->attname)),
					 errdetail("A sink has the columns of the relation it exports, followed by \"%s\" and \"%s\".",
							   MZC_SINK_TIME_COLUMN, MZC_SINK_DIFF_COLUMN)));
		mzc_append_column(&buf, NameStr(att->attname), att->atttypid,
						  att->atttypmod, att->attcollation);
	}
	table_close(rel, NoLock);
	if (for_sink)
	{
		mzc_append_column(&buf, MZC_SINK_TIME_COLUMN, INT8OID, -1, InvalidOid);
		appendStringInfoString(&buf, " NOT NULL");
		mzc_append_column(&buf, MZC_SINK_DIFF_COLUMN, INT8OID, -1, InvalidOid);
		appendStringInfoString(&buf, " NOT NULL");
	}
	return buf.data;
}

/*
 * The key list of an index item: every key must be a column of relid whose
 * type has a default btree operator class.  Keys are column names, matched
 * exactly (they are not SQL identifiers and are not case-folded).
 */
char *
mzcoord_index_key_list(Oid relid, ArrayType *keys)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	StringInfoData buf;

	if (ARR_NDIM(keys) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("index keys must be a one-dimensional array")));
	deconstruct_array(keys, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("an index needs at least one key")));
	if (n > INDEX_MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("cannot use more than %d columns in an index",
						INDEX_MAX_KEYS)));

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
	{
		char	   *key;
		AttrNumber	attnum;
		Oid			typid;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("index keys must not be null")));
		key = TextDatumGetCString(elems[i]);
		attnum = get_attnum(relid, key);
		if (attnum <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of relation \"%s\" does not exist",
							key, get_rel_name(relid))));
		typid = get_atttype(relid, attnum);
		if (!OidIsValid(GetDefaultOpClass(typid, BTREE_AM_OID)))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("data type %s has no default operator class for access method \"%s\"",
							format_type_be(typid), "btree"),
					 errdetail("Index keys are compared with a btree index.")));
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, quote_identifier(key));
	}
	return buf.data;
}

/* ----------------------------------------------------------------
 * Relations an item may be or may create
 * ----------------------------------------------------------------
 */

/*
 * Can relid be registered as a table?  It must be a permanent, ordinary,
 * non-system table.  (Ownership and "already registered" are checked by
 * the DDL function and the catalog's unique constraint.)
 */
void
mzcoord_check_registrable_table(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Form_pg_class cls;
	char	   *name;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	cls = (Form_pg_class) GETSTRUCT(tup);
	name = pstrdup(NameStr(cls->relname));

	if (cls->relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register partitioned table \"%s\"", name),
				 errdetail("Partitioned tables are not supported.")));
	if (cls->relkind == RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register foreign table \"%s\"", name),
				 errdetail("The writes of a foreign table happen elsewhere; their history cannot be kept.")));
	if (cls->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", name)));
	if (cls->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register temporary table \"%s\"", name),
				 errdetail("A temporary table disappears with its session; its history could not be kept.")));
	if (cls->relpersistence == RELPERSISTENCE_UNLOGGED)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register unlogged table \"%s\"", name),
				 errdetail("An unlogged table is emptied by a crash, which would contradict its history.")));
	if (IsCatalogNamespace(cls->relnamespace) ||
		IsToastNamespace(cls->relnamespace) ||
		cls->relnamespace == mzcoord_catalog_namespace())
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register system table \"%s\"", name)));
	ReleaseSysCache(tup);
}

/*
 * Can an item create relation relname in schema nspid?
 */
void
mzcoord_check_new_relation(Oid nspid, const char *relname)
{
	if (isAnyTempNamespace(nspid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("mzcoord items cannot be temporary")));
	if (IsCatalogNamespace(nspid) || IsToastNamespace(nspid) ||
		nspid == mzcoord_catalog_namespace())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot create \"%s\" in schema \"%s\"",
						relname, get_namespace_name(nspid)),
				 errdetail("Schema \"%s\" is reserved for the system.",
						   get_namespace_name(nspid))));
	if (OidIsValid(get_relname_relid(relname, nspid)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation \"%s\" already exists", relname)));
}

/* ----------------------------------------------------------------
 * Materialized view queries
 * ----------------------------------------------------------------
 */

/* What a walk over a query tree collects. */
typedef struct MzcWalk
{
	List	   *rtes;			/* every RTE_RELATION entry */
	List	   *relids;			/* their relations, without duplicates */
	List	   *funcids;		/* functions called, without duplicates */
	List	   *oprids;			/* operators used, without duplicates */
	bool		tablesample;	/* some entry has TABLESAMPLE */
} MzcWalk;

static bool
mzc_walk_collect(Node *node, MzcWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, mzc_walk_collect, (void *) w,
								 QTW_EXAMINE_RTES_BEFORE);
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		/* The walker goes on into the entry's subquery, functions, ... */
		if (rte->rtekind == RTE_RELATION)
		{
			w->rtes = lappend(w->rtes, rte);
			w->relids = list_append_unique_oid(w->relids, rte->relid);
			if (rte->tablesample != NULL)
				w->tablesample = true;
		}
		return false;
	}
	if (IsA(node, FuncExpr))
		w->funcids = list_append_unique_oid(w->funcids,
											((FuncExpr *) node)->funcid);
	else if (IsA(node, Aggref))
		w->funcids = list_append_unique_oid(w->funcids,
											((Aggref *) node)->aggfnoid);
	else if (IsA(node, WindowFunc))
		w->funcids = list_append_unique_oid(w->funcids,
											((WindowFunc *) node)->winfnoid);
	else if (IsA(node, OpExpr) || IsA(node, DistinctExpr) ||
			 IsA(node, NullIfExpr))
		w->oprids = list_append_unique_oid(w->oprids,
										   ((OpExpr *) node)->opno);
	else if (IsA(node, ScalarArrayOpExpr))
		w->oprids = list_append_unique_oid(w->oprids,
										   ((ScalarArrayOpExpr *) node)->opno);
	return expression_tree_walker(node, mzc_walk_collect, (void *) w);
}

static bool
mzc_mutable_checker(Oid funcid, void *context)
{
	if (func_volatile(funcid) != PROVOLATILE_IMMUTABLE)
	{
		*(Oid *) context = funcid;
		return true;
	}
	return false;
}

/* Find a non-immutable function called by the query, for the message. */
static bool
mzc_find_mutable(Node *node, Oid *culprit)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, mzc_mutable_checker, (void *) culprit))
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, mzc_find_mutable,
								 (void *) culprit, 0);
	return expression_tree_walker(node, mzc_find_mutable, (void *) culprit);
}

/*
 * The relation is not a collection: say what to do about it.
 */
static void
mzc_not_a_collection(Oid relid, const char *kind)
{
	char	   *name = get_rel_name(relid);
	char	   *qname = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												   name);
	char		relkind = get_rel_relkind(relid);

	if (kind != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("materialized view cannot read %s \"%s\"", kind, name),
				 errdetail("Only tables, sources and materialized views can be read.")));
	if (relkind == RELKIND_RELATION &&
		get_rel_persistence(relid) == RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("relation \"%s\" is not registered with mzcoord", name),
				 errdetail("A materialized view can only read mzcoord collections, directly or through views."),
				 errhint("Register the table first: SELECT mzcoord.create_table('%s');",
						 qname)));
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("relation \"%s\" is not an mzcoord collection", name),
			 errdetail("A materialized view can only read mzcoord tables, sources and materialized views, directly or through views.")));
}

/*
 * Analyse the query of a materialized view (see the file header).
 *
 * With check_user valid (the DDL function, which must be running as that
 * user) the user must be allowed to read every relation the query reads,
 * directly or through views, and to execute every function it calls.
 */
void
mzcoord_analyze_query(const char *sql, Oid check_user, MzcQueryInfo *info)
{
	ErrorContextCallback errcb;
	MzcParseContext ctx;
	List	   *raw;
	RawStmt    *rs;
	Query	   *query;
	List	   *rewritten;
	Query	   *expanded;
	MzcWalk		direct;
	MzcWalk		leaves;
	List	   *seen = NIL;
	StringInfoData cols;
	ListCell   *lc;

	memset(info, 0, sizeof(*info));
	memset(&direct, 0, sizeof(direct));
	memset(&leaves, 0, sizeof(leaves));

	ctx.what = "query of a materialized view";
	ctx.text = sql;
	ctx.offset = 0;
	errcb.callback = mzc_parse_error_context;
	errcb.arg = &ctx;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by exactly one query")));
	rs = linitial_node(RawStmt, raw);
	if (!IsA(rs->stmt, SelectStmt) || ((SelectStmt *) rs->stmt)->intoClause)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by a SELECT query")));

	query = parse_analyze_fixedparams(rs, sql, NULL, 0, NULL);
	if (query->commandType != CMD_SELECT || query->utilityStmt != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by a SELECT query")));
	if (query->hasModifyingCTE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialized views must not contain data-modifying statements in WITH")));
	if (query->rowMarks != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialized views cannot lock rows")));

	/* The output columns become the storage table's columns. */
	initStringInfo(&cols);
	foreach(lc, query->targetList)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		const char *name;

		if (tle->resjunk)
			continue;
		name = tle->resname ? tle->resname : "?column?";
		mzc_check_column(name, exprType((Node *) tle->expr), &seen);
		mzc_append_column(&cols, name, exprType((Node *) tle->expr),
						  exprTypmod((Node *) tle->expr),
						  exprCollation((Node *) tle->expr));
	}
	info->columns = cols.data;

	/* What the query names directly: its dependencies. */
	(void) mzc_walk_collect((Node *) query, &direct);
	info->ref_relids = direct.relids;
	info->ref_funcids = direct.funcids;
	info->ref_oprids = direct.oprids;
	if (direct.tablesample)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialized views cannot use TABLESAMPLE")));

	/* Expand views transitively; the analysed query stays untouched. */
	rewritten = QueryRewrite(copyObject(query));
	if (list_length(rewritten) != 1)
		elog(ERROR, "rewriting a SELECT produced %d queries",
			 list_length(rewritten));
	expanded = linitial_node(Query, rewritten);

	if (contain_mutable_functions((Node *) expanded))
	{
		Oid			culprit = InvalidOid;

		(void) mzc_find_mutable((Node *) expanded, &culprit);
		if (OidIsValid(culprit))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("cannot materialize a call to %s()",
							get_func_name(culprit)),
					 errdetail("Function %s() is not immutable, so the contents of the materialized view would depend on when they are computed.",
							   get_func_name(culprit))));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("cannot materialize a query that is not immutable"),
				 errdetail("The query uses a function or expression (such as CURRENT_TIMESTAMP or nextval) whose result depends on when it is computed.")));
	}

	/* Every relation left after expansion must be a collection. */
	(void) mzc_walk_collect((Node *) expanded, &leaves);
	if (leaves.tablesample)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialized views cannot use TABLESAMPLE")));
	foreach(lc, leaves.relids)
	{
		Oid			relid = lfirst_oid(lc);
		MzcItemRef	ref;

		/* An expanded view keeps a placeholder entry for its permissions. */
		if (get_rel_relkind(relid) == RELKIND_VIEW)
			continue;
		mzcoord_catalog_lookup(relid, &ref);
		if (!ref.found)
			mzc_not_a_collection(relid, NULL);
		if (strcmp(ref.kind, "sink") == 0 || strcmp(ref.kind, "index") == 0)
			mzc_not_a_collection(relid, ref.kind);
		if (ref.global_id == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("item %s of relation \"%s\" has no collection yet",
							ref.id, get_rel_name(relid))));
		info->input_gids = lappend(info->input_gids, ref.global_id);
		info->input_items = lappend(info->input_items, ref.id);
		info->input_relids = lappend_oid(info->input_relids, relid);
	}

	if (OidIsValid(check_user))
	{
		Assert(check_user == GetUserId());
		/* Relations, as the caller (and as view owners inside views). */
		(void) ExecCheckRTPerms(leaves.rtes, true);
		foreach(lc, leaves.funcids)
		{
			Oid			funcid = lfirst_oid(lc);

			if (pg_proc_aclcheck(funcid, check_user, ACL_EXECUTE) != ACLCHECK_OK)
				aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_FUNCTION,
							   get_func_name(funcid));
		}
	}

	info->query = query;
	error_context_stack = errcb.previous;
}

/*
 * The definition that is stored: the analysed query printed back with every
 * name qualified (only pg_catalog is searched while printing), so that it
 * means the same under the pinned search_path of the implications.
 */
char *
mzcoord_deparse_qualified(Query *query)
{
	OverrideSearchPath *path = GetOverrideSearchPath(CurrentMemoryContext);
	char	   *sql;

	path->schemas = NIL;
	path->addCatalog = true;
	path->addTemp = false;
	PushOverrideSearchPath(path);
	sql = pg_get_querydef(copyObject(query), false);
	PopOverrideSearchPath();

	while (isspace((unsigned char) *sql))
		sql++;
	return sql;
}

/* ----------------------------------------------------------------
 * SQL-callable helpers for the implications (internal)
 * ----------------------------------------------------------------
 */

static ArrayType *
mzc_text_array(List *strings)
{
	int			n = list_length(strings);
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			i = 0;
	ListCell   *lc;

	foreach(lc, strings)
		d[i++] = CStringGetTextDatum((char *) lfirst(lc));
	return construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT);
}

static ArrayType *
mzc_oid_array(List *oids)
{
	int			n = list_length(oids);
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			i = 0;
	ListCell   *lc;

	foreach(lc, oids)
		d[i++] = ObjectIdGetDatum(lfirst_oid(lc));
	return construct_array(d, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT);
}

static List *
mzc_oid_list(ArrayType *arr)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	List	   *out = NIL;

	deconstruct_array(arr, OIDOID, sizeof(Oid), true, TYPALIGN_INT,
					  &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			out = lappend_oid(out, DatumGetObjectId(elems[i]));
	return out;
}

/* SQL: mzcoord._retain_history_ms(interval) RETURNS bigint, STRICT */
Datum
mzcoord_sql_retain_history_ms(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(mzcoord_retain_history_ms(PG_GETARG_INTERVAL_P(0)));
}

/* SQL: mzcoord._refresh_canonical(text[]) RETURNS text[], STRICT */
Datum
mzcoord_sql_refresh_canonical(PG_FUNCTION_ARGS)
{
	PG_RETURN_ARRAYTYPE_P(mzcoord_refresh_canonical(PG_GETARG_ARRAYTYPE_P(0)));
}

/* SQL: mzcoord._refresh_first(schedule text[], as_of bigint) RETURNS bigint */
Datum
mzcoord_sql_refresh_first(PG_FUNCTION_ARGS)
{
	int			n;
	MzcRefreshClause *clauses = mzc_parse_refresh(PG_GETARG_ARRAYTYPE_P(0), &n);

	PG_RETURN_INT64(mzc_refresh_first(clauses, n, PG_GETARG_INT64(1)));
}

/* SQL: mzcoord._source_columns(text) RETURNS text, STRICT */
Datum
mzcoord_sql_source_columns(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(mzcoord_source_columns(text_to_cstring(PG_GETARG_TEXT_PP(0)),
															InvalidOid)));
}

/*
 * SQL: mzcoord._analyze_materialized_view(definition text,
 *		OUT columns text, OUT inputs text[], OUT input_items text[],
 *		OUT relations oid[], OUT functions oid[], OUT operators oid[])
 */
Datum
mzcoord_sql_analyze_materialized_view(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	MzcQueryInfo info;
	Datum		values[6];
	bool		nulls[6] = {false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	mzcoord_analyze_query(text_to_cstring(PG_GETARG_TEXT_PP(0)), InvalidOid,
						  &info);
	values[0] = CStringGetTextDatum(info.columns);
	values[1] = PointerGetDatum(mzc_text_array(info.input_gids));
	values[2] = PointerGetDatum(mzc_text_array(info.input_items));
	values[3] = PointerGetDatum(mzc_oid_array(info.ref_relids));
	values[4] = PointerGetDatum(mzc_oid_array(info.ref_funcids));
	values[5] = PointerGetDatum(mzc_oid_array(info.ref_oprids));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

static bool
mzc_collect_rangevars(Node *node, List **names)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeVar))
	{
		RangeVar   *rv = (RangeVar *) node;

		if (rv->schemaname != NULL)
			*names = lappend(*names,
							 quote_qualified_identifier(rv->schemaname,
														rv->relname));
		return false;
	}
	return raw_expression_tree_walker(node, mzc_collect_rangevars,
									  (void *) names);
}

/*
 * The schema-qualified relation names in a query (quoted like
 * quote_qualified_identifier), from the raw parse tree alone (no catalog
 * access): the implications use them to order the materialized views of
 * one batch, whose relations do not exist yet.  Unqualified names cannot be
 * the relation of an item of the batch and are left out.
 */
List *
mzcoord_query_relation_names(const char *sql)
{
	List	   *raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	List	   *names = NIL;
	Node	   *stmt;

	/*
	 * The raw tree walker knows only the nodes of queries: refuse anything
	 * else here, with the errors the analysis of the definition gives, rather
	 * than fail on an unknown node (a row written to mzcoord.items directly
	 * can hold any text).
	 */
	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by exactly one query")));
	stmt = linitial_node(RawStmt, raw)->stmt;
	if (!IsA(stmt, SelectStmt))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by a SELECT query")));
	(void) mzc_collect_rangevars(stmt, &names);
	return names;
}

/* SQL: mzcoord._query_relation_names(query text) RETURNS text[], STRICT */
Datum
mzcoord_sql_query_relation_names(PG_FUNCTION_ARGS)
{
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));

	PG_RETURN_ARRAYTYPE_P(mzc_text_array(mzcoord_query_relation_names(sql)));
}

/*
 * SQL: mzcoord._record_dependencies(depender regclass, relations oid[],
 *		functions oid[], operators oid[]) RETURNS void
 *
 * Normal dependencies of a relation mzcoord created for an item (source,
 * materialized view, index, sink) on the extension and on what its
 * definition names, so that PostgreSQL refuses to drop them without CASCADE
 * (and drops the item's relation with CASCADE, which the sql_drop event
 * trigger turns into the item's deletion).  DROP EXTENSION without CASCADE
 * thus refuses (2BP01) while such relations exist, and with CASCADE drops
 * them.  Not a membership: pg_dump still dumps them as the user's tables.
 * Dependencies are on whole relations, never on columns: ALTER COLUMN TYPE
 * rejects relations that depend on a column.
 */
Datum
mzcoord_sql_record_dependencies(PG_FUNCTION_ARGS)
{
	ObjectAddress depender;
	ObjectAddress ext;
	ObjectAddresses *refs = new_object_addresses();
	Oid			classes[3] = {RelationRelationId, ProcedureRelationId,
	OperatorRelationId};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	ObjectAddressSet(depender, RelationRelationId, PG_GETARG_OID(0));
	mzcoord_extension_lock_for_dependency();
	ObjectAddressSet(ext, ExtensionRelationId, get_extension_oid("mzcoord", false));
	add_exact_object_address(&ext, refs);
	for (int arg = 1; arg <= 3; arg++)
	{
		ListCell   *lc;

		if (PG_ARGISNULL(arg))
			continue;
		foreach(lc, mzc_oid_list(PG_GETARG_ARRAYTYPE_P(arg)))
		{
			ObjectAddress ref;

			ObjectAddressSet(ref, classes[arg - 1], lfirst_oid(lc));
			add_exact_object_address(&ref, refs);
		}
	}
	record_object_address_dependencies(&depender, refs, DEPENDENCY_NORMAL);
	free_object_addresses(refs);
	PG_RETURN_VOID();
}

/* SQL: mzcoord._index_key_list(rel regclass, keys text[]) RETURNS text */
Datum
mzcoord_sql_index_key_list(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(mzcoord_index_key_list(PG_GETARG_OID(0),
															PG_GETARG_ARRAYTYPE_P(1))));
}

/* SQL: mzcoord._sink_columns(rel regclass) RETURNS text */
Datum
mzcoord_sql_sink_columns(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(mzc_relation_columns(PG_GETARG_OID(0),
														  true)));
}

/* SQL: mzcoord._relation_columns(rel regclass) RETURNS text */
Datum
mzcoord_sql_relation_columns(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(mzc_relation_columns(PG_GETARG_OID(0),
														  false)));
}

/* SQL: mzcoord._check_table(rel regclass) RETURNS void */
Datum
mzcoord_sql_check_table(PG_FUNCTION_ARGS)
{
	mzcoord_check_registrable_table(PG_GETARG_OID(0));
	PG_RETURN_VOID();
}

/* SQL: mzcoord._check_new_relation(schema_name name, name name) RETURNS void */
Datum
mzcoord_sql_check_new_relation(PG_FUNCTION_ARGS)
{
	char	   *nspname = NameStr(*PG_GETARG_NAME(0));
	Oid			nspid = get_namespace_oid(nspname, true);

	if (!OidIsValid(nspid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_SCHEMA),
				 errmsg("schema \"%s\" does not exist", nspname)));
	mzcoord_check_new_relation(nspid, NameStr(*PG_GETARG_NAME(1)));
	PG_RETURN_VOID();
}
