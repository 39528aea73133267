/*-------------------------------------------------------------------------
 *
 * changes.c
 *	  The consolidated updates of a history between two times, in time
 *	  order: mzcoord.changes(), and the window a sink exports
 *	  (src/compute/export.c).
 *
 * A history may hold one row several times at one time (two statements of
 * one transaction, an insert and a delete of the same row): the stream
 * shows each (row, time) once with the sum of its diffs, and leaves out
 * those that sum to zero.  The updates are read through the ts index, so
 * in time order, and consolidated one time at a time: memory is
 * proportional to the updates of one time.  A time with a single update
 * (the common case of small transactions) needs no row set at all.
 *
 * mzcoord.changes(rel, after, upto) returns the updates with after < ts <=
 * upto.  Compaction to a since S moves every update below S to S, so the
 * updates after `after` are exact only if no update at or before `after`
 * was moved past it, that is S <= after: the call holds the collection at
 * `after` (refused with 55000 if the since is beyond it), waits until
 * `upto` is complete (upto < upper), and only then takes the snapshot it
 * reads with, like read_at (read.c).
 *
 * mzcoord._updates_at(rel, at, sign) returns the insertions or the
 * retractions at exactly `at`, unconsolidated: the delta relations of the
 * incremental refresh of a continual view (src/compute/incremental.c).
 *
 * IDENTIFICATION
 *	  src/storage/changes.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "acquire.h"
#include "changes.h"
#include "controller.h"
#include "extension.h"
#include "history.h"
#include "read.h"
#include "rowimage.h"
#include "selection.h"
#include "shmem.h"
#include "standby.h"
#include "support.h"
#include "viewerrors.h"

PG_FUNCTION_INFO_V1(mzcoord_changes);
PG_FUNCTION_INFO_V1(mzcoord_history_rows);
PG_FUNCTION_INFO_V1(mzcoord_updates_at);

/* The updates of one time read so far. */
typedef struct TimeGroup
{
	TupleDesc	desc;
	int64		ts;
	TupleTableSlot *pending;	/* the only row so far (a copy) */
	int64		pending_diff;
	bool		has_pending;
	MzcRowSet  *set;			/* from the second row of the time on */
} TimeGroup;

/* Add one update of the current time. */
static void
group_add(TimeGroup *g, TupleTableSlot *row, int64 diff)
{
	if (!g->has_pending && g->set == NULL)
	{
		/* A copy: row points into the history's buffers. */
		ExecCopySlot(g->pending, row);
		g->pending_diff = diff;
		g->has_pending = true;
		return;
	}
	if (g->set == NULL)
	{
		g->set = mzcoord_rowset_create(g->desc, CurrentMemoryContext);
		(void) mzcoord_rowset_add(g->set, g->pending->tts_values,
								  g->pending->tts_isnull,
								  mzcoord_row_hash(g->desc, g->pending->tts_values,
												   g->pending->tts_isnull),
								  g->pending_diff);
		g->has_pending = false;
		ExecClearTuple(g->pending);
	}
	(void) mzcoord_rowset_add(g->set, row->tts_values, row->tts_isnull,
							  mzcoord_row_hash(g->desc, row->tts_values,
											   row->tts_isnull),
							  diff);
}

/* Emit the consolidated updates of the current time and forget them. */
static void
group_flush(TimeGroup *g, MzcChangeCallback emit, void *arg)
{
	if (g->set != NULL)
	{
		for (MzcRowEntry *e = g->set->first; e != NULL; e = e->link)
			if (e->count != 0)
				emit(arg, e->values, e->isnull, g->ts, e->count);
		mzcoord_rowset_destroy(g->set);
		g->set = NULL;
	}
	else if (g->has_pending && g->pending_diff != 0)
		emit(arg, g->pending->tts_values, g->pending->tts_isnull, g->ts,
			 g->pending_diff);
	g->has_pending = false;
	ExecClearTuple(g->pending);
}

/*
 * Call emit for each consolidated update of h with from <= ts < upto (upto
 * -1: no end), in time order, as snapshot sees the history; reldesc is the
 * relation's descriptor.  Within limits (NULL: none) the window stops
 * before a time, never inside one: returns true if it stopped early, with
 * *next the first time it did not emit.  *ntimes receives the times read.
 */
