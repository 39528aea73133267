/*-------------------------------------------------------------------------
 *
 * capture.c
 *	  Capturing the writes of registered tables into their histories.
 *
 * Four internal statement triggers per registered table: AFTER INSERT,
 * AFTER UPDATE and AFTER DELETE with transition tables, and BEFORE TRUNCATE.
 * They run mzcoord._capture(), which writes one history row per changed
 * row at the transaction's write timestamp, in the same transaction: an
 * insertion (diff +1) per new row, a retraction (diff -1) per old row; an
 * UPDATE that leaves a row byte for byte unchanged records nothing for it.
 * TRUNCATE retracts every row the table has (read with a fresh snapshot:
 * TRUNCATE is not MVCC-safe and removes rows this transaction cannot see).
 * COPY FROM is an INSERT for the triggers.
 *
 * Written once, at commit.  A small statement's updates are kept in the
 * transaction's memory (copies of the transition rows) and written into the
 * history at pre-commit, when the commit timestamp C is fixed: they are
 * written once, at C, and never moved.  A large statement (more than
 * MZC_BULK_ROWS rows), a TRUNCATE, or one that would take the transaction's
 * kept rows past MZC_KEEP_ROWS or MZC_KEEP_BYTES writes straight into the
 * history heap and its indexes in batches (history.c), as COPY does, at
 * the write timestamp W below, and is moved at pre-commit if C is not W.
 * Nobody reads a transaction's own history rows before it commits (every
 * read leaves them out: they have no time yet), except the two that compare
 * the history with the relation as this transaction sees it: the
 * reconciliation after an ALTER TABLE (columns.c), which also changes the
 * history's shape, and check_consistency (problems.c).  Both first write the
 * kept rows of that history at W (mzcoord_capture_flush).  Kept rows follow
 * subtransactions: those captured in one that aborts are forgotten; those
 * written early in one that aborts are kept again.
 *
 * Write timestamps.  A transaction writes its direct updates (above) at a
 * provisional write timestamp W, taken from the oracle at its first write
 * (kept updates need no time until pre-commit); its commit
 * timestamp C is fixed at pre-commit (oracle.c).  C is W unless someone has
 * read at W meanwhile (a strict serializable read after a later commit, the
 * tick closing time up to the clock) or the transaction saw writes that
 * committed at a later time: a READ COMMITTED statement, a TRUNCATE (fresh
 * snapshot) or a write to a table registered after W may retract rows
 * inserted after W, and the retraction must not come before the insertion.
 * Such statements tell the oracle what they saw (mzcoord_oracle_observe);
 * then at pre-commit the transaction moves its own direct updates, and only
 * those (their xmin is one of its transaction ids), from W to C.  Several
 * transactions may share one timestamp, so a move selects rows by
 * transaction, never by timestamp alone.  A transaction of small statements
 * moves nothing; one that wrote directly and stayed open pays for its own
 * move and delays nobody.  A transaction whose commit timestamp the catalog fixed
 * early (a table registered in it) cannot move; if it then sees later writes
 * it fails with a serialization failure (SQLSTATE 40001), to be retried.
 *
 * IDENTIFICATION
 *	  src/storage/capture.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "capture.h"
#include "controller.h"
#include "dispatch.h"
#include "extension.h"
#include "history.h"
#include "oracle.h"
#include "readhold.h"
#include "rowimage.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_capture);
PG_FUNCTION_INFO_V1(mzcoord_row_is_own);

/*
 * Above this many rows a capture writes straight into the history, with a
 * bulk-insert buffer strategy.
 */
#define MZC_BULK_ROWS 1000

/* At most this many rows and bytes of a transaction are kept for its commit. */
#define MZC_KEEP_ROWS 10000
#define MZC_KEEP_BYTES (8 * 1024 * 1024)

/*
 * Per transaction (identified by its local transaction id): the histories
 * it wrote, and at which timestamp, in TopTransactionContext.
 */
typedef struct MzcWritten
{
	Oid			histid;
	Oid			relid;			/* the collection's relation */
	Oid			owner;
	mzc_ts		ts;
	bool		direct;			/* some of its rows are in the history at ts */
} MzcWritten;

