/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  Physical compaction of histories up to their since.
 *
 * Compacting a history up to a time S (never beyond the collection's since,
 * which holds and policies keep at or below every time anyone may read, nor
 * beyond its committed compaction bound in mzcoord.compaction_bounds, read
 * in the compaction's own transaction: the catalog is the authority)
 * advances every update at a time below S to S and consolidates: identical
 * rows add up, rows that add up to zero disappear.  Nobody reads at a time
 * below S, and at S and after every time below S is the same as S: so a row
 * below the compacted frontier is at the frontier, whatever its ts says,
 * and compaction rewrites only the rows that consolidate.  Those are the
 * rows equal to a retraction: every retraction (diff < 0) between the
 * compacted frontier C and S, and every row below S with the same columns.
 * Their diffs add up to a sum per row; the rows are deleted and each sum
 * other than zero written back at S.  Every other row stays as it is: an
 * insertion that nothing retracts gains nothing from being moved.  So after
 * a compaction to S no retraction is left below S (check_consistency checks
 * it): what lies below is one insertion per row still there, read as at S.
 * A read at S or later sees the same contents before, during and after: the
 * compaction is one transaction.
 *
 * It finds the retractions through the history's index of retractions and
 * keeps their rows in memory (at most about maintenance_work_mem: beyond
 * that it stops at the next time and compacts that far, the next compaction
 * going on from there), then scans the history once for the rows equal to
 * them (by binary image, rowimage.c); its writes are proportional to what
 * consolidates, not to the history.  It only touches rows below S.  Writers
 * are never blocked: they insert rows at times at or after the upper, which
 * is beyond S, and take ROW EXCLUSIVE on the history, which does not
 * conflict with the SHARE UPDATE EXCLUSIVE lock that keeps two compactions
 * of one history apart.  The compacted frontier is recorded in
 * mzcoord.storage in the same transaction.
 *
 * When the compactor compacts (only when retractions make it pay) is its
 * own policy: see autocompact.c.  mzcoord.compact(rel) compacts one
 * collection now, whatever the policy.
 *
 * IDENTIFICATION
 *	  src/storage/compact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "compact.h"
#include "controller.h"
#include "extension.h"
#include "failpoint.h"
#include "history.h"
#include "ids.h"
#include "rec_bounds.h"
#include "rec_storage.h"
#include "rowimage.h"

PG_FUNCTION_INFO_V1(mzcoord_compact);

/*
 * How far a collection may be compacted now: its since, and for a fed
 * history (a source, a materialized view) never its upper (an advance
 * applies the updates at times from the upper on to the relation; none may
 * be moved there).  -1: not at all.
 */
int64
mzcoord_compaction_target(const MzcCollectionInfo *info)
{
	int64		target;

	if (info->since.empty)
		return -1;
	target = info->since.ts;
	if (mzcoord_kind_is_fed(info->kind) && !info->upper.empty)
		target = Min(target, info->upper.ts - 1);
	return target;
}

/* The compacted frontier of gid's history (a fresh snapshot). */
static int64
read_compacted(int64 gid, bool *found)
{
	int64		c = 0;
	bool		isnull;

	*found = mzcoord_rec_storage_compacted(gid, &c, &isnull);
	return c;
}

/*
 * Lock h's history for a compaction and open it, or NULL: with wait =
 * false, when the lock is not free; in any case, when the history was
 * dropped meanwhile.
 *
 * One compaction of a history at a time; writers (ROW EXCLUSIVE) are not
 * affected.  The lock also keeps the history's columns as they are
 * (following an ALTER TABLE alters the history).  The columns come from
 * the history itself, so the relation is not locked: not even a TRUNCATE
 * of it waits for a compaction.
 */
static Relation
open_history_for_compaction(const MzcHistory *h, bool wait)
{
	if (wait)
		LockRelationOid(h->histid, ShareUpdateExclusiveLock);
	else if (!ConditionalLockRelationOid(h->histid, ShareUpdateExclusiveLock))
		return NULL;
	return try_table_open(h->histid, NoLock);	/* NULL: dropped meanwhile */
}

/*
 * What one compaction of a history to a target S works with: the
 * retractions from the compacted frontier C to S, keyed by row (the
 * history's columns but ts and diff), each summing the diffs of every row
 * below S equal to it, and the rows found equal to one of them.
 */
typedef struct CompactWork
{
	const MzcHistory *h;
	Relation	hrel;
	Snapshot	snapshot;
	TupleDesc	keydesc;		/* the history's columns, ts and diff dropped */
	MzcRowSet  *rows;			/* NULL: no retraction between C and S */
	ItemPointerData *tids;		/* the rows below S that consolidate */
	int64		ntids;
	int64		maxtids;
} CompactWork;

/* The history's descriptor with ts and diff marked dropped: the row key. */
static TupleDesc
compaction_key_desc(const MzcHistory *h, Relation hrel)
{
	TupleDesc	desc = CreateTupleDescCopy(RelationGetDescr(hrel));

	TupleDescAttr(desc, h->ts_attno - 1)->attisdropped = true;
	TupleDescAttr(desc, h->diff_attno - 1)->attisdropped = true;
	return desc;
}

/*
 * Collect the retractions with C <= ts < *target, in time order, into
 * cw->rows (those at C itself too: a compaction that stopped at C left
 * them there).  Their rows are kept in memory; once they take more than
 * maintenance_work_mem, collection stops at the next time and *target
 * comes down to it (every retraction below it is collected): the
 * compaction then goes that far, and the next one goes on from there.
 */
static void
collect_retractions(CompactWork *cw, int64 compacted, int64 *target)
{
	MzcHistoryRead r;
	int64		ts;
	int64		diff;
	int64		last = PG_INT64_MIN;
	Size		budget = (Size) maintenance_work_mem * 1024;

	mzcoord_history_open_read(&r, cw->h, "retractions", cw->snapshot);
	mzcoord_history_time_scan(&r, compacted, *target);
	while (mzcoord_history_next(&r, NULL, &ts, &diff))
	{
		if (diff >= 0)
			continue;
		if (cw->rows != NULL && ts > last &&
			MemoryContextMemAllocated(cw->rows->cxt, true) > budget)
		{
			*target = ts;
			break;
		}
		last = ts;
		if (cw->rows == NULL)
			cw->rows = mzcoord_rowset_create(cw->keydesc, CurrentMemoryContext);
		slot_getallattrs(r.hslot);
		/* Counted again, with every other row below the target, by the scan. */
		(void) mzcoord_rowset_add(cw->rows, r.hslot->tts_values, r.hslot->tts_isnull,
								  mzcoord_row_hash(cw->keydesc, r.hslot->tts_values,
												   r.hslot->tts_isnull),
								  0);
	}
	mzcoord_history_close_read(&r);
}

/* Remember tid among the rows to delete. */
static void
remember_tid(CompactWork *cw, ItemPointer tid)
{
	if (cw->ntids == cw->maxtids)
	{
		cw->maxtids = Max(cw->maxtids * 2, 1024);
		cw->tids = cw->tids == NULL ?
			palloc_extended(sizeof(ItemPointerData) * cw->maxtids, MCXT_ALLOC_HUGE) :
			repalloc_huge(cw->tids, sizeof(ItemPointerData) * cw->maxtids);
	}
	cw->tids[cw->ntids++] = *tid;
}

/*
 * One scan of the history: every row below target equal to a retraction
 * adds its diff to the retraction's sum and is remembered for deletion;
 * returns how many rows below target are left alone.
 */
static int64
match_rows(CompactWork *cw, int64 target)
{
	const MzcHistory *h = cw->h;
	TableScanDesc scan = table_beginscan(cw->hrel, cw->snapshot, 0, NULL);
	TupleTableSlot *slot = table_slot_create(cw->hrel, NULL);
	int64		left = 0;

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		int64		ts;
		MzcRowEntry *e;

		CHECK_FOR_INTERRUPTS();
		slot_getallattrs(slot);
		ts = DatumGetInt64(slot->tts_values[h->ts_attno - 1]);
		if (ts >= target)
			continue;
		e = mzcoord_rowset_find(cw->rows, slot->tts_values, slot->tts_isnull,
								mzcoord_row_hash(cw->keydesc, slot->tts_values,
												 slot->tts_isnull));
		if (e == NULL)
		{
			left++;
			continue;
		}
		e->count += DatumGetInt64(slot->tts_values[h->diff_attno - 1]);
		remember_tid(cw, &slot->tts_tid);
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	return left;
}

/*
 * Replace the rows that consolidate by their sums, at target; returns how
 * many rows were written.  A negative sum means the history retracts more
 * of a row than it ever inserted: it is corrupt, and nothing is changed.
 */
static int64
write_consolidated(CompactWork *cw, int64 target)
{
	MzcHistoryWriter w;

	for (MzcRowEntry *e = cw->rows->first; e != NULL; e = e->link)
		if (e->count < 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("history \"%s\" retracts a row more often than it inserts it",
							RelationGetRelationName(cw->hrel)),
					 errdetail("Below time " INT64_FORMAT " the row's diffs add up to " INT64_FORMAT ".",
							   target, e->count)));
	for (int64 i = 0; i < cw->ntids; i++)
		simple_table_tuple_delete(cw->hrel, &cw->tids[i], cw->snapshot);
	mzcoord_history_writer_begin(&w, cw->h, cw->ntids > 1000);
	for (MzcRowEntry *e = cw->rows->first; e != NULL; e = e->link)
		if (e->count > 0)
			mzcoord_history_writer_add_columns(&w, e->values, e->isnull, target,
											   e->count);
	mzcoord_history_writer_end(&w);
	return w.written;
}

