/*-------------------------------------------------------------------------
 *
 * refresh.c
 *	  Refreshing a materialized view: its contents at the times its inputs
 *	  completed, recorded in its history, shown in its relation, and its
 *	  upper advanced, all in the caller's transaction.
 *
 * A materialized view is a collection with a fed history, like a source
 * whose appends the coordinator makes.  A refresh of a view whose upper is
 * U, over inputs whose least upper is M (every time below M is complete in
 * every input):
 *
 *	1. (its item row is locked by the caller, maintain.c) locks the view's
 *	   relation in SHARE ROW EXCLUSIVE mode if it is free (one refresh at a
 *	   time; a drop waits for it) and reads U again with a fresh snapshot;
 *	2. chooses the times to evaluate:
 *	   - continual (no schedule): the view must equal its query at every
 *	     time in [U, M).  Its contents change only at a time where an input
 *	     changed.  A view the incremental path covers (incremental.c), past
 *	     its first time and not in error, refreshes every time of [U, M)
 *	     at once, in intervals bounded by update volume (refresh_intervals;
 *	     the new upper is M, or where the step's budget ran out).
 *	     Otherwise the times are the distinct update times of the inputs'
 *	     histories in [U, M) (and the bounds of an input view's error
 *	     ranges there, where its contents change without an update; and
 *	     U itself on the first refresh, when the view is still empty), at
 *	     most MZC_REFRESH_MAX_TIMES of them per transaction; the new upper
 *	     is the next change time when there were more, except for a
 *	     recomputed view, which then evaluates only M - 1 and leaves the
 *	     times before it unreadable (begin_skipped), its new upper M;
 *	   - scheduled: the one time U, the refresh time its upper waits at;
 *	     the new upper is the next refresh time, or the empty frontier
 *	     after the last one;
 *	3. evaluates the query as of each time (evaluate.c; the inputs are
 *	   read as of that time, held by the transaction), and writes the
 *	   difference from the previous contents into the view's history at
 *	   that time; or, for a continual view of a query that allows it
 *	   (filter, projection, inner join, GROUP BY with count and sum; over
 *	   intervals also min, max, avg, DISTINCT and HAVING), and
 *	   unless mzcoord.incremental is off, computes that difference from
 *	   the inputs' updates at that time (incremental.c).  Each time runs
 *	   in a subtransaction: a data error there (a division by zero, a
 *	   failed cast) is part of the view's contents, not a failure of the
 *	   refresh: the view is in error from that time (mzcoord.view_errors,
 *	   viewerrors.c), keeps its last good contents and goes out of error
 *	   at the next time the query has a value;
 *	4. advances the upper (source.c, mzcoord_fed_advance): the relation
 *	   gets the updates, mzcoord.collections the upper (whose trigger moves
 *	   the view's read requirements on its inputs to upper - 1), and the
 *	   controller the new upper at commit (then the view's hold on its
 *	   inputs follows its since, and they compact again).
 *
 * A crash before commit leaves nothing; after it, the next refresh starts
 * from the durable upper, so no time is refreshed twice and none is
 * skipped.
 *
 * IDENTIFICATION
 *	  src/compute/refresh.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "changes.h"
#include "controller.h"
#include "evaluate.h"
#include "failpoint.h"
#include "history.h"
#include "ids.h"
#include "incremental.h"
#include "read.h"
#include "rec_items.h"
#include "rec_view_errors.h"
#include "refresh.h"
#include "rowimage.h"
#include "schedule.h"
#include "source.h"
#include "support.h"
#include "viewerrors.h"

/*
 * At most this many times are evaluated one by one in a refresh
 * transaction (recomputed, or where the incremental path cannot cover an
 * interval); a recomputed continual view with more changed times evaluates
 * only the last one (see evaluate_times).
 */
#define MZC_REFRESH_MAX_TIMES 32

/*
 * An incremental step covers the times of at most about this many updates
 * of each input (whole times): the next step continues from there.  A
 * join covers them in intervals of at most MZC_REFRESH_JOIN_UPDATES each:
 * each interval reads the other inputs' contents at its start, and pairs
 * each update with the other inputs' updates before it in the interval.
 */
#define MZC_REFRESH_MAX_UPDATES 200000
#define MZC_REFRESH_JOIN_UPDATES 2000

/*
 * A step starts no further interval after this long, so that one busy
 * view leaves time to the others (the next step goes on from there).
 */
