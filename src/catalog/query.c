/*-------------------------------------------------------------------------
 *
 * query.c
 *	  The queries of materialized views: analysis, the stored definition,
 *	  and the relation names a definition gives.
 *
 * The analysis of a materialized view's query finds its output columns, the
 * relations and functions it names (its dependencies), and its logical
 * inputs (reference D4 and the 2026-09-08 milestone): the collections it
 * reads once PostgreSQL views are expanded transitively, stopping at
 * collections (an upstream materialized view is a leaf), found by walking
 * every range table entry of the rewritten query, including subqueries,
 * CTEs and sublinks.  The query is never planned, so inputs that planning
 * would eliminate (WHERE false, LIMIT 0, a join with an empty side, an
 * unused CTE) are kept: recovery must protect them all.
 *
 * The analysis runs twice for every materialized view: in the DDL function,
 * with the caller's search_path and privileges, where it also yields the
 * definition that is stored (deparsed with every name qualified), and in the
 * implication, on the stored definition, with the pinned search_path of the
 * extension's code.  A superuser who inserts an item row directly therefore
 * gets exactly what the DDL function would have produced, as long as the
 * definition qualifies its names.  Nothing here changes the catalog.
 *
 * The SQL-callable functions (mzcoord_sql_*) are internal (EXECUTE is
 * revoked from PUBLIC); the implications call them.
 *
 * IDENTIFICATION
 *	  src/catalog/query.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_language.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/functions.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "rewrite/rewriteHandler.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "catalog.h"
#include "coldefs.h"
#include "query.h"
#include "rec_items.h"

PG_FUNCTION_INFO_V1(mzcoord_sql_analyze_materialized_view);
PG_FUNCTION_INFO_V1(mzcoord_sql_query_relation_names);

/* ----------------------------------------------------------------
 * Analysis
 * ----------------------------------------------------------------
 */

/* What a walk over a query tree collects (walk_query). */
typedef struct MzcWalk
{
	List	   *rtes;			/* every RTE_RELATION entry */
	List	   *relids;			/* their relations, without duplicates */
	List	   *funcids;		/* functions called, without duplicates */
	List	   *oprids;			/* operators used, without duplicates */
	bool		tablesample;	/* some entry has TABLESAMPLE */
} MzcWalk;

static bool collect_moments(Node *node, List **moments);

static bool
walk_collect(Node *node, MzcWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, walk_collect, (void *) w,
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
	return expression_tree_walker(node, walk_collect, (void *) w);
}

static bool
mutable_checker(Oid funcid, void *context)
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
find_mutable(Node *node, Oid *culprit)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, mutable_checker, (void *) culprit))
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, find_mutable,
								 (void *) culprit, 0);
	return expression_tree_walker(node, find_mutable, (void *) culprit);
}

/*
 * The relation is not a collection: say what to do about it.
 */
static void
not_a_collection(Oid relid, const char *kind)
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
 * The one statement of a definition, parsed but not analysed (no catalog
 * access); it must be a SELECT.
 */
static RawStmt *
parse_one_select(const char *sql)
{
	List	   *raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	RawStmt    *rs;

	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by exactly one query")));
	rs = linitial_node(RawStmt, raw);
	if (!IsA(rs->stmt, SelectStmt))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by a SELECT query")));
	return rs;
}

/*
 * Parse and analyse a definition: one SELECT that neither writes (SELECT
 * INTO, data-modifying CTEs) nor locks rows.  Views are not expanded yet.
 */
static Query *
analyze_select(const char *sql, List **moments)
{
	RawStmt    *rs = parse_one_select(sql);
	Query	   *query;

	if (((SelectStmt *) rs->stmt)->intoClause)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by a SELECT query")));

	/* Before analysis, which may scribble on the raw tree. */
	(void) collect_moments(rs->stmt, moments);
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
	return query;
}

/*
 * The output columns of the query, which become the storage table's
 * columns: checked and printed like the columns of a source.
 */
static char *
output_columns(Query *query)
{
	List	   *seen = NIL;
	StringInfoData cols;
	ListCell   *lc;

	initStringInfo(&cols);
	foreach(lc, query->targetList)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		const char *name;

		if (tle->resjunk)
			continue;
		name = tle->resname ? tle->resname : "?column?";
		mzcoord_check_column(name, exprType((Node *) tle->expr), &seen);
		mzcoord_append_column(&cols, name, exprType((Node *) tle->expr),
							  exprTypmod((Node *) tle->expr),
							  exprCollation((Node *) tle->expr));
	}
	return cols.data;
}

