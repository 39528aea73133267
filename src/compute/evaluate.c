/*-------------------------------------------------------------------------
 *
 * evaluate.c
 *	  Evaluating a materialized view's query as of a time.
 *
 * The stored definition is one SELECT whose every name is qualified.  To
 * evaluate it as of time t, it is parsed, analysed and rewritten (views
 * expanded), and every relation it reads -- all of them mzcoord
 * collections, the catalog made sure of that -- is read as of t:
 *
 *	- directly, when the relation itself shows its contents at t in the
 *	  snapshot the query runs with: its history has no update it sees at a
 *	  time after t (a table whose writers have been quiet since t, a source
 *	  or materialized view whose upper is t + 1).  Then the plan is
 *	  PostgreSQL's own, indexes and all, and costs what the query costs;
 *	- otherwise through mzcoord.read_at(NULL::rel, t): the range table
 *	  entry becomes a function scan of the same row type, so every Var of
 *	  the query keeps its meaning (a function of a named composite type
 *	  has the relation's attributes, dropped ones included).
 *
 * The plan runs with the executor into a DestReceiver that counts the rows
 * into a row set, as REFRESH MATERIALIZED VIEW fills its new heap.
 *
 * The incremental path (incremental.c) runs the same kind of query with
 * each relation entry read at a time of its own, or read as its updates at
 * exactly one time (mzcoord._updates_at, a function scan of the same row
 * type, like read_at): mzcoord_evaluate_reads.  The
 * caller runs this as the materialized view's owner, as a restricted
 * operation, so the query's functions run with the owner's rights and the
 * owner needs SELECT on what it reads, as PostgreSQL's REFRESH does.
 *
 * IDENTIFICATION
 *	  src/compute/evaluate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "parser/parse_func.h"
#include "parser/parser.h"
#include "rewrite/rewriteHandler.h"
#include "tcop/tcopprot.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "evaluate.h"
#include "history.h"
#include "read.h"
#include "rowimage.h"
#include "viewerrors.h"

typedef struct RewriteContext
{
	int64		at;
	Snapshot	snapshot;
	Oid			read_at;		/* mzcoord.read_at(anyelement, bigint) */
	int			direct;			/* relations read directly */
	int			via_history;	/* relations read through read_at */
} RewriteContext;

/* Whether relid shows its contents at time `at` in snapshot. */
bool
mzcoord_shows_contents_at(Oid relid, int64 at, Snapshot snapshot)
{
	MzcHistory *h = mzcoord_history_lookup(relid, true);
	MzcViewError err;

	if (h == NULL)
		return false;

	/*
	 * A view in error at `at` shows its last good contents, not its
	 * contents at `at` (it has none): read_at raises its error, which the
	 * refresh of this view records as its own.
	 */
	if (mzcoord_view_error_in(h->gid, snapshot, at, at, &err))
		return false;
	return mzcoord_history_quiet_after(h, snapshot, at);
}

/*
 * Turn the relation entry rte into a scan of the set-returning function
 * rtf.  The function checks SELECT on the relation itself, as the same
 * user, so the entry asks for no permission of its own.
 */
static void
become_function_scan(RangeTblEntry *rte, RangeTblFunction *rtf)
{
	rte->rtekind = RTE_FUNCTION;
	rte->functions = rtf != NULL ? list_make1(rtf) : NIL;
	rte->funcordinality = false;
	rte->inh = false;
	rte->relid = InvalidOid;
	rte->relkind = 0;
	rte->rellockmode = 0;
	rte->tablesample = NULL;
	rte->requiredPerms = 0;
	rte->checkAsUser = InvalidOid;
	rte->selectedCols = NULL;
	rte->insertedCols = NULL;
	rte->updatedCols = NULL;
	rte->extraUpdatedCols = NULL;
}

/*
 * Turn a relation entry into a function scan of funcid(NULL::rel, at
 * [, sign]): read_at, or _updates_at with the sign of the updates to read.
 */