bool
mzcoord_history_changes(const MzcHistory *h, TupleDesc reldesc,
						Snapshot snapshot, int64 from, int64 upto,
						const MzcChangeLimits *limits,
						MzcChangeCallback emit, void *arg,
						int64 *next, int *ntimes)
{
	MzcHistoryRead r;
	TupleTableSlot *row;
	TimeGroup	g = {0};
	int64		nread = 0;
	bool		capped = false;
	int64		ts;
	int64		diff;

	if (reldesc->natts != h->natts)
		elog(ERROR, "relation of %d columns read with a history mapping of %d",
			 reldesc->natts, h->natts);
	mzcoord_history_open_read(&r, h, "ts", snapshot);
	row = MakeSingleTupleTableSlot(reldesc, &TTSOpsVirtual);
	g.desc = reldesc;
	g.pending = MakeSingleTupleTableSlot(reldesc, &TTSOpsVirtual);
	*ntimes = 0;
	mzcoord_history_time_scan(&r, from, upto);
	while (mzcoord_history_next(&r, row, &ts, &diff))
	{
		if (*ntimes == 0 || ts != g.ts)
		{
			if (*ntimes > 0)
				group_flush(&g, emit, arg);
			if (limits != NULL && *ntimes > 0 &&
				((limits->max_updates > 0 && nread >= limits->max_updates) ||
				 (limits->max_times > 0 && *ntimes >= limits->max_times)))
			{
				capped = true;
				*next = ts;
				break;
			}
			g.ts = ts;
			(*ntimes)++;
		}
		group_add(&g, row, diff);
		nread++;
	}
	if (!capped && *ntimes > 0)
		group_flush(&g, emit, arg);
	ExecDropSingleTupleTableSlot(g.pending);
	ExecDropSingleTupleTableSlot(row);
	mzcoord_history_close_read(&r);
	return capped;
}

/* ----------------------------------------------------------------
 * SQL: mzcoord.changes
 * ----------------------------------------------------------------
 */

typedef struct ChangesState
{
	Tuplestorestate *store;
	TupleDesc	desc;			/* (mz_timestamp, mz_diff, row) */
	TupleDesc	reldesc;
} ChangesState;

static void
changes_emit(void *arg, Datum *values, bool *isnull, int64 ts, int64 diff)
{
	ChangesState *st = arg;
	HeapTuple	tup = heap_form_tuple(st->reldesc, values, isnull);
	Datum		out[3];
	bool		outnull[3] = {false, false, false};

	out[0] = Int64GetDatum(ts);
	out[1] = Int64GetDatum(diff);
	out[2] = heap_copy_tuple_as_datum(tup, st->reldesc);
	tuplestore_putvalues(st->store, st->desc, out, outnull);
	heap_freetuple(tup);
}

/*
 * Open relid as a SELECT would (its lock, its privilege, no row security:
 * detail as for mzcoord_check_history_readable) and return it with a copy
 * of its history in *h.  The extension guard comes first, before anything
 * is locked: see mzcoord_extension_guard().
 */
static Relation
open_readable(Oid relid, bool detail, MzcHistory **h)
{
	Relation	rel;

	mzcoord_extension_guard();
	rel = table_open(relid, AccessShareLock);
	mzcoord_check_history_readable(rel, detail);
	*h = mzcoord_history_copy(mzcoord_history_lookup(relid, false));
	return rel;
}

/*
 * changes_prepare (below) on a primary, where the coordinator's controller
 * holds, waits and checks.  _updates_at prepares only this way: the
 * incremental refresh that calls it runs on a primary.
 */
static Snapshot
changes_prepare_primary(Oid relid, Oid fn_oid, int64 from, int64 upto)
{
	Snapshot	snapshot;
	bool		leased;

	mzcoord_ctl_require_ready_fn(fn_oid);
	mzcoord_ctl_check_reachable(relid, upto);
	leased = mzcoord_ctl_hold_for_read(relid, from);
	mzcoord_ctl_wait_complete(relid, upto);
	/* As read_at: this transaction's own updates have no time yet. */
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	snapshot->curcid = FirstCommandId;
	if (leased)
		mzcoord_ctl_check_read(relid, from);
	return snapshot;
}