#define MZC_REFRESH_STEP_MS 500

static bool inputs_in_error(const MzcRecView *v, int64 from, int64 upto);

/* Read the view's catalog row with a fresh snapshot; false if it is gone. */
static bool
read_view_row(int64 gid, MzcRecView *v)
{
	MemoryContext cxt = CurrentMemoryContext;
	bool		found;

	mzcoord_spi_connect();
	found = mzcoord_rec_items_read_view(gid, cxt, v);
	SPI_finish();
	return found;
}

/*
 * Lock every input's relation (ACCESS SHARE, as reading it would) if that
 * is possible at once; false if one is locked by someone else's DDL: the
 * view is tried again in the next pass.  An input gone from the controller
 * is left to inputs_upper, which reports it.
 */
static bool
lock_inputs(const MzcRecView *v)
{
	for (int i = 0; i < v->ninputs; i++)
	{
		MzcCollectionInfo info;

		if (mzcoord_ctl_lookup_gid(v->inputs[i], &info) &&
			!ConditionalLockRelationOid(info.relid, AccessShareLock))
			return false;
	}
	return true;
}

/*
 * The least upper of the inputs in the controller (every time below it is
 * complete in each); -1 for the empty frontier (all sealed), and for a
 * view without inputs, whose contents never change.
 */
static int64
inputs_upper(const MzcRecView *v)
{
	int64		least = -1;

	for (int i = 0; i < v->ninputs; i++)
	{
		MzcCollectionInfo info;

		if (!mzcoord_ctl_lookup_gid(v->inputs[i], &info))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("input " MZC_GID_FMT " of the materialized view is gone",
							v->inputs[i])));
		if (info.upper.empty)
			continue;
		if (least < 0 || info.upper.ts < least)
			least = info.upper.ts;
	}
	return least;
}

/*
 * Insert ts into times[] (sorted, distinct, *n of them, room for max),
 * dropping the last time if it is full.  False if ts falls past the max-th
 * time, where it is of no use (nor is any later one).
 */
static bool
add_change_time(int64 *times, int *n, int max, int64 ts)
{
	int			pos = 0;

	while (pos < *n && times[pos] < ts)
		pos++;
	if (pos < *n && times[pos] == ts)
		return true;
	if (pos >= max)
		return false;
	if (*n == max)
		(*n)--;
	memmove(&times[pos + 1], &times[pos], sizeof(int64) * (*n - pos));
	times[pos] = ts;
	(*n)++;
	return true;
}

/*
 * Add to times[] (sorted, distinct, *n of them, room for max) the update
 * times of history h in [from, upto) (upto -1: no end) that snapshot sees;
 * stops once there are max.  One descent of the ts index per time found
 * (the scan restarts past each time), not a visit of every update: a time
 * at which a million rows changed costs what a time of one row costs.
 */
static void
collect_change_times(const MzcHistory *h, Snapshot snapshot, int64 from,
					 int64 upto, int64 *times, int *n, int max)
{
	MzcHistoryRead r;
	int64		ts;
	int64		diff;

	mzcoord_history_open_read(&r, h, "ts", snapshot);
	for (int found = 0; found < max; found++)
	{
		mzcoord_history_time_scan(&r, from, upto);
		if (!mzcoord_history_next(&r, NULL, &ts, &diff) ||
			!add_change_time(times, n, max, ts) || ts == PG_INT64_MAX)
			break;
		from = ts + 1;
	}
	mzcoord_history_close_read(&r);
}

/*
 * Add to times[] (as collect_change_times does) the boundaries of the
 * error ranges of input gid in [from, upto): where an input view goes into
 * error, or out of it, its contents change without an update in its
 * history.
 */
static void
collect_error_times(int64 gid, Snapshot snapshot, int64 from, int64 upto,
					int64 *times, int *n, int max)
{
	int64	   *bounds;
	int			nbounds = mzcoord_view_error_bounds(gid, snapshot, from, upto,
													&bounds);

	for (int b = 0; b < nbounds; b++)
		(void) add_change_time(times, n, max, bounds[b]);
	if (bounds != NULL)
		pfree(bounds);
}

/*
 * The times a continual view is evaluated at, from its upper u to the
 * inputs' upper m (-1: none): into times[] (room for MZC_REFRESH_MAX_TIMES
 * + 1), returning how many to evaluate; *new_upper receives where the view
 * is complete to afterwards (-1: the empty frontier).
 */