static void
read_through_function(RangeTblEntry *rte, Oid funcid, int64 at, int sign)
{
	Oid			reltype = get_rel_type_id(rte->relid);
	Relation	rel = table_open(rte->relid, NoLock);
	FuncExpr   *fe;
	RangeTblFunction *rtf = makeNode(RangeTblFunction);
	List	   *args;

	args = list_make2(makeNullConst(reltype, -1, InvalidOid),
					  makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
								Int64GetDatum(at), false, FLOAT8PASSBYVAL));
	if (sign != 0)
		args = lappend(args, makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
									   Int32GetDatum(sign), false, true));
	fe = makeFuncExpr(funcid, reltype, args, InvalidOid, InvalidOid,
					  COERCE_EXPLICIT_CALL);
	fe->funcretset = true;
	rtf->funcexpr = (Node *) fe;
	rtf->funccolcount = RelationGetNumberOfAttributes(rel);
	table_close(rel, NoLock);

	become_function_scan(rte, rtf);
}

static bool
rewrite_walker(Node *node, RewriteContext *cx)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION)
		{
			if (mzcoord_shows_contents_at(rte->relid, cx->at, cx->snapshot))
				cx->direct++;
			else
			{
				read_through_function(rte, cx->read_at, cx->at, 0);
				cx->via_history++;
			}
		}
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, rewrite_walker, cx,
								 QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, rewrite_walker, cx);
}

