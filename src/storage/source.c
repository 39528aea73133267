/*-------------------------------------------------------------------------
 *
 * source.c
 *	  Sources: timestamped appends, explicit upper advances, and the source
 *	  relation that shows the contents at the latest complete time.
 *
 * A source is fed by batches of insertions and retractions at explicit
 * times at or after its upper (mzcoord.append), and made complete up to a
 * time by advancing its upper (mzcoord.advance_upper).  Both lock the
 * source's relation in SHARE ROW EXCLUSIVE mode, which conflicts with itself
 * and with every write, so appenders and advancers of one source queue up
 * while its readers go on; they check the upper only once they hold the
 * lock.  The upper is read from mzcoord.collections with a fresh snapshot
 * (the previous holder of the lock has committed), and an advance writes it
 * there in the same transaction as the data, so a crash can never keep data
 * and lose the upper that made it complete, or the reverse.  The advance is
 * also staged for the controller, which publishes it at commit.
 *
 * When the upper advances from u to u', the updates in [u, u') are applied
 * to the source's relation, which then shows the contents at u' - 1.  They
 * are checked time by time first: a retraction of a row the source does not
 * have at that time is refused and nothing changes; appending the missing
 * insertions (at a time that is still open) repairs it.  The relation is
 * otherwise read-only: an internal trigger refuses direct writes.
 *
 * IDENTIFICATION
 *	  src/storage/source.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "controller.h"
#include "extension.h"
#include "history.h"
#include "ids.h"
#include "oracle.h"
#include "read.h"
#include "rec_collections.h"
#include "rowimage.h"
#include "source.h"
#include "stage.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_append);
PG_FUNCTION_INFO_V1(mzcoord_advance_upper);
PG_FUNCTION_INFO_V1(mzcoord_source_guard);

/* The source relation this backend is applying updates to, if any. */
static Oid	applying_relid = InvalidOid;

static bool
mzcoord_applying_source(Oid relid)
{
	return OidIsValid(relid) && relid == applying_relid;
}

/*
 * Trigger function mzcoord._source_guard(): a source's relation changes only
 * when its upper advances.
 */
Datum
mzcoord_source_guard(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	MzcHistory *h;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._source_guard() must be called as a trigger")));
	if (mzcoord_applying_source(RelationGetRelid(td->tg_relation)))
		return PointerGetDatum(NULL);
	h = mzcoord_history_lookup(RelationGetRelid(td->tg_relation), true);
	if (h != NULL && h->kind == MZC_KIND_MATERIALIZED_VIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot change materialized view \"%s\" directly",
						RelationGetRelationName(td->tg_relation)),
				 errdetail("The relation of a materialized view shows its contents at its latest complete time."),
				 errhint("The coordinator refreshes it; see mzcoord.maintenance_status.")));
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("cannot change source \"%s\" directly",
					RelationGetRelationName(td->tg_relation)),
			 errdetail("The relation of a source shows its contents at its latest complete time."),
			 errhint("Append updates with mzcoord.append() and complete them with mzcoord.advance_upper().")));
	return PointerGetDatum(NULL);
}

/* ----------------------------------------------------------------
 * Helpers
 * ----------------------------------------------------------------
 */

/* The history of a source, or 42809. */
static MzcHistory *
source_history(Oid relid)
{
	MzcHistory *h = mzcoord_history_lookup(relid, true);

	if (h == NULL || h->kind != MZC_KIND_SOURCE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an mzcoord source", get_rel_name(relid)),
				 h != NULL ? errhint("Tables are written with INSERT, UPDATE and DELETE.") :
				 errhint("Create a source with mzcoord.create_source().")));
	return h;
}

static void
require_privilege(Oid relid, AclMode mode)
{
	AclResult	acl = pg_class_aclcheck(relid, GetUserId(), mode);

	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_TABLE, get_rel_name(relid));
}

