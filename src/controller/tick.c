/*-------------------------------------------------------------------------
 *
 * tick.c
 *	  The coordinator's tick: bootstrap when needed, advance the table
 *	  timeline and the implied capabilities, publish the compaction bounds
 *	  and persist the frontiers that changed, and move the durable holds
 *	  once that is committed.
 *
 * Publication: the tick writes, in one statement (publish_sql), the
 * compaction bound, the since and the upper of every collection whose
 * values changed (the core's dirty list and the recheck list).  The
 * proposal is meet(implied capability, the holds of dependent collections,
 * the leases on it): what the since will be after a restart, when
 * transaction holds are gone; the bound becomes join(old bound, proposal),
 * kept at or below every read requirement by the table's trigger, and the
 * since of mzcoord.collections mirrors it.  The statement runs only under
 * the coordinator's epoch (authority.c).  The durable hold of each
 * collection (publish.c) moves to the committed bound only after the
 * tick's transaction committed (tick_committed), so the live since never
 * passes the committed bound and no since regresses across a restart.  In
 * read-only mode (mzcoord.read_only) no bound is published.  A persist that did not commit leaves
 * MzcController.resync set, and the next tick compares every collection.
 *
 * Runs only in the coordinator, which is the only writer of `resync` (set
 * also by a bootstrap) and of the durable_* fields of MzcSlotInfo.
 *
 * IDENTIFICATION
 *	  src/controller/tick.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "authority.h"
#include "bootstrap.h"
#include "controller.h"
#include "failpoint.h"
#include "ids.h"
#include "lease.h"
#include "oracle.h"
#include "publish.h"
#include "settings.h"
#include "tick.h"
#include "collections.h"
#include "counted.h"
#include "frontier.h"
#include "policy.h"

typedef struct MzcPersistRow
{
	int32		slot;
	int64		gid;
	mzc_frontier since;
	mzc_frontier upper;
	bool		own_upper;		/* the tick writes its upper (see below) */
	bool		publish;		/* publish its bound (not in read-only mode) */
	bool		written;		/* set by persist_rows */
	mzc_frontier committed;		/* since written (the bound, for one with a bound) */
} MzcPersistRow;

/* Rows the current tick persists (worker only; in the tick's context). */
static MzcPersistRow *pending_rows = NULL;
static int	npending_rows = 0;

static bool publish_or_yield(Datum *values, Oid *argtypes);

/*
 * Where the timeline holds a materialized view (or an index, which follows
 * one): its policy applied to the least of its upper and the table
 * timeline.  A scheduled view's upper waits at its next refresh, ahead of
 * the timeline, and its policy applied to that would put its since past
 * the current time: unreadable between refreshes.  Materialize's coordinator holds every collection at its
 * timeline's read time; this is that hold, kept in the durable since (and
 * through the committed bound, in the live one).  {} for other kinds and
 * for views not ahead of the timeline.
 */
static mzc_frontier
timeline_hold(int32 slot, mzc_ts table_upper)
{
	mzc_collection *c = &mzcoord_ctl_slots[slot];
	MzcKind		kind = mzcoord_ctl_info[slot].kind;

	if ((kind != MZC_KIND_MATERIALIZED_VIEW && kind != MZC_KIND_INDEX) ||
		c->upper.empty || c->upper.ts <= table_upper)
		return mzc_frontier_empty();
	return mzc_policy_frontier(&c->policy, mzc_frontier_at(table_upper));
}

/*
 * Durable since of a slot: meet of its implied capability, the holds its
 * dependents keep on it, its active leases and the timeline's hold.
 * min_dep_hold may be NULL (no dependents).
 */
static mzc_frontier
durable_since(int32 slot, const mzc_frontier *min_dep_hold, mzc_ts table_upper)
{
	mzc_frontier f = mzcoord_ctl_slots[slot].implied;

	if (min_dep_hold != NULL)
		f = mzc_frontier_meet(f, min_dep_hold[slot]);
	/* Nor beyond an active lease, which a restart must find protected. */
	f = mzc_frontier_meet(f, mzcoord_lease_limit_locked(slot));
	return mzc_frontier_meet(f, timeline_hold(slot, table_upper));
}