/*
 * Rows kept for the commit: one statement's (or several consecutive
 * statements' of one subtransaction) updates of one relation, with the
 * history and the row type they were captured with, in
 * TopTransactionContext.
 */
typedef struct MzcKept
{
	MzcHistory *hist;
	TupleDesc	desc;			/* the relation's row type at capture */
	SubTransactionId captured;	/* the subtransaction that captured them */
	SubTransactionId flushed;	/* written early, in this subtransaction */
	int			nrows;
	int			maxrows;
	Size		bytes;
	MinimalTuple *rows;
	int64	   *diffs;
} MzcKept;

static LocalTransactionId state_lxid = InvalidLocalTransactionId;
static List *written = NIL;
static List *kept = NIL;
static int64 kept_rows = 0;
static Size kept_bytes = 0;
static bool callback_registered = false;

static void capture_xact_callback(XactEvent event, void *arg);
static void capture_subxact_callback(SubXactEvent event,
									 SubTransactionId mySubid,
									 SubTransactionId parentSubid, void *arg);

static void
refresh_state(void)
{
	if (state_lxid == MyProc->lxid)
		return;
	state_lxid = MyProc->lxid;
	/* The old lists went with their transaction's memory. */
	written = NIL;
	kept = NIL;
	kept_rows = 0;
	kept_bytes = 0;
}

/* Remember that h's history has updates of this transaction at ts. */
static void
note_written(const MzcHistory *h, mzc_ts ts, bool direct)
{
	MemoryContext old;
	ListCell   *lc;
	MzcWritten *w;

	refresh_state();
	foreach(lc, written)
	{
		w = lfirst(lc);
		if (w->histid == h->histid && w->ts == ts)
		{
			w->direct |= direct;
			return;
		}
	}
	/* If anything reads the table, the commit wakes the coordinator. */
	mzcoord_dispatch_note_write(h->gid);
	mzcoord_register_xact_callbacks(&callback_registered,
									capture_xact_callback,
									capture_subxact_callback);
	old = MemoryContextSwitchTo(TopTransactionContext);
	w = palloc(sizeof(MzcWritten));
	w->histid = h->histid;
	w->relid = h->relid;
	w->owner = h->owner;
	w->ts = ts;
	w->direct = direct;
	written = lappend(written, w);
	MemoryContextSwitchTo(old);
}

/*
 * Remember that h's history holds updates of this transaction at ts,
 * written there directly (to be moved at pre-commit if the transaction
 * commits at another time).
 */
void
mzcoord_note_history_written(const MzcHistory *h, mzc_ts ts)
{
	note_written(h, ts, true);
}

/* ----------------------------------------------------------------
 * Rows kept for the commit
 * ----------------------------------------------------------------
 */

/* May a statement of n rows be kept for the commit? */
static bool
may_keep(int64 n)
{
	refresh_state();
	return n <= MZC_BULK_ROWS && kept_rows + n <= MZC_KEEP_ROWS &&
		kept_bytes < MZC_KEEP_BYTES;
}

/*
 * The batch that a statement of this subtransaction keeps its updates of
 * h's relation (row type desc) in: the last batch if it is the same
 * history's, of the same subtransaction and row type and not yet written,
 * else a new one.
 */
static MzcKept *
kept_batch(const MzcHistory *h, TupleDesc desc)
{
	SubTransactionId sub = GetCurrentSubTransactionId();
	MzcKept    *k = kept != NIL ? llast(kept) : NULL;
	MemoryContext old;

	if (k != NULL && k->hist->histid == h->histid && k->captured == sub &&
		k->flushed == InvalidSubTransactionId && equalTupleDescs(k->desc, desc))
		return k;
	old = MemoryContextSwitchTo(TopTransactionContext);
	k = palloc0(sizeof(MzcKept));
	k->hist = mzcoord_history_copy(h);
	k->desc = CreateTupleDescCopy(desc);
	k->captured = sub;
	k->flushed = InvalidSubTransactionId;
	k->maxrows = 8;
	k->rows = palloc(sizeof(MinimalTuple) * k->maxrows);
	k->diffs = palloc(sizeof(int64) * k->maxrows);
	kept = lappend(kept, k);
	MemoryContextSwitchTo(old);
	return k;
}