/*
 * The source's upper: what mzcoord.collections says with a fresh snapshot
 * (the source is locked, so it is the upper of the last advance that
 * committed, or of this transaction's own), never less than the
 * controller's.  Raises 22023 if the source is sealed.
 */
static int64
source_upper(const MzcHistory *h)
{
	int			ret;
	bool		found;
	bool		isnull;
	int64		upper;
	MzcCollectionInfo info;

	mzcoord_spi_connect();
	ret = mzcoord_rec_read_upper(mzcoord_gid_text(h->gid), GetLatestSnapshot(),
								 &found, &upper, &isnull);
	if (ret == 0)
		elog(ERROR, "could not prepare the upper lookup");
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read the upper of a source: %s",
			 SPI_result_code_string(ret));
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("source \"%s\" has no collection", get_rel_name(h->relid))));
	SPI_finish();

	if (mzcoord_ctl_lookup_gid(h->gid, &info))
	{
		if (info.upper.empty)
			isnull = true;
		else if (!isnull)
			upper = Max(upper, info.upper.ts);
	}
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source \"%s\" is sealed", get_rel_name(h->relid)),
				 errdetail("Its upper is the empty frontier: it takes no more updates.")));
	return upper;
}

/* A row as text, "(v1,v2,...)", for messages. */
static char *
row_text(TupleDesc desc, Datum *values, bool *isnull)
{
	StringInfoData buf;
	bool		first = true;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '(');
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Oid			out;
		bool		varlena;

		if (att->attisdropped)
			continue;
		if (!first)
			appendStringInfoChar(&buf, ',');
		first = false;
		if (isnull[i])
			continue;
		getTypeOutputInfo(att->atttypid, &out, &varlena);
		appendStringInfoString(&buf, OidOutputFunctionCall(out, values[i]));
	}
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/* ----------------------------------------------------------------
 * mzcoord.append
 * ----------------------------------------------------------------
 */

/* Add the rows of a composite array to set with diff sign (+1 / -1). */
static void
add_array_rows(MzcRowSet *set, ArrayType *arr, TupleDesc desc, int64 sign,
			   const char *what)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	Datum	   *values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(desc->natts, 1));

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", what)));
	deconstruct_array(arr, ARR_ELEMTYPE(arr), -1, false, TYPALIGN_DOUBLE,
					  &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		HeapTupleHeader td;
		HeapTupleData tuple;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain null rows", what),
					 errhint("A row whose columns are all null is written ROW(NULL, ...).")));
		td = DatumGetHeapTupleHeader(elems[i]);
		tuple.t_len = HeapTupleHeaderGetDatumLength(td);
		ItemPointerSetInvalid(&tuple.t_self);
		tuple.t_tableOid = InvalidOid;
		tuple.t_data = td;
		heap_deform_tuple(&tuple, desc, values, isnull);
		(void) mzcoord_rowset_add(set, values, isnull,
								  mzcoord_row_hash(desc, values, isnull), sign);
	}
}

/*
 * mzcoord.append(source anyelement, at bigint, inserts anyarray
 *		[, retractions anyarray]) RETURNS void
 *
 * Appends a batch of updates to a source at time `at`, which must not be
 * below its upper: every row of inserts once more, every row of retractions
 * once less.  Identical rows are consolidated.  The updates become visible
 * (to read_at and in the source's relation) once the upper passes `at`.
 */