/*
 * Before reading h's updates after `from` up to `upto`: hold it at from,
 * wait until upto is complete, and only then take the snapshot (returned,
 * registered), which leaves out this transaction's own updates (they are
 * at no time yet: see read.c).  On a hot standby the wait and the check of
 * from come from what recovery replayed (controller/standby.c).
 */
static Snapshot
changes_prepare(const MzcHistory *h, Oid fn_oid, int64 from, int64 upto)
{
	Snapshot	snapshot;

	if (RecoveryInProgress())
	{
		mzcoord_require_shmem();
		mzcoord_standby_hold(&h->relid, 1, from);
		mzcoord_standby_wait_complete(h->relid, h->gid, h->kind, upto);
		snapshot = RegisterSnapshot(GetLatestSnapshot());
		mzcoord_standby_check_read(h->relid, h->gid, from, snapshot);
		return snapshot;
	}
	return changes_prepare_primary(h->relid, fn_oid, from, upto);
}

/*
 * mzcoord.changes(rel anyelement, after bigint, upto bigint)
 *		RETURNS TABLE (mz_timestamp bigint, mz_diff bigint, "row" anyelement)
 */
Datum
mzcoord_changes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = mzcoord_rowtype_relation(fcinfo, 0, "changes");
	int64		after = mzcoord_timestamp_arg(fcinfo, 1, "after");
	int64		upto = mzcoord_timestamp_arg(fcinfo, 2, "upto");
	Relation	rel;
	MzcHistory *h;
	Snapshot	snapshot;
	ChangesState st;
	int64		next;
	int			ntimes;

	if (after > upto)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("after (" INT64_FORMAT ") must not be greater than upto (" INT64_FORMAT ")",
						after, upto),
				 errdetail("changes() returns the updates with after < timestamp <= upto.")));

	rel = open_readable(relid, true, &h);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	st.store = rsinfo->setResult;
	st.desc = rsinfo->setDesc;
	st.reldesc = RelationGetDescr(rel);

	/* Hold at after, wait until upto is complete, then take the snapshot. */
	snapshot = changes_prepare(h, fcinfo->flinfo->fn_oid, after, upto);
	if (after < upto)
	{
		/* A view has no changes at times it is in error: its error instead. */
		mzcoord_view_error_check(rel, h->gid, snapshot, after + 1, upto);
		(void) mzcoord_history_changes(h, st.reldesc, snapshot, after + 1,
									   upto < PG_INT64_MAX ? upto + 1 : -1,
									   NULL, changes_emit, &st, &next, &ntimes);
	}
	UnregisterSnapshot(snapshot);
	table_close(rel, NoLock);
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * Intervals of updates, for refreshes that cover many times at once
 * ----------------------------------------------------------------
 */

/*
 * Where an interval of h's updates starting at `from` should end so that
 * it holds whole times and at most max_updates updates, as snapshot sees
 * the history: upto (-1: no end) if every update in [from, upto) fits,
 * otherwise the first time that would not fit.  The first time is always
 * in (a time of more updates than max_updates is never split), so a
 * caller that refreshes [from, end) always advances.  One walk of the ts
 * index, as far as max_updates + 1 entries.
 */
int64
mzcoord_history_interval_end(const MzcHistory *h, Snapshot snapshot,
							 int64 from, int64 upto, int64 max_updates)
{
	MzcHistoryRead r;
	int64		nread = 0;
	int64		last = -1;
	int64		end = upto;
	int64		ts;
	int64		diff;

	mzcoord_history_open_read(&r, h, "ts", snapshot);
	mzcoord_history_time_scan(&r, from, upto);
	while (mzcoord_history_next(&r, NULL, &ts, &diff))
	{
		if (ts != last && last >= 0 && nread >= max_updates)
		{
			end = ts;
			break;
		}
		last = ts;
		nread++;
	}
	mzcoord_history_close_read(&r);
	return end;
}