static int
continual_times(const MzcRecView *v, int64 from, int64 m, bool first,
				int64 *times, int64 *new_upper)
{
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	int			max = MZC_REFRESH_MAX_TIMES + 1;
	int			n = 0;

	if (first)
		times[n++] = from;
	for (int i = 0; i < v->ninputs; i++)
	{
		MzcCollectionInfo info;
		MzcHistory *h;

		if (!mzcoord_ctl_lookup_gid(v->inputs[i], &info))
			continue;
		h = mzcoord_history_lookup(info.relid, true);
		if (h == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("input " MZC_GID_FMT " of the materialized view has no history",
							v->inputs[i])));
		collect_change_times(h, snapshot, from, m, times, &n, max);
		collect_error_times(v->inputs[i], snapshot, from, m, times, &n, max);
	}
	UnregisterSnapshot(snapshot);

	/* More than the most: the first of the rest bounds this refresh. */
	if (n == max)
	{
		*new_upper = times[max - 1];
		return max - 1;
	}
	*new_upper = m;
	return n;
}

/* The view's current contents: its relation (it shows them at upper - 1). */
static MzcRowSet *
relation_contents(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	MzcRowSet  *set = mzcoord_rowset_create(desc, CurrentMemoryContext);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	TableScanDesc scan = table_beginscan(rel, snapshot, 0, NULL);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		CHECK_FOR_INTERRUPTS();
		slot_getallattrs(slot);
		(void) mzcoord_rowset_add(set, slot->tts_values, slot->tts_isnull,
								  mzcoord_row_hash(desc, slot->tts_values,
												   slot->tts_isnull), 1);
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	return set;
}

/*
 * Write next - prev (row counts) into the view's history at time ts.
 * Marks the entries of prev (extra) it matched.  Returns the number of
 * rows changed.
 */
static int64
write_difference(const MzcHistory *h, TupleDesc desc, MzcRowSet *prev,
				 MzcRowSet *next, int64 ts)
{
	MzcHistoryWriter w;
	TupleTableSlot *slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	int64		changed = 0;
	static char matched;

	mzcoord_history_writer_begin(&w, h, next->nentries > 1000);
	for (MzcRowEntry *e = next->first; e != NULL; e = e->link)
	{
		MzcRowEntry *p = mzcoord_rowset_find(prev, e->values, e->isnull, e->hash);
		int64		diff = e->count - (p != NULL ? p->count : 0);

		if (p != NULL)
			p->extra = &matched;
		if (diff == 0)
			continue;
		ExecClearTuple(slot);
		memcpy(slot->tts_values, e->values, sizeof(Datum) * desc->natts);
		memcpy(slot->tts_isnull, e->isnull, sizeof(bool) * desc->natts);
		ExecStoreVirtualTuple(slot);
		mzcoord_history_writer_add(&w, slot, ts, diff);
		changed += Abs(diff);
	}
	for (MzcRowEntry *p = prev->first; p != NULL; p = p->link)
	{
		if (p->extra == &matched || p->count == 0)
			continue;
		ExecClearTuple(slot);
		memcpy(slot->tts_values, p->values, sizeof(Datum) * desc->natts);
		memcpy(slot->tts_isnull, p->isnull, sizeof(bool) * desc->natts);
		ExecStoreVirtualTuple(slot);
		mzcoord_history_writer_add(&w, slot, ts, -p->count);
		changed += p->count;
	}
	mzcoord_history_writer_end(&w);
	ExecDropSingleTupleTableSlot(slot);
	return changed;
}

/*
 * Error ranges that end at or below the view's since can no longer be
 * read: they go, in a refresh that evaluates anything (an idle one writes
 * nothing).
 */
static void
forget_old_errors(int64 gid)
{
	MzcCollectionInfo info;

	if (mzcoord_ctl_lookup_gid(gid, &info) && !info.since.empty)
		mzcoord_rec_view_errors_forget(gid, info.since.ts);
}

/*
 * Run step(arg) as role, in a subtransaction.  Returns false, its writes
 * undone, if it raised a data error, with the error in *edata if edata is
 * not NULL (else freed: the caller then evaluates the times one by one,
 * which puts the error at its time); any other error is thrown on.
 */