Datum
mzcoord_append(PG_FUNCTION_ARGS)
{
	Oid			relid = mzcoord_rowtype_relation(fcinfo, 0, "append");
	ArrayType  *inserts = PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2);
	ArrayType  *retractions = (PG_NARGS() < 4 || PG_ARGISNULL(3)) ? NULL :
		PG_GETARG_ARRAYTYPE_P(3);
	int64		at;
	int64		upper;
	MzcHistory *h;
	Relation	rel;
	MzcRowSet  *set;
	MzcHistoryWriter writer;
	TupleTableSlot *slot;

	at = mzcoord_timestamp_arg(fcinfo, 1, "the timestamp to append at");
	mzcoord_check_user_time(at, "timestamp");

	/* Before anything is locked: see mzcoord_extension_guard(). */
	mzcoord_extension_guard();
	h = source_history(relid);
	require_privilege(relid, ACL_INSERT);
	if (retractions != NULL && ArrayGetNItems(ARR_NDIM(retractions), ARR_DIMS(retractions)) > 0)
		require_privilege(relid, ACL_DELETE);

	/* Validate and consolidate the batch before anything is locked. */
	rel = table_open(relid, AccessShareLock);
	set = mzcoord_rowset_create(RelationGetDescr(rel), CurrentMemoryContext);
	if (inserts != NULL)
		add_array_rows(set, inserts, RelationGetDescr(rel), 1, "inserts");
	if (retractions != NULL)
		add_array_rows(set, retractions, RelationGetDescr(rel), -1, "retractions");

	/* One appender or advancer at a time; then the upper cannot move. */
	LockRelationOid(relid, ShareRowExclusiveLock);
	upper = source_upper(h);
	if (at < upper)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot append to source \"%s\" at timestamp " INT64_FORMAT,
						RelationGetRelationName(rel), at),
				 errdetail("Its upper is " INT64_FORMAT ": every time before it is complete.",
						   upper),
				 errhint("Append at a time at or after the upper.")));

	slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);
	mzcoord_history_writer_begin(&writer, h, set->nentries > 1000);
	for (MzcRowEntry *e = set->first; e != NULL; e = e->link)
	{
		if (e->count == 0)
			continue;
		ExecClearTuple(slot);
		memcpy(slot->tts_values, e->values, sizeof(Datum) * slot->tts_tupleDescriptor->natts);
		memcpy(slot->tts_isnull, e->isnull, sizeof(bool) * slot->tts_tupleDescriptor->natts);
		ExecStoreVirtualTuple(slot);
		mzcoord_history_writer_add(&writer, slot, at, e->count);
	}
	mzcoord_history_writer_end(&writer);
	ExecDropSingleTupleTableSlot(slot);
	mzcoord_rowset_destroy(set);

	table_close(rel, NoLock);
	PG_RETURN_VOID();
}

/* ----------------------------------------------------------------
 * mzcoord.advance_upper
 * ----------------------------------------------------------------
 */

/* What the window of an advance knows about one row. */
typedef struct WindowRow
{
	int64		minprefix;		/* least running count at a time boundary */
	int64		mints;			/* the time of that least count */
	int64		base;			/* copies the relation has now */
	int64		ntids;
	ItemPointerData *tids;		/* copies to delete */
} WindowRow;

/*
 * The end of time ts in a window scan: each row touched at ts records its
 * running count if it is the least so far.
 */
static void
close_time(List *touched, int64 ts)
{
	ListCell   *lc;

	foreach(lc, touched)
	{
		MzcRowEntry *e = lfirst(lc);
		WindowRow  *w = e->extra;

		if (e->count < w->minprefix)
		{
			w->minprefix = e->count;
			w->mints = ts;
		}
	}
}

/* SPI_prepare, raising an error instead of returning NULL. */
static SPIPlanPtr
prepare_or_fail(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, argtypes);

	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	return plan;
}

/*
 * The deletions and insertions that apply a window to a source's relation:
 * the TIDs of the copies it retracts and, as composite datums, the copies it
 * adds.
 */
typedef struct WindowChanges
{
	ItemPointerData *dels;
	int			ndels;
	int			maxdels;
	Datum	   *ins;
	int			nins;
	int			maxins;
} WindowChanges;

/*
 * Read the updates of h with from <= ts < upto, in time order, into set:
 * each row's net count over the window, and (in its WindowRow) the least
 * running count it reaches at a time boundary and that time.
 */