/*
 * Compact h's history (hrel, locked for compaction) from its compacted
 * frontier up to *target, with a fresh snapshot; *target may come down
 * (collect_retractions).  See the file header.
 */
static void
run_compaction(const MzcHistory *h, Relation hrel, int64 compacted,
			   int64 *target, MzcCompaction *res)
{
	CompactWork cw = {0};

	cw.h = h;
	cw.hrel = hrel;
	cw.snapshot = RegisterSnapshot(GetLatestSnapshot());
	cw.keydesc = compaction_key_desc(h, hrel);
	collect_retractions(&cw, compacted, target);
	if (cw.rows != NULL)
	{
		res->rows_left = match_rows(&cw, *target);
		res->rows_in = cw.ntids;
		res->rows_out = write_consolidated(&cw, *target);
		res->rows_left += res->rows_out;
		mzcoord_rowset_destroy(cw.rows);
	}
	else
		res->rows_left = -1;	/* not counted: as many as before, and more */
	if (cw.tids != NULL)
		pfree(cw.tids);
	UnregisterSnapshot(cw.snapshot);
}

/*
 * Record in mzcoord.storage that gid's history (hrel) is compacted to
 * since, leaving rows_left rows at or below it (-1: as many as the last
 * compaction counted; SPI connected).
 */