static bool
run_as_owner(Oid role, bool (*step) (void *arg), void *arg,
			 ErrorData **edata)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		Oid			save_user;
		int			save_sec;
		int			save_nest;

		save_nest = mzcoord_become_owner(role, &save_user, &save_sec);
		ok = step(arg);
		mzcoord_restore_user(save_user, save_sec, save_nest);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *e;

		/* The abort restores the user and undoes the owner's search_path. */
		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (!mzcoord_is_data_error(e->sqlerrcode))
			ReThrowError(e);
		if (edata != NULL)
			*edata = e;
		else
			FreeErrorData(e);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/* The arguments of one evaluation (evaluate_step). */
typedef struct EvalStep
{
	const MzcRecView *v;
	int64		ts;
	MzcRowSet  *next;
	MzcRefreshResult *res;
} EvalStep;

static bool
evaluate_step(void *arg)
{
	EvalStep   *a = arg;
	int			direct;
	int			via;

	(void) mzcoord_evaluate_as_of(a->v->definition, a->ts, a->next, 1,
								  &direct, &via);
	a->res->direct_scans += direct;
	a->res->history_scans += via;
	return true;
}

/*
 * Evaluate the view at time ts into next, as its owner, in a
 * subtransaction: false, with *edata the error, if the query raised a data
 * error (viewerrors.c), which leaves the view in error at ts rather than
 * failing the step.  Any other error is thrown on: the step fails and is
 * retried (maintain.c).
 */
static bool
evaluate_one(const MzcRecView *v, Relation rel, int64 ts, MzcRowSet *next,
			 MzcRefreshResult *res, ErrorData **edata)
{
	EvalStep	a = {v, ts, next, res};

	return run_as_owner(rel->rd_rel->relowner, evaluate_step, &a, edata);
}

/*
 * The view's query prepared for the incremental path, as its owner; NULL
 * if the query does not allow it.
 */
static MzcIncremental *
prepare_incremental(const MzcRecView *v, Relation rel)
{
	MzcIncremental *inc;
	Oid			save_user;
	int			save_sec;
	int			save_nest;

	save_nest = mzcoord_become_owner(rel->rd_rel->relowner, &save_user,
									 &save_sec);
	inc = mzcoord_incremental_prepare(v->definition, RelationGetDescr(rel));
	mzcoord_restore_user(save_user, save_sec, save_nest);
	return inc;
}

/* The arguments of one incremental step (incremental_one, interval_one). */
typedef struct IncStep
{
	MzcIncremental *inc;
	const MzcHistory *h;
	MzcRowSet  *prev;
	int64		lo;				/* the time (incremental_one), or the interval */
	int64		hi;
	int64		end;			/* out: the first time not refreshed */
	int64		changed;		/* out */
	int			ntimes;			/* out */
} IncStep;

static bool
one_time_step(void *arg)
{
	IncStep    *a = arg;

	return mzcoord_incremental_step(a->inc, a->h, a->prev, a->lo, &a->changed);
}

/*
 * The view's change at ts from its inputs' updates, as its owner, in a
 * subtransaction.  False if the incremental path cannot decide this time,
 * or raised a data error: then the time is recomputed (and the error, if
 * the query has it too, recorded there), its writes undone.  Any other
 * error is thrown on.
 */
static bool
incremental_one(MzcIncremental *inc, Relation rel, const MzcHistory *h,
				MzcRowSet *prev, int64 ts, MzcRefreshResult *res)
{
	IncStep		a = {inc, h, prev, ts, 0, 0, 0, 0};

	if (!run_as_owner(rel->rd_rel->relowner, one_time_step, &a, NULL))
		return false;
	res->rows_changed += a.changed;
	res->incremental++;
	return true;
}

/* A row of the view's history contents, into a row set (arg). */
static void
add_content_row(void *arg, TupleTableSlot *row, int64 count)
{
	MzcRowSet  *set = arg;

	(void) mzcoord_rowset_add(set, row->tts_values, row->tts_isnull,
							  mzcoord_row_hash(set->desc, row->tts_values,
											   row->tts_isnull),
							  count);
}

/*
 * Whether an input view is in error at ts - 1 or ts: its contents change
 * there without updates in its history (it goes into or out of error), so
 * the incremental path, which reads the updates, cannot see the change:
 * the time is recomputed.
 */
static bool
input_view_in_error(const MzcRecView *v, int64 ts)
{
	return inputs_in_error(v, ts > 0 ? ts - 1 : ts, ts);
}