/*
 * Does the tick write the durable upper of a collection of this kind?  Not
 * of a source, a materialized view or a sink: their upper is their
 * progress, written by the transaction that makes it (an advance, a
 * refresh, an export) together with its data.  One writer per column.
 */
bool
mzcoord_tick_owns_upper(MzcKind kind)
{
	return kind == MZC_KIND_TABLE || kind == MZC_KIND_INDEX;
}

static int
cmp_row_slot(const void *a, const void *b)
{
	int32		x = ((const MzcPersistRow *) a)->slot;
	int32		y = ((const MzcPersistRow *) b)->slot;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * The publication, one statement: for every row, the compaction bound
 * becomes join(old bound, proposal) (compaction_bounds; its trigger also
 * keeps it at or below every read requirement on the collection, reading
 * them after the row is locked), and mzcoord.collections gets the upper
 * and, as a mirror for its readers, since = the bound (the proposal itself
 * for a collection without history).  Rows that another transaction has
 * locked (a source's upper advance, DDL, a creation holding an input's
 * bound FOR SHARE) are skipped rather than waited for: the coordinator must
 * not stall behind a user's open transaction.  Every bound row is stamped
 * with the epoch, which the caller checked under lock.
 */
/*
 * deadlock_timeout of the tick's transaction (milliseconds): the process
 * that checks first is the deadlock detector's victim, and that must be
 * the tick (publish_or_yield).
 */
#define MZC_TICK_DEADLOCK_TIMEOUT "20"

static const char *const publish_sql =
"WITH v AS ("
"  SELECT * FROM unnest($1, $2, $3, $4, $6)"
"         AS v(global_id, since, upper, own_upper, publish)),"
" free AS ("
"  SELECT l.global_id FROM mzcoord.collections l"
"   WHERE l.global_id OPERATOR(pg_catalog.=) ANY ($1)"
"     FOR NO KEY UPDATE SKIP LOCKED),"
" held AS ("
"  SELECT b.global_id FROM mzcoord.compaction_bounds b"
"   WHERE b.global_id OPERATOR(pg_catalog.=) ANY ($1)"
"     FOR NO KEY UPDATE SKIP LOCKED),"
" bounded AS ("
"  SELECT b.global_id FROM mzcoord.compaction_bounds b"
"   WHERE b.global_id OPERATOR(pg_catalog.=) ANY ($1)),"
" nb AS ("
"  UPDATE mzcoord.compaction_bounds b"
"     SET bound = CASE WHEN b.bound IS NULL OR v.since IS NULL THEN NULL"
"                      ELSE GREATEST(b.bound, v.since) END,"
"         epoch = $5, published_at = pg_catalog.now()"
"    FROM v, free f, held h"
"   WHERE b.global_id OPERATOR(pg_catalog.=) v.global_id"
"     AND f.global_id OPERATOR(pg_catalog.=) v.global_id"
"     AND h.global_id OPERATOR(pg_catalog.=) v.global_id"
"     AND v.publish"
"  RETURNING b.global_id, b.bound)"
"UPDATE mzcoord.collections c"
"   SET since = CASE WHEN NOT v.publish THEN c.since"
"                    WHEN nb.global_id IS NULL THEN v.since"
"                    ELSE nb.bound END,"
"       upper = CASE WHEN v.own_upper THEN v.upper ELSE c.upper END"
"  FROM v JOIN free f ON f.global_id OPERATOR(pg_catalog.=) v.global_id"
"         LEFT JOIN nb ON nb.global_id OPERATOR(pg_catalog.=) v.global_id"
" WHERE c.global_id OPERATOR(pg_catalog.=) v.global_id"
"   AND (nb.global_id IS NOT NULL OR NOT v.publish"
"        OR NOT EXISTS (SELECT 1 FROM bounded x"
"                        WHERE x.global_id OPERATOR(pg_catalog.=) v.global_id))"
" RETURNING c.global_id, c.since";

static int
cmp_row_gid(const void *a, const void *b)
{
	int64		x = ((const MzcPersistRow *) a)->gid;
	int64		y = ((const MzcPersistRow *) b)->gid;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * Mark the rows the publication wrote, with the since it committed (SPI
 * result of publish_sql).  rows are sorted by gid here and by slot again
 * by the caller.
 */
static void
mark_written(MzcPersistRow *rows, int n)
{
	qsort(rows, n, sizeof(MzcPersistRow), cmp_row_gid);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		MzcPersistRow key;
		MzcPersistRow *row;
		bool		isnull;
		Datum		d;

		if (!mzcoord_parse_gid(SPI_getvalue(tup, SPI_tuptable->tupdesc, 1),
							   &key.gid))
			continue;
		row = bsearch(&key, rows, n, sizeof(MzcPersistRow), cmp_row_gid);
		if (row == NULL)
			continue;
		d = SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull);
		row->written = true;
		row->committed = isnull ? mzc_frontier_empty() :
			mzc_frontier_at(DatumGetInt64(d));
	}
}

