/*-------------------------------------------------------------------------
 *
 * read.c
 *	  Reading a history as of a time: mzcoord.read_at().
 *
 * The contents at time t are the updates with ts <= t, consolidated: each
 * row with the sum of its diffs, shown that many times.  Reading does not
 * group the whole history.  Insertions only add rows; only retractions can
 * cancel anything, and they are few next to the rows (an UPDATE or DELETE
 * makes one per row, compaction leaves none below the since).  So a read:
 *
 *	1. collects the retractions at or before t, through a partial index on
 *	   ts of the rows with diff < 0, into a multiset keyed by row image;
 *	2. scans the history once; each insertion at or before t is shown as
 *	   many times as its diff exceeds the retractions of the same row still
 *	   unmatched.
 *
 * Without retractions (an insert-only or fully compacted history) step 2 is
 * a plain sequential scan.  Memory is proportional to the retractions, not
 * to the history.  A retraction left unmatched means a row with a negative
 * count: a corrupt history, reported as such.
 *
 * read_at of a table whose history has nothing after t (one probe of the ts
 * index) reads the table itself instead: it has every committed update
 * applied, and the snapshot sees none after t, so its rows are the
 * contents at t (the same test lets a view's evaluation read its inputs
 * directly, see evaluate.c).  Not when this transaction has written the
 * table or given it a new relfilenode (TRUNCATE, a rewrite): a read leaves
 * out the transaction's own updates, and the table no longer has the rows
 * they replaced.  (A table registered in this transaction cannot be read
 * yet at all.)
 *
 * In a FROM clause read_at runs as the read_at scan (readscan.c), which
 * takes the rows one at a time from a read stream below: the relation's as
 * the heap scan finds them, a history's as step 2 finds them (after step 1
 * has collected the retractions).
 *
 * read_at takes a transaction hold at t unless the transaction holds the
 * relation at t or earlier, or an active lease of the user does (then the
 * since is checked again once the snapshot is taken; see
 * mzcoord_ctl_check_read), (a time below the since is refused), waits until
 * t is complete (t < upper), and only then takes the snapshot it reads with:
 * everything committed at or before t is visible to it, whatever the
 * caller's isolation level, and the hold keeps compaction from moving any
 * of it.  On a hot standby, where no coordinator runs, the wait and the
 * since come from what recovery replayed instead (controller/standby.c).
 *
 * IDENTIFICATION
 *	  src/storage/read.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/xlog.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "acquire.h"
#include "controller.h"
#include "extension.h"
#include "history.h"
#include "oracle.h"
#include "read.h"
#include "rowimage.h"
#include "selection.h"
#include "shmem.h"
#include "standby.h"
#include "support.h"
#include "viewerrors.h"

PG_FUNCTION_INFO_V1(mzcoord_read_at);

/*
 * A read of a history's contents at a time, row by row (the two steps of
 * the file header): begin collects the retractions, next returns each
 * insertion still shown and how many times, end reports the retractions
 * that found no row.
 */
typedef struct MzcHistoryCursor
{
	const MzcHistory *h;
	TupleDesc	reldesc;
	int64		upto;
	MzcHistoryRead hr;			/* the history, through its retractions index */
	TupleTableSlot *row;		/* a history tuple as a row of the relation */
	MzcRowSet  *retracted;		/* NULL: no retraction at or before upto */
	TableScanDesc scan;
} MzcHistoryCursor;

static void
history_cursor_begin(MzcHistoryCursor *c, const MzcHistory *h,
					 TupleDesc reldesc, Snapshot snapshot, int64 upto)
{
	int64		ts;
	int64		diff;

	if (reldesc->natts != h->natts)
		elog(ERROR, "relation of %d columns read with a history mapping of %d",
			 reldesc->natts, h->natts);
	c->h = h;
	c->reldesc = reldesc;
	c->upto = upto;
	mzcoord_history_open_read(&c->hr, h, "retractions", snapshot);
	c->row = MakeSingleTupleTableSlot(reldesc, &TTSOpsVirtual);
	c->retracted = NULL;

	/* 1. Retractions at or before upto. */
	mzcoord_history_time_scan(&c->hr, PG_INT64_MIN,
							  upto < PG_INT64_MAX ? upto + 1 : -1);
	while (mzcoord_history_next(&c->hr, c->row, &ts, &diff))
	{
		if (diff >= 0)
			continue;
		if (c->retracted == NULL)
			c->retracted = mzcoord_rowset_create(reldesc, CurrentMemoryContext);
		(void) mzcoord_rowset_add(c->retracted, c->row->tts_values,
								  c->row->tts_isnull,
								  mzcoord_row_hash(reldesc, c->row->tts_values,
												   c->row->tts_isnull),
								  -diff);
	}

	/* 2 starts: one scan of the history. */
	c->scan = table_beginscan(c->hr.hrel, snapshot, 0, NULL);
}

