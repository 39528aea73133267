/*-------------------------------------------------------------------------
 *
 * incremental.c
 *	  Refreshing a continual materialized view at a time t from its inputs'
 *	  updates at t, instead of evaluating its whole query again.
 *
 * A continual view changes at each time t at which one of its inputs
 * changed (refresh.c).  A refresh step covers an interval of such times at
 * once (mzcoord_incremental_interval, "Many times at once" below); the
 * rule per time is this.  When its query is a filter / projection / inner
 * join of relations (SPJ), the query is linear in each relation entry, so
 * with R_i' the contents of entry i at t and R_i those at t - 1:
 *
 *	Q(R_1', ..., R_n') - Q(R_1, ..., R_n)
 *		= sum over i of Q(R_1', ..., R_{i-1}', dR_i, R_{i+1}, ..., R_n)
 *
 * where dR_i are the updates of entry i at exactly t, with their diffs as
 * multiplicities.  A multiplicity is carried by repetition: the query runs
 * once over dR_i+ (the insertions at t, each row shown diff times) and
 * once over dR_i- (the retractions, each shown -diff times); the rows of
 * the first run count +1, those of the second -1.  So the query itself
 * runs unchanged, planned by PostgreSQL, on relation entries rewritten by
 * evaluate.c to read their contents as of t or t - 1, or their updates at
 * t (mzcoord._updates_at, src/storage/changes.c).  Entries without updates
 * at t are skipped: their term is empty.  A self-join is two entries, two
 * terms.
 *
 * With GROUP BY and count(*), count(x), sum(x) (the aggregates whose value
 * is a sum over the group's rows), the same runs aggregate the changes of
 * each group: count(*) over dR_i+ is what the group gains, over dR_i- what
 * it loses.  The delta query also counts, per group, its rows (count(*))
 * and the non-null arguments of each sum (count(x)), which decide whether
 * a group disappears (no rows left) and whether a sum is NULL (no non-null
 * argument left).  The new row of a group is its old row (the view's
 * contents, kept in memory by the caller and indexed here by group key)
 * plus the change.  The old counts are read from the old row when the
 * query selects them (count(*); count(x) next to sum(x)); otherwise an old
 * count is only known to be positive, which decides nothing when the
 * change is negative: then this time is recomputed instead (the step
 * returns false).  So a view that selects count(*) and count(x) with its
 * sums is always incremental; one that does not is incremental at times
 * that only add to its groups.
 *
 * The result must be the very rows recomputing gives, byte for byte (rows
 * are identified by their image, rowimage.c), so what goes incremental is
 * narrow, and everything else recomputes:
 *	- one SELECT of relations and inner joins only: no subquery, CTE,
 *	  sublink, set operation, DISTINCT ON, ORDER BY, LIMIT/OFFSET, window
 *	  function, set-returning function in the target list, grouping
 *	  sets, TABLESAMPLE or row security;
 *	- aggregates: only count(*), count(x), sum(int2/int4/int8), each the
 *	  whole target column, without FILTER, DISTINCT or ORDER BY; sums of
 *	  numeric or float would depend on the order of addition (the scale of
 *	  a numeric sum, rounding of a float one); and, in a query of one
 *	  relation entry and only over intervals ("Groups kept whole"),
 *	  min(x), max(x) of integers, date, timestamps and text
 *	  (deterministic collation) and avg(int2/int4/int8);
 *	- every GROUP BY key is a target column, of a type whose default
 *	  equality is identity of the bytes (integers, bool, text and varchar
 *	  under a deterministic collation, date, timestamps, uuid, oid, bytea):
 *	  otherwise the group of 1.0 and 1.00 shows whichever came first;
 *	- DISTINCT (of every target column, without aggregates), GROUP BY
 *	  without aggregates, and HAVING over target columns only (its
 *	  aggregates are also columns of the view): not linear, a group's row
 *	  is not its old row plus the change, so in a query of one relation
 *	  entry over intervals only ("Groups kept whole").
 * The catalog already refuses mutable functions, so every run of the query
 * computes the same rows from the same inputs.
 *
 * IDENTIFICATION
 *	  src/compute/incremental.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "catalog/pg_aggregate.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/typcache.h"
#include "utils/datum.h"

#include "evaluate.h"
#include "history.h"
#include "incremental.h"
#include "read.h"
#include "rowimage.h"
#include "settings.h"

static void prepare_rows_query(MzcIncremental *inc);

/* What a column of a grouped view holds. */
typedef enum IncKind
{
	INC_KEY,					/* a GROUP BY key */
	INC_COUNT_STAR,				/* count(*) */
	INC_COUNT,					/* count(x) */
	INC_SUM_INT8,				/* sum(int2), sum(int4): bigint */
	INC_SUM_NUMERIC,			/* sum(int8): numeric */
	INC_MIN,					/* min(x), one relation entry only */
	INC_MAX,					/* max(x), likewise */
	INC_AVG						/* avg(int2/int4/int8), likewise */
} IncKind;

typedef struct IncColumn
{
	IncKind		kind;
	Expr	   *arg;			/* count(x), sum(x): x */
	Oid			argtype;		/* its type */
	FmgrInfo	cmp;			/* min, max: its btree comparison */
	Oid			coll;			/* min, max: the collation it runs with */
	bool		byval;			/* min, max: how its values are copied */
	int16		typlen;
	int			nn_col;			/* sums: a column of the view with count(x), or -1 */
	int			nn_extra;		/* sums: the delta query's column with count(x) */
} IncColumn;

struct MzcIncremental
{
	MemoryContext cxt;
	Query	   *query;			/* what runs on the updates */
	char	   *text;			/* the definition */
	TupleDesc	desc;			/* the view's relation's */
	bool		grouped;		/* has aggregates */
	bool		state;			/* keeps its groups' rows (see "Groups kept
								 * whole"): min, max, avg, no aggregate,
								 * or HAVING */
	ExprState  *having;			/* HAVING over the view's row (inner tuple) */
	IncColumn  *cols;			/* grouped: per column of the view */
	int			star_extra;		/* grouped: the delta query's count(*) column */
	int			star_col;		/* a column of the view with count(*), or -1 */
	int			nkeys;			/* 0: aggregates without GROUP BY, one row */
	int		   *keycols;
	TupleDesc	keydesc;		/* the key columns */
	MzcRowSet  *index;			/* key -> its row in the contents (extra) */
	Query	   *rows_query;		/* the query row by row (interval steps) */
	TupleDesc	tsdesc;			/* SPJ: the view's columns, grouped: the
								 * key columns; then the time */
};

/* The change of one group at a time, summed over the delta runs. */
typedef struct IncGroup
{
	int64		cnt;			/* rows gained (count(*)) */
	int64	   *nn;				/* per column: non-null arguments gained */
	int64	   *isum;			/* per INC_SUM_INT8 column */
	Datum	   *nsum;			/* per INC_SUM_NUMERIC column */
	List	   *ext;			/* INC_MIN, INC_MAX: ExtChange of each row */
} IncGroup;

/* A change of a min or max argument in a group. */
typedef struct ExtChange
{
	int			col;
	Datum		val;
	int64		mult;
} ExtChange;

/* ----------------------------------------------------------------
 * Which queries go incremental
 * ----------------------------------------------------------------
 */

/* One SELECT of relations and inner joins, nothing else (see the top). */
static bool
shape_ok(Query *q)
{
	ListCell   *lc;
	int			nrel = 0;

	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL ||
		q->hasWindowFuncs || q->hasTargetSRFs || q->hasSubLinks ||
		q->hasDistinctOn || q->hasRecursive || q->hasModifyingCTE ||
		q->hasForUpdate || q->hasRowSecurity || q->cteList != NIL ||
		q->setOperations != NULL ||
		q->sortClause != NIL || q->limitOffset != NULL ||
		q->limitCount != NULL || q->groupingSets != NIL ||
		q->groupDistinct || q->rowMarks != NIL ||
		q->windowClause != NIL)
		return false;
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->rtekind == RTE_RELATION &&
			rte->relkind == RELKIND_RELATION && rte->tablesample == NULL &&
			mzcoord_history_lookup(rte->relid, true) != NULL)
			nrel++;
		else if (rte->rtekind != RTE_JOIN || rte->jointype != JOIN_INNER)
			return false;
	}
	foreach(lc, q->targetList)
	{
		if (lfirst_node(TargetEntry, lc)->resjunk)
			return false;
	}
	return nrel > 0;
}

/*
 * Whether tle is a GROUP BY key whose groups are rows of identical bytes:
 * then the view's row of a group is found by the image of its key.
 */