/*
 * Collect what a query tree names into w, before or after view expansion.
 * A sample is not a deterministic function of the inputs, so TABLESAMPLE
 * is refused wherever it appears.
 */
static void
walk_query(Query *query, MzcWalk *w)
{
	memset(w, 0, sizeof(*w));
	(void) walk_collect((Node *) query, w);
	if (w->tablesample)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialized views cannot use TABLESAMPLE")));
}

/*
 * The expanded query must be immutable, or the contents of the view would
 * depend on when they are computed; name the culprit function if there is
 * one (an expression such as CURRENT_TIMESTAMP is not a call).
 */
static void
check_immutable(Query *expanded)
{
	Oid			culprit = InvalidOid;

	if (!contain_mutable_functions((Node *) expanded))
		return;
	(void) find_mutable((Node *) expanded, &culprit);
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

/* ----------------------------------------------------------------
 * Determinism
 *
 * Immutability is not enough: a query of immutable functions can still
 * give different rows from the same inputs, when its result depends on the
 * order in which rows happen to arrive (LIMIT, DISTINCT ON, row_number(),
 * string_agg() without a total order), or when it froze a moment at
 * analysis ('now').  Recomputation and the incremental path would then
 * disagree with each other and across refreshes, so such queries are
 * refused like now() is (42P17).  An order counts as total only when it
 * sorts by everything whose order shows in the result: every output column
 * for LIMIT and DISTINCT ON, every aggregated argument for an aggregate;
 * rows that tie then give the same result whichever comes first.
 * ----------------------------------------------------------------
 */

/* Words that date/time input reads as the current moment. */
static const char *const moment_words[] = {
	"now", "today", "tomorrow", "yesterday"
};

/* Built-in aggregates whose result depends on the order of their input. */
static const char *const ordered_aggs[] = {
	"array_agg", "string_agg", "json_agg", "jsonb_agg", "json_agg_strict",
	"jsonb_agg_strict", "json_object_agg", "jsonb_object_agg",
	"json_object_agg_strict", "jsonb_object_agg_strict",
	"json_object_agg_unique", "jsonb_object_agg_unique",
	"json_object_agg_unique_strict", "jsonb_object_agg_unique_strict",
	"json_arrayagg", "json_objectagg", "xmlagg"
};

/* Built-in window functions whose result depends on the order of rows. */
static const char *const ordered_winfuncs[] = {
	"row_number", "ntile", "lag", "lead", "first_value", "last_value",
	"nth_value"
};

/* A string literal that names the current moment, for the message. */
typedef struct MzcMoment
{
	int			location;
	const char *word;
} MzcMoment;

static bool
name_in(const char *name, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* A built-in function (in pg_catalog) named one of names. */
static bool
builtin_named(Oid funcid, const char *const *names, int n)
{
	char	   *name;

	if (get_func_namespace(funcid) != PG_CATALOG_NAMESPACE)
		return false;
	name = get_func_name(funcid);
	return name != NULL && name_in(name, names, n);
}

#define ORDERED_AGG(f) builtin_named((f), ordered_aggs, lengthof(ordered_aggs))
#define ORDERED_WINFUNC(f) \
	builtin_named((f), ordered_winfuncs, lengthof(ordered_winfuncs))

/* The moment word among the alphabetic words of s, or NULL. */
static const char *
moment_word(const char *s)
{
	while (*s)
	{
		char		word[16];
		int			len = 0;

		while (*s && !isalpha((unsigned char) *s))
			s++;
		while (isalpha((unsigned char) *s))
		{
			if (len < (int) sizeof(word) - 1)
				word[len] = pg_tolower((unsigned char) *s);
			len++;
			s++;
		}
		if (len > 0 && len < (int) sizeof(word))
		{
			word[len] = '\0';
			for (int i = 0; i < lengthof(moment_words); i++)
				if (strcmp(word, moment_words[i]) == 0)
					return moment_words[i];
		}
	}
	return NULL;
}

/*
 * Collect the string literals of a raw parse tree that hold a moment word.
 * Once analysed, such a literal of a date/time type is a constant that the
 * input function computed from the clock: nothing in the analysed query
 * tells it from a literal timestamp, so it is found by its location.
 */
static bool
collect_moments(Node *node, List **moments)
{
	if (node == NULL)
		return false;
	if (IsA(node, A_Const))
	{
		A_Const    *c = (A_Const *) node;
		const char *word;

		if (!c->isnull && IsA(&c->val, String) &&
			(word = moment_word(strVal(&c->val))) != NULL)
		{
			MzcMoment  *m = palloc(sizeof(MzcMoment));

			m->location = c->location;
			m->word = word;
			*moments = lappend(*moments, m);
		}
		return false;
	}
	return raw_expression_tree_walker(node, collect_moments, (void *) moments);
}

/* A date/time type, or an array, range or domain over one. */
static bool
is_datetime_type(Oid typid)
{
	Oid			sub;

	typid = getBaseType(typid);
	switch (typid)
	{
		case DATEOID:
		case TIMEOID:
		case TIMETZOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return true;
		default:
			break;
	}
	if (OidIsValid(sub = get_element_type(typid)))
		return is_datetime_type(sub);
	if (OidIsValid(sub = get_range_subtype(typid)))
		return is_datetime_type(sub);
	if (OidIsValid(sub = get_multirange_range(typid)))
		return is_datetime_type(sub);
	return false;
}

static bool
find_moment_const(Node *node, List *moments)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, find_moment_const,
								 (void *) moments, 0);
	if (IsA(node, Const) && ((Const *) node)->location >= 0 &&
		is_datetime_type(((Const *) node)->consttype))
	{
		Const	   *k = (Const *) node;
		ListCell   *lc;

		foreach(lc, moments)
		{
			MzcMoment  *m = (MzcMoment *) lfirst(lc);

			if (m->location == k->location)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
						 errmsg("cannot materialize the date/time literal \"%s\"",
								m->word),
						 errdetail("The literal is read as the moment when the query is analysed, so the materialized view would keep that moment rather than follow the time."),
						 errhint("Write the timestamp itself, or compare with the current time when reading the view."),
						 errposition(k->location + 1)));
		}
	}
	return expression_tree_walker(node, find_moment_const, (void *) moments);
}