/*
 * The next insertion at or before upto, less what the retractions cancel,
 * in c->row (valid until the next call), shown *n > 0 times; false at the
 * end.
 */
static bool
history_cursor_next(MzcHistoryCursor *c, int64 *n)
{
	int64		ts;
	int64		diff;

	while (table_scan_getnextslot(c->scan, ForwardScanDirection, c->hr.hslot))
	{
		CHECK_FOR_INTERRUPTS();
		mzcoord_history_to_row(c->h, c->hr.hslot, c->row, &ts, &diff);
		if (diff <= 0 || ts > c->upto)
			continue;
		if (c->retracted != NULL)
		{
			MzcRowEntry *e;

			e = mzcoord_rowset_find(c->retracted, c->row->tts_values,
									c->row->tts_isnull,
									mzcoord_row_hash(c->reldesc, c->row->tts_values,
													 c->row->tts_isnull));
			if (e != NULL && e->count > 0)
			{
				int64		m = Min(diff, e->count);

				e->count -= m;
				diff -= m;
			}
		}
		if (diff > 0)
		{
			*n = diff;
			return true;
		}
	}
	return false;
}

/* End the read; returns how many retractions found no row (0 if sound). */
static int64
history_cursor_end(MzcHistoryCursor *c)
{
	int64		negative = 0;

	table_endscan(c->scan);
	if (c->retracted != NULL)
	{
		for (MzcRowEntry *e = c->retracted->first; e != NULL; e = e->link)
			negative += e->count;
		mzcoord_rowset_destroy(c->retracted);
	}
	ExecDropSingleTupleTableSlot(c->row);
	mzcoord_history_close_read(&c->hr);
	return negative;
}

/*
 * Emit the contents of h's history at `upto` with the given snapshot:
 * emit(arg, row, n) for rows shown n > 0 times (a row may be emitted more
 * than once).  reldesc is the relation's descriptor.  *negative receives
 * how many retractions found no row to cancel (0 in a sound history).
 */
void
mzcoord_history_contents(const MzcHistory *h, TupleDesc reldesc,
						 Snapshot snapshot, int64 upto,
						 MzcHistoryRowCallback emit, void *arg,
						 int64 *negative)
{
	MzcHistoryCursor c;
	int64		n;

	history_cursor_begin(&c, h, reldesc, snapshot, upto);
	while (history_cursor_next(&c, &n))
		emit(arg, c.row, n);
	*negative = history_cursor_end(&c);
}

/*
 * Whether snapshot sees no update of h at a time after `after`.  Then the
 * relation of h shows, in that snapshot, its contents at `after` (given
 * that every time up to `after` is complete): a table's relation has every
 * committed update applied, and a fed relation (a source, a materialized
 * view) every update below its upper.  One probe of the ts index.
 */
bool
mzcoord_history_quiet_after(const MzcHistory *h, Snapshot snapshot,
							int64 after)
{
	MzcHistoryRead r;
	int64		ts;
	int64		diff;
	bool		quiet = true;

	mzcoord_history_open_read(&r, h, "ts", snapshot);
	if (after < PG_INT64_MAX)
	{
		mzcoord_history_time_scan(&r, after + 1, -1);
		quiet = !mzcoord_history_next(&r, NULL, &ts, &diff);
	}
	mzcoord_history_close_read(&r);
	return quiet;
}

/* ----------------------------------------------------------------
 * SQL: mzcoord.read_at
 * ----------------------------------------------------------------
 */

/*
 * The relation whose row type is typid: a plain table (a table, source or
 * materialized view); otherwise 42809 naming func.
 */
Oid
mzcoord_rowtype_relation_of(Oid typid, const char *func)
{
	Oid			relid = OidIsValid(typid) ? get_typ_typrelid(typid) : InvalidOid;

	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s needs the row type of a table, source or materialized view, not type %s",
						func, OidIsValid(typid) ? format_type_be(typid) : "unknown"),
				 errhint("Pass a null of the relation's row type, for example NULL::my_table.")));
	return relid;
}

/* The relation whose row type is the type of argument argno. */
Oid
mzcoord_rowtype_relation(FunctionCallInfo fcinfo, int argno, const char *func)
{
	return mzcoord_rowtype_relation_of(get_fn_expr_argtype(fcinfo->flinfo, argno),
									   func);
}

/*
 * Whether read_at may read rel itself, in snapshot, for its contents at
 * `at`: a table whose history has no update after `at` in snapshot, which
 * this transaction has not written nor given a new relfilenode.
 */