static bool
key_ok(TargetEntry *tle, List *groupClause)
{
	Oid			type = exprType((Node *) tle->expr);
	Oid			coll = exprCollation((Node *) tle->expr);
	SortGroupClause *sgc;

	if (tle->ressortgroupref == 0)
		return false;
	sgc = get_sortgroupref_clause_noerr(tle->ressortgroupref, groupClause);
	if (sgc == NULL)
		return false;
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case BOOLOID:
		case TEXTOID:
		case VARCHAROID:
		case BYTEAOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case UUIDOID:
			break;
		default:
			return false;
	}
	if (OidIsValid(coll) && !get_collation_isdeterministic(coll))
		return false;
	return sgc->eqop == lookup_type_cache(type, TYPECACHE_EQ_OPR)->eq_opr;
}

/*
 * A min or max: of a type whose values compare equal only when their bytes
 * are (see key_ok), so the extreme is one value, which the btree
 * comparison of the type finds.
 */
static bool
extreme_ok(Aggref *a, IncColumn *col)
{
	TypeCacheEntry *tc = lookup_type_cache(col->argtype,
										   TYPECACHE_CMP_PROC_FINFO);

	if (a->aggtype != col->argtype || !OidIsValid(tc->cmp_proc_finfo.fn_oid))
		return false;
	col->coll = a->inputcollid;
	if (OidIsValid(col->coll) && !get_collation_isdeterministic(col->coll))
		return false;
	fmgr_info_copy(&col->cmp, &tc->cmp_proc_finfo, CurrentMemoryContext);
	get_typlenbyval(col->argtype, &col->typlen, &col->byval);
	return true;
}

/* Classify an aggregate target column; false if it is not a sum. */
static bool
aggregate_ok(Aggref *a, IncColumn *col)
{
	if (a->aggfilter != NULL || a->aggdistinct != NIL || a->aggorder != NIL ||
		a->aggdirectargs != NIL || a->agglevelsup != 0 ||
		a->aggkind != AGGKIND_NORMAL || a->aggvariadic)
		return false;
	switch (a->aggfnoid)
	{
		case F_COUNT_:
			col->kind = INC_COUNT_STAR;
			return true;
		case F_COUNT_ANY:
			col->kind = INC_COUNT;
			break;
		case F_SUM_INT2:
		case F_SUM_INT4:
			col->kind = INC_SUM_INT8;
			break;
		case F_SUM_INT8:
			col->kind = INC_SUM_NUMERIC;
			break;
		case F_MIN_INT2:
		case F_MIN_INT4:
		case F_MIN_INT8:
		case F_MIN_DATE:
		case F_MIN_TIMESTAMP:
		case F_MIN_TIMESTAMPTZ:
		case F_MIN_TEXT:
			col->kind = INC_MIN;
			break;
		case F_MAX_INT2:
		case F_MAX_INT4:
		case F_MAX_INT8:
		case F_MAX_DATE:
		case F_MAX_TIMESTAMP:
		case F_MAX_TIMESTAMPTZ:
		case F_MAX_TEXT:
			col->kind = INC_MAX;
			break;
		case F_AVG_INT2:
		case F_AVG_INT4:
		case F_AVG_INT8:
			col->kind = INC_AVG;
			break;
		default:
			return false;
	}
	if (list_length(a->args) != 1)
		return false;
	col->arg = linitial_node(TargetEntry, a->args)->expr;
	col->argtype = exprType((Node *) col->arg);
	if (col->kind == INC_MIN || col->kind == INC_MAX)
		return extreme_ok(a, col);
	return true;
}

/* count(*) (arg NULL) or count(arg), as target entry resno. */
static TargetEntry *
count_entry(Expr *arg, AttrNumber resno)
{
	Aggref	   *a = makeNode(Aggref);

	a->aggfnoid = arg == NULL ? F_COUNT_ : F_COUNT_ANY;
	a->aggtype = INT8OID;
	a->aggcollid = InvalidOid;
	a->inputcollid = arg == NULL ? InvalidOid : exprCollation((Node *) arg);
	a->aggtranstype = InvalidOid;
	a->aggargtypes = arg == NULL ? NIL : list_make1_oid(exprType((Node *) arg));
	a->args = arg == NULL ? NIL :
		list_make1(makeTargetEntry(copyObject(arg), 1, NULL, false));
	a->aggstar = (arg == NULL);
	a->aggkind = AGGKIND_NORMAL;
	a->aggsplit = AGGSPLIT_SIMPLE;
	a->aggno = -1;
	a->aggtransno = -1;
	a->location = -1;
	return makeTargetEntry((Expr *) a, resno, pstrdup("mzc_count"), false);
}

/* The view's columns, for HAVING: each target expression becomes one. */
typedef struct HavingContext
{
	List	   *targets;
	bool		ok;
} HavingContext;

static Node *
having_mutator(Node *node, HavingContext *cx)
{
	ListCell   *lc;

	if (node == NULL)
		return NULL;
	foreach(lc, cx->targets)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (equal(node, tle->expr))
			return (Node *) makeVar(INNER_VAR, tle->resno,
									exprType((Node *) tle->expr),
									exprTypmod((Node *) tle->expr),
									exprCollation((Node *) tle->expr), 0);
	}
	/* Anything else the query computes per group is not in the view. */
	if (IsA(node, Aggref) || IsA(node, GroupingFunc) ||
		(IsA(node, Var) && ((Var *) node)->varno != INNER_VAR))
	{
		cx->ok = false;
		return node;
	}
	return expression_tree_mutator(node, having_mutator, cx);
}

/*
 * HAVING as a condition on the view's row of a group, when it only reads
 * the view's columns (its aggregates are target columns): then whether a
 * group shows is decided from the row its kept rows give it.
 */
static bool
prepare_having(MzcIncremental *inc, Query *q)
{
	HavingContext cx = {q->targetList, true};
	Node	   *qual = having_mutator(copyObject(q->havingQual), &cx);

	if (!cx.ok)
		return false;
	qual = (Node *) expression_planner((Expr *) qual);
	inc->having = ExecInitQual(make_ands_implicit((Expr *) qual), NULL);
	return true;
}

/*
 * Classify the target columns of an aggregating query and append to it
 * count(*) and count(x) of each sum, which the delta needs (see the top).
 */
static bool
prepare_grouped(MzcIncremental *inc, Query *q)
{
	int			ncols = list_length(q->targetList);
	AttrNumber	resno = ncols;
	int			c = 0;
	ListCell   *lc;
	List	   *keyclause = q->groupClause;

	/* DISTINCT of a grouped query is not taken apart. */
	if (q->distinctClause != NIL)
	{
		if (q->hasAggs || q->groupClause != NIL || q->havingQual != NULL)
			return false;
		keyclause = q->distinctClause;
	}

	inc->grouped = true;
	inc->cols = palloc0(sizeof(IncColumn) * ncols);
	inc->keycols = palloc(sizeof(int) * Max(ncols, 1));
	inc->star_col = -1;
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		IncColumn  *col = &inc->cols[c];

		if (IsA(tle->expr, Aggref))
		{
			if (!aggregate_ok((Aggref *) tle->expr, col))
				return false;
			if (col->kind == INC_COUNT_STAR)
				inc->star_col = c;
			if (col->kind == INC_MIN || col->kind == INC_MAX ||
				col->kind == INC_AVG)
				inc->state = true;
		}
		else if (key_ok(tle, keyclause))
		{
			col->kind = INC_KEY;
			inc->keycols[inc->nkeys++] = c;
		}
		else
			return false;
		c++;
	}

	/* No aggregate: a DISTINCT; a group is there while it has rows. */
	if (inc->nkeys == ncols || q->havingQual != NULL)
		inc->state = true;
	if (inc->state && mzcoord_incremental_relations(inc) != 1)
		return false;
	if (q->havingQual != NULL && !prepare_having(inc, q))
		return false;
	inc->keydesc = CreateTemplateTupleDesc(inc->nkeys);
	for (int k = 0; k < inc->nkeys; k++)
		TupleDescCopyEntry(inc->keydesc, k + 1, inc->desc, inc->keycols[k] + 1);
	/* Only the steps of single times run the query itself (see there). */
	if (inc->state)
		return true;
	q->targetList = lappend(q->targetList, count_entry(NULL, ++resno));
	inc->star_extra = resno - 1;
	for (c = 0; c < ncols; c++)
	{
		IncColumn  *col = &inc->cols[c];

		if (col->kind != INC_SUM_INT8 && col->kind != INC_SUM_NUMERIC)
			continue;
		col->nn_col = -1;
		for (int k = 0; k < ncols; k++)
			if (inc->cols[k].kind == INC_COUNT && equal(inc->cols[k].arg, col->arg))
				col->nn_col = k;
		q->targetList = lappend(q->targetList, count_entry(col->arg, ++resno));
		col->nn_extra = resno - 1;
	}
	return true;
}

/*
 * The view's query (definition; desc its relation's descriptor) prepared
 * for the incremental path, or NULL when it recomputes: the query is not
 * of a shape above, or mzcoord.incremental is off.  Run as the view's
 * owner.
 */