static void
scan_window(const MzcHistory *h, TupleDesc desc, Snapshot snapshot,
			MzcRowSet *set, int64 from, int64 upto)
{
	MzcHistoryRead r;
	TupleTableSlot *row;
	List	   *touched = NIL;
	int64		cur = -1;
	int64		ts;
	int64		diff;
	MzcRowEntry *e;

	mzcoord_history_open_read(&r, h, "ts", snapshot);
	row = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	mzcoord_history_time_scan(&r, from, upto);
	while (mzcoord_history_next(&r, row, &ts, &diff))
	{
		if (ts != cur)
		{
			close_time(touched, cur);
			list_free(touched);
			touched = NIL;
			cur = ts;
		}
		e = mzcoord_rowset_add(set, row->tts_values, row->tts_isnull,
							   mzcoord_row_hash(desc, row->tts_values, row->tts_isnull),
							   diff);
		if (e->extra == NULL)
			e->extra = palloc0(sizeof(WindowRow));
		touched = lappend(touched, e);
	}
	close_time(touched, cur);
	ExecDropSingleTupleTableSlot(row);
	mzcoord_history_close_read(&r);
}

/*
 * For the rows the window retracts at some time: how many copies the
 * relation has now (base), and the TIDs of the copies to delete.  Skips the
 * scan of the relation when nothing is retracted.
 */
static void
find_base_copies(Relation rel, Snapshot snapshot, MzcRowSet *set)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		need_base = false;
	TupleTableSlot *rslot;
	TableScanDesc rscan;

	for (MzcRowEntry *e = set->first; e != NULL; e = e->link)
		need_base |= ((WindowRow *) e->extra)->minprefix < 0;
	if (!need_base)
		return;

	rslot = table_slot_create(rel, NULL);
	rscan = table_beginscan(rel, snapshot, 0, NULL);
	while (table_scan_getnextslot(rscan, ForwardScanDirection, rslot))
	{
		MzcRowEntry *e;
		WindowRow  *w;

		CHECK_FOR_INTERRUPTS();
		slot_getallattrs(rslot);
		e = mzcoord_rowset_find(set, rslot->tts_values, rslot->tts_isnull,
								mzcoord_row_hash(desc, rslot->tts_values,
												 rslot->tts_isnull));
		if (e == NULL)
			continue;
		w = e->extra;
		w->base++;
		if (e->count < 0 && w->ntids < -e->count)
		{
			if (w->tids == NULL)
				w->tids = palloc(sizeof(ItemPointerData) * (-e->count));
			w->tids[w->ntids++] = rslot->tts_tid;
		}
	}
	table_endscan(rscan);
	ExecDropSingleTupleTableSlot(rslot);
}

/* Nothing may go below zero at any time of the window: else 22023. */
static void
check_window_counts(Relation rel, MzcRowSet *set, int64 upto)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (MzcRowEntry *e = set->first; e != NULL; e = e->link)
	{
		WindowRow  *w = e->extra;

		if (w->base + w->minprefix < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot advance the upper of source \"%s\" to " INT64_FORMAT,
							RelationGetRelationName(rel), upto),
					 errdetail("At timestamp " INT64_FORMAT " its updates would leave row %s with count %lld.",
							   w->mints, row_text(desc, e->values, e->isnull),
							   (long long) (w->base + w->minprefix)),
					 errhint("Append the missing insertions at or before that time, or advance the upper to an earlier time.")));
	}
}

/*
 * Room for one more element (of elemsize bytes) in array, which holds n of
 * *max: doubles it when full.  Returns the array, perhaps moved.
 */
static void *
grow_array(void *array, int n, int *max, Size elemsize)
{
	if (n == *max)
	{
		*max *= 2;
		array = repalloc(array, elemsize * *max);
	}
	return array;
}