/* The definition, analysed and rewritten: one query. */
Query *
mzcoord_analyze_definition(const char *definition)
{
	List	   *raw = raw_parser(definition, RAW_PARSE_DEFAULT);
	Query	   *query;
	List	   *rewritten;

	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by exactly one query")));
	query = parse_analyze_fixedparams(linitial_node(RawStmt, raw), definition,
									  NULL, 0, NULL);
	if (query->commandType != CMD_SELECT || query->utilityStmt != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a materialized view is defined by a SELECT query")));
	rewritten = QueryRewrite(query);
	if (list_length(rewritten) != 1)
		elog(ERROR, "the query of a materialized view was rewritten into %d queries",
			 list_length(rewritten));
	return linitial_node(Query, rewritten);
}

/* A DestReceiver that counts each row into a row set. */
typedef struct CountReceiver
{
	DestReceiver pub;
	MzcRowSet  *set;
	int64		sign;
	int64		rows;
} CountReceiver;

/*
 * Add a result row of a view's query to set with count sign (the row's
 * columns are the view's: checked, as a plan could drift from the view's
 * relation).  Shared by every receiver that consolidates query results.
 */
void
mzcoord_count_result_row(MzcRowSet *set, TupleTableSlot *slot, int64 sign)
{
	TupleDesc	desc = set->desc;

	slot_getallattrs(slot);
	if (slot->tts_tupleDescriptor->natts != desc->natts)
		elog(ERROR, "query of %d columns for a relation of %d",
			 slot->tts_tupleDescriptor->natts, desc->natts);
	(void) mzcoord_rowset_add(set, slot->tts_values, slot->tts_isnull,
							  mzcoord_row_hash(desc, slot->tts_values,
											   slot->tts_isnull),
							  sign);
}

static bool
count_receive(TupleTableSlot *slot, DestReceiver *self)
{
	CountReceiver *r = (CountReceiver *) self;

	mzcoord_count_result_row(r->set, slot, r->sign);
	r->rows++;
	return true;
}

static void
count_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
count_shutdown(DestReceiver *self)
{
}

static void
count_destroy(DestReceiver *self)
{
}

/* Plan query and run it with snapshot into dest. */
static void
run_query(Query *query, const char *text, Snapshot snapshot, DestReceiver *dest)
{
	PlannedStmt *plan;
	QueryDesc  *qd;

	plan = pg_plan_query(query, text, CURSOR_OPT_PARALLEL_OK, NULL);
	PushActiveSnapshot(snapshot);
	qd = CreateQueryDesc(plan, text, snapshot, InvalidSnapshot, dest, NULL,
						 NULL, 0);
	ExecutorStart(qd, 0);
	ExecutorRun(qd, ForwardScanDirection, 0, true);
	ExecutorFinish(qd);
	ExecutorEnd(qd);
	FreeQueryDesc(qd);
	PopActiveSnapshot();
}

/* mzcoord.read_at(anyelement, bigint) */
static Oid
read_at_function(void)
{
	Oid			argtypes[2] = {ANYELEMENTOID, INT8OID};

	return LookupFuncName(list_make2(makeString("mzcoord"),
									 makeString("read_at")),
						  2, argtypes, false);
}

/*
 * Evaluate definition as of `at` and add each result row to set with
 * count sign (+1 or -1).  The caller holds the inputs at `at` (at is below
 * each input's upper) and runs as the view's owner.  Returns the number of
 * rows the query produced; *direct and *via_history (may be NULL) receive
 * how many relation scans read the relation itself and how many its
 * history.
 */
int64
mzcoord_evaluate_as_of(const char *definition, int64 at, MzcRowSet *set,
					   int64 sign, int *direct, int *via_history)
{
	RewriteContext cx = {0};
	Query	   *query;
	CountReceiver recv;
	Snapshot	snapshot;

	cx.at = at;
	cx.read_at = read_at_function();
	query = mzcoord_analyze_definition(definition);

	/* One snapshot decides what is read directly and runs the plan. */
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	cx.snapshot = snapshot;
	(void) query_tree_walker(query, rewrite_walker, &cx, QTW_EXAMINE_RTES_BEFORE);

	memset(&recv, 0, sizeof(recv));
	recv.pub.receiveSlot = count_receive;
	recv.pub.rStartup = count_startup;
	recv.pub.rShutdown = count_shutdown;
	recv.pub.rDestroy = count_destroy;
	recv.pub.mydest = DestNone;
	recv.set = set;
	recv.sign = sign;
	run_query(query, definition, snapshot, &recv.pub);
	UnregisterSnapshot(snapshot);

	if (direct != NULL)
		*direct = cx.direct;
	if (via_history != NULL)
		*via_history = cx.via_history;
	return recv.rows;
}

/*
 * Run a copy of query (analysed by mzcoord_analyze_definition, text its
 * definition) into dest, reading each relation entry of its top-level
 * range table as reads[rtindex - 1] says: its contents as of reads[].at,
 * or (delta +1 / -1) only its insertions / retractions at exactly
 * reads[].at, each row shown |diff| times (mzcoord._updates_at).  The
 * query must have no relation entry below the top level (the incremental
 * path's queries have none).  The caller holds the inputs and runs as the
 * view's owner, as for mzcoord_evaluate_as_of.
 */
void
mzcoord_evaluate_reads(Query *query, const char *text,
					   const MzcEntryRead *reads, DestReceiver *dest,
					   int *direct, int *via_history)
{
	Oid			argtypes[3] = {ANYELEMENTOID, INT8OID, INT4OID};
	Oid			updates_at;
	Oid			read_at = read_at_function();
	Snapshot	snapshot;
	ListCell   *lc;
	int			rti = 0;

	updates_at = LookupFuncName(list_make2(makeString("mzcoord"),
										   makeString("_updates_at")),
								3, argtypes, false);
	query = copyObject(query);
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	foreach(lc, query->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
		const MzcEntryRead *r = &reads[rti++];

		if (rte->rtekind != RTE_RELATION)
			continue;
		if (r->delta != 0)
			read_through_function(rte, updates_at, r->at, r->delta);
		else if (mzcoord_shows_contents_at(rte->relid, r->at, snapshot))
			(*direct)++;
		else
		{
			read_through_function(rte, read_at, r->at, 0);
			(*via_history)++;
		}
	}
	run_query(query, text, snapshot, dest);
	UnregisterSnapshot(snapshot);
}

/* mzcoord._history_rows(anyelement, bigint, bigint, boolean) */
static Oid
history_rows_function(void)
{
	Oid			argtypes[4] = {ANYELEMENTOID, INT8OID, INT8OID, BOOLOID};

	return LookupFuncName(list_make2(makeString("mzcoord"),
									 makeString("_history_rows")),
						  4, argtypes, false);
}

/*
 * Turn relation entry rte into a function scan of
 * mzcoord._history_rows(NULL::rel, lo, hi, base): the relation's updates
 * with lo <= ts < hi, unconsolidated, after its contents at lo - 1 (at
 * time lo - 1) with base.  Its columns keep their numbers (dropped
 * ones are null integers), then come ts (natts + 1) and diff (natts + 2).
 * Returns the relation's number of attributes.
 */
int
mzcoord_read_history_rows(RangeTblEntry *rte, int64 lo, int64 hi, bool base)
{
	Oid			reltype = get_rel_type_id(rte->relid);
	Relation	rel = table_open(rte->relid, NoLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	RangeTblFunction *rtf = makeNode(RangeTblFunction);
	List	   *names = NIL;
	FuncExpr   *fe;

	for (int a = 0; a < natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);
		bool		dropped = att->attisdropped;

		names = lappend(names, makeString(pstrdup(dropped ? "" : NameStr(att->attname))));
		rtf->funccoltypes = lappend_oid(rtf->funccoltypes,
										dropped ? INT4OID : att->atttypid);
		rtf->funccoltypmods = lappend_int(rtf->funccoltypmods,
										  dropped ? -1 : att->atttypmod);
		rtf->funccolcollations = lappend_oid(rtf->funccolcollations,
											 dropped ? InvalidOid : att->attcollation);
	}
	table_close(rel, NoLock);
	for (int k = 0; k < 2; k++)
	{
		names = lappend(names, makeString(pstrdup(k == 0 ? "ts" : "diff")));
		rtf->funccoltypes = lappend_oid(rtf->funccoltypes, INT8OID);
		rtf->funccoltypmods = lappend_int(rtf->funccoltypmods, -1);
		rtf->funccolcollations = lappend_oid(rtf->funccolcollations, InvalidOid);
	}
	rtf->funccolnames = names;
	rtf->funccolcount = natts + 2;
	fe = makeFuncExpr(history_rows_function(), RECORDOID,
					  list_make4(makeNullConst(reltype, -1, InvalidOid),
								 makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
										   Int64GetDatum(lo), false, FLOAT8PASSBYVAL),
								 makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
										   Int64GetDatum(hi), false, FLOAT8PASSBYVAL),
								 makeBoolConst(base, false)),
					  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	fe->funcretset = true;
	rtf->funcexpr = (Node *) fe;

	become_function_scan(rte, rtf);
	rte->eref = makeAlias(rte->eref->aliasname, list_copy(names));
	return natts;
}