MzcIncremental *
mzcoord_incremental_prepare(const char *definition, TupleDesc desc)
{
	MemoryContext cxt;
	MemoryContext old;
	MzcIncremental *inc;
	Query	   *q;
	bool		ok;

	if (!mzcoord_incremental)
		return NULL;
	cxt = AllocSetContextCreate(CurrentMemoryContext, "mzcoord incremental",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	q = mzcoord_analyze_definition(definition);
	inc = palloc0(sizeof(MzcIncremental));
	inc->cxt = cxt;
	inc->text = pstrdup(definition);
	inc->desc = desc;
	inc->query = q;
	ok = shape_ok(q) && list_length(q->targetList) == desc->natts;
	if (ok && (q->hasAggs || q->groupClause != NIL ||
			   q->distinctClause != NIL))
		ok = prepare_grouped(inc, q);
	if (ok)
		prepare_rows_query(inc);
	MemoryContextSwitchTo(old);
	if (!ok)
	{
		MemoryContextDelete(cxt);
		return NULL;
	}
	return inc;
}

/*
 * The number of relation entries of the query: a join's step reads its
 * other entries' contents at the start of the interval, and pairs each
 * update with the other entries' updates before it, so the caller keeps
 * its intervals short (refresh.c).
 */
int
mzcoord_incremental_relations(const MzcIncremental *inc)
{
	ListCell   *lc;
	int			n = 0;

	foreach(lc, inc->query->rtable)
		if (lfirst_node(RangeTblEntry, lc)->rtekind == RTE_RELATION)
			n++;
	return n;
}

/*
 * Whether steps need the view's contents (prev of mzcoord_incremental_step):
 * a grouped view finds the old row of each group there.
 */
bool
mzcoord_incremental_needs_contents(const MzcIncremental *inc)
{
	return inc->grouped;
}

/* The caller replaced its contents: the index of groups is stale. */
void
mzcoord_incremental_forget(MzcIncremental *inc)
{
	if (inc->index != NULL)
		mzcoord_rowset_destroy(inc->index);
	inc->index = NULL;
}

/* ----------------------------------------------------------------
 * Running the delta query
 * ----------------------------------------------------------------
 */

/* Whether relid has insertions (*pos) and retractions (*neg) at t. */
static void
updates_at(Oid relid, int64 t, Snapshot snapshot, bool *pos, bool *neg)
{
	MzcHistory *h = mzcoord_history_copy(mzcoord_history_lookup(relid, false));
	MzcHistoryRead r;
	int64		ts;
	int64		diff;

	*pos = *neg = false;
	mzcoord_history_open_read(&r, h, "ts", snapshot);
	mzcoord_history_at_scan(&r, t);
	while (!(*pos && *neg) && mzcoord_history_next(&r, NULL, &ts, &diff))
	{
		if (diff > 0)
			*pos = true;
		else if (diff < 0)
			*neg = true;
	}
	mzcoord_history_close_read(&r);
}

/*
 * A receiver of the delta query's rows: sign is the sign of the current
 * run; rows are added to set (SPJ: the rows; grouped: the groups by key,
 * each with its IncGroup as extra, allocated in cxt).
 */
typedef struct DeltaReceiver
{
	DestReceiver pub;
	MzcIncremental *inc;
	int			sign;
	MzcRowSet  *set;
	MemoryContext cxt;
	Datum	   *keyvals;
	bool	   *keynulls;
	int64		lo;				/* interval steps: its start */
	MzcRowSet  *base;			/* groups kept whole: key -> ExtState */
} DeltaReceiver;

static void
delta_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
delta_shutdown(DestReceiver *self)
{
}

static void
delta_destroy(DestReceiver *self)
{
}

static bool
spj_receive(TupleTableSlot *slot, DestReceiver *self)
{
	DeltaReceiver *r = (DeltaReceiver *) self;

	mzcoord_count_result_row(r->set, slot, r->sign);
	return true;
}

/* a + sign * b for bigint sums, with PostgreSQL's overflow error. */
static int64
add_int64(int64 a, int sign, int64 b)
{
	int64		result;

	if (sign > 0 ? pg_add_s64_overflow(a, b, &result) :
		pg_sub_s64_overflow(a, b, &result))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("bigint out of range")));
	return result;
}

/* Add sign times one row of the delta query to its group's change. */
static void
accumulate(const MzcIncremental *inc, IncGroup *g, Datum *v, bool *n,
		   int sign)
{
	g->cnt = add_int64(g->cnt, sign, DatumGetInt64(v[inc->star_extra]));
	for (int c = 0; c < inc->desc->natts; c++)
	{
		const IncColumn *col = &inc->cols[c];

		switch (col->kind)
		{
			case INC_COUNT:
				g->nn[c] = add_int64(g->nn[c], sign, DatumGetInt64(v[c]));
				break;
			case INC_SUM_INT8:
			case INC_SUM_NUMERIC:
				g->nn[c] = add_int64(g->nn[c], sign,
									 DatumGetInt64(v[col->nn_extra]));
				if (n[c])
					break;
				if (col->kind == INC_SUM_INT8)
					g->isum[c] = add_int64(g->isum[c], sign, DatumGetInt64(v[c]));
				else
					g->nsum[c] = DirectFunctionCall2(sign > 0 ? numeric_add : numeric_sub,
													 g->nsum[c], v[c]);
				break;
			default:
				break;
		}
	}
}

/* A group with no change yet, for a view of natts columns. */
static IncGroup *
new_group(int natts)
{
	IncGroup   *g = palloc0(sizeof(IncGroup));

	g->nn = palloc0(sizeof(int64) * natts);
	g->isum = palloc0(sizeof(int64) * natts);
	g->nsum = palloc0(sizeof(Datum) * natts);
	for (int c = 0; c < natts; c++)
		g->nsum[c] = NumericGetDatum(int64_to_numeric(0));
	return g;
}

static bool
grouped_receive(TupleTableSlot *slot, DestReceiver *self)
{
	DeltaReceiver *r = (DeltaReceiver *) self;
	MzcIncremental *inc = r->inc;
	MemoryContext old;
	MzcRowEntry *e;

	slot_getallattrs(slot);
	for (int k = 0; k < inc->nkeys; k++)
	{
		r->keyvals[k] = slot->tts_values[inc->keycols[k]];
		r->keynulls[k] = slot->tts_isnull[inc->keycols[k]];
	}
	e = mzcoord_rowset_add(r->set, r->keyvals, r->keynulls,
						   mzcoord_row_hash(inc->keydesc, r->keyvals,
											r->keynulls), 0);
	old = MemoryContextSwitchTo(r->cxt);
	if (e->extra == NULL)
		e->extra = new_group(inc->desc->natts);
	accumulate(inc, (IncGroup *) e->extra, slot->tts_values,
			   slot->tts_isnull, r->sign);
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * Run the delta query for each relation entry with updates at t: entry i
 * reads its insertions, then its retractions, at t; the entries before it
 * their contents at t, those after it at t - 1.  r receives the rows, told
 * the sign of each run.
 */
static void
run_terms(MzcIncremental *inc, int64 t, DeltaReceiver *r)
{
	List	   *rtable = inc->query->rtable;
	int			nrtes = list_length(rtable);
	MzcEntryRead *reads = palloc0(sizeof(MzcEntryRead) * nrtes);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	int			direct = 0;
	int			via = 0;

	r->pub.rStartup = delta_startup;
	r->pub.rShutdown = delta_shutdown;
	r->pub.rDestroy = delta_destroy;
	r->pub.mydest = DestNone;
	r->inc = inc;
	for (int i = 0; i < nrtes; i++)
	{
		RangeTblEntry *rte = rt_fetch(i + 1, rtable);
		bool		has[2];

		if (rte->rtekind != RTE_RELATION)
			continue;
		updates_at(rte->relid, t, snapshot, &has[0], &has[1]);
		for (int s = 0; s < 2; s++)
		{
			if (!has[s])
				continue;
			for (int j = 0; j < nrtes; j++)
			{
				reads[j].at = j <= i ? t : t - 1;
				reads[j].delta = 0;
			}
			r->sign = reads[i].delta = (s == 0) ? 1 : -1;
			mzcoord_evaluate_reads(inc->query, inc->text, reads, &r->pub,
								   &direct, &via);
		}
	}
	UnregisterSnapshot(snapshot);
	pfree(reads);
}

/* ----------------------------------------------------------------
 * Applying the change
 * ----------------------------------------------------------------
 */

/* Write row values (of desc) into the history at t with diff. */
static void
write_row(MzcHistoryWriter *w, TupleTableSlot *slot, Datum *values,
		  bool *isnull, int64 t, int64 diff)
{
	int			natts = slot->tts_tupleDescriptor->natts;

	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * natts);
	memcpy(slot->tts_isnull, isnull, sizeof(bool) * natts);
	ExecStoreVirtualTuple(slot);
	mzcoord_history_writer_add(w, slot, t, diff);
}