/*
 * Keep one update (row: a slot of the batch's row type) for the commit,
 * with every attribute: a stored tuple may lack the columns added since it
 * was written, whose value (attmissingval) the kept copy of the row type
 * does not have.
 */
static void
keep_row(MzcKept *k, TupleTableSlot *row, int64 diff)
{
	MemoryContext old;
	MinimalTuple t;

	slot_getallattrs(row);
	old = MemoryContextSwitchTo(TopTransactionContext);
	t = heap_form_minimal_tuple(row->tts_tupleDescriptor, row->tts_values,
								row->tts_isnull);

	if (k->nrows == k->maxrows)
	{
		k->maxrows *= 2;
		k->rows = repalloc(k->rows, sizeof(MinimalTuple) * k->maxrows);
		k->diffs = repalloc(k->diffs, sizeof(int64) * k->maxrows);
	}
	k->rows[k->nrows] = t;
	k->diffs[k->nrows] = diff;
	k->nrows++;
	k->bytes += t->t_len;
	kept_rows++;
	kept_bytes += t->t_len;
	MemoryContextSwitchTo(old);
}

/*
 * Write a batch's rows into its history at ts.  Its history dropped since
 * (DROP TABLE, or the table's registration dropped, in this transaction)
 * takes its rows with it.  Kept rows may hold pointers to the relation's
 * TOAST data, which reading needs a snapshot for: the caller provides one.
 */
static void
write_kept(MzcKept *k, mzc_ts ts)
{
	TupleTableSlot *slot;
	MzcHistoryWriter writer;

	if (k->nrows == 0 ||
		!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(k->hist->histid)))
		return;
	slot = MakeSingleTupleTableSlot(k->desc, &TTSOpsMinimalTuple);
	mzcoord_history_writer_begin(&writer, k->hist, k->nrows > MZC_BULK_ROWS);
	for (int i = 0; i < k->nrows; i++)
	{
		ExecStoreMinimalTuple(k->rows[i], slot, false);
		mzcoord_history_writer_add(&writer, slot, ts, k->diffs[i]);
	}
	mzcoord_history_writer_end(&writer);
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * Write this transaction's kept updates of history histid now, at its write
 * timestamp (they move with its direct writes at pre-commit): for the
 * readers that compare the history with what this transaction sees of the
 * relation, and before the history's columns change.  See the file header.
 */
void
mzcoord_capture_flush(Oid histid)
{
	ListCell   *lc;
	bool		wrote = false;

	refresh_state();
	foreach(lc, kept)
	{
		MzcKept    *k = lfirst(lc);

		if (k->hist->histid != histid || k->flushed != InvalidSubTransactionId)
			continue;
		write_kept(k, mzcoord_write_ts());
		k->flushed = GetCurrentSubTransactionId();
		note_written(k->hist, mzcoord_write_ts(), true);
		wrote = true;
	}
	/* The caller's next snapshot sees them. */
	if (wrote)
		CommandCounterIncrement();
}

/*
 * A subtransaction aborted: forget what it (or one inside it) captured, and
 * keep again what it wrote early (its rows went with it).  Subtransaction
 * ids grow within a transaction, and one that aborts is the innermost open
 * one: every id from mySubid up is it or one inside it.
 */
static void
capture_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;

	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	refresh_state();
	foreach(lc, kept)
	{
		MzcKept    *k = lfirst(lc);

		if (k->captured >= mySubid)
		{
			kept_rows -= k->nrows;
			kept_bytes -= k->bytes;
			kept = foreach_delete_current(kept, lc);
		}
		else if (k->flushed >= mySubid)
			k->flushed = InvalidSubTransactionId;
	}
}