/*
 * The body of an immutable SQL function, analysed, or NULL when it cannot
 * be: its text is parsed and analysed in a subtransaction, and any error
 * (a table dropped since, a polymorphic argument, ...) only means that the
 * body is not looked into, as for any other language.
 */
static Node *
sql_function_body(Oid funcid)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	Datum		d;
	bool		isnull;
	Node	   *body = NULL;
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		return NULL;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	/* SET clauses would change how the body parses: not looked into. */
	if (proc->prolang != SQLlanguageId ||
		!heap_attisnull(tup, Anum_pg_proc_proconfig, NULL))
	{
		ReleaseSysCache(tup);
		return NULL;
	}
	d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosqlbody, &isnull);
	if (!isnull)
	{
		/* BEGIN ATOMIC or RETURN: already analysed at creation. */
		body = stringToNode(TextDatumGetCString(d));
		ReleaseSysCache(tup);
		return body;
	}

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcontext);
	PG_TRY();
	{
		char	   *src;
		SQLFunctionParseInfoPtr pinfo;
		List	   *raw;
		ListCell   *lc;
		List	   *queries = NIL;

		d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
		if (isnull)
			elog(ERROR, "null prosrc for function %u", funcid);
		src = TextDatumGetCString(d);
		pinfo = prepare_sql_fn_parse_info(tup, NULL, InvalidOid);
		raw = pg_parse_query(src);
		foreach(lc, raw)
			queries = list_concat(queries,
								  pg_analyze_and_rewrite_withcb(lfirst_node(RawStmt, lc),
																src,
																(ParserSetupHook) sql_fn_parser_setup,
																pinfo, NULL));
		body = (Node *) queries;
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
		/* A cancel is not a fact about the function. */
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
			ReThrowError(edata);
		FreeErrorData(edata);
		body = NULL;
	}
	PG_END_TRY();
	ReleaseSysCache(tup);
	return body;
}

/*
 * A function that an immutable SQL function calls, directly or through
 * other SQL functions, that is not immutable; InvalidOid if there is none
 * that can be seen (the bodies of other languages are opaque).
 */