/* An SPJ view: the consolidated delta rows are the change. */
static bool
spj_step(MzcIncremental *inc, const MzcHistory *h, MzcRowSet *prev,
		 int64 t, int64 *changed)
{
	DeltaReceiver r = {0};
	MzcHistoryWriter w;
	TupleTableSlot *slot = MakeSingleTupleTableSlot(inc->desc, &TTSOpsVirtual);

	r.pub.receiveSlot = spj_receive;
	r.set = mzcoord_rowset_create(inc->desc, CurrentMemoryContext);
	run_terms(inc, t, &r);

	mzcoord_history_writer_begin(&w, h, r.set->nentries > 1000);
	for (MzcRowEntry *e = r.set->first; e != NULL; e = e->link)
	{
		if (e->count == 0)
			continue;
		write_row(&w, slot, e->values, e->isnull, t, e->count);
		*changed += Abs(e->count);
		if (prev != NULL &&
			mzcoord_rowset_add(prev, e->values, e->isnull, e->hash,
							   e->count)->count < 0)
			elog(ERROR, "incremental refresh retracts a row the view does not have");
	}
	mzcoord_history_writer_end(&w);
	ExecDropSingleTupleTableSlot(slot);
	mzcoord_rowset_destroy(r.set);
	return true;
}

/*
 * The index entry of the group of row values (created with no row), in
 * the index of the contents by group key.
 */
static MzcRowEntry *
index_entry(MzcIncremental *inc, Datum *values, bool *isnull)
{
	Datum	   *kv = palloc(sizeof(Datum) * Max(inc->nkeys, 1));
	bool	   *kn = palloc(sizeof(bool) * Max(inc->nkeys, 1));
	MzcRowEntry *e;

	for (int k = 0; k < inc->nkeys; k++)
	{
		kv[k] = values[inc->keycols[k]];
		kn[k] = isnull[inc->keycols[k]];
	}
	e = mzcoord_rowset_add(inc->index, kv, kn,
						   mzcoord_row_hash(inc->keydesc, kv, kn), 0);
	pfree(kv);
	pfree(kn);
	return e;
}

/*
 * Index the contents by group key; false if two rows have one key (then
 * the contents are not what the query gives, and recomputing repairs it).
 */
static bool
build_index(MzcIncremental *inc, MzcRowSet *prev)
{
	if (inc->index != NULL)
		return true;
	inc->index = mzcoord_rowset_create(inc->keydesc, inc->cxt);
	for (MzcRowEntry *p = prev->first; p != NULL; p = p->link)
	{
		MzcRowEntry *e;

		if (p->count == 0)
			continue;
		e = index_entry(inc, p->values, p->isnull);
		if (e->extra != NULL || p->count != 1)
		{
			mzcoord_incremental_forget(inc);
			return false;
		}
		e->extra = p;
	}
	return true;
}

/* The new row of one group: old (NULL: none) plus its change. */
typedef struct IncChange
{
	MzcRowEntry *slot;			/* the group's index entry */
	MzcRowEntry *old;			/* its row in the contents, or NULL */
	bool		exists;			/* it has a row afterwards */
	Datum	   *values;
	bool	   *isnull;
} IncChange;

/* count(x) of column c's argument before: -1 if unknown (only > 0). */
static int64
old_nonnull(const MzcIncremental *inc, const MzcRowEntry *old, int c)
{
	const IncColumn *col = &inc->cols[c];

	if (old == NULL)
		return 0;
	if (col->nn_col >= 0)
		return DatumGetInt64(old->values[col->nn_col]);
	return old->isnull[c] ? 0 : -1;
}

/* Set column c of the new row of group g; false if it is undecided. */
static bool
combine_column(const MzcIncremental *inc, const IncGroup *g,
			   const MzcRowEntry *old, int c, Datum *v, bool *n)
{
	const IncColumn *col = &inc->cols[c];
	Datum		ov = old != NULL ? old->values[c] : (Datum) 0;
	bool		on = old == NULL || old->isnull[c];
	int64		nn;

	if (col->kind == INC_KEY)
		return true;			/* set by the caller, NULL or not */
	n[c] = false;
	switch (col->kind)
	{
		case INC_COUNT_STAR:
			v[c] = Int64GetDatum(add_int64(on ? 0 : DatumGetInt64(ov), 1, g->cnt));
			return true;
		case INC_COUNT:
			v[c] = Int64GetDatum(add_int64(on ? 0 : DatumGetInt64(ov), 1, g->nn[c]));
			return true;
		case INC_MIN:
		case INC_MAX:
			n[c] = true;		/* set by the caller, from the group's values */
			return true;
		default:
			break;
	}
	/* A sum: NULL exactly when no non-null argument is left. */
	nn = old_nonnull(inc, old, c);
	if (nn < 0 && g->nn[c] < 0)
		return false;
	if (nn >= 0 && nn + g->nn[c] <= 0)
	{
		if (nn + g->nn[c] < 0)
			elog(ERROR, "incremental refresh counts fewer than no arguments");
		n[c] = true;
		v[c] = (Datum) 0;
	}
	else if (col->kind == INC_SUM_INT8)
		v[c] = Int64GetDatum(add_int64(on ? 0 : DatumGetInt64(ov), 1, g->isum[c]));
	else
		v[c] = DirectFunctionCall2(numeric_add,
								   on ? NumericGetDatum(int64_to_numeric(0)) : ov,
								   g->nsum[c]);
	return true;
}

/*
 * The new row of the group of delta entry e, into ch; false if this step
 * cannot decide it (an old count that the view does not show).
 */
static bool
combine_group(MzcIncremental *inc, Datum *keyvals, bool *keynulls,
			  IncGroup *g, IncChange *ch)
{
	int			natts = inc->desc->natts;
	MzcRowEntry *old;

	ch->slot = mzcoord_rowset_add(inc->index, keyvals, keynulls,
								  mzcoord_row_hash(inc->keydesc, keyvals,
												   keynulls), 0);
	old = ch->old = (MzcRowEntry *) ch->slot->extra;
	if (inc->nkeys == 0)
		ch->exists = true;		/* one row, even of no rows */
	else if (old == NULL)
	{
		if (g->cnt < 0)
			elog(ERROR, "incremental refresh retracts rows of a group the view does not have");
		ch->exists = g->cnt > 0;
	}
	else if (inc->star_col >= 0)
	{
		int64		cnt = DatumGetInt64(old->values[inc->star_col]) + g->cnt;

		if (cnt < 0)
			elog(ERROR, "incremental refresh counts fewer than no rows in a group");
		ch->exists = cnt > 0;
	}
	else if (g->cnt >= 0)
		ch->exists = true;
	else
		return false;
	if (!ch->exists)
		return true;

	ch->values = palloc(sizeof(Datum) * natts);
	ch->isnull = palloc(sizeof(bool) * natts);
	for (int k = 0; k < inc->nkeys; k++)
	{
		ch->values[inc->keycols[k]] = keyvals[k];
		ch->isnull[inc->keycols[k]] = keynulls[k];
	}
	for (int c = 0; c < natts; c++)
		if (!combine_column(inc, g, old, c, ch->values, ch->isnull))
			return false;
	return true;
}

/* Write the changed groups into the history at t and the contents. */
static void
write_groups(MzcIncremental *inc, MzcHistoryWriter *w, TupleTableSlot *slot,
			 MzcRowSet *prev, IncChange *changes, int n, int64 t,
			 int64 *changed)
{
	for (int k = 0; k < n; k++)
	{
		IncChange  *ch = &changes[k];
		MzcRowEntry *old = ch->old;

		if (old != NULL && ch->exists &&
			mzcoord_row_equal(inc->desc, old->values, old->isnull,
							  ch->values, ch->isnull))
			continue;
		if (old != NULL)
		{
			write_row(w, slot, old->values, old->isnull, t, -old->count);
			*changed += old->count;
			old->count = 0;
		}
		ch->slot->extra = NULL;
		if (ch->exists)
		{
			write_row(w, slot, ch->values, ch->isnull, t, 1);
			*changed += 1;
			ch->slot->extra =
				mzcoord_rowset_add(prev, ch->values, ch->isnull,
								   mzcoord_row_hash(inc->desc, ch->values,
													ch->isnull), 1);
		}
	}
}

/* A grouped view: each changed group's old row plus its change. */
static bool
grouped_step(MzcIncremental *inc, const MzcHistory *h, MzcRowSet *prev,
			 int64 t, int64 *changed)
{
	DeltaReceiver r = {0};
	IncChange  *changes;
	int			n = 0;

	if (prev == NULL)
		elog(ERROR, "incremental refresh of a grouped view without its contents");
	if (!build_index(inc, prev))
		return false;
	r.pub.receiveSlot = grouped_receive;
	r.cxt = CurrentMemoryContext;
	r.set = mzcoord_rowset_create(inc->keydesc, CurrentMemoryContext);
	r.keyvals = palloc(sizeof(Datum) * Max(inc->nkeys, 1));
	r.keynulls = palloc(sizeof(bool) * Max(inc->nkeys, 1));
	run_terms(inc, t, &r);

	/* Decide every group before writing any. */
	changes = palloc0(sizeof(IncChange) * Max(r.set->nentries, 1));
	for (MzcRowEntry *e = r.set->first; e != NULL; e = e->link)
	{
		if (!combine_group(inc, e->values, e->isnull, (IncGroup *) e->extra,
						   &changes[n++]))
		{
			mzcoord_rowset_destroy(r.set);
			return false;
		}
	}
	{
		MzcHistoryWriter w;
		TupleTableSlot *slot = MakeSingleTupleTableSlot(inc->desc,
														&TTSOpsVirtual);

		mzcoord_history_writer_begin(&w, h, n > 1000);
		write_groups(inc, &w, slot, prev, changes, n, t, changed);
		mzcoord_history_writer_end(&w);
		ExecDropSingleTupleTableSlot(slot);
	}
	mzcoord_rowset_destroy(r.set);
	return true;
}