static bool
read_relation_itself(Relation rel, const MzcHistory *h, Snapshot snapshot,
					 int64 at)
{
	if (h->kind != MZC_KIND_TABLE)
		return false;
	if (mzcoord_has_write_ts())
		return false;
	if (rel->rd_createSubid != InvalidSubTransactionId ||
		rel->rd_newRelfilenodeSubid != InvalidSubTransactionId ||
		rel->rd_firstRelfilenodeSubid != InvalidSubTransactionId)
		return false;
	return mzcoord_history_quiet_after(h, snapshot, at);
}

/*
 * Like a SELECT of rel (locked by the caller): the user's SELECT privilege
 * (42501 from aclcheck_error), and no row security, which a history does
 * not apply (42501).  detail: whether that error says so in its DETAIL
 * (_updates_at's never did, and its messages stay as they were).
 */
void
mzcoord_check_history_readable(Relation rel, bool detail)
{
	Oid			relid = RelationGetRelid(rel);
	AclResult	acl = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);

	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_TABLE, RelationGetRelationName(rel));
	if (check_enable_rls(relid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot read the history of \"%s\" under row-level security",
						RelationGetRelationName(rel)),
				 detail ? errdetail("The history does not apply the row security policies of the table.") : 0));
}

/*
 * What a read of a relation at a time has prepared: the relation (locked),
 * its history, and the snapshot it reads with.
 */
typedef struct MzcReadPrep
{
	Relation	rel;
	MzcHistory *h;
	Snapshot	snapshot;		/* registered */
	int64		at;
} MzcReadPrep;

/*
 * Everything a read of relid at `at` does before it reads: the privilege
 * of a SELECT, a hold at `at`, the wait until `at` is complete, and only
 * then the snapshot (see the file header).  fn_oid: the SQL function
 * reading, for the controller's readiness check.
 */
static void
read_prepare(MzcReadPrep *p, Oid relid, int64 at, Oid fn_oid)
{
	Relation	rel;
	bool		leased;

	/* Before anything is locked: see mzcoord_extension_guard(). */
	mzcoord_extension_guard();

	/* Like a SELECT of the relation: its lock and its privilege. */
	rel = table_open(relid, AccessShareLock);
	mzcoord_check_history_readable(rel, true);
	p->rel = rel;
	p->h = mzcoord_history_lookup(relid, false);
	p->at = at;

	/* A hot standby has no coordinator: see standby.c. */
	if (RecoveryInProgress())
	{
		mzcoord_require_shmem();
		mzcoord_standby_hold(&relid, 1, at);
		mzcoord_standby_wait_complete(relid, p->h->gid, p->h->kind, at);
		p->snapshot = RegisterSnapshot(GetLatestSnapshot());
		mzcoord_standby_check_read(relid, p->h->gid, at, p->snapshot);
		mzcoord_view_error_check(rel, p->h->gid, p->snapshot, at, at);
		return;
	}

	/* Hold, wait until complete, and only then take the snapshot. */
	mzcoord_ctl_require_ready_fn(fn_oid);
	mzcoord_ctl_check_reachable(relid, at);
	leased = mzcoord_ctl_hold_for_read(relid, at);
	mzcoord_ctl_wait_complete(relid, at);

	/*
	 * Leave out this transaction's own updates: they are not committed at
	 * any time yet (its writes get their timestamp at commit, after every
	 * time it can read at here).
	 */
	p->snapshot = RegisterSnapshot(GetLatestSnapshot());
	p->snapshot->curcid = FirstCommandId;
	/* Held by a lease, which may have gone meanwhile: see acquire.c. */
	if (leased)
		mzcoord_ctl_check_read(relid, at);
	/* A view in error at `at` has no contents there: its error instead. */
	mzcoord_view_error_check(rel, p->h->gid, p->snapshot, at, at);
}

/* A history whose retractions found no row to cancel is corrupt. */
static void
check_negative(MzcReadPrep *p, int64 negative)
{
	if (negative > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("history of \"%s\" retracts rows it does not have at timestamp " INT64_FORMAT,
						RelationGetRelationName(p->rel), p->at),
				 errdetail("%lld retractions have no matching row.",
						   (long long) negative)));
}

static void
read_finish(MzcReadPrep *p)
{
	UnregisterSnapshot(p->snapshot);
	table_close(p->rel, NoLock);
}

/* ----------------------------------------------------------------
 * Reading row by row: the read_at scan (readscan.c) and the function
 * ----------------------------------------------------------------
 */