/* Where the contents at lo - 1 go: the tuple store, with ts lo - 1. */
typedef struct BaseState
{
	Tuplestorestate *store;
	TupleDesc	desc;
	int			natts;			/* the relation's */
	int64		ts;
	Datum	   *values;
	bool	   *isnull;
} BaseState;

static void
base_emit(void *arg, TupleTableSlot *row, int64 count)
{
	BaseState  *st = arg;

	slot_getallattrs(row);
	memcpy(st->values, row->tts_values, sizeof(Datum) * st->natts);
	memcpy(st->isnull, row->tts_isnull, sizeof(bool) * st->natts);
	st->values[st->natts] = Int64GetDatum(st->ts);
	st->values[st->natts + 1] = Int64GetDatum(count);
	st->isnull[st->natts] = st->isnull[st->natts + 1] = false;
	tuplestore_putvalues(st->store, st->desc, st->values, st->isnull);
}

/* Put h's contents at lo - 1 into store: row, lo - 1, its count. */
static void
emit_base(const MzcHistory *h, TupleDesc reldesc, Snapshot snapshot,
		  int64 lo, Tuplestorestate *store, TupleDesc desc)
{
	BaseState	st;
	int64		negative;

	st.store = store;
	st.desc = desc;
	st.natts = reldesc->natts;
	st.ts = lo - 1;
	st.values = palloc(sizeof(Datum) * desc->natts);
	st.isnull = palloc0(sizeof(bool) * desc->natts);
	mzcoord_history_contents(h, reldesc, snapshot, lo - 1, base_emit, &st,
							 &negative);
	if (negative != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the history of collection " MZC_GID_FMT " retracts rows it does not have",
						h->gid)));
	pfree(st.values);
	pfree(st.isnull);
}

/* Put h's updates with lo <= ts < hi into store: row, ts, diff. */
static void
emit_history_rows(const MzcHistory *h, TupleDesc reldesc, Snapshot snapshot,
				  int64 lo, int64 hi, Tuplestorestate *store, TupleDesc desc)
{
	MzcHistoryRead r;
	TupleTableSlot *row;
	Datum	   *values = palloc(sizeof(Datum) * desc->natts);
	bool	   *isnull = palloc0(sizeof(bool) * desc->natts);
	int64		ts;
	int64		diff;

	mzcoord_history_open_read(&r, h, "ts", snapshot);
	row = MakeSingleTupleTableSlot(reldesc, &TTSOpsVirtual);
	mzcoord_history_time_scan(&r, lo, hi);
	while (mzcoord_history_next(&r, row, &ts, &diff))
	{
		memcpy(values, row->tts_values, sizeof(Datum) * reldesc->natts);
		memcpy(isnull, row->tts_isnull, sizeof(bool) * reldesc->natts);
		values[reldesc->natts] = Int64GetDatum(ts);
		values[reldesc->natts + 1] = Int64GetDatum(diff);
		tuplestore_putvalues(store, desc, values, isnull);
	}
	pfree(values);
	pfree(isnull);
	ExecDropSingleTupleTableSlot(row);
	mzcoord_history_close_read(&r);
}

/*
 * mzcoord._history_rows(rel anyelement, lo bigint, hi bigint, base boolean)
 *		RETURNS SETOF record
 *
 * The updates of a table, source or materialized view with lo <= ts < hi
 * as its history holds them, unconsolidated: the relation's columns
 * (dropped ones null), then ts and diff, described by the caller's column
 * definition list; with base, first its contents at lo - 1, each row once
 * with its count as diff and lo - 1 as ts.  The refresh of a continual
 * view reads its inputs' updates for an interval of times with it
 * (incremental.c).  Checks, holds and waits as read_at does at lo - 1 (or
 * lo, without base) and hi - 1; a view in error in that range raises its
 * error.
 */