/* What applying the window takes: delete what it retracts, insert what it adds. */
static void
window_changes(TupleDesc desc, MzcRowSet *set, WindowChanges *ch)
{
	ch->ndels = ch->nins = 0;
	ch->maxdels = ch->maxins = 16;
	ch->ins = palloc(sizeof(Datum) * ch->maxins);
	ch->dels = palloc(sizeof(ItemPointerData) * ch->maxdels);
	for (MzcRowEntry *e = set->first; e != NULL; e = e->link)
	{
		WindowRow  *w = e->extra;

		if (e->count < 0)
		{
			for (int64 i = 0; i < -e->count; i++)
			{
				ch->dels = grow_array(ch->dels, ch->ndels, &ch->maxdels,
									  sizeof(ItemPointerData));
				ch->dels[ch->ndels++] = w->tids[i];
			}
		}
		else if (e->count > 0)
		{
			HeapTuple	tup = heap_form_tuple(desc, e->values, e->isnull);
			Datum		d = heap_copy_tuple_as_datum(tup, desc);

			for (int64 i = 0; i < e->count; i++)
			{
				ch->ins = grow_array(ch->ins, ch->nins, &ch->maxins, sizeof(Datum));
				ch->ins[ch->nins++] = d;
			}
		}
	}
}

/* DELETE the copies at the given TIDs from rel (qrel: its quoted name). */
static void
delete_copies(Relation rel, const char *qrel, Snapshot snapshot,
			  const WindowChanges *ch)
{
	Oid			argtypes[1] = {TIDARRAYOID};
	Datum		values[1];
	SPIPlanPtr	plan;
	Datum	   *tids = palloc(sizeof(Datum) * ch->ndels);

	for (int i = 0; i < ch->ndels; i++)
		tids[i] = PointerGetDatum(&ch->dels[i]);
	values[0] = PointerGetDatum(construct_array(tids, ch->ndels, TIDOID,
												sizeof(ItemPointerData),
												false, TYPALIGN_SHORT));
	plan = prepare_or_fail(psprintf("DELETE FROM %s WHERE ctid OPERATOR(pg_catalog.=) ANY ($1)",
									qrel), 1, argtypes);
	if (SPI_execute_snapshot(plan, values, NULL, snapshot,
							 InvalidSnapshot, false, true, 0) != SPI_OK_DELETE ||
		SPI_processed != (uint64) ch->ndels)
		elog(ERROR, "could not apply the retractions of source \"%s\"",
			 RelationGetRelationName(rel));
}

/* INSERT the added copies into rel (qrel: its quoted name). */
static void
insert_copies(Relation rel, const char *qrel, const WindowChanges *ch)
{
	Oid			rowtype = RelationGetForm(rel)->reltype;
	Oid			argtypes[1] = {get_array_type(rowtype)};
	Datum		values[1];
	SPIPlanPtr	plan;

	values[0] = PointerGetDatum(construct_array(ch->ins, ch->nins, rowtype, -1,
												false, TYPALIGN_DOUBLE));
	plan = prepare_or_fail(psprintf("INSERT INTO %s SELECT * FROM pg_catalog.unnest($1)",
									qrel), 1, argtypes);
	if (SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, false, true, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not apply the insertions of source \"%s\"",
			 RelationGetRelationName(rel));
}

/*
 * Write the window's changes to the source's relation, past its guard
 * (applying_relid), as the relation's owner: its constraints and triggers
 * (the owner's own code) run with the owner's rights, never the
 * extension's.
 */
static void
write_window(Relation rel, Snapshot snapshot, const WindowChanges *ch)
{
	char	   *qrel;
	Oid			save_user;
	int			save_sec;
	int			save_nest;

	if (ch->ndels == 0 && ch->nins == 0)
		return;
	qrel = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									  RelationGetRelationName(rel));
	save_nest = mzcoord_become_owner(rel->rd_rel->relowner, &save_user, &save_sec);
	mzcoord_spi_connect();
	applying_relid = RelationGetRelid(rel);
	PG_TRY();
	{
		if (ch->ndels > 0)
			delete_copies(rel, qrel, snapshot, ch);
		if (ch->nins > 0)
			insert_copies(rel, qrel, ch);
	}
	PG_FINALLY();
	{
		applying_relid = InvalidOid;
	}
	PG_END_TRY();
	SPI_finish();
	mzcoord_restore_user(save_user, save_sec, save_nest);
}

