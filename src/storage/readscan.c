/*-------------------------------------------------------------------------
 *
 * readscan.c
 *	  The read_at scan: mzcoord.read_at in a FROM clause, streamed.
 *
 * PostgreSQL runs a set-returning function in FROM as a Function Scan,
 * which stores every row the function returns in a tuplestore (spilling to
 * disk beyond work_mem) before the query sees the first.  For read_at of a
 * quiet table, whose rows are the table's own (read.c), that store was as
 * costly as the scan itself.  So the planner is offered another path for
 * `FROM mzcoord.read_at(NULL::t, ts)`: a custom scan that does what
 * read_at does (the same privilege checks, hold, wait and snapshot, in
 * mzcoord_read_stream_begin) when it is first asked for a row, and then
 * hands out the table's rows as the heap scan finds them; a read through
 * the history collects its retractions first and then hands out the
 * insertions they leave as its scan finds them.
 *
 * Only the plain form is taken over: one function, no WITH ORDINALITY, no
 * reference to another relation of the query (LATERAL), no correlated
 * sub-select in the arguments (an uncorrelated one is an init plan, run
 * first), and no use of the whole row.  Anything else stays a
 * Function Scan calling read_at, with the same result.  The function is
 * recognised by what it runs (a C function whose symbol is
 * mzcoord_read_at), not by its name, so a function of another schema or an
 * mzcoord schema without the extension is never taken for it.  The scan
 * checks EXECUTE on the function itself, as the function call would.
 *
 * IDENTIFICATION
 *	  src/storage/readscan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "parser/parsetree.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "read.h"
#include "readscan.h"
#include "support.h"

/* The C symbol of mzcoord.read_at. */
#define MZC_READ_AT_SYMBOL "mzcoord_read_at"

typedef struct ReadScanState
{
	CustomScanState css;
	Oid			funcid;
	Oid			relid;
	ExprState  *at;				/* the timestamp argument */
	MzcReadStream *stream;		/* NULL until the first row is asked for */
} ReadScanState;

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

static Plan *readscan_plan(PlannerInfo *root, RelOptInfo *rel,
						   CustomPath *best_path, List *tlist,
						   List *clauses, List *custom_plans);
static Node *readscan_create_state(CustomScan *cscan);
static void readscan_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *readscan_exec(CustomScanState *node);
static void readscan_end(CustomScanState *node);
static void readscan_rescan(CustomScanState *node);

static const CustomPathMethods readscan_path_methods = {
	.CustomName = "mzcoord read_at",
	.PlanCustomPath = readscan_plan,
};

static const CustomScanMethods readscan_scan_methods = {
	.CustomName = "mzcoord read_at",
	.CreateCustomScanState = readscan_create_state,
};

static const CustomExecMethods readscan_exec_methods = {
	.CustomName = "mzcoord read_at",
	.BeginCustomScan = readscan_begin,
	.ExecCustomScan = readscan_exec,
	.EndCustomScan = readscan_end,
	.ReScanCustomScan = readscan_rescan,
};

/* ----------------------------------------------------------------
 * Planning
 * ----------------------------------------------------------------
 */

/* Is funcid mzcoord.read_at (whatever its schema)? */
static bool
is_read_at(Oid funcid)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	bool		found = false;

	if (!HeapTupleIsValid(tup))
		return false;
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId)
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc,
										  &isnull);

		found = !isnull &&
			strcmp(TextDatumGetCString(src), MZC_READ_AT_SYMBOL) == 0;
	}
	ReleaseSysCache(tup);
	return found;
}

/*
 * Does the query use rel's whole row, above the scan or in its own
 * conditions (which attr_needed does not list)?
 */
static bool
uses_whole_row(RelOptInfo *rel)
{
	Bitmapset  *attrs = NULL;
	ListCell   *lc;

	if (!bms_is_empty(rel->attr_needed[InvalidAttrNumber - rel->min_attr]))
		return true;
	pull_varattnos((Node *) rel->reltarget->exprs, rel->relid, &attrs);
	foreach(lc, rel->baserestrictinfo)
		pull_varattnos((Node *) ((RestrictInfo *) lfirst(lc))->clause,
					   rel->relid, &attrs);
	return bms_is_member(InvalidAttrNumber - FirstLowInvalidHeapAttributeNumber,
						 attrs);
}

/* The read_at call that rel (a function in FROM) is, if the scan can take it. */
static FuncExpr *
read_at_call(RelOptInfo *rel, RangeTblEntry *rte)
{
	RangeTblFunction *rtfunc;
	FuncExpr   *f;
	Oid			relid;

	if (rte->rtekind != RTE_FUNCTION || rte->funcordinality ||
		list_length(rte->functions) != 1)
		return NULL;
	/* LATERAL references, or the whole row wanted: leave it as it is. */
	if (!bms_is_empty(rel->lateral_relids) || uses_whole_row(rel))
		return NULL;
	rtfunc = linitial(rte->functions);
	if (!IsA(rtfunc->funcexpr, FuncExpr))
		return NULL;
	f = (FuncExpr *) rtfunc->funcexpr;
	if (list_length(f->args) != 2 || contain_subplans((Node *) f->args) ||
		!is_read_at(f->funcid))
		return NULL;
	/* Not a table's row type: the function's own error, when it is called. */
	relid = get_typ_typrelid(exprType(linitial(f->args)));
	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_RELATION)
		return NULL;
	return f;
}

