/*-------------------------------------------------------------------------
 *
 * storage_capture.c
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
 * COPY FROM is an INSERT for the triggers.  The rows go straight into the
 * history heap and its indexes in batches (storage.c), as COPY does.
 *
 * Write timestamps.  The oracle hands a transaction its write timestamp W at
 * its first write; W is greater than every timestamp handed out before, and
 * the transaction stays in flight until it ends, so no upper passes W before
 * its updates are visible.  One case needs care: in READ COMMITTED, a later
 * statement of the same transaction sees (and may delete or update) rows
 * that transactions which took their write timestamps after W committed in
 * the meantime.  Retracting such a row at W, below the time it was inserted
 * at, would make the history say the row was gone before it existed (a
 * negative count between the two times).  TRUNCATE has the same problem at
 * every isolation level, and so has a write to a table registered after W
 * (its since is beyond W).  Before such a statement writes, if any write
 * timestamp greater than W has been handed out, the transaction is rebased:
 * the oracle moves its write timestamp to a new W' greater than everything
 * handed out (mzcoord_rebase_write_ts), and the updates it already recorded
 * at W move to W' (an UPDATE of its own, uncommitted history rows).  REPEATABLE
 * READ and SERIALIZABLE statements only see rows committed before their
 * snapshot, which precedes W, so they never need this.  A transaction whose
 * W is also the registration time of a table it registered (or whose W was
 * taken by the catalog rather than by a write) cannot move it; it fails with
 * a serialization failure instead (SQLSTATE 40001), to be retried.
 *
 * IDENTIFICATION
 *	  src/storage_capture.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "controller.h"
#include "storage.h"

PG_FUNCTION_INFO_V1(mzcoord_capture);

/* Above this many rows a capture uses a bulk-insert buffer strategy. */
#define MZC_BULK_ROWS 1000

/*
 * Per transaction (identified by its local transaction id): whether this
 * module took the write timestamp itself, whether it may move it, and the
 * histories written at it.
 */
static LocalTransactionId state_lxid = InvalidLocalTransactionId;
static bool ts_ours = false;
static bool ts_pinned = false;
static List *written = NIL;		/* history OIDs, in TopTransactionContext */

static void
refresh_state(void)
{
	if (state_lxid == MyProc->lxid)
		return;
	state_lxid = MyProc->lxid;
	ts_ours = false;
	ts_pinned = false;
	written = NIL;				/* the old list went with its transaction */
}

/* The catalog made W a registration time: it must not move. */
void
mzcoord_pin_write_ts(void)
{
	refresh_state();
	ts_pinned = true;
}

bool
mzcoord_write_ts_pinned(void)
{
	refresh_state();
	return ts_pinned || !ts_ours;
}

/* Remember that histid holds updates at this transaction's write timestamp. */
void
mzcoord_note_history_written(Oid histid)
{
	MemoryContext old;

	refresh_state();
	if (list_member_oid(written, histid))
		return;
	old = MemoryContextSwitchTo(TopTransactionContext);
	written = lappend_oid(written, histid);
	MemoryContextSwitchTo(old);
}

/* Move this transaction's updates from its write timestamp to a new one. */
static void
rebase(const MzcHistory *h)
{
	mzc_ts		from = mzcoord_write_ts();
	mzc_ts		to;
	Oid			save_user;
	int			save_sec;
	ListCell   *lc;

	if (mzcoord_write_ts_pinned())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access to \"%s\" due to a concurrent write",
						get_rel_name(h->relid)),
				 errdetail("This transaction writes at timestamp " INT64_FORMAT ", which it cannot move, and sees changes written later.",
						   (int64) from),
				 errhint("The transaction might succeed if retried.")));

	to = mzcoord_rebase_write_ts();
	if (written == NIL)
		return;

	mzcoord_become_owner(h->owner, &save_user, &save_sec);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	foreach(lc, written)
	{
		Oid			histid = lfirst_oid(lc);
		Oid			argtypes[2] = {INT8OID, INT8OID};
		Datum		values[2] = {Int64GetDatum(from), Int64GetDatum(to)};
		char	   *name;
		int			ret;

		/* Dropped since (DROP TABLE in this transaction): nothing to move. */
		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(histid)))
			continue;
		name = quote_qualified_identifier(get_namespace_name(get_rel_namespace(histid)),
										  get_rel_name(histid));
		ret = SPI_execute_with_args(psprintf("UPDATE %s SET " MZC_HISTORY_TS " = $2"
											 " WHERE " MZC_HISTORY_TS " OPERATOR(pg_catalog.=) $1",
											 name),
									2, argtypes, values, NULL, false, 0);
		if (ret != SPI_OK_UPDATE)
			elog(ERROR, "could not move the updates of %s: %s", name,
				 SPI_result_code_string(ret));
	}
	SPI_finish();
	mzcoord_restore_user(save_user, save_sec);
}