static Oid
mutable_inside(Oid funcid, List **visited)
{
	Node	   *body;
	Oid			culprit = InvalidOid;
	MzcWalk		w;
	ListCell   *lc;

	if (list_member_oid(*visited, funcid))
		return InvalidOid;
	*visited = lappend_oid(*visited, funcid);
	check_stack_depth();
	if ((body = sql_function_body(funcid)) == NULL)
		return InvalidOid;
	if (find_mutable(body, &culprit))
		return culprit;
	memset(&w, 0, sizeof(w));
	(void) walk_collect(body, &w);
	foreach(lc, w.funcids)
		if (OidIsValid(culprit = mutable_inside(lfirst_oid(lc), visited)))
			return culprit;
	return InvalidOid;
}

/* Look into the SQL functions that the query calls (see mutable_inside). */
static void
check_sql_function_bodies(Query *expanded)
{
	MzcWalk		w;
	List	   *visited = NIL;
	ListCell   *lc;

	memset(&w, 0, sizeof(w));
	(void) walk_collect((Node *) expanded, &w);
	foreach(lc, w.funcids)
	{
		Oid			funcid = lfirst_oid(lc);
		Oid			culprit = mutable_inside(funcid, &visited);

		if (OidIsValid(culprit))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("cannot materialize a call to %s()",
							get_func_name(funcid)),
					 errdetail("Function %s() is declared IMMUTABLE but calls %s(), which is not immutable.",
							   get_func_name(funcid), get_func_name(culprit)),
					 errhint("Declare %s() with the volatility of what it calls.",
							 get_func_name(funcid))));
	}
}

/* What the determinism walk knows about where it is. */
typedef struct MzcOrderWalk
{
	Query	   *query;			/* the query level being walked */
	Query	   *exists;			/* the subquery of the EXISTS being entered */
} MzcOrderWalk;

/* A LIMIT or OFFSET that changes the result: not absent, NULL or 0. */
static bool
limit_effective(Node *expr)
{
	if (expr == NULL)
		return false;
	/* The query is immutable by now, so its limits fold to constants. */
	expr = eval_const_expressions(NULL, copyObject(expr));
	if (IsA(expr, Const))
	{
		Const	   *k = (Const *) expr;

		if (k->constisnull)
			return false;
		if (k->consttype == INT8OID && DatumGetInt64(k->constvalue) == 0)
			return false;
	}
	return true;
}

/* The target entry is sorted by one of sort, or equals one that is. */
static bool
tle_sorted(TargetEntry *tle, List *tlist, List *sort)
{
	ListCell   *lc;

	foreach(lc, sort)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		TargetEntry *sorted = get_sortgroupclause_tle(sgc, tlist);

		if (sorted == tle || equal(sorted->expr, tle->expr))
			return true;
	}
	return false;
}

/* Every output column (every argument) of tlist that is not constant. */
static bool
sort_is_total(List *tlist, List *sort)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (tle->resjunk || IsA(tle->expr, Const))
			continue;
		if (!tle_sorted(tle, tlist, sort))
			return false;
	}
	return true;
}

static void
check_query_order(Query *q, bool in_exists)
{
	bool		offset = limit_effective(q->limitOffset);
	bool		limit = limit_effective(q->limitCount);

	/*
	 * WITH TIES keeps every row that ties with the last, so any order is
	 * enough; under EXISTS only whether a row is left matters.
	 */
	if (!offset && q->limitOption == LIMIT_OPTION_WITH_TIES)
		limit = false;
	if (!offset && in_exists)
		limit = false;
	if ((limit || offset) && !sort_is_total(q->targetList, q->sortClause))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("cannot materialize %s without an ORDER BY over every output column",
						offset ? "OFFSET" : "LIMIT"),
				 errdetail("Rows that tie in the ORDER BY are kept or dropped arbitrarily, so the contents of the materialized view would not be a function of its inputs."),
				 errhint("Add every output column of that query level to its ORDER BY, or use FETCH FIRST ... WITH TIES.")));
	if (q->hasDistinctOn && !sort_is_total(q->targetList, q->sortClause))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("cannot materialize DISTINCT ON without an ORDER BY over every output column"),
				 errdetail("DISTINCT ON keeps the first row of each group, and rows that tie in the ORDER BY come first arbitrarily."),
				 errhint("Add every output column to the ORDER BY after the DISTINCT ON expressions.")));
}