/*
 * Publish the rows (see publish_sql), under the epoch: nothing is written
 * when the fence is not available this tick, and the process exits when
 * the epoch was superseded.  Sets rows[i].written and .committed for the
 * rows written; the others are tried again at the next tick.
 */
static void
persist_rows(MzcPersistRow *rows, int n)
{
	Datum	   *gids = palloc(sizeof(Datum) * n);
	Datum	   *sinces = palloc(sizeof(Datum) * n);
	Datum	   *uppers = palloc(sizeof(Datum) * n);
	Datum	   *owns = palloc(sizeof(Datum) * n);
	Datum	   *pubs = palloc(sizeof(Datum) * n);
	bool	   *since_nulls = palloc(sizeof(bool) * n);
	bool	   *upper_nulls = palloc(sizeof(bool) * n);
	int			dims[1] = {n};
	int			lbs[1] = {1};
	Oid			argtypes[6] = {TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
	BOOLARRAYOID, INT8OID, BOOLARRAYOID};
	Datum		values[6];

	for (int i = 0; i < n; i++)
	{
		gids[i] = CStringGetTextDatum(mzcoord_gid_text(rows[i].gid));
		sinces[i] = mzcoord_frontier_datum(rows[i].since, &since_nulls[i]);
		uppers[i] = mzcoord_frontier_datum(rows[i].upper, &upper_nulls[i]);
		owns[i] = BoolGetDatum(rows[i].own_upper);
		pubs[i] = BoolGetDatum(rows[i].publish);
		rows[i].written = false;
	}
	if (!mzcoord_authority_fence())
		return;

	values[0] = PointerGetDatum(construct_md_array(gids, NULL, 1, dims, lbs,
												   TEXTOID, -1, false, TYPALIGN_INT));
	values[1] = PointerGetDatum(construct_md_array(sinces, since_nulls, 1, dims, lbs,
												   INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[2] = PointerGetDatum(construct_md_array(uppers, upper_nulls, 1, dims, lbs,
												   INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[3] = PointerGetDatum(construct_array(owns, n, BOOLOID, 1, true,
												TYPALIGN_CHAR));
	values[4] = Int64GetDatum(mzcoord_authority_epoch());
	values[5] = PointerGetDatum(construct_array(pubs, n, BOOLOID, 1, true,
												TYPALIGN_CHAR));

	/*
	 * One writer per durable value: a source's upper is written only by its
	 * advance (source.c), in the transaction that writes its updates, so the
	 * tick leaves it alone; every other upper, every bound and every since
	 * is the tick's.
	 *
	 * Runs as superuser: every operator is qualified.  (The multi-argument
	 * unnest in FROM cannot be: the parser expands it only unqualified, into
	 * calls of pg_catalog.unnest.)
	 */
	if (publish_or_yield(values, argtypes))
		mark_written(rows, n);
	qsort(rows, n, sizeof(MzcPersistRow), cmp_row_slot);
}

/*
 * Run publish_sql in a subtransaction.  The statement skips catalog rows
 * that someone has locked, but the triggers it fires (a requirement follows
 * its object's upper) lock rows of mzcoord.read_requirements, which a
 * user's DROP ... CASCADE may lock before it waits for the collection row
 * the tick holds: a deadlock.  The tick checks for deadlocks soon after it
 * starts waiting, so that it is the one the detector cancels, never the
 * user's statement; it then writes nothing this tick (every row stays
 * unwritten and is looked at again at the next one) and goes on.  Returns
 * whether the statement ran.
 */
static bool
publish_or_yield(Datum *values, Oid *argtypes)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ran = false;

	(void) set_config_option("deadlock_timeout", MZC_TICK_DEADLOCK_TIMEOUT,
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, 0, false);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		int			rc;

		rc = SPI_execute_with_args(publish_sql, 6, argtypes, values, NULL,
								   false, 0);
		if (rc != SPI_OK_UPDATE_RETURNING)
			elog(ERROR, "mzcoord: could not publish frontiers: %s",
				 SPI_result_code_string(rc));
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ran = true;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_T_R_DEADLOCK_DETECTED)
			PG_RE_THROW();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ereport(LOG,
				(errmsg("mzcoord: the tick yielded to a concurrent catalog change"),
				 errdetail("%s", edata->message),
				 errhint("The frontiers are published at the next tick.")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
	return ran;
}

/*
 * Tables share the timeline: advance those whose implied capability would
 * move with the table upper.  Returns whether any collection depends on
 * another.  Visits only the tracked slots (tables and collections with
 * dependencies); caller holds the lock exclusively.
 */
static bool
advance_tables_locked(mzc_ts table_upper)
{
	bool		any_deps = false;

	for (int32 i = 0; i < mzcoord_ctl->ntick_slots; i++)
	{
		int32		s = mzcoord_ctl_tick_slots[i];
		mzc_collection *c = &mzcoord_ctl_slots[s];

		if (c->state == MZC_COLL_FREE)
			continue;
		any_deps |= c->ndeps > 0;
		if (c->state == MZC_COLL_ACTIVE &&
			mzcoord_ctl_info[s].kind == MZC_KIND_TABLE)
		{
			mzc_frontier want = mzc_policy_frontier(&c->policy,
													mzc_frontier_at(table_upper));

			if (mzc_frontier_lt(c->implied, want))
				(void) mzc_coll_advance_upper(&mzcoord_ctl->colls, s,
											  mzc_frontier_at(table_upper),
											  NULL, NULL);
		}
	}
	return any_deps;
}

/*
 * An index shows its relation's current contents: its upper follows the
 * upper of what it indexes (and its hold on it follows its since, so it
 * never pins it).  Visits the tracked slots after the tables moved; caller
 * holds the lock exclusively.
 */
static void
advance_indexes_locked(mzc_ts table_upper)
{
	for (int32 i = 0; i < mzcoord_ctl->ntick_slots; i++)
	{
		int32		s = mzcoord_ctl_tick_slots[i];
		mzc_collection *c = &mzcoord_ctl_slots[s];
		mzc_frontier want;

		if (c->state != MZC_COLL_ACTIVE ||
			mzcoord_ctl_info[s].kind != MZC_KIND_INDEX || c->ndeps != 1)
			continue;
		want = mzcoord_ctl_slot_upper(c->deps[0], table_upper);
		if (mzc_frontier_lt(c->upper, want))
			(void) mzc_coll_advance_upper(&mzcoord_ctl->colls, s, want,
										  NULL, NULL);
	}
}

/*
 * A view ahead of the timeline is looked at every tick: the timeline's
 * hold on it moves with the timeline, not with anything the view does.
 * Caller holds the lock exclusively.
 */
static void
recheck_views_ahead_locked(mzc_ts table_upper)
{
	for (int32 i = 0; i < mzcoord_ctl->ntick_slots; i++)
	{
		int32		s = mzcoord_ctl_tick_slots[i];

		if (mzcoord_ctl_slots[s].state == MZC_COLL_ACTIVE &&
			!timeline_hold(s, table_upper).empty)
			mzcoord_ctl_mark_recheck(s);
	}
}

/*
 * Where dependents hold each collection (min_dep_hold[slot], which the
 * caller set to {} for every slot), from the tracked slots; caller holds
 * the lock.
 */
static void
dependent_holds_locked(mzc_frontier *min_dep_hold)
{
	for (int32 i = 0; i < mzcoord_ctl->ntick_slots; i++)
	{
		mzc_collection *c = &mzcoord_ctl_slots[mzcoord_ctl_tick_slots[i]];

		if (c->state == MZC_COLL_FREE || c->state == MZC_COLL_GONE)
			continue;
		for (int d = 0; d < c->ndeps; d++)
			min_dep_hold[c->deps[d]] = mzc_frontier_meet(min_dep_hold[c->deps[d]],
														 c->dep_hold);
	}
}

/*
 * The inputs of a changed collection are looked at again: where it holds
 * them may have moved.  Walks the core's dirty list; caller holds the lock
 * exclusively.
 */
static void
recheck_inputs_of_changed_locked(void)
{
	for (int32 s = mzc_colls_dirty_first(&mzcoord_ctl->colls); s != MZC_NIL;
		 s = mzc_colls_dirty_next(&mzcoord_ctl->colls, s))
	{
		mzc_collection *c = &mzcoord_ctl_slots[s];

		if (c->state == MZC_COLL_FREE || c->state == MZC_COLL_GONE)
			continue;
		for (int d = 0; d < c->ndeps; d++)
			mzcoord_ctl_mark_recheck(c->deps[d]);
	}
}

/*
 * Should the tick write slot's frontiers (since, upper) now?  Caller holds
 * the lock.
 */
static bool
needs_persist_locked(int32 s, mzc_frontier since, mzc_frontier upper,
					 TimestampTz now)
{
	mzc_collection *c = &mzcoord_ctl_slots[s];
	MzcSlotInfo *info = &mzcoord_ctl_info[s];
	bool		upper_same = info->kind == MZC_KIND_TABLE ||
		mzc_frontier_eq(upper, info->durable_upper);

	if (info->persisted && mzc_frontier_eq(since, info->durable_since) &&
		upper_same)
		return false;

	/*
	 * Rate-limit since-only changes that merely follow the policy (as
	 * Materialize rate-limits since downgrades, K4): after a restart such a
	 * since is re-derived from the policy and the upper, which never
	 * regress, so a late write loses nothing.  A since that P6 froze above
	 * its policy, or that dependents hold, or a changed upper of a
	 * non-table, is written at once.
	 */
	if (info->persisted && mzcoord_since_persist_interval > 0 &&
		c->ndependents == 0 && upper_same &&
		mzc_frontier_eq(c->implied, mzc_policy_frontier(&c->policy, c->upper)) &&
		!TimestampDifferenceExceeds(info->persisted_at, now,
									mzcoord_since_persist_interval))
	{
		mzcoord_ctl_mark_recheck(s);	/* look again next tick */
		return false;
	}
	return true;
}

/*
 * Look at one slot the tick visits: forget the maps of a slot that is gone,
 * or add a row for an active one whose durable frontiers must be written.
 * Returns the number of rows added (0 or 1).
 */
static int
collect_slot_locked(int32 s, MzcPersistRow *row, mzc_ts table_upper,
					const mzc_frontier *min_dep_hold, TimestampTz now)
{
	mzc_collection *c = &mzcoord_ctl_slots[s];
	mzc_frontier since;
	mzc_frontier upper;

	if (c->state == MZC_COLL_GONE)
	{
		mzcoord_ctl_unmap_gid(s);
		mzcoord_ctl_unmap_rel(s);
		mzcoord_ctl_untrack_slot(s);
		return 0;
	}
	if (c->state != MZC_COLL_ACTIVE)
		return 0;				/* free, or dropped: its catalog row is gone */
	since = durable_since(s, min_dep_hold, table_upper);
	/* Read-only: nothing is published, the since stays at its bound. */
	if (mzcoord_read_only && mzcoord_ctl_info[s].persisted)
		since = mzcoord_ctl_info[s].durable_since;
	upper = mzcoord_ctl_slot_upper(s, table_upper);
	if (!needs_persist_locked(s, since, upper, now))
		return 0;
	row->slot = s;
	row->gid = mzcoord_ctl_info[s].gid;
	row->since = since;
	row->upper = upper;
	row->own_upper = mzcoord_tick_owns_upper(mzcoord_ctl_info[s].kind);
	row->publish = !mzcoord_read_only;
	return 1;
}

/*
 * Collect the rows to persist: the slots on the core's dirty list and on
 * the recheck list, or every slot on a resync.  rechecks has room for
 * capacity slots.  Returns the number of rows, in slot order; caller holds
 * the lock exclusively.
 */
static int
collect_changed_locked(MzcPersistRow *rows, int32 *rechecks,
					   mzc_ts table_upper, const mzc_frontier *min_dep_hold,
					   bool resync, TimestampTz now)
{
	int			nrows = 0;
	int			nrechecks;

	/* Slots marked while collecting go on a new list, for the next tick. */
	nrechecks = mzcoord_ctl_take_rechecks(rechecks);
	if (resync)
	{
		for (int32 s = 0; s < mzcoord_ctl->capacity; s++)
			if (mzcoord_ctl_slots[s].state != MZC_COLL_FREE)
				nrows += collect_slot_locked(s, &rows[nrows], table_upper,
											 min_dep_hold, now);
		return nrows;
	}
	for (int32 s = mzc_colls_dirty_first(&mzcoord_ctl->colls); s != MZC_NIL;
		 s = mzc_colls_dirty_next(&mzcoord_ctl->colls, s))
		nrows += collect_slot_locked(s, &rows[nrows], table_upper,
									 min_dep_hold, now);
	for (int i = 0; i < nrechecks; i++)
	{
		/* A dirty slot was looked at above already. */
		if (mzcoord_ctl_slots[rechecks[i]].dirty)
			continue;
		nrows += collect_slot_locked(rechecks[i], &rows[nrows], table_upper,
									 min_dep_hold, now);
	}

	/* Write in slot order, as a scan of every slot would. */
	qsort(rows, nrows, sizeof(MzcPersistRow), cmp_row_slot);
	return nrows;
}

/*
 * The coordinator's tick (inside its transaction, extension present and
 * locked): bootstrap if needed, advance the table timeline and the implied
 * capabilities, persist the frontiers that changed.
 */
void
mzcoord_controller_tick(void)
{
	Oid			ext = get_extension_oid("mzcoord", true);
	bool		need_boot;
	mzc_ts		table_upper;
	MzcPersistRow *rows;
	int			nrows;
	int32	   *rechecks;
	mzc_frontier *min_dep_hold;
	bool		any_deps;
	MemoryContext cxt = CurrentMemoryContext;
	TimestampTz now = GetCurrentTimestamp();

	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	need_boot = !mzcoord_ctl->ready || mzcoord_ctl->ext_oid != ext ||
		mzcoord_ctl->rebootstrap;
	LWLockRelease(mzcoord_ctl->lock);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "mzcoord: SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());

	/* The coordinator's first transaction with the extension: its epoch. */
	mzcoord_authority_begin(ext);

	if (need_boot)
	{
		mzcoord_ctl_bootstrap(ext);
		PopActiveSnapshot();
		SPI_finish();
		return;
	}

	table_upper = mzcoord_oracle_tick();

	/*
	 * Everything the exclusive section needs is allocated before it; the
	 * dependents' holds start at {} for every slot (outside the lock).
	 */
	rows = MemoryContextAlloc(cxt, sizeof(MzcPersistRow) * mzcoord_ctl->capacity);
	rechecks = palloc(sizeof(int32) * mzcoord_ctl->capacity);
	min_dep_hold = palloc(sizeof(mzc_frontier) * mzcoord_ctl->capacity);
	for (int32 s = 0; s < mzcoord_ctl->capacity; s++)
		min_dep_hold[s] = mzc_frontier_empty();

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	mzcoord_ctl->table_upper = table_upper;
	/* Leases past their expiry stop holding (lease.c). */
	(void) mzcoord_lease_tick_locked(now);
	any_deps = advance_tables_locked(table_upper);
	recheck_views_ahead_locked(table_upper);
	if (any_deps)
	{
		advance_indexes_locked(table_upper);
		dependent_holds_locked(min_dep_hold);
		recheck_inputs_of_changed_locked();
	}
	nrows = collect_changed_locked(rows, rechecks, table_upper,
								   any_deps ? min_dep_hold : NULL,
								   mzcoord_ctl->resync, now);
	mzc_colls_clear_dirty(&mzcoord_ctl->colls);
	if (nrows > 0)
		mzcoord_ctl->resync = true; /* until the rows below are durable */
	LWLockRelease(mzcoord_ctl->lock);

	if (nrows > 0)
	{
		persist_rows(rows, nrows);
		/* Test only: bounds written, not committed. */
		mzcoord_failpoint_check("publish_before_commit");
	}

	PopActiveSnapshot();
	SPI_finish();

	/* Remember what the tick's commit makes durable; see tick_committed. */
	pending_rows = rows;
	npending_rows = nrows;
}

/*
 * After the tick's transaction committed: its rows are durable now.  If the
 * commit failed instead, the process exits with resync still set, and the
 * next coordinator compares every collection with the catalog.
 */
void
mzcoord_controller_tick_committed(void)
{
	if (pending_rows == NULL)
		return;
	if (npending_rows > 0)
	{
		LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
		for (int i = 0; i < npending_rows; i++)
		{
			MzcSlotInfo *info = &mzcoord_ctl_info[pending_rows[i].slot];

			if (info->gid != pending_rows[i].gid)
				continue;
			if (!pending_rows[i].written)
			{
				/* locked by someone: next tick */
				mzcoord_ctl_mark_recheck(pending_rows[i].slot);
				continue;
			}
			info->persisted = true;
			info->durable_since = pending_rows[i].committed;
			info->durable_upper = pending_rows[i].upper;
			info->persisted_at = GetCurrentTimestamp();
			/* The live since may follow the bound now committed, no further. */
			if (mzcoord_ctl_slots[pending_rows[i].slot].state == MZC_COLL_ACTIVE)
				mzcoord_ctl_durable_hold_advance_locked(pending_rows[i].slot,
														pending_rows[i].committed);
		}
		mzcoord_ctl->resync = false;
		LWLockRelease(mzcoord_ctl->lock);
	}
	pending_rows = NULL;
	npending_rows = 0;
}

/*
 * A woken coordinator between ticks (a commit moved a table that others
 * read): move the table timeline, and the tables and indexes that follow
 * it, in memory only.  What changed stays dirty for the next tick to
 * persist, as it would between a tick's exclusive section and its commit.
 * Outside a transaction; cannot fail but for an error writing the ceiling.
 */
void
mzcoord_controller_advance_timeline(void)
{
	mzc_ts		table_upper = mzcoord_oracle_tick();

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	if (mzcoord_ctl->ready && table_upper > mzcoord_ctl->table_upper)
	{
		mzcoord_ctl->table_upper = table_upper;
		if (advance_tables_locked(table_upper))
			advance_indexes_locked(table_upper);
	}
	LWLockRelease(mzcoord_ctl->lock);
}