/*
 * The view's contents just before ts, from its history as this
 * transaction has written it so far (the differences at earlier times of
 * this refresh included).
 */
static MzcRowSet *
contents_before(const MzcHistory *h, TupleDesc desc, int64 ts)
{
	MzcRowSet  *set = mzcoord_rowset_create(desc, CurrentMemoryContext);
	Snapshot	snapshot;
	int64		negative;

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	mzcoord_history_contents(h, desc, snapshot, ts - 1, add_content_row, set,
							 &negative);
	UnregisterSnapshot(snapshot);
	if (negative != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the history of materialized view " MZC_GID_FMT " retracts rows it does not have",
						h->gid)));
	return set;
}

/*
 * The times of [from, last) are not evaluated (see evaluate_times): they
 * become unreadable, an error range of their own (MZC_ERRCODE_NOT_EVALUATED)
 * that the evaluation at last closes.  An open range of a data error ends
 * at from: what the query gives there is not known.  Returns whether it
 * opened the range (nothing is skipped when from == last).
 */
static bool
begin_skipped(int64 gid, int64 from, int64 last, bool in_error)
{
	char	   *msg;

	if (from >= last)
		return false;
	if (in_error)
		mzcoord_rec_view_errors_end(gid, from);
	msg = psprintf("the materialized view was not evaluated at times " INT64_FORMAT " to " INT64_FORMAT ": more of its inputs' times changed in one refresh step than it recomputes, so it skipped to the last one",
				   from, last - 1);
	mzcoord_rec_view_errors_begin(gid, from, MZC_ERRCODE_NOT_EVALUATED, msg);
	pfree(msg);
	return true;
}

/*
 * Evaluate the view at each of times[0..n-1], writing each difference into
 * its history.  A continual view whose query allows it is refreshed from
 * its inputs' updates at each time (incremental.c), except at its first
 * time, which has no time before it, and while it is in error, when its
 * last good contents are not its contents; a time the incremental path
 * cannot decide, or where it raises an error, is recomputed.  A time at
 * which the query raises a data error gets no difference: the view is in
 * error from that time (an open range of mzcoord.view_errors), its history
 * keeps the last good contents, and the next time with a value closes the
 * range and gets the difference from them.
 */
static void
evaluate_times(const MzcRecView *v, Relation rel, const MzcHistory *h,
			   MzcIncremental *inc, const int64 *times, int n, bool fresh,
			   int64 skip_from, MzcRefreshResult *res)
{
	TupleDesc	desc = RelationGetDescr(rel);
	MzcRowSet  *prev = NULL;
	bool		first = (v->upper == v->as_of && times[0] == v->upper);
	MzcViewError open_error;
	bool		in_error;
	bool		skipping = false;

	/*
	 * Nothing to evaluate (no input changed): the query is not even
	 * analysed, which would lock the inputs at every tick.
	 */
	res->times += n;
	if (n == 0)
		return;
	forget_old_errors(h->gid);
	in_error = mzcoord_view_error_open(h->gid, GetLatestSnapshot(),
									   &open_error);
	if (inc == NULL || first || in_error ||
		mzcoord_incremental_needs_contents(inc))
		prev = fresh ? relation_contents(rel) : contents_before(h, desc, times[0]);
	for (int i = 0; i < n; i++)
	{
		MzcRowSet  *next;
		ErrorData  *edata = NULL;

		if (skip_from >= 0 && i == n - 1)
		{
			skipping = begin_skipped(h->gid, skip_from, times[i], in_error);
			in_error = in_error || skipping;
			res->skipped_upto = times[i];
		}

		if (inc != NULL && !in_error && !(first && i == 0) &&
			!input_view_in_error(v, times[i]))
		{
			if (incremental_one(inc, rel, h, prev, times[i], res))
				continue;
			/* Recomputed from the contents at the time before it. */
			if (prev != NULL)
				mzcoord_rowset_destroy(prev);
			prev = contents_before(h, desc, times[i]);
			mzcoord_incremental_forget(inc);
		}
		if (prev == NULL)
			prev = contents_before(h, desc, times[i]);
		next = mzcoord_rowset_create(desc, CurrentMemoryContext);
		if (!evaluate_one(v, rel, times[i], next, res, &edata))
		{
			/* A time not evaluated is not the data error of this one. */
			if (skipping)
				mzcoord_rec_view_errors_end(h->gid, times[i]);
			if (!in_error || skipping)
				mzcoord_rec_view_errors_begin(h->gid, times[i], edata->sqlerrcode,
											  edata->message ? edata->message :
											  "unknown error");
			in_error = true;
			skipping = false;
			FreeErrorData(edata);
			mzcoord_rowset_destroy(next);
			continue;
		}
		if (in_error)
			mzcoord_rec_view_errors_end(h->gid, times[i]);
		in_error = false;
		skipping = false;
		res->rows_changed += write_difference(h, desc, prev, next, times[i]);
		mzcoord_rowset_destroy(prev);
		prev = next;
		if (inc != NULL)
			mzcoord_incremental_forget(inc);
	}
	if (prev != NULL)
		mzcoord_rowset_destroy(prev);
}