/*
 * Refresh the view at time t from its inputs' updates at t: write its
 * change at t into its history h, and apply it to prev (the contents at
 * the time before; may be NULL unless mzcoord_incremental_needs_contents).
 * *changed is increased by the updates written.  Returns false, having
 * written nothing, when this time must be recomputed.  The caller holds
 * the inputs at t - 1 and runs as the view's owner; t - 1 is the time the
 * contents are at (no input changed in between).
 */
bool
mzcoord_incremental_step(MzcIncremental *inc, const MzcHistory *h,
						 MzcRowSet *prev, int64 t, int64 *changed)
{
	MemoryContext stepcxt = AllocSetContextCreate(CurrentMemoryContext,
												  "mzcoord incremental step",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(stepcxt);
	bool		done;

	/* A group kept whole needs its state: only intervals have it. */
	if (inc->state)
		done = false;
	else if (inc->grouped)
		done = grouped_step(inc, h, prev, t, changed);
	else
		done = spj_step(inc, h, prev, t, changed);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(stepcxt);
	return done;
}

/* ----------------------------------------------------------------
 * Many times at once
 *
 * A step of a continual view covers an interval [lo, hi) of times.  Rather
 * than running the delta query once per time (each run a plan, and reads
 * of whole relations as of t - 1), each relation entry i with updates in
 * the interval contributes one run of the query row by row (aggregates
 * taken apart, below) over
 *	- entry i: its updates with lo <= ts < hi, each with its time ts_i and
 *	  diff (mzcoord._history_rows), and
 *	- every other entry j: its contents at lo - 1 (at time lo - 1, each
 *	  row with its count as diff; its own relation when it has no update
 *	  since, "The other side of a join"), then its updates in [lo, hi), each with
 *	  its time and diff, restricted to ts_j <= ts_i for j < i (its
 *	  contents at ts_i) and ts_j < ts_i for j > i (at ts_i - 1),
 * each result row carrying ts_i and the product of the diffs, its
 * multiplicity.  Since the query is linear in each entry, the rows of time
 * t summed over the runs are the per-time delta of the top of this file,
 * for every t of the interval at once.  A grouped query runs without its
 * aggregation, each row giving its group key and the aggregates'
 * arguments; the changes of each (time, group) are summed here in C, then
 * applied time after time, in order, to the view's contents.
 * ----------------------------------------------------------------
 */

/* The row-by-row query of a grouped view: keys and aggregate arguments. */
static void
prepare_rows_query(MzcIncremental *inc)
{
	Query	   *q = copyObject(inc->query);
	int			natts = inc->desc->natts;
	int			ntime = inc->grouped ? inc->nkeys : natts;
	List	   *tl = NIL;

	if (inc->grouped)
	{
		for (int c = 0; c < natts; c++)
		{
			TargetEntry *tle = list_nth_node(TargetEntry, q->targetList, c);
			IncColumn  *col = &inc->cols[c];
			Expr	   *e;

			if (col->kind == INC_KEY)
				e = tle->expr;
			else if (col->kind == INC_COUNT_STAR)
				e = (Expr *) makeNullConst(INT8OID, -1, InvalidOid);
			else
				e = copyObject(col->arg);
			tl = lappend(tl, makeTargetEntry(e, c + 1, pstrdup("mzc_col"), false));
		}
		q->targetList = tl;
		q->hasAggs = false;
		q->groupClause = NIL;
		q->distinctClause = NIL;
		q->havingQual = NULL;
	}
	inc->rows_query = q;
	inc->tsdesc = CreateTemplateTupleDesc(ntime + 1);
	for (int k = 0; k < ntime; k++)
		TupleDescCopyEntry(inc->tsdesc, k + 1, inc->desc,
						   (inc->grouped ? inc->keycols[k] : k) + 1);
	TupleDescInitEntry(inc->tsdesc, ntime + 1, "mzc_ts", INT8OID, -1, 0);
}

/* Whether relid has an update with lo <= ts < hi in snapshot. */
static bool
has_updates_between(Oid relid, int64 lo, int64 hi, Snapshot snapshot)
{
	MzcHistory *h = mzcoord_history_copy(mzcoord_history_lookup(relid, false));
	MzcHistoryRead r;
	int64		ts;
	int64		diff;
	bool		found;

	mzcoord_history_open_read(&r, h, "ts", snapshot);
	mzcoord_history_time_scan(&r, lo, hi);
	found = mzcoord_history_next(&r, NULL, &ts, &diff);
	mzcoord_history_close_read(&r);
	return found;
}

/* a * b, with PostgreSQL's overflow error. */
static int64
mul_int64(int64 a, int64 b)
{
	int64		result;

	if (pg_mul_s64_overflow(a, b, &result))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("bigint out of range")));
	return result;
}

/* Add one row of the row-by-row query, mult times, to its group's change. */
static void
accumulate_row(const MzcIncremental *inc, IncGroup *g, Datum *v, bool *n,
			   int64 mult)
{
	g->cnt = add_int64(g->cnt, 1, mult);
	for (int c = 0; c < inc->desc->natts; c++)
	{
		const IncColumn *col = &inc->cols[c];
		int64		x;

		if (col->kind == INC_KEY || col->kind == INC_COUNT_STAR || n[c])
			continue;
		g->nn[c] = add_int64(g->nn[c], 1, mult);
		if (col->kind == INC_SUM_INT8)
		{
			x = col->argtype == INT2OID ? DatumGetInt16(v[c]) :
				DatumGetInt32(v[c]);
			g->isum[c] = add_int64(g->isum[c], 1, mul_int64(x, mult));
		}
		else if (col->kind == INC_SUM_NUMERIC || col->kind == INC_AVG)
		{
			Datum		term;

			x = col->argtype == INT2OID ? DatumGetInt16(v[c]) :
				col->argtype == INT4OID ? DatumGetInt32(v[c]) :
				DatumGetInt64(v[c]);
			term = NumericGetDatum(int64_to_numeric(x));

			if (mult != 1)
				term = DirectFunctionCall2(numeric_mul, term,
										   NumericGetDatum(int64_to_numeric(mult)));
			g->nsum[c] = DirectFunctionCall2(numeric_add, g->nsum[c], term);
		}
	}
}

/*
 * Groups kept whole
 *
 * A min or max of a group losing its extreme, an avg (the view shows
 * sum / count, from which neither can be had back exactly), a group of a
 * DISTINCT or of GROUP BY without aggregates losing rows (the view does
 * not show how many it has left) and a group under HAVING (which may be
 * missing from the view while it has rows) are not decided by the view's
 * old row plus the change.  A view with any of them keeps, per group,
 * what every column needs: its rows, its non-null arguments and their
 * sums, and per min or max column the values of its argument with their
 * counts, sorted by the type's comparison.  They are built from the
 * contents before the interval (the query's rows over them, read with
 * base) and changed time after time; each changed group's row is then
 * made from them alone, and HAVING, evaluated over that row, decides
 * whether it shows.  The contents before the interval are read once per
 * interval, as the base of the one run of the query's only relation
 * entry: with several entries each entry's run would count them again,
 * so a join is not kept whole.  A single time (a step that is not an
 * interval) has no such state and is recomputed.
 *
 * The values are those the aggregates compute: an avg of integers is
 * numeric_div of their numeric sum by their count in PostgreSQL too
 * (int8_avg, numeric_poly_avg), and a numeric sum of integers has scale 0
 * however it is added up.
 */
typedef struct ExtSet
{
	int			n;
	int			cap;
	Datum	   *vals;
	int64	   *cnts;
} ExtSet;

typedef struct ExtState
{
	IncGroup	tot;			/* rows (cnt), non-null arguments, sums */
	ExtSet	   *sets;			/* per column of the view */
} ExtState;