/*
 * The move's plan of each history this backend moved updates in, kept for
 * the backend's life: under concurrent READ COMMITTED writers (pgbench)
 * most commits move, and the statement was parsed and planned each time.
 * A plan invalidated since (its history altered, or dropped and its oid
 * reused) is prepared again, by the history's current name.
 */
typedef struct MzcMovePlan
{
	Oid			histid;			/* hash key */
	SPIPlanPtr	plan;
} MzcMovePlan;

static HTAB *move_plans = NULL;

/* The move's plan for history histid (inside SPI). */
static SPIPlanPtr
move_plan(Oid histid)
{
	Oid			argtypes[2] = {INT8OID, INT8OID};
	MzcMovePlan *e;
	bool		found;
	char	   *name;
	SPIPlanPtr	plan;

	if (move_plans == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(MzcMovePlan);
		move_plans = hash_create("mzcoord move plans", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS);
	}
	e = hash_search(move_plans, &histid, HASH_FIND, &found);
	if (found && SPI_plan_is_valid(e->plan))
		return e->plan;
	/* Invalidated (its history changed, or went and the oid came back). */
	if (found)
		SPI_freeplan(e->plan);
	name = quote_qualified_identifier(get_namespace_name(get_rel_namespace(histid)),
									  get_rel_name(histid));
	plan = SPI_prepare(psprintf("UPDATE %s SET " MZC_HISTORY_TS " = $2"
								" WHERE %s AND mzcoord._row_is_own(xmin)",
								name,
								mzcoord_history_indexed_condition(MZC_HISTORY_TS " OPERATOR(pg_catalog.=) $1")),
					   2, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare the move of the updates of %s: %s",
			 name, SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep the move's plan");
	e = hash_search(move_plans, &histid, HASH_ENTER, &found);
	e->plan = plan;
	return plan;
}

/* Move this transaction's own updates in one history from `from` to `to`. */
static void
move_own_updates(const MzcWritten *w, mzc_ts to)
{
	Datum		values[2] = {Int64GetDatum(w->ts), Int64GetDatum(to)};
	Oid			save_user;
	int			save_sec;
	int			save_nest;
	int			ret;

	/* Dropped since (DROP TABLE in this transaction): nothing to move. */
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(w->histid)))
		return;
	save_nest = mzcoord_become_owner(w->owner, &save_user, &save_sec);
	/* At pre-commit no portal provides a snapshot: the update needs one. */
	PushActiveSnapshot(GetTransactionSnapshot());
	mzcoord_spi_connect();
	ret = SPI_execute_plan(move_plan(w->histid), values, NULL, false, 0);
	if (ret != SPI_OK_UPDATE)
		elog(ERROR, "could not move the updates of history %u: %s",
			 w->histid, SPI_result_code_string(ret));
	SPI_finish();
	PopActiveSnapshot();
	mzcoord_restore_user(save_user, save_sec, save_nest);
}

/*
 * Pre-commit: fix the commit timestamp and move every update recorded at
 * another timestamp there.  An error here aborts the transaction.
 */
static void
capture_pre_commit(void)
{
	mzc_ts		c;
	ListCell   *lc;

	refresh_state();
	if (written == NIL || !mzcoord_has_write_ts())
		return;
	c = mzcoord_oracle_seal();
	foreach(lc, written)
	{
		MzcWritten *w = lfirst(lc);

		if (w->direct && w->ts != c)
			move_own_updates(w, c);
	}
	if (kept != NIL)
	{
		/* No portal provides a snapshot at pre-commit (see write_kept). */
		PushActiveSnapshot(GetTransactionSnapshot());
		foreach(lc, kept)
		{
			MzcKept    *k = lfirst(lc);

			if (k->flushed == InvalidSubTransactionId)
				write_kept(k, c);
		}
		PopActiveSnapshot();
	}
	/* The tick compacts what this adds (controller.h, MzcWriteMark). */
	foreach(lc, written)
		mzcoord_ctl_note_written(((MzcWritten *) lfirst(lc))->relid, c);
	written = NIL;
	kept = NIL;
}

static void
capture_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_PRE_COMMIT)
		capture_pre_commit();
}