/*
 * Before a statement records updates of h's relation: make sure the
 * transaction has a write timestamp, and that it is not below anything the
 * statement may retract (see the file header).  retracts: the statement
 * retracts rows; truncating: it is a TRUNCATE.  fn_oid: the calling SQL
 * function, for the controller's readiness check (InvalidOid if none).
 */
void
mzcoord_prepare_write(const MzcHistory *h, bool retracts, bool truncating,
					  Oid fn_oid)
{
	mzc_ts		w;
	bool		needed = false;

	refresh_state();
	if (!mzcoord_has_write_ts())
	{
		/* Timestamps are only valid once the oracle was bootstrapped. */
		mzcoord_ctl_require_ready_fn(fn_oid);
		/* Registers the exit callback that ends the write on backend exit. */
		mzcoord_reserve_local_holds(0);
		(void) mzcoord_write_ts();
		ts_ours = true;
		return;
	}

	w = mzcoord_write_ts();
	if (mzcoord_oracle_last_write_ts() <= w)
		return;					/* nobody started writing after us */

	if (retracts && (truncating || XactIsoLevel == XACT_READ_COMMITTED))
		needed = true;
	else
	{
		MzcCollectionInfo info;

		/* Registered after we started writing? */
		if (mzcoord_ctl_lookup_rel(h->relid, &info) && !info.since.empty &&
			info.since.ts > w)
			needed = true;
	}
	if (needed)
		rebase(h);
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
 * Trigger function mzcoord._capture(): see the file header.
 */
Datum
mzcoord_capture(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Relation	rel;
	TupleDesc	desc;
	MzcHistory *h;
	Tuplestorestate *oldt;
	Tuplestorestate *newt;
	bool		truncating;
	int64		nold;
	int64		nnew;
	mzc_ts		w;
	MzcHistoryWriter writer;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._capture() must be called as a trigger")));
	if (!TRIGGER_FIRED_FOR_STATEMENT(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._capture() must be a statement trigger")));

	rel = td->tg_relation;
	desc = RelationGetDescr(rel);
	truncating = TRIGGER_FIRED_BY_TRUNCATE(td->tg_event);
	oldt = truncating ? NULL : td->tg_oldtable;
	newt = truncating ? NULL : td->tg_newtable;
	nold = oldt ? tuplestore_tuple_count(oldt) : 0;
	nnew = newt ? tuplestore_tuple_count(newt) : 0;
	if (!truncating && nold == 0 && nnew == 0)
		return PointerGetDatum(NULL);

	h = mzcoord_history_lookup(RelationGetRelid(rel), true);
	if (h == NULL || h->kind != MZC_KIND_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has capture triggers but no mzcoord history",
						RelationGetRelationName(rel))));

	mzcoord_prepare_write(h, truncating || nold > 0, truncating,
						  fcinfo->flinfo->fn_oid);
	w = mzcoord_write_ts();
	mzcoord_history_writer_begin(&writer, h,
								 truncating || nold + nnew > MZC_BULK_ROWS);

	if (truncating)
	{
		Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
		TupleTableSlot *slot = table_slot_create(rel, NULL);
		TableScanDesc scan = table_beginscan(rel, snapshot, 0, NULL);

		while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
		{
			CHECK_FOR_INTERRUPTS();
			mzcoord_history_writer_add(&writer, slot, w, -1);
		}
		table_endscan(scan);
		ExecDropSingleTupleTableSlot(slot);
		UnregisterSnapshot(snapshot);
	}
	else
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
		 * version of each row in the same order: a pair that is byte for byte
		 * the same needs no update.  (Dropping any identical pair is sound
		 * whatever the pairing: its two updates cancel.)
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
				mzcoord_history_writer_add(&writer, oslot, w, -1);
			if (more_new)
				mzcoord_history_writer_add(&writer, nslot, w, 1);
		}
		ExecDropSingleTupleTableSlot(oslot);
		ExecDropSingleTupleTableSlot(nslot);
	}

	mzcoord_history_writer_end(&writer);
	mzcoord_note_history_written(h->histid);
	return PointerGetDatum(NULL);
}