/*
 * set_rel_pathlist_hook: offer the read_at scan beside the Function Scan,
 * at a lower cost (it does the same work without storing the rows).
 */
static void
readscan_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
				  RangeTblEntry *rte)
{
	CustomPath *cpath;
	Path	   *fpath;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);
	if (rel->pathlist == NIL || read_at_call(rel, rte) == NULL)
		return;
	fpath = linitial(rel->pathlist);
	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.rows = fpath->rows;
	cpath->path.startup_cost = 0;
	cpath->path.total_cost = fpath->total_cost - fpath->startup_cost;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->methods = &readscan_path_methods;
	add_path(rel, &cpath->path);
}

/*
 * The scan's tuple: the relation's row type, as expressions the plan's
 * Vars are matched against (a null for a dropped column).
 */
static List *
scan_tlist(Index relid, Oid rowtype)
{
	TupleDesc	desc = lookup_rowtype_tupdesc(rowtype, -1);
	List	   *tlist = NIL;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Expr	   *e;

		if (att->attisdropped)
			e = (Expr *) makeNullConst(INT4OID, -1, InvalidOid);
		else
			e = (Expr *) makeVar(relid, att->attnum, att->atttypid,
								 att->atttypmod, att->attcollation, 0);
		tlist = lappend(tlist, makeTargetEntry(e, i + 1, NULL, false));
	}
	ReleaseTupleDesc(desc);
	return tlist;
}

static Plan *
readscan_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			  List *tlist, List *clauses, List *custom_plans)
{
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	FuncExpr   *f = (FuncExpr *) ((RangeTblFunction *) linitial(rte->functions))->funcexpr;
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	/* No relation to open: the scan's tuple is described by its own list. */
	cscan->scan.scanrelid = 0;
	cscan->custom_scan_tlist = scan_tlist(rel->relid,
										  exprType(linitial(f->args)));
	cscan->custom_exprs = list_make1(copyObject(f));
	cscan->custom_private = NIL;
	cscan->flags = 0;
	cscan->methods = &readscan_scan_methods;
	return &cscan->scan.plan;
}

/* ----------------------------------------------------------------
 * Execution
 * ----------------------------------------------------------------
 */

static Node *
readscan_create_state(CustomScan *cscan)
{
	ReadScanState *st = palloc0(sizeof(ReadScanState));

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = &readscan_exec_methods;
	return (Node *) st;
}

static void
readscan_begin(CustomScanState *node, EState *estate, int eflags)
{
	ReadScanState *st = (ReadScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	FuncExpr   *f = linitial(cscan->custom_exprs);
	AclResult	acl;

	st->funcid = f->funcid;
	st->relid = mzcoord_rowtype_relation_of(exprType(linitial(f->args)),
											"read_at");
	st->at = ExecInitExpr(lsecond(f->args), &node->ss.ps);
	/* What calling the function would check. */
	acl = pg_proc_aclcheck(f->funcid, GetUserId(), ACL_EXECUTE);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_FUNCTION, get_func_name(f->funcid));
	InvokeFunctionExecuteHook(f->funcid);
}

/* The next row of the read, which starts at the first call. */
static TupleTableSlot *
readscan_next(ScanState *ss)
{
	ReadScanState *st = (ReadScanState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (st->stream == NULL)
	{
		ExprContext *econtext = ss->ps.ps_ExprContext;
		bool		isnull;
		Datum		d;
		int64		at;

		d = ExecEvalExprSwitchContext(st->at, econtext, &isnull);
		at = mzcoord_timestamp_value(d, isnull, MZC_READ_AT_WHAT);
		st->stream = mzcoord_read_stream_begin(st->relid, at, st->funcid);
	}
	if (!mzcoord_read_stream_next(st->stream, slot))
		return ExecClearTuple(slot);
	return slot;
}

static bool
readscan_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
readscan_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, readscan_next, readscan_recheck);
}

static void
readscan_end(CustomScanState *node)
{
	ReadScanState *st = (ReadScanState *) node;

	if (st->stream != NULL)
		mzcoord_read_stream_end(st->stream);
	st->stream = NULL;
}

/* Read again from the start (its argument may have changed). */
static void
readscan_rescan(CustomScanState *node)
{
	readscan_end(node);
}

/* Install the planner hook (from _PG_init, once per process). */
void
mzcoord_readscan_init(void)
{
	RegisterCustomScanMethods(&readscan_scan_methods);
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = readscan_pathlist;
}