/*
 * Turn relation entry rte into a scan of the constant rows values_lists
 * (lists of Consts, each the relation's columns then ts and diff, as
 * mzcoord_read_history_rows numbers them; dropped columns are null
 * integers), so that the planner knows how many rows it joins.  Returns
 * the relation's number of attributes.
 */
int
mzcoord_read_values(RangeTblEntry *rte, List *values_lists)
{
	Relation	rel = table_open(rte->relid, NoLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	List	   *names = NIL;

	rte->coltypes = rte->coltypmods = rte->colcollations = NIL;
	for (int a = 0; a < natts + 2; a++)
	{
		Form_pg_attribute att = a < natts ? TupleDescAttr(desc, a) : NULL;
		bool		plain = att != NULL && !att->attisdropped;

		names = lappend(names,
						makeString(pstrdup(att == NULL ? (a == natts ? "ts" : "diff") :
										   plain ? NameStr(att->attname) : "")));
		rte->coltypes = lappend_oid(rte->coltypes,
									plain ? att->atttypid :
									att == NULL ? INT8OID : INT4OID);
		rte->coltypmods = lappend_int(rte->coltypmods,
									  plain ? att->atttypmod : -1);
		rte->colcollations = lappend_oid(rte->colcollations,
										 plain ? att->attcollation : InvalidOid);
	}
	table_close(rel, NoLock);
	become_function_scan(rte, NULL);
	rte->rtekind = RTE_VALUES;
	rte->functions = NIL;
	rte->values_lists = values_lists;
	rte->eref = makeAlias(rte->eref->aliasname, names);
	return natts;
}

/*
 * Run query (its relation entries already rewritten; text its definition)
 * into dest with snapshot, or a fresh one (NULL).  The caller runs as the
 * view's owner.
 */
void
mzcoord_evaluate_query(Query *query, const char *text, Snapshot snapshot,
					   DestReceiver *dest)
{
	if (snapshot != NULL)
	{
		run_query(query, text, snapshot, dest);
		return;
	}
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	run_query(query, text, snapshot, dest);
	UnregisterSnapshot(snapshot);
}