/*
 * Whether an input view of v has an error range over some time of [from,
 * upto]: its contents change there without updates in its history, which
 * the incremental path reads.
 */
static bool
inputs_in_error(const MzcRecView *v, int64 from, int64 upto)
{
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	bool		found = false;

	for (int i = 0; i < v->ninputs && !found; i++)
	{
		MzcCollectionInfo info;
		MzcViewError err;

		if (mzcoord_ctl_lookup_gid(v->inputs[i], &info) &&
			info.kind == MZC_KIND_MATERIALIZED_VIEW)
			found = mzcoord_view_error_in(v->inputs[i], snapshot, from, upto,
										  &err);
	}
	UnregisterSnapshot(snapshot);
	return found;
}

/*
 * The end of an interval of an incremental step from `from`: m, or
 * earlier where an input has more than max_updates updates since from
 * (whole times; always after from).
 */
static int64
interval_end(const MzcRecView *v, int64 from, int64 m, int64 max_updates)
{
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	int64		end = m;

	for (int i = 0; i < v->ninputs; i++)
	{
		MzcCollectionInfo info;
		MzcHistory *h;

		if (!mzcoord_ctl_lookup_gid(v->inputs[i], &info) ||
			(h = mzcoord_history_lookup(info.relid, true)) == NULL)
			continue;
		h = mzcoord_history_copy(h);
		end = Min(end, mzcoord_history_interval_end(h, snapshot, from, end,
													max_updates));
	}
	UnregisterSnapshot(snapshot);
	return end;
}

static bool
interval_step(void *arg)
{
	IncStep    *a = arg;

	a->end = mzcoord_incremental_interval(a->inc, a->h, a->prev, a->lo, a->hi,
										  &a->changed, &a->ntimes);
	return true;
}

/*
 * The incremental step over [lo, hi) (incremental.c), as the view's owner,
 * in a subtransaction: false, its writes undone, if it raised a data
 * error (the times are then evaluated one by one, which puts the error at
 * its time).  Otherwise *end is the first time it did not refresh.
 */
static bool
interval_one(MzcIncremental *inc, Relation rel, const MzcHistory *h,
			 MzcRowSet *prev, int64 lo, int64 hi, int64 *end,
			 MzcRefreshResult *res)
{
	IncStep		a = {inc, h, prev, lo, hi, lo, 0, 0};

	if (!run_as_owner(rel->rd_rel->relowner, interval_step, &a, NULL))
		return false;
	*end = a.end;
	res->rows_changed += a.changed;
	res->times += a.ntimes;
	res->incremental += a.ntimes;
	res->intervals++;
	return true;
}

/*
 * The incremental intervals of one step of a continual view from its upper
 * towards m, as many as MZC_REFRESH_MAX_UPDATES and MZC_REFRESH_STEP_MS
 * allow: returns where they ended (m, or where the budget ran out).  *undecided is set when they
 * stopped at a time the incremental path cannot decide or at a data error:
 * the caller evaluates the times from there one by one.
 */