struct MzcReadStream
{
	MzcReadPrep prep;
	/* Reading the relation itself: */
	TableScanDesc scan;
	TupleTableSlot *tslot;
	/* Reading the history: */
	MzcHistoryCursor *cursor;
	int64		repeat;			/* times the cursor's row is still to be shown */
};

/*
 * Start a read of relid at `at` whose rows mzcoord_read_stream_next
 * returns one at a time: the relation itself is scanned as the rows are
 * asked for; a history is read in its two steps, the retractions first,
 * then the insertions as they are asked for.  at was checked by the caller
 * (mzcoord_timestamp_value).
 */
MzcReadStream *
mzcoord_read_stream_begin(Oid relid, int64 at, Oid fn_oid)
{
	MzcReadStream *rs = palloc0(sizeof(MzcReadStream));

	read_prepare(&rs->prep, relid, at, fn_oid);
	if (read_relation_itself(rs->prep.rel, rs->prep.h, rs->prep.snapshot, at))
	{
		rs->tslot = table_slot_create(rs->prep.rel, NULL);
		rs->scan = table_beginscan(rs->prep.rel, rs->prep.snapshot, 0, NULL);
	}
	else
	{
		rs->cursor = palloc(sizeof(MzcHistoryCursor));
		history_cursor_begin(rs->cursor, rs->prep.h,
							 RelationGetDescr(rs->prep.rel), rs->prep.snapshot,
							 at);
	}
	return rs;
}

/* The next row in src (its values filled), or false at the end. */
static TupleTableSlot *
read_stream_fetch(MzcReadStream *rs)
{
	int64		n;

	if (rs->scan)
		return table_scan_getnextslot(rs->scan, ForwardScanDirection, rs->tslot) ?
			rs->tslot : NULL;
	if (rs->repeat > 0)
	{
		rs->repeat--;
		return rs->cursor->row;
	}
	if (rs->cursor == NULL)
		return NULL;
	if (history_cursor_next(rs->cursor, &n))
	{
		rs->repeat = n - 1;
		return rs->cursor->row;
	}
	/* The end: a corrupt history is an error, as read_at's. */
	n = history_cursor_end(rs->cursor);
	pfree(rs->cursor);
	rs->cursor = NULL;
	check_negative(&rs->prep, n);
	return NULL;
}

/*
 * The next row into out (a virtual slot of the relation's row type; its
 * values stay valid until the next call); false at the end.  Dropped
 * columns are null.
 */
bool
mzcoord_read_stream_next(MzcReadStream *rs, TupleTableSlot *out)
{
	TupleDesc	desc = RelationGetDescr(rs->prep.rel);
	TupleTableSlot *src;

	CHECK_FOR_INTERRUPTS();
	ExecClearTuple(out);
	src = read_stream_fetch(rs);
	if (src == NULL)
		return false;
	slot_getallattrs(src);
	for (int i = 0; i < out->tts_tupleDescriptor->natts; i++)
	{
		out->tts_values[i] = src->tts_values[i];
		out->tts_isnull[i] = src->tts_isnull[i] ||
			TupleDescAttr(desc, i)->attisdropped;
	}
	ExecStoreVirtualTuple(out);
	return true;
}

void
mzcoord_read_stream_end(MzcReadStream *rs)
{
	if (rs->scan)
	{
		table_endscan(rs->scan);
		ExecDropSingleTupleTableSlot(rs->tslot);
	}
	if (rs->cursor)
		(void) history_cursor_end(rs->cursor);
	read_finish(&rs->prep);
	pfree(rs);
}

/*
 * mzcoord.read_at(rel anyelement, at bigint) RETURNS SETOF anyelement, when
 * the executor calls it as a function (in a FROM clause the read_at scan
 * streams it instead, see readscan.c): the same read stream, its rows
 * stored in the function's result.
 */
Datum
mzcoord_read_at(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = mzcoord_rowtype_relation(fcinfo, 0, "read_at");
	int64		at = mzcoord_timestamp_arg(fcinfo, 1, MZC_READ_AT_WHAT);
	MzcReadStream *rs;
	TupleTableSlot *row;

	rs = mzcoord_read_stream_begin(relid, at, fcinfo->flinfo->fn_oid);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (rsinfo->setDesc->natts != RelationGetDescr(rs->prep.rel)->natts)
		elog(ERROR, "read_at: the row type of \"%s\" does not match its relation",
			 RelationGetRelationName(rs->prep.rel));
	row = MakeSingleTupleTableSlot(rsinfo->setDesc, &TTSOpsVirtual);
	while (mzcoord_read_stream_next(rs, row))
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 row->tts_values, row->tts_isnull);
	ExecDropSingleTupleTableSlot(row);
	mzcoord_read_stream_end(rs);
	return (Datum) 0;
}