Datum
mzcoord_history_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = mzcoord_rowtype_relation(fcinfo, 0, "_history_rows");
	int64		lo = mzcoord_timestamp_arg(fcinfo, 1, "lo");
	int64		hi = mzcoord_timestamp_arg(fcinfo, 2, "hi");
	bool		base = !PG_ARGISNULL(3) && PG_GETARG_BOOL(3);
	int64		first;
	Relation	rel;
	MzcHistory *h;
	Snapshot	snapshot;

	if (hi <= lo || (base && lo == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lo (" INT64_FORMAT ") must be less than hi (" INT64_FORMAT ") and, with base, positive",
						lo, hi)));
	first = base ? lo - 1 : lo;
	rel = open_readable(relid, true, &h);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (rsinfo->setDesc->natts != RelationGetDescr(rel)->natts + 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("_history_rows: the column definition list must have the %d columns of \"%s\", then ts and diff",
						RelationGetDescr(rel)->natts,
						RelationGetRelationName(rel))));
	snapshot = changes_prepare(h, fcinfo->flinfo->fn_oid, first, hi - 1);
	mzcoord_view_error_check(rel, h->gid, snapshot, first, hi - 1);
	if (base)
		emit_base(h, RelationGetDescr(rel), snapshot, lo, rsinfo->setResult,
				  rsinfo->setDesc);
	emit_history_rows(h, RelationGetDescr(rel), snapshot, lo, hi,
					  rsinfo->setResult, rsinfo->setDesc);
	UnregisterSnapshot(snapshot);
	table_close(rel, NoLock);
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * SQL: mzcoord._updates_at
 * ----------------------------------------------------------------
 */

/* Put the updates of h at exactly `at` of the given sign, |diff| times. */
static void
emit_updates(const MzcHistory *h, TupleDesc reldesc, Snapshot snapshot,
			 int64 at, int sign, Tuplestorestate *store, TupleDesc desc)
{
	MzcHistoryRead r;
	TupleTableSlot *row;
	int64		ts;
	int64		diff;

	mzcoord_history_open_read(&r, h, "ts", snapshot);
	row = MakeSingleTupleTableSlot(reldesc, &TTSOpsVirtual);
	mzcoord_history_at_scan(&r, at);
	while (mzcoord_history_next(&r, row, &ts, &diff))
	{
		if (sign > 0 ? diff <= 0 : diff >= 0)
			continue;
		for (int64 i = 0; i < Abs(diff); i++)
			tuplestore_putvalues(store, desc, row->tts_values, row->tts_isnull);
	}
	ExecDropSingleTupleTableSlot(row);
	mzcoord_history_close_read(&r);
}

/*
 * mzcoord._updates_at(rel anyelement, at bigint, sign integer)
 *		RETURNS SETOF anyelement
 *
 * The insertions (sign 1) or retractions (sign -1) of a table, source or
 * materialized view at exactly time `at`, each row shown |diff| times: the
 * delta relation of the incremental refresh (src/compute/incremental.c).
 * Checks, holds and waits as read_at does.
 */
Datum
mzcoord_updates_at(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = mzcoord_rowtype_relation(fcinfo, 0, "_updates_at");
	int64		at = mzcoord_timestamp_arg(fcinfo, 1, "the timestamp of the updates");
	int			sign = PG_ARGISNULL(2) ? 0 : PG_GETARG_INT32(2);
	Relation	rel;
	MzcHistory *h;
	Snapshot	snapshot;

	if (sign != 1 && sign != -1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the sign of the updates must be 1 or -1")));
	rel = open_readable(relid, false, &h);

	/* Hold at `at`, wait until it is complete, then take the snapshot. */
	snapshot = changes_prepare_primary(relid, fcinfo->flinfo->fn_oid, at, at);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (rsinfo->setDesc->natts != RelationGetDescr(rel)->natts)
		elog(ERROR, "_updates_at: the row type of \"%s\" does not match its relation",
			 RelationGetRelationName(rel));
	/* A view in error at `at` has no updates there: its error instead. */
	mzcoord_view_error_check(rel, h->gid, snapshot, at, at);
	emit_updates(h, RelationGetDescr(rel), snapshot, at, sign,
				 rsinfo->setResult, rsinfo->setDesc);
	UnregisterSnapshot(snapshot);
	table_close(rel, NoLock);
	return (Datum) 0;
}