static void
check_aggref_order(Aggref *agg)
{
	const char *name;

	/* DISTINCT sorts by the arguments themselves, which is total. */
	if (agg->aggkind != AGGKIND_NORMAL || agg->aggdistinct != NIL ||
		!ORDERED_AGG(agg->aggfnoid))
		return;
	name = get_func_name(agg->aggfnoid);
	if (agg->aggorder == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("cannot materialize %s() without ORDER BY", name),
				 errdetail("The result of %s() depends on the order of its input rows, which is arbitrary.",
						   name),
				 errhint("Order the input by the aggregated values, e.g. %s(x, ... ORDER BY x).",
						 name),
				 errposition(agg->location + 1)));
	if (!sort_is_total(agg->args, agg->aggorder))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("cannot materialize %s() with an ORDER BY that does not include its arguments",
						name),
				 errdetail("Input rows that tie in the ORDER BY are aggregated in an arbitrary order."),
				 errhint("Add the aggregated values to the end of the ORDER BY."),
				 errposition(agg->location + 1)));
}

static void
check_window_order(WindowFunc *wf, Query *q)
{
	WindowClause *wc = NULL;
	ListCell   *lc;
	int			fo;

	foreach(lc, q->windowClause)
		if (lfirst_node(WindowClause, lc)->winref == wf->winref)
			wc = lfirst_node(WindowClause, lc);
	if (wc == NULL || wc->orderClause != NIL)
		return;
	fo = wc->frameOptions;
	if (ORDERED_WINFUNC(wf->winfnoid) ||
		(wf->winagg && ORDERED_AGG(wf->winfnoid)) ||
		((fo & FRAMEOPTION_ROWS) &&
		 !((fo & FRAMEOPTION_START_UNBOUNDED_PRECEDING) &&
		   (fo & FRAMEOPTION_END_UNBOUNDED_FOLLOWING))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("cannot materialize window function %s() over a window without ORDER BY",
						get_func_name(wf->winfnoid)),
				 errdetail("Without ORDER BY the rows of a partition come in an arbitrary order, which decides the result of %s() here.",
						   get_func_name(wf->winfnoid)),
				 errhint("Add ORDER BY to the window definition."),
				 errposition(wf->location + 1)));
}

static bool
order_walker(Node *node, MzcOrderWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		Query	   *q = (Query *) node;
		MzcOrderWalk inner = {q, NULL};

		check_query_order(q, q == w->exists);
		return query_tree_walker(q, order_walker, (void *) &inner, 0);
	}
	if (IsA(node, SubLink) && ((SubLink *) node)->subLinkType == EXISTS_SUBLINK)
		w->exists = (Query *) ((SubLink *) node)->subselect;
	else if (IsA(node, Aggref))
		check_aggref_order((Aggref *) node);
	else if (IsA(node, WindowFunc))
		check_window_order((WindowFunc *) node, w->query);
	return expression_tree_walker(node, order_walker, (void *) w);
}

/*
 * Refuse what is immutable but still not determined by the inputs (see
 * the section header): moments frozen at analysis (in query, the analysed
 * definition, found through moments, its literals), the bodies of SQL
 * functions, and orders that are not total (in expanded, so that views
 * are looked into).
 */
static void
check_deterministic(Query *query, List *moments, Query *expanded)
{
	MzcOrderWalk w = {NULL, NULL};

	if (moments != NIL)
		(void) find_moment_const((Node *) query, moments);
	check_sql_function_bodies(expanded);
	(void) order_walker((Node *) expanded, &w);
}

/*
 * The logical inputs: every relation left after expansion (relids) must be
 * a collection that already has its global id.
 */
static void
collect_inputs(List *relids, MzcQueryInfo *info)
{
	ListCell   *lc;

	foreach(lc, relids)
	{
		Oid			relid = lfirst_oid(lc);
		MzcItemRef	ref;

		/* An expanded view keeps a placeholder entry for its permissions. */
		if (get_rel_relkind(relid) == RELKIND_VIEW)
			continue;
		mzcoord_rec_items_lookup(relid, &ref);
		if (!ref.found)
			not_a_collection(relid, NULL);
		if (strcmp(ref.kind, "sink") == 0 || strcmp(ref.kind, "index") == 0)
			not_a_collection(relid, ref.kind);
		if (ref.global_id == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("item %s of relation \"%s\" has no collection yet",
							ref.id, get_rel_name(relid))));
		info->input_gids = lappend(info->input_gids, ref.global_id);
		info->input_items = lappend(info->input_items, ref.id);
		info->input_relids = lappend_oid(info->input_relids, relid);
	}
}