static void
record_compaction(int64 gid, Relation hrel, int64 since, int64 rows_left)
{
	if (!mzcoord_rec_storage_compacted_to(gid, since, rows_left))
		elog(ERROR, "could not record the compaction of %s",
			 RelationGetRelationName(hrel));
}

/*
 * Compact h's history up to `since` (at most the collection's since).  With
 * wait = false, gives up (returns false) instead of waiting for a lock: on
 * the history, or on its storage row.
 */
bool
mzcoord_compact_history(const MzcHistory *h, int64 since, bool wait, MzcCompaction *res)
{
	Relation	hrel;
	Oid			save_user;
	int			save_sec;
	int			save_nest;
	bool		found;
	int64		bound;
	bool		bound_empty;

	memset(res, 0, sizeof(*res));
	hrel = open_history_for_compaction(h, wait);
	if (hrel == NULL)
		return false;

	save_nest = mzcoord_become_owner(h->owner, &save_user, &save_sec);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/*
	 * Not waiting: a transaction that holds the storage row, where the
	 * compaction records its frontier, puts this compaction off rather than
	 * stall the compactor, which has every other collection to compact.
	 */
	if (!wait && !mzcoord_rec_storage_lock_unless_held(h->gid))
	{
		SPI_finish();
		mzcoord_restore_user(save_user, save_sec, save_nest);
		table_close(hrel, NoLock);
		return false;
	}
	res->frontier = read_compacted(h->gid, &found);

	/* Never beyond the committed bound, the catalog's permission (D2). */
	if (!mzcoord_rec_bound(h->gid, &bound, &bound_empty))
		found = false;
	else if (!bound_empty)
		since = Min(since, bound);
	if (found && since > res->frontier)
	{
		run_compaction(h, hrel, res->frontier, &since, res);
		/* Test only: history compacted, its frontier not yet recorded. */
		mzcoord_failpoint_check("compaction_before_record");
		record_compaction(h->gid, hrel, since, res->rows_left);
		res->frontier = since;
		res->compacted = true;
	}
	SPI_finish();
	mzcoord_restore_user(save_user, save_sec, save_nest);
	table_close(hrel, NoLock);
	return true;
}

/*
 * SQL: mzcoord.compact(rel regclass, OUT compacted bigint, OUT rows_in bigint,
 *		OUT rows_out bigint) RETURNS record
 *
 * Compacts the history of a table, source or materialized view up to its
 * current since now.
 */
Datum
mzcoord_compact(PG_FUNCTION_ARGS)
{
	Oid			relid;
	MzcHistory *h;
	MzcCollectionInfo info;
	MzcCompaction res;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	if (!OidIsValid(get_rel_relkind(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));
	/* Before anything is locked: see mzcoord_extension_guard(). */
	mzcoord_extension_guard();
	h = mzcoord_history_lookup(relid, false);
	if (!mzcoord_ctl_lookup_rel(relid, &info))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("collection of \"%s\" is not published yet", get_rel_name(relid)),
				 errhint("Commit the transaction that created it first.")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	if (mzcoord_compaction_target(&info) >= 0)
		(void) mzcoord_compact_history(h, mzcoord_compaction_target(&info), true, &res);
	else
		memset(&res, 0, sizeof(res));
	values[0] = Int64GetDatum(res.frontier);
	values[1] = Int64GetDatum(res.rows_in);
	values[2] = Int64GetDatum(res.rows_out);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}