/*
 * SQL: mzcoord._row_is_own(xid) RETURNS boolean: was the row written by the
 * current transaction (or one of its live subtransactions)?
 */
Datum
mzcoord_row_is_own(PG_FUNCTION_ARGS)
{
	TransactionId xid = DatumGetTransactionId(PG_GETARG_DATUM(0));

	PG_RETURN_BOOL(TransactionIdIsCurrentTransactionId(xid));
}

/*
 * Before a statement records updates of h's relation: make sure the
 * transaction has a write timestamp, and tell the oracle what the statement
 * may have seen (see the file header).  truncating: it is a TRUNCATE or
 * reads the table with a fresh snapshot.  fn_oid: the calling SQL
 * function, for the controller's readiness check (InvalidOid if none).
 */
void
mzcoord_prepare_write(const MzcHistory *h, bool truncating, Oid fn_oid)
{
	mzc_ts		w;
	mzc_ts		floor = 0;
	bool		observe;
	MzcCollectionInfo info;

	refresh_state();
	if (!mzcoord_has_write_ts())
	{
		/* Timestamps are only valid once the oracle was bootstrapped. */
		mzcoord_ctl_require_ready_fn(fn_oid);
		/* Registers the exit callback that ends the write on backend exit. */
		mzcoord_reserve_local_holds(0);
		/* After everything sealed so far: nothing to observe. */
		(void) mzcoord_write_ts();
		return;
	}

	w = mzcoord_write_ts();
	observe = truncating || XactIsoLevel == XACT_READ_COMMITTED;

	/* Registered after we started writing?  Its history starts later. */
	if (mzcoord_ctl_lookup_rel(h->relid, &info) && !info.since.empty &&
		info.since.ts > w)
		floor = info.since.ts;

	if ((observe || floor > 0) && !mzcoord_oracle_observe(floor))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access to \"%s\" due to a concurrent write",
						get_rel_name(h->relid)),
				 errdetail("This transaction writes at timestamp " INT64_FORMAT ", which it cannot move, and sees changes written later.",
						   (int64) w),
				 errhint("The transaction might succeed if retried.")));
}

/* Read pointer of our own on a transition table, at its start. */
static void
rewind_transition(Tuplestorestate *ts)
{
	int			ptr = tuplestore_alloc_read_pointer(ts, EXEC_FLAG_REWIND);

	tuplestore_select_read_pointer(ts, ptr);
	tuplestore_rescan(ts);
}

static bool
same_row(TupleTableSlot *a, TupleTableSlot *b)
{
	slot_getallattrs(a);
	slot_getallattrs(b);
	return mzcoord_row_equal(a->tts_tupleDescriptor, a->tts_values, a->tts_isnull,
							 b->tts_values, b->tts_isnull);
}

/*
 * Where a statement's updates go: straight into the history at ts, or kept
 * for the commit.
 */
typedef struct MzcCaptureSink
{
	MzcHistoryWriter *writer;	/* direct, or NULL */
	MzcKept    *batch;			/* kept, or NULL */
	mzc_ts		ts;
} MzcCaptureSink;

static void
sink_add(MzcCaptureSink *sink, TupleTableSlot *row, int64 diff)
{
	if (sink->writer != NULL)
		mzcoord_history_writer_add(sink->writer, row, sink->ts, diff);
	else
		keep_row(sink->batch, row, diff);
}

/* A TRUNCATE of rel retracts every row it has. */
static void
record_truncate(Relation rel, MzcCaptureSink *sink)
{
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	TableScanDesc scan = table_beginscan(rel, snapshot, 0, NULL);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		CHECK_FOR_INTERRUPTS();
		sink_add(sink, slot, -1);
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
}

