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
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "rewrite/rewriteHandler.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"

#include "catalog.h"
#include "coldefs.h"
#include "query.h"

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
analyze_select(const char *sql)
{
	RawStmt    *rs = parse_one_select(sql);
	Query	   *query;

	if (((SelectStmt *) rs->stmt)->intoClause)
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
		mzcoord_catalog_lookup(relid, &ref);
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

	memset(info, 0, sizeof(*info));
	mzcoord_parse_context_push(&ctx, "query of a materialized view", sql, 0);

	query = analyze_select(sql);
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