/* Add mult to the count of value v in set s (column col). */
static void
ext_set_add(const IncColumn *col, ExtSet *s, Datum v, int64 mult)
{
	int			lo = 0;
	int			hi = s->n;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;
		int32		cmp = DatumGetInt32(FunctionCall2Coll((FmgrInfo *) &col->cmp,
														  col->coll,
														  s->vals[mid], v));

		if (cmp == 0)
		{
			s->cnts[mid] = add_int64(s->cnts[mid], 1, mult);
			if (s->cnts[mid] < 0)
				elog(ERROR, "incremental refresh retracts a value a group does not have");
			if (s->cnts[mid] == 0)
			{
				memmove(&s->vals[mid], &s->vals[mid + 1], sizeof(Datum) * (s->n - mid - 1));
				memmove(&s->cnts[mid], &s->cnts[mid + 1], sizeof(int64) * (s->n - mid - 1));
				s->n--;
			}
			return;
		}
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (mult < 0)
		elog(ERROR, "incremental refresh retracts a value a group does not have");
	if (s->n == s->cap)
	{
		s->cap = Max(8, s->cap * 2);
		s->vals = s->vals == NULL ? palloc(sizeof(Datum) * s->cap) :
			repalloc(s->vals, sizeof(Datum) * s->cap);
		s->cnts = s->cnts == NULL ? palloc(sizeof(int64) * s->cap) :
			repalloc(s->cnts, sizeof(int64) * s->cap);
	}
	memmove(&s->vals[lo + 1], &s->vals[lo], sizeof(Datum) * (s->n - lo));
	memmove(&s->cnts[lo + 1], &s->cnts[lo], sizeof(int64) * (s->n - lo));
	s->vals[lo] = datumCopy(v, col->byval, col->typlen);
	s->cnts[lo] = mult;
	s->n++;
}

/* The state of the group with key values kv (created empty). */
static ExtState *
ext_state(MzcIncremental *inc, MzcRowSet *base, Datum *kv, bool *kn)
{
	MzcRowEntry *e = mzcoord_rowset_add(base, kv, kn,
										mzcoord_row_hash(inc->keydesc, kv, kn),
										0);

	if (e->extra == NULL)
	{
		ExtState   *st = palloc0(sizeof(ExtState));
		IncGroup   *g = new_group(inc->desc->natts);

		st->tot = *g;
		st->sets = palloc0(sizeof(ExtSet) * inc->desc->natts);
		e->extra = st;
	}
	return (ExtState *) e->extra;
}

/* A row of the contents before the interval, mult times, into its group. */
static void
ext_add_row(DeltaReceiver *r, Datum *v, bool *n, int64 mult)
{
	MzcIncremental *inc = r->inc;
	MemoryContext old = MemoryContextSwitchTo(r->cxt);
	ExtState   *st;

	for (int k = 0; k < inc->nkeys; k++)
	{
		r->keyvals[k] = v[inc->keycols[k]];
		r->keynulls[k] = n[inc->keycols[k]];
	}
	st = ext_state(inc, r->base, r->keyvals, r->keynulls);
	accumulate_row(inc, &st->tot, v, n, mult);
	for (int c = 0; c < inc->desc->natts; c++)
	{
		const IncColumn *col = &inc->cols[c];

		if ((col->kind == INC_MIN || col->kind == INC_MAX) && !n[c])
			ext_set_add(col, &st->sets[c], v[c], mult);
	}
	MemoryContextSwitchTo(old);
}

/* Note the min and max arguments of a changed row, for its time. */
static void
ext_note_change(const MzcIncremental *inc, IncGroup *g, Datum *v, bool *n,
				int64 mult)
{
	for (int c = 0; c < inc->desc->natts; c++)
	{
		const IncColumn *col = &inc->cols[c];
		ExtChange  *x;

		if ((col->kind != INC_MIN && col->kind != INC_MAX) || n[c])
			continue;
		x = palloc(sizeof(ExtChange));
		x->col = c;
		x->val = datumCopy(v[c], col->byval, col->typlen);
		x->mult = mult;
		g->ext = lappend(g->ext, x);
	}
}

/* Apply a group's change at one time to its state, and return the state. */
static ExtState *
ext_apply(MzcIncremental *inc, MzcRowSet *base, Datum *kv, bool *kn,
		  IncGroup *g)
{
	ExtState   *st = ext_state(inc, base, kv, kn);
	IncGroup   *tot = &st->tot;
	ListCell   *lc;

	tot->cnt = add_int64(tot->cnt, 1, g->cnt);
	if (tot->cnt < 0)
		elog(ERROR, "incremental refresh counts fewer than no rows in a group");
	for (int c = 0; c < inc->desc->natts; c++)
	{
		tot->nn[c] = add_int64(tot->nn[c], 1, g->nn[c]);
		tot->isum[c] = add_int64(tot->isum[c], 1, g->isum[c]);
		if (inc->cols[c].kind == INC_SUM_NUMERIC || inc->cols[c].kind == INC_AVG)
			tot->nsum[c] = DirectFunctionCall2(numeric_add, tot->nsum[c],
											   g->nsum[c]);
	}

	/*
	 * Insertions first: transactions that share a commit time may insert a
	 * row and retract it in either order in the history, but the time as
	 * a whole never retracts what is not there.
	 */
	for (int pass = 0; pass < 2; pass++)
	{
		foreach(lc, g->ext)
		{
			ExtChange  *x = lfirst(lc);

			if ((pass == 0) == (x->mult > 0))
				ext_set_add(&inc->cols[x->col], &st->sets[x->col], x->val,
							x->mult);
		}
	}
	return st;
}

/* Set the aggregate columns of a group's new row from its state. */
static void
ext_fill(const MzcIncremental *inc, const ExtState *st, Datum *v, bool *n)
{
	const IncGroup *tot = &st->tot;

	for (int c = 0; c < inc->desc->natts; c++)
	{
		const ExtSet *s = &st->sets[c];
		IncKind		kind = inc->cols[c].kind;

		n[c] = false;
		switch (kind)
		{
			case INC_KEY:
				break;
			case INC_COUNT_STAR:
				v[c] = Int64GetDatum(tot->cnt);
				break;
			case INC_COUNT:
				v[c] = Int64GetDatum(tot->nn[c]);
				break;
			case INC_MIN:
			case INC_MAX:
				n[c] = (s->n == 0);
				v[c] = s->n == 0 ? (Datum) 0 :
					s->vals[kind == INC_MIN ? 0 : s->n - 1];
				break;
			default:
				/* sums and avg: NULL without a non-null argument */
				n[c] = (tot->nn[c] == 0);
				if (n[c])
					v[c] = (Datum) 0;
				else if (kind == INC_SUM_INT8)
					v[c] = Int64GetDatum(tot->isum[c]);
				else if (kind == INC_SUM_NUMERIC)
					v[c] = tot->nsum[c];
				else
					v[c] = DirectFunctionCall2(numeric_div, tot->nsum[c],
											   NumericGetDatum(int64_to_numeric(tot->nn[c])));
				break;
		}
	}
}

/*
 * The new row of a group kept whole (state st, key values kv) into ch:
 * made from its state alone, and shown while it has rows (always, without
 * GROUP BY) and HAVING holds on it.  econtext and slot evaluate HAVING.
 */
static void
state_group(MzcIncremental *inc, Datum *kv, bool *kn, const ExtState *st,
			IncChange *ch, ExprContext *econtext, TupleTableSlot *slot)
{
	int			natts = inc->desc->natts;

	ch->slot = mzcoord_rowset_add(inc->index, kv, kn,
								  mzcoord_row_hash(inc->keydesc, kv, kn), 0);
	ch->old = (MzcRowEntry *) ch->slot->extra;
	ch->exists = inc->nkeys == 0 || st->tot.cnt > 0;
	if (!ch->exists)
		return;
	ch->values = palloc(sizeof(Datum) * natts);
	ch->isnull = palloc(sizeof(bool) * natts);
	ext_fill(inc, st, ch->values, ch->isnull);
	for (int k = 0; k < inc->nkeys; k++)
	{
		ch->values[inc->keycols[k]] = kv[k];
		ch->isnull[inc->keycols[k]] = kn[k];
	}
	if (inc->having == NULL)
		return;
	ExecClearTuple(slot);
	memcpy(slot->tts_values, ch->values, sizeof(Datum) * natts);
	memcpy(slot->tts_isnull, ch->isnull, sizeof(bool) * natts);
	ExecStoreVirtualTuple(slot);
	econtext->ecxt_innertuple = slot;
	ch->exists = ExecQual(inc->having, econtext);
	ResetExprContext(econtext);
}