/* An INSERT, UPDATE or DELETE: its transition tables' rows. */
static void
record_transitions(TupleDesc desc, Tuplestorestate *oldt,
				   Tuplestorestate *newt, MzcCaptureSink *sink)
{
	TupleTableSlot *oslot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	TupleTableSlot *nslot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	bool		more_old = false;
	bool		more_new = false;

	if (oldt)
		rewind_transition(oldt);
	if (newt)
		rewind_transition(newt);

	/*
	 * For an UPDATE the two transition tables list the old and the new
	 * version of each row in the same order: a pair that is byte for byte the
	 * same needs no update.  (Dropping any identical pair is sound whatever
	 * the pairing: its two updates cancel.)
	 */
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		more_old = oldt && tuplestore_gettupleslot(oldt, true, false, oslot);
		more_new = newt && tuplestore_gettupleslot(newt, true, false, nslot);
		if (!more_old && !more_new)
			break;
		if (more_old && more_new && same_row(oslot, nslot))
			continue;
		if (more_old)
			sink_add(sink, oslot, -1);
		if (more_new)
			sink_add(sink, nslot, 1);
	}
	ExecDropSingleTupleTableSlot(oslot);
	ExecDropSingleTupleTableSlot(nslot);
}

/*
 * Record one statement's updates of h's relation straight into its history
 * at w: see the file header.
 */
static void
record_statement(const MzcHistory *h, Relation rel, bool truncating,
				 Tuplestorestate *oldt, Tuplestorestate *newt, mzc_ts w,
				 bool bulk)
{
	MzcHistoryWriter writer;
	MzcCaptureSink sink = {&writer, NULL, w};

	mzcoord_history_writer_begin(&writer, h, bulk);
	if (truncating)
		record_truncate(rel, &sink);
	else
		record_transitions(RelationGetDescr(rel), oldt, newt, &sink);
	mzcoord_history_writer_end(&writer);
}

/* Keep one statement's updates of h's relation for the commit. */
static void
keep_statement(const MzcHistory *h, Relation rel, Tuplestorestate *oldt,
			   Tuplestorestate *newt)
{
	MzcCaptureSink sink = {NULL, kept_batch(h, RelationGetDescr(rel)), 0};

	record_transitions(RelationGetDescr(rel), oldt, newt, &sink);
}

/*
 * Trigger function mzcoord._capture(): see the file header.
 */
Datum
mzcoord_capture(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Relation	rel;
	MzcHistory *h;
	Tuplestorestate *oldt;
	Tuplestorestate *newt;
	bool		truncating;
	int64		nold;
	int64		nnew;
	mzc_ts		w;
	bool		bulk;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._capture() must be called as a trigger")));
	if (!TRIGGER_FIRED_FOR_STATEMENT(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._capture() must be a statement trigger")));

	rel = td->tg_relation;
	truncating = TRIGGER_FIRED_BY_TRUNCATE(td->tg_event);
	oldt = truncating ? NULL : td->tg_oldtable;
	newt = truncating ? NULL : td->tg_newtable;
	nold = oldt ? tuplestore_tuple_count(oldt) : 0;
	nnew = newt ? tuplestore_tuple_count(newt) : 0;
	if (!truncating && nold == 0 && nnew == 0)
		return PointerGetDatum(NULL);

	/* Before the history is touched: see mzcoord_extension_guard(). */
	mzcoord_extension_guard();
	h = mzcoord_history_lookup(RelationGetRelid(rel), true);
	if (h == NULL || h->kind != MZC_KIND_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has capture triggers but no mzcoord history",
						RelationGetRelationName(rel))));

	mzcoord_prepare_write(h, truncating, fcinfo->flinfo->fn_oid);
	w = mzcoord_write_ts();
	if (!truncating && may_keep(nold + nnew))
	{
		keep_statement(h, rel, oldt, newt);
		note_written(h, w, false);
		return PointerGetDatum(NULL);
	}
	bulk = truncating || nold + nnew > MZC_BULK_ROWS;
	if (bulk)
		mzcoord_oracle_bulk(true);
	PG_TRY();
	{
		record_statement(h, rel, truncating, oldt, newt, w, bulk);
	}
	PG_FINALLY();
	{
		if (bulk)
			mzcoord_oracle_bulk(false);
	}
	PG_END_TRY();
	mzcoord_note_history_written(h, w);
	return PointerGetDatum(NULL);
}