static int64
refresh_intervals(const MzcRecView *v, MzcIncremental *inc, Relation rel,
				  const MzcHistory *h, int64 m, MzcRefreshResult *res,
				  bool *undecided)
{
	int64		chunk = mzcoord_incremental_relations(inc) > 1 ?
		MZC_REFRESH_JOIN_UPDATES : MZC_REFRESH_MAX_UPDATES;
	int			chunks = (int) (MZC_REFRESH_MAX_UPDATES / chunk);
	MzcRowSet  *prev = NULL;
	int64		from = v->upper;
	TimestampTz start = GetCurrentTimestamp();

	forget_old_errors(h->gid);
	if (mzcoord_incremental_needs_contents(inc))
		prev = relation_contents(rel);
	for (int c = 0; c < chunks && from < m; c++)
	{
		int64		hi;
		int64		end;

		if (c > 0 && TimestampDifferenceExceeds(start, GetCurrentTimestamp(),
												MZC_REFRESH_STEP_MS))
			break;
		hi = interval_end(v, from, m, chunk);

		/* A data error undoes the interval, not the earlier ones. */
		if (!interval_one(inc, rel, h, prev, from, hi, &end, res))
		{
			*undecided = true;
			break;
		}
		CommandCounterIncrement();
		from = end;
		if (end < hi)
		{
			*undecided = true;
			break;
		}
	}
	if (prev != NULL)
		mzcoord_rowset_destroy(prev);
	mzcoord_incremental_forget(inc);
	return from;
}

/*
 * Refresh a continual view from its upper to m, the inputs' least upper
 * (-1: none), or as far as one step goes; returns the new upper.
 *
 * A view whose query allows it (incremental.c), past its first time and
 * not in error, over inputs not in error, covers the interval of every
 * changed time at once, up to m or to a bound on the updates read (the
 * next step continues).  Otherwise, and from a time the incremental step
 * cannot decide, times are evaluated one by one, at most
 * MZC_REFRESH_MAX_TIMES per step; a recomputed view with more changed
 * times than that evaluates only the last time before m and leaves the
 * others unreadable (begin_skipped), so it never falls further behind
 * than one step.
 */
static int64
refresh_continual(const MzcRecView *v, Relation rel, const MzcHistory *h,
				  int64 m, MzcRefreshResult *res)
{
	MzcIncremental *inc = prepare_incremental(v, rel);
	bool		first = (v->upper == v->as_of);
	int64		from = v->upper;
	bool		fresh = true;
	int64		times[MZC_REFRESH_MAX_TIMES + 1];
	int64		new_upper;
	int			n;
	MzcViewError err;
	bool		undecided = false;

	if (inc != NULL && !first && m >= 0 &&
		!mzcoord_view_error_open(h->gid, GetLatestSnapshot(), &err) &&
		!inputs_in_error(v, from - 1, m - 1))
	{
		from = refresh_intervals(v, inc, rel, h, m, res, &undecided);
		if (from >= m)
			return m;
		/* Out of budget: the next step goes on from here. */
		if (!undecided && from > v->upper)
			return from;
		fresh = (from == v->upper);
	}

	n = continual_times(v, from, m, first, times, &new_upper);
	if (inc == NULL && n == MZC_REFRESH_MAX_TIMES && m >= 0 &&
		new_upper < m)
	{
		/* More than it recomputes in a step: the first (if any) and m - 1. */
		n = first ? 1 : 0;
		times[n++] = m - 1;
		evaluate_times(v, rel, h, inc, times, n, fresh,
					   first ? from + 1 : from, res);
		return m;
	}
	evaluate_times(v, rel, h, inc, times, n, fresh, -1, res);
	return new_upper;
}

/*
 * Refresh materialized view gid if it is due (see the top of the file).
 * Returns false, doing nothing, if it is gone or not due.
 */