/* A row of the row-by-row query: into its (row, time) or (group, time). */
static bool
rows_receive(TupleTableSlot *slot, DestReceiver *self)
{
	DeltaReceiver *r = (DeltaReceiver *) self;
	MzcIncremental *inc = r->inc;
	int			natts = inc->desc->natts;
	int64		mult;
	MzcRowEntry *e;
	MemoryContext old;

	slot_getallattrs(slot);
	mult = DatumGetInt64(slot->tts_values[natts + 1]);
	if (mult == 0)
		return true;
	if (!inc->grouped)
	{
		(void) mzcoord_rowset_add(r->set, slot->tts_values, slot->tts_isnull,
								  mzcoord_row_hash(inc->tsdesc, slot->tts_values,
												   slot->tts_isnull), mult);
		return true;
	}
	for (int k = 0; k < inc->nkeys; k++)
	{
		r->keyvals[k] = slot->tts_values[inc->keycols[k]];
		r->keynulls[k] = slot->tts_isnull[inc->keycols[k]];
	}
	if (inc->state && DatumGetInt64(slot->tts_values[natts]) < r->lo)
	{
		/* The contents before the interval, not a change. */
		ext_add_row(r, slot->tts_values, slot->tts_isnull, mult);
		return true;
	}
	r->keyvals[inc->nkeys] = slot->tts_values[natts];
	r->keynulls[inc->nkeys] = false;
	e = mzcoord_rowset_add(r->set, r->keyvals, r->keynulls,
						   mzcoord_row_hash(inc->tsdesc, r->keyvals,
											r->keynulls), 0);
	old = MemoryContextSwitchTo(r->cxt);
	if (e->extra == NULL)
		e->extra = new_group(natts);
	accumulate_row(inc, (IncGroup *) e->extra, slot->tts_values,
				   slot->tts_isnull, mult);
	if (inc->state)
		ext_note_change(inc, (IncGroup *) e->extra, slot->tts_values,
						slot->tts_isnull, mult);
	MemoryContextSwitchTo(old);
	return true;
}

/* The ts column (number natts + 1) of relation entry rti, or its diff. */
static Var *
history_column(int rti, int natts, bool diff)
{
	return makeVar(rti, natts + (diff ? 2 : 1), INT8OID, -1, InvalidOid, 0);
}

/*
 * The run of entry i over [lo, hi) (see above): the row-by-row query with
 * every relation entry read through mzcoord._history_rows, the temporal
 * conditions added, and the time and multiplicity as two more columns.
 * Two exceptions, see "The other side of a join" below: an entry with
 * direct[j] is read as the relation itself (at lo - 1, each row once),
 * and entry i, given its updates as delta_rows, reads them as constants.
 */
static Query *
interval_term(MzcIncremental *inc, int i, int64 lo, int64 hi,
			  const bool *direct, List *delta_rows)
{
	Query	   *q = copyObject(inc->rows_query);
	int			nrtes = list_length(q->rtable);
	int		   *natts = palloc0(sizeof(int) * nrtes);
	bool	   *timed = palloc0(sizeof(bool) * nrtes);
	Node	   *quals = q->jointree->quals;
	Expr	   *mult = NULL;
	int			ncols = list_length(q->targetList);

	for (int j = 0; j < nrtes; j++)
	{
		RangeTblEntry *rte = rt_fetch(j + 1, q->rtable);

		if (rte->rtekind != RTE_RELATION || (j != i && direct[j]))
			continue;
		timed[j] = true;
		if (j == i && delta_rows != NIL)
		{
			natts[j] = mzcoord_read_values(rte, delta_rows);
		}
		else
			natts[j] = mzcoord_read_history_rows(rte, lo, hi,
												 j != i || inc->state);
	}
	for (int j = 0; j < nrtes; j++)
	{
		Expr	   *diff;

		if (!timed[j])
			continue;
		diff = (Expr *) history_column(j + 1, natts[j], true);
		mult = mult == NULL ? diff :
			(Expr *) makeFuncExpr(F_INT8MUL, INT8OID, list_make2(mult, diff),
								  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
		if (j == i)
			continue;
		quals = make_and_qual(quals, (Node *)
							  makeFuncExpr(j < i ? F_INT8LE : F_INT8LT, BOOLOID,
										   list_make2(history_column(j + 1, natts[j], false),
													  history_column(i + 1, natts[i], false)),
										   InvalidOid, InvalidOid,
										   COERCE_EXPLICIT_CALL));
	}
	q->jointree->quals = quals;
	q->targetList = lappend(q->targetList,
							makeTargetEntry((Expr *) history_column(i + 1, natts[i], false),
											ncols + 1, pstrdup("mzc_ts"), false));
	q->targetList = lappend(q->targetList,
							makeTargetEntry(mult, ncols + 2, pstrdup("mzc_mult"),
											false));
	return q;
}

/* ----------------------------------------------------------------
 * The other side of a join
 *
 * Entry i's run pairs each of its updates with the other entries'
 * contents.  Read through _history_rows, an entry's contents at lo - 1
 * are its whole history summed up, a function scan the planner can only
 * hash or sort: every interval of a join of a written table with a large,
 * rarely written one read all of the large one's history.  But an entry
 * whose history has no update after lo - 1 in the snapshot the run uses
 * shows exactly its contents at lo - 1 in its own relation (the relation
 * and its history are written in one transaction; evaluate.c reads
 * relations directly for the same reason), and has no update in the
 * interval: it is read as the relation, with its indexes, its time lo - 1
 * below every ts_i and its diff 1, so it needs neither its temporal
 * condition nor a factor of the multiplicity.
 *
 * The planner then decides between looking the updates' join keys up in
 * an index and scanning the relation once.  A function scan is estimated
 * at a fixed 1,000 rows, which makes the scan look cheaper than it is;
 * so when another entry is read directly, entry i's updates are given to
 * the query as constant rows (a VALUES list, whose size the planner
 * knows), in pieces (the run is linear in each update of entry i, which
 * carries its own time and diff, so the pieces' runs add up to its run
 * over the interval).  With its default costs the planner prefers one
 * scan of a relation to index probes once a piece has more than about a
 * three hundredth of the relation's rows (a five hundredth, when the scan
 * can be parallel), so a piece has at most a thousandth of the rows of
 * the smallest relation read directly: its keys are looked up.  A
 * relation too small for pieces of MZC_DELTA_MIN_PIECE updates is cheap
 * to scan: then pieces are of MZC_DELTA_MAX_PIECE
 * updates, which also bounds the memory of a piece's constants (one time
 * may have a million updates).
 * ----------------------------------------------------------------
 */
#define MZC_DELTA_ROWS_PER_UPDATE 1000
#define MZC_DELTA_MIN_PIECE 32
#define MZC_DELTA_MAX_PIECE 5000

/* The most updates of a piece joined with relation relid (see above). */
static int
piece_limit(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	double		rows = rel->rd_rel->reltuples;
	int			limit;

	/* Never analysed: about as many rows as fit its pages. */
	if (rows < 0)
		rows = (double) RelationGetNumberOfBlocks(rel) * 50;
	table_close(rel, AccessShareLock);
	if (rows / MZC_DELTA_ROWS_PER_UPDATE >= MZC_DELTA_MAX_PIECE)
		return MZC_DELTA_MAX_PIECE;
	limit = (int) (rows / MZC_DELTA_ROWS_PER_UPDATE);
	return limit < MZC_DELTA_MIN_PIECE ? MZC_DELTA_MAX_PIECE : limit;
}

/* One update of a relation of descriptor desc as a row of Consts. */
static List *
delta_constants(TupleDesc desc, TupleTableSlot *row, int64 ts, int64 diff)
{
	List	   *consts = NIL;

	slot_getallattrs(row);
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);
		Datum		v = row->tts_values[a];

		if (att->attisdropped)
		{
			consts = lappend(consts, makeNullConst(INT4OID, -1, InvalidOid));
			continue;
		}
		if (!row->tts_isnull[a])
			v = att->attlen == -1 ?
				PointerGetDatum(PG_DETOAST_DATUM_COPY(v)) :
				datumCopy(v, att->attbyval, att->attlen);
		consts = lappend(consts,
						 makeConst(att->atttypid, att->atttypmod,
								   att->attcollation, att->attlen, v,
								   row->tts_isnull[a], att->attbyval));
	}
	consts = lappend(consts, makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
									   Int64GetDatum(ts), false,
									   FLOAT8PASSBYVAL));
	return lappend(consts, makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
									 Int64GetDatum(diff), false,
									 FLOAT8PASSBYVAL));
}

/*
 * Entry i's runs over [lo, hi) with its updates (in snapshot) as constant
 * rows, limit of them per run (see above), each run in a memory context of
 * its own.
 */