/*
 * Apply the updates of h with from <= ts < upto to the source's relation
 * (locked by the caller), after checking that no row goes negative at any
 * time.
 */
static void
apply_window(const MzcHistory *h, Relation rel, int64 from, int64 upto)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	MzcRowSet  *set = mzcoord_rowset_create(desc, CurrentMemoryContext);
	WindowChanges ch;

	scan_window(h, desc, snapshot, set, from, upto);
	find_base_copies(rel, snapshot, set);
	check_window_counts(rel, set, upto);
	window_changes(desc, set, &ch);
	write_window(rel, snapshot, &ch);
	mzcoord_rowset_destroy(set);
	UnregisterSnapshot(snapshot);
}

/*
 * Record the new upper of collection gid (-1: the empty frontier) in
 * mzcoord.collections, as owner (the extension's), and stage it for the
 * controller, which publishes it at commit.  The one writer of the durable
 * upper of a source, a materialized view (mzcoord_fed_advance) and a sink
 * (export.c); what names the collection in the error if its row is gone.
 */
void
mzcoord_record_upper(int64 gid, Oid owner, const char *what, int64 upper)
{
	Oid			save_user;
	int			save_sec;
	int			save_nest;

	save_nest = mzcoord_become_owner(owner, &save_user, &save_sec);
	mzcoord_spi_connect();
	if (!mzcoord_rec_advance_upper(mzcoord_gid_text(gid), upper))
		elog(ERROR, "could not record the upper of %s", what);
	SPI_finish();
	mzcoord_restore_user(save_user, save_sec, save_nest);
	mzcoord_stage_upper(gid, upper < 0 ? mzc_frontier_empty() :
						mzc_frontier_at(upper));
}

/*
 * Advance the upper of a fed history (a source, a materialized view) from
 * current to upper (-1: to the empty frontier, which completes every time)
 * in the caller's transaction: apply its updates in [current, upper) to its
 * relation, which the caller locked in SHARE ROW EXCLUSIVE mode, record the
 * new upper in mzcoord.collections and stage it for the controller, which
 * publishes it at commit.  Data and upper commit together or not at all.
 */
void
mzcoord_fed_advance(const MzcHistory *h, Relation rel, int64 current,
					int64 upper)
{
	apply_window(h, rel, current, upper < 0 ? PG_INT64_MAX : upper);
	mzcoord_record_upper(h->gid, h->owner,
						 psprintf("\"%s\"", RelationGetRelationName(rel)),
						 upper);
}

/*
 * mzcoord.advance_upper(source regclass, upper bigint) RETURNS void
 *
 * Makes every time before `upper` complete: the source's updates below it
 * become readable, and its relation shows the contents at upper - 1.  The
 * upper only advances; advancing to the current upper does nothing.
 */
Datum
mzcoord_advance_upper(PG_FUNCTION_ARGS)
{
	Oid			relid;
	int64		upper;
	int64		current;
	MzcHistory *h;
	Relation	rel;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("source and upper must not be null")));
	relid = PG_GETARG_OID(0);
	upper = PG_GETARG_INT64(1);
	if (!OidIsValid(get_rel_relkind(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (upper < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("upper must not be negative: " INT64_FORMAT, upper)));
	mzcoord_check_user_time(upper, "upper");
	/* Before anything is locked: see mzcoord_extension_guard(). */
	mzcoord_extension_guard();
	h = source_history(relid);
	require_privilege(relid, ACL_INSERT);

	rel = table_open(relid, ShareRowExclusiveLock);
	current = source_upper(h);
	if (upper < current)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot move the upper of source \"%s\" back from " INT64_FORMAT " to " INT64_FORMAT,
						RelationGetRelationName(rel), current, upper),
				 errdetail("An upper only advances: the times before it are complete.")));
	if (upper > current)
		mzcoord_fed_advance(h, rel, current, upper);
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}