bool
mzcoord_refresh_view(int64 gid, MzcRefreshResult *res)
{
	Oid			relid = mzcoord_ctl_relation_of(gid, MZC_KIND_MATERIALIZED_VIEW);
	Relation	rel;
	MzcRecView	v;
	MzcHistory *h;
	int64		m;
	int64		times[1];
	int64		new_upper;

	memset(res, 0, sizeof(*res));
	res->skipped_upto = -1;
	if (!OidIsValid(relid))
		return false;
	/*
	 * Never wait for the lock: the coordinator refreshes every view and
	 * runs the tick, and a user's transaction holding a conflicting lock on
	 * this relation (LOCK TABLE, VACUUM, CREATE INDEX, an uncommitted
	 * mzcoord.drop()) would stall all of them until it ends.  The view is
	 * tried again in the next pass.
	 */
	if (!ConditionalLockRelationOid(relid, ShareRowExclusiveLock))
		return false;
	rel = try_table_open(relid, NoLock);
	if (rel == NULL)
	{
		UnlockRelationOid(relid, ShareRowExclusiveLock);
		return false;
	}
	if (!read_view_row(gid, &v) || v.sealed)
	{
		table_close(rel, NoLock);
		return false;
	}
	h = mzcoord_history_copy(mzcoord_history_lookup(relid, false));
	/* Nor for an input's: DDL on it locks it, then this view (a cascade). */
	if (!lock_inputs(&v))
	{
		table_close(rel, NoLock);
		return false;
	}
	m = inputs_upper(&v);

	if (v.schedule != NULL)
	{
		/* At its refresh time, once the inputs completed it. */
		if (m >= 0 && m <= v.upper)
		{
			table_close(rel, NoLock);
			return false;
		}
		times[0] = v.upper;

		/*
		 * Inputs complete at every time (none, or all sealed) never change
		 * again: this refresh is the last one that can change anything, so
		 * the view is complete too, as a continual one would be.  Otherwise
		 * it would refresh at every later time of its schedule at once, its
		 * upper running ahead of the clock, one step per pass forever.
		 */
		if (m < 0 ||
			!mzcoord_refresh_next(v.schedule, v.as_of, v.upper, &new_upper))
			new_upper = -1;
	}
	else
	{
		if (m >= 0 && m <= v.upper)
		{
			table_close(rel, NoLock);
			return false;
		}
		res->from_upper = v.upper;
		new_upper = refresh_continual(&v, rel, h, m, res);
	}

	res->from_upper = v.upper;
	res->new_upper = new_upper;
	if (v.schedule != NULL)
		evaluate_times(&v, rel, h, NULL, times, 1, true, -1, res);
	/* Test only: the differences are written, the upper not advanced. */
	mzcoord_failpoint_check("refresh_after_history");
	/* The advance reads back what was just written. */
	CommandCounterIncrement();
	mzcoord_fed_advance(h, rel, v.upper, new_upper);
	/* Test only: everything written, the transaction not committed. */
	mzcoord_failpoint_check("refresh_before_commit");
	table_close(rel, NoLock);
	return true;
}

/*
 * The history rows of rh with lo < ts < hi, copied into vh's history as
 * they are (apply_replacement), as the histories' owner.
 */
static void
copy_history(const MzcHistory *rh, const MzcHistory *vh, TupleDesc desc,
			 int64 lo, int64 hi)
{
	Oid			argtypes[2] = {INT8OID, INT8OID};
	Datum		values[2] = {Int64GetDatum(lo), Int64GetDatum(hi)};
	char	   *cols = mzcoord_history_column_list(desc, "");
	Oid			save_user;
	int			save_sec;
	int			save_nest;

	save_nest = mzcoord_become_owner(vh->owner, &save_user, &save_sec);
	mzcoord_spi_connect();
	if (SPI_execute_with_args(psprintf("INSERT INTO mzcoord.%s (%s, " MZC_HISTORY_TS ", " MZC_HISTORY_DIFF ")"
									   " SELECT %s, " MZC_HISTORY_TS ", " MZC_HISTORY_DIFF
									   "   FROM mzcoord.%s WHERE %s",
									   quote_identifier(get_rel_name(vh->histid)), cols,
									   cols, quote_identifier(get_rel_name(rh->histid)),
									   mzcoord_history_indexed_condition(MZC_HISTORY_TS " OPERATOR(pg_catalog.>) $1"
																		 " AND " MZC_HISTORY_TS " OPERATOR(pg_catalog.<) $2")),
							  2, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not copy the history of a replacement");
	SPI_finish();
	mzcoord_restore_user(save_user, save_sec, save_nest);
}

/*
 * A replacement's state becomes the view's (apply_replacement), in the
 * caller's transaction, which holds both relations and both items: at
 * `at`, the view's upper, the view's history gets the difference between
 * the replacement's contents there and the view's contents before (its
 * relation), then the replacement's updates of (at, upper), and the view's
 * upper becomes the replacement's, `upper` (-1: the empty frontier).  The
 * two relations have the same columns (checked by create_replacement).
 */
void
mzcoord_refresh_adopt(const MzcHistory *vh, Relation vrel,
					  const MzcHistory *rh, int64 at, int64 upper)
{
	TupleDesc	desc = RelationGetDescr(vrel);
	MzcRowSet  *prev = relation_contents(vrel);
	MzcRowSet  *next = contents_before(rh, desc, at + 1);

	(void) write_difference(vh, desc, prev, next, at);
	copy_history(rh, vh, desc, at, upper < 0 ? PG_INT64_MAX : upper);
	CommandCounterIncrement();
	mzcoord_fed_advance(vh, vrel, at, upper);
}