static void
run_delta_pieces(MzcIncremental *inc, int i, int64 lo, int64 hi,
				 const bool *direct, int limit, Snapshot snapshot,
				 DeltaReceiver *r)
{
	Oid			relid = rt_fetch(i + 1, inc->rows_query->rtable)->relid;
	MzcHistory *h = mzcoord_history_copy(mzcoord_history_lookup(relid, false));
	Relation	rel = table_open(relid, NoLock);
	TupleDesc	desc = RelationGetDescr(rel);
	MzcHistoryRead hr;
	TupleTableSlot *row = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	MemoryContext piececxt = AllocSetContextCreate(CurrentMemoryContext,
												   "mzcoord delta piece",
												   ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;
	List	   *rows = NIL;
	bool		more = true;
	int64		ts;
	int64		diff;

	mzcoord_history_open_read(&hr, h, "ts", snapshot);
	mzcoord_history_time_scan(&hr, lo, hi);
	while (more)
	{
		more = mzcoord_history_next(&hr, row, &ts, &diff);
		if (more)
		{
			old = MemoryContextSwitchTo(piececxt);
			rows = lappend(rows, delta_constants(desc, row, ts, diff));
			MemoryContextSwitchTo(old);
			if (list_length(rows) < limit)
				continue;
		}
		if (rows == NIL)
			continue;
		old = MemoryContextSwitchTo(piececxt);
		mzcoord_evaluate_query(interval_term(inc, i, lo, hi, direct, rows),
							   inc->text, snapshot, &r->pub);
		MemoryContextSwitchTo(old);
		MemoryContextReset(piececxt);
		rows = NIL;
	}
	mzcoord_history_close_read(&hr);
	MemoryContextDelete(piececxt);
	ExecDropSingleTupleTableSlot(row);
	table_close(rel, NoLock);
}

/*
 * Run every entry's term over [lo, hi) into r, all with one snapshot: the
 * one that decides which entries are read directly (above).
 */
static void
run_interval_terms(MzcIncremental *inc, int64 lo, int64 hi, DeltaReceiver *r)
{
	List	   *rtable = inc->rows_query->rtable;
	int			nrtes = list_length(rtable);
	bool	   *direct = palloc0(sizeof(bool) * nrtes);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());

	r->pub.receiveSlot = rows_receive;
	r->pub.rStartup = delta_startup;
	r->pub.rShutdown = delta_shutdown;
	r->pub.rDestroy = delta_destroy;
	r->pub.mydest = DestNone;
	r->inc = inc;
	for (int j = 0; j < nrtes && !inc->state; j++)
	{
		RangeTblEntry *rte = rt_fetch(j + 1, rtable);

		direct[j] = rte->rtekind == RTE_RELATION &&
			mzcoord_shows_contents_at(rte->relid, lo - 1, snapshot);
	}
	for (int i = 0; i < nrtes; i++)
	{
		RangeTblEntry *rte = rt_fetch(i + 1, rtable);
		bool		pieces = false;
		int			limit = MZC_DELTA_MAX_PIECE;

		if (rte->rtekind != RTE_RELATION ||
			!has_updates_between(rte->relid, lo, hi, snapshot))
			continue;
		for (int j = 0; j < nrtes; j++)
		{
			if (j == i || !direct[j])
				continue;
			pieces = true;
			limit = Min(limit, piece_limit(rt_fetch(j + 1, rtable)->relid));
		}
		if (!pieces)
		{
			mzcoord_evaluate_query(interval_term(inc, i, lo, hi, direct, NIL),
								   inc->text, snapshot, &r->pub);
			continue;
		}
		run_delta_pieces(inc, i, lo, hi, direct, limit, snapshot, r);
	}
	UnregisterSnapshot(snapshot);
}

/* The entries of set ordered by their time (column ts of the row). */
static int	sort_ts_column;

static int
compare_entry_ts(const void *a, const void *b)
{
	int64		ta = DatumGetInt64((*(MzcRowEntry *const *) a)->values[sort_ts_column]);
	int64		tb = DatumGetInt64((*(MzcRowEntry *const *) b)->values[sort_ts_column]);

	return ta < tb ? -1 : (ta > tb ? 1 : 0);
}

static MzcRowEntry **
entries_by_time(MzcRowSet *set, int tscol, int *n)
{
	MzcRowEntry **arr = palloc(sizeof(MzcRowEntry *) * Max(set->nentries, 1));

	*n = 0;
	for (MzcRowEntry *e = set->first; e != NULL; e = e->link)
		arr[(*n)++] = e;
	sort_ts_column = tscol;
	qsort(arr, *n, sizeof(MzcRowEntry *), compare_entry_ts);
	return arr;
}

/* An SPJ view over [lo, hi): each (row, time)'s summed multiplicity. */
static int64
spj_interval(MzcIncremental *inc, MzcHistoryWriter *w, TupleTableSlot *slot,
			 MzcRowSet *set, int64 hi, int64 *changed, int *ntimes)
{
	int			natts = inc->desc->natts;
	int			n;
	MzcRowEntry **arr = entries_by_time(set, natts, &n);
	int64		last = -1;

	for (int k = 0; k < n; k++)
	{
		int64		ts = DatumGetInt64(arr[k]->values[natts]);

		if (arr[k]->count == 0)
			continue;
		if (ts != last)
			(*ntimes)++;
		last = ts;
		write_row(w, slot, arr[k]->values, arr[k]->isnull, ts, arr[k]->count);
		*changed += Abs(arr[k]->count);
	}
	return hi;
}

/*
 * A grouped view over [lo, hi): the changed groups of each time, applied
 * in time order to prev.  Returns hi, or the first time this cannot
 * decide (see combine_group), the earlier times written.
 */
static int64
grouped_interval(MzcIncremental *inc, MzcHistoryWriter *w,
				 TupleTableSlot *slot, MzcRowSet *prev, MzcRowSet *set,
				 MzcRowSet *base, int64 lo, int64 hi, int64 *changed,
				 int *ntimes)
{
	int			n;
	MzcRowEntry **arr = entries_by_time(set, inc->nkeys, &n);
	IncChange  *changes = palloc0(sizeof(IncChange) * Max(n, 1));
	int			k = 0;
	int64		end = hi;
	ExprContext *econtext;
	TupleTableSlot *hslot;

	if (!build_index(inc, prev))
		return lo;

	/*
	 * The slot pins the view's descriptor in the current resource owner: it
	 * is dropped on every way out, or the commit warns of a leak.
	 */
	econtext = inc->having ? CreateStandaloneExprContext() : NULL;
	hslot = MakeSingleTupleTableSlot(inc->desc, &TTSOpsVirtual);
	while (k < n && end == hi)
	{
		int64		ts = DatumGetInt64(arr[k]->values[inc->nkeys]);
		int			first = k;

		for (; k < n && DatumGetInt64(arr[k]->values[inc->nkeys]) == ts; k++)
		{
			IncChange  *ch = &changes[k - first];

			if (inc->state)
			{
				ExtState   *st = ext_apply(inc, base, arr[k]->values,
										   arr[k]->isnull,
										   (IncGroup *) arr[k]->extra);

				state_group(inc, arr[k]->values, arr[k]->isnull, st, ch,
							econtext, hslot);
			}
			else if (!combine_group(inc, arr[k]->values, arr[k]->isnull,
									(IncGroup *) arr[k]->extra, ch))
			{
				end = ts;		/* recomputed from here by the caller */
				break;
			}
		}
		if (end != hi)
			break;
		write_groups(inc, w, slot, prev, changes, k - first, ts, changed);
		(*ntimes)++;
	}
	if (econtext != NULL)
		FreeExprContext(econtext, true);
	ExecDropSingleTupleTableSlot(hslot);
	return end;
}

/*
 * Refresh the view at every time of [lo, hi) from its inputs' updates
 * there (see above), writing its changes into its history h and, for a
 * grouped view, applying them to prev (its contents at lo - 1).  Returns
 * the first time not refreshed: hi, or a time this path cannot decide,
 * which the caller recomputes (the times before it are written).
 * *changed is increased by the updates written, *ntimes by the times at
 * which the view changed.  The caller holds the inputs at lo - 1, runs as
 * the view's owner, and has made sure no input view is in error in
 * [lo - 1, hi).
 */
int64
mzcoord_incremental_interval(MzcIncremental *inc, const MzcHistory *h,
							 MzcRowSet *prev, int64 lo, int64 hi,
							 int64 *changed, int *ntimes)
{
	MemoryContext stepcxt = AllocSetContextCreate(CurrentMemoryContext,
												  "mzcoord incremental interval",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(stepcxt);
	DeltaReceiver r = {0};
	MzcHistoryWriter w;
	TupleTableSlot *slot = MakeSingleTupleTableSlot(inc->desc, &TTSOpsVirtual);
	int64		end;

	if (inc->grouped && prev == NULL)
		elog(ERROR, "incremental refresh of a grouped view without its contents");
	r.cxt = stepcxt;
	r.set = mzcoord_rowset_create(inc->tsdesc, stepcxt);
	r.keyvals = palloc(sizeof(Datum) * (inc->nkeys + 1));
	r.keynulls = palloc(sizeof(bool) * (inc->nkeys + 1));
	r.lo = lo;
	if (inc->state)
		r.base = mzcoord_rowset_create(inc->keydesc, stepcxt);
	run_interval_terms(inc, lo, hi, &r);

	mzcoord_history_writer_begin(&w, h, r.set->nentries > 1000);
	if (inc->grouped)
		end = grouped_interval(inc, &w, slot, prev, r.set, r.base, lo, hi,
							   changed, ntimes);
	else
		end = spj_interval(inc, &w, slot, r.set, hi, changed, ntimes);
	mzcoord_history_writer_end(&w);
	ExecDropSingleTupleTableSlot(slot);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(stepcxt);
	return end;
}