/*
 * The caller (check_user, the current user) must be allowed to read every
 * relation of the expanded query and to execute every function it calls.
 */
static void
check_privileges(MzcWalk *leaves, Oid check_user)
{
	ListCell   *lc;

	Assert(check_user == GetUserId());
	/* Relations, as the caller (and as view owners inside views). */
	(void) ExecCheckRTPerms(leaves->rtes, true);
	foreach(lc, leaves->funcids)
	{
		Oid			funcid = lfirst_oid(lc);

		if (pg_proc_aclcheck(funcid, check_user, ACL_EXECUTE) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_FUNCTION,
						   get_func_name(funcid));
	}
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
	MzcParseContext ctx;
	Query	   *query;
	List	   *rewritten;
	Query	   *expanded;
	MzcWalk		direct;
	MzcWalk		leaves;
	List	   *moments = NIL;

	memset(info, 0, sizeof(*info));
	mzcoord_parse_context_push(&ctx, "query of a materialized view", sql, 0);

	query = analyze_select(sql, &moments);
	info->columns = output_columns(query);

	/* What the query names directly: its dependencies. */
	walk_query(query, &direct);
	info->ref_relids = direct.relids;
	info->ref_funcids = direct.funcids;
	info->ref_oprids = direct.oprids;

	/* Expand views transitively; the analysed query stays untouched. */
	rewritten = QueryRewrite(copyObject(query));
	if (list_length(rewritten) != 1)
		elog(ERROR, "rewriting a SELECT produced %d queries",
			 list_length(rewritten));
	expanded = linitial_node(Query, rewritten);

	/*
	 * Privileges first: the expansion adds the row security policies of a
	 * table that the user cannot read (a policy calling current_user is
	 * not immutable), and a user without SELECT must be told that, not
	 * that the query is not immutable.
	 */
	walk_query(expanded, &leaves);
	if (OidIsValid(check_user))
		check_privileges(&leaves, check_user);
	check_immutable(expanded);
	check_deterministic(query, moments, expanded);

	/* Every relation left after expansion must be a collection. */
	collect_inputs(leaves.relids, info);

	info->query = query;
	mzcoord_parse_context_pop(&ctx);
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
 * SQL-callable analysis, and relation names
 * ----------------------------------------------------------------
 */

/* A text[] of a List of C strings, or an oid[] of an OID List. */
static ArrayType *
list_array(List *list, Oid elemtype)
{
	bool		oids = elemtype == OIDOID;
	int			n = list_length(list);
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			i = 0;
	ListCell   *lc;

	Assert(elemtype == OIDOID || elemtype == TEXTOID);
	foreach(lc, list)
		d[i++] = oids ? ObjectIdGetDatum(lfirst_oid(lc)) :
			CStringGetTextDatum((char *) lfirst(lc));
	return construct_array(d, n, elemtype, oids ? sizeof(Oid) : -1, oids,
						   TYPALIGN_INT);
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
	values[1] = PointerGetDatum(list_array(info.input_gids, TEXTOID));
	values[2] = PointerGetDatum(list_array(info.input_items, TEXTOID));
	values[3] = PointerGetDatum(list_array(info.ref_relids, OIDOID));
	values[4] = PointerGetDatum(list_array(info.ref_funcids, OIDOID));
	values[5] = PointerGetDatum(list_array(info.ref_oprids, OIDOID));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* Add the schema-qualified relation names of a raw parse tree to names. */
static bool
collect_rangevars(Node *node, List **names)
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
	return raw_expression_tree_walker(node, collect_rangevars,
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
	List	   *names = NIL;

	/*
	 * The raw tree walker knows only the nodes of queries: parse_one_select
	 * refuses anything else, with the errors the analysis of the definition
	 * gives, rather than fail on an unknown node (a row written to
	 * mzcoord.items directly can hold any text).
	 */
	(void) collect_rangevars(parse_one_select(sql)->stmt, &names);
	return names;
}

/* SQL: mzcoord._query_relation_names(query text) RETURNS text[], STRICT */
Datum
mzcoord_sql_query_relation_names(PG_FUNCTION_ARGS)
{
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));

	PG_RETURN_ARRAYTYPE_P(list_array(mzcoord_query_relation_names(sql), TEXTOID));
}
