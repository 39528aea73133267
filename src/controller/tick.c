/*-------------------------------------------------------------------------
 *
 * tick.c
 *	  The coordinator's tick: bootstrap when needed, advance the table
 *	  timeline and the implied capabilities, publish the compaction bounds
 *	  and persist the frontiers that changed, and move the durable holds
 *	  once that is committed.
 *
 * Publication: the tick writes, in one set-based statement (rec_bounds.c,
 * after the rows were locked), the compaction bound of every
 * collection whose since changed (the core's dirty list and the recheck
 * list), the since and upper of an index (which has no bound), and the
 * tables' shared upper.  The proposal is meet(implied capability, the
 * holds of dependent collections, the leases on it): what the since will
 * be after a restart, when transaction holds are gone; the bound becomes
 * join(old bound, proposal), kept at or below every read requirement and
 * active lease.  The bound is the collection's durable since (catalog 0.6:
 * nothing mirrors it).  The statement runs only under the coordinator's
 * epoch (authority.c).  The durable hold of each collection (publish.c)
 * moves to the committed bound only after the tick's transaction committed
 * (tick_committed), so the live since never passes the committed bound
 * and no since regresses across a restart.  In read-only mode
 * (mzcoord.read_only) no bound is published.  A persist that did not
 * commit leaves MzcController.resync set, and the next tick compares every
 * collection.
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
#include "fmgr.h"
#include "funcapi.h"
#include "lib/pairingheap.h"
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
#include "rec_bounds.h"
#include "rec_collections.h"
#include "rec_epoch.h"
#include "settings.h"
#include "shmem.h"
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
	MzcKind		kind;
	bool		own_upper;		/* the tick writes its upper in its row */
	bool		publish;		/* publish its bound (not in read-only mode) */
	bool		has_bound;		/* its bound row is locked (set by lock_rows) */
	ItemPointerData bound_tid;	/* and where that row is */
	bool		written;		/* set by persist_rows */
	mzc_frontier committed;		/* since written (the bound, for one with a bound) */
} MzcPersistRow;

/* Rows the current tick persists (worker only; in the tick's context). */
static MzcPersistRow *pending_rows = NULL;
static int	npending_rows = 0;

static bool publish_or_yield(MzcPersistRow *rows, int n);

/*
 * Revisits the tick put off (worker only; in TopMemoryContext).  A
 * collection whose since only its policy (or the coalescing interval)
 * can move next is looked at again when the table timeline reaches the
 * time at which it can, not at every tick: a table with history above its
 * bound under a long retain history costs nothing until then.  One node
 * per slot (revisit_nodes, allocated once with the heap, before any
 * exclusive section: the tick allocates nothing under the lock); a slot
 * reused meanwhile is told apart by its gid.  A new coordinator process
 * starts with none, and looks once at every collection
 * (revisit_all_once).
 */
typedef struct MzcRevisit
{
	pairingheap_node node;
	mzc_ts		at;				/* when the table timeline reaches this */
	int64		gid;
	int32		slot;
	bool		queued;			/* in the heap */
} MzcRevisit;

static pairingheap *revisits = NULL;
static MzcRevisit *revisit_nodes = NULL;	/* [capacity] */
static bool revisits_loaded = false;
static int	revisits_interval = -1; /* publish_interval they were set under */

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
 * What holds the slots besides their own capabilities, gathered once per
 * tick: the holds dependents keep (min_dep_hold[slot], NULL when nothing
 * has dependents) and the active leases.
 */
typedef struct MzcTickHolds
{
	const mzc_frontier *min_dep_hold;
	MzcLeaseLimits leases;
} MzcTickHolds;

/*
 * Durable since of a slot: meet of its implied capability, the holds its
 * dependents keep on it, its active leases and the timeline's hold.
 */
static mzc_frontier
durable_since(int32 slot, const MzcTickHolds *holds, mzc_ts table_upper)
{
	mzc_frontier f = mzcoord_ctl_slots[slot].implied;

	if (holds->min_dep_hold != NULL)
		f = mzc_frontier_meet(f, holds->min_dep_hold[slot]);
	/* Nor beyond an active lease, which a restart must find protected. */
	f = mzc_frontier_meet(f, mzcoord_lease_limit_of(&holds->leases, slot));
	return mzc_frontier_meet(f, timeline_hold(slot, table_upper));
}

static int
cmp_row_slot(const void *a, const void *b)
{
	int32		x = ((const MzcPersistRow *) a)->slot;
	int32		y = ((const MzcPersistRow *) b)->slot;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * deadlock_timeout of the tick's transaction (milliseconds): the process
 * that checks first is the deadlock detector's victim, and that must be
 * the tick (publish_or_yield).
 */
#define MZC_TICK_DEADLOCK_TIMEOUT "20"

/* random_page_cost of the tick's statements (see publish_or_yield). */
#define MZC_TICK_RANDOM_PAGE_COST "1.1"

/*
 * The publication's statements, and why they are what they are, are
 * rec_bounds.c's (mzcoord_rec_lock_bounds, mzcoord_rec_lock_unbounded of
 * rec_collections.c, and mzcoord_rec_publish).
 */

static int
cmp_row_gid(const void *a, const void *b)
{
	int64		x = ((const MzcPersistRow *) a)->gid;
	int64		y = ((const MzcPersistRow *) b)->gid;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * The row whose global id is gidtext, in rows sorted by gid; NULL if none.
 */
static MzcPersistRow *
row_of_gid(MzcPersistRow *rows, int n, const char *gidtext)
{
	MzcPersistRow key;

	if (!mzcoord_parse_gid(gidtext, &key.gid))
		return NULL;
	return bsearch(&key, rows, n, sizeof(MzcPersistRow), cmp_row_gid);
}

/*
 * Count one catalog row written, of table (an MZC_CATALOG_* number, -1 for
 * a bound held back to coalesce) and bytes (0: unknown).  Counted when the
 * statement ran: a tick whose transaction then fails counts rows that were
 * not kept.
 */
static void
count_row(int table, int64 bytes)
{
	if (table < 0 || table >= MZC_CATALOG_TABLES)
	{
		pg_atomic_fetch_add_u64(&mzcoord_ctl->bounds_coalesced, 1);
		return;
	}
	pg_atomic_fetch_add_u64(&mzcoord_ctl->catalog_rows[table], 1);
	if (bytes > 0)
		pg_atomic_fetch_add_u64(&mzcoord_ctl->catalog_bytes[table], bytes);
}

/*
 * Count the rows of the publication (out[0..nout)) and mark the rows it
 * wrote, with the since it committed; rows are sorted by gid.
 */
static void
mark_written(MzcPersistRow *rows, int n, const MzcRecPublished *out, int nout)
{
	for (int r = 0; r < nout; r++)
	{
		MzcPersistRow *row;

		count_row(out[r].table, out[r].bytes);
		row = row_of_gid(rows, n, out[r].global_id);
		if (row == NULL)
			continue;
		row->written = true;
		row->committed = out[r].since_empty ? mzc_frontier_empty() :
			mzc_frontier_at(out[r].since);
	}
}

/*
 * Lock the rows[0..n) (sorted by gid): their bound rows if has_bound, else
 * their collections rows, and mark the rows locked (written, for now), with
 * has_bound as given.
 */
static void
lock_with(bool has_bound, MzcPersistRow *rows, int n)
{
	int64	   *gids = palloc(sizeof(int64) * Max(n, 1));
	MzcRecLocked *locked = NULL;
	int			nlocked;
	int			rc;

	for (int i = 0; i < n; i++)
		gids[i] = rows[i].gid;
	rc = has_bound ? mzcoord_rec_lock_bounds(gids, n, &locked, &nlocked) :
		mzcoord_rec_lock_unbounded(gids, n, &locked, &nlocked);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "mzcoord: could not lock frontiers: %s",
			 SPI_result_code_string(rc));
	for (int r = 0; r < nlocked; r++)
	{
		MzcPersistRow *row = row_of_gid(rows, n, locked[r].global_id);

		if (row != NULL)
		{
			row->written = true;	/* locked, for now */
			row->has_bound = has_bound;
			if (!locked[r].has_tid)
				ItemPointerSetInvalid(&row->bound_tid);
			else
				ItemPointerCopy(&locked[r].tid, &row->bound_tid);
		}
	}
}

/*
 * Move the rows marked written (locked) to the front of rows[0..n),
 * clearing the mark; returns their number.  Neither part keeps its order.
 */
static int
locked_to_front(MzcPersistRow *rows, int n)
{
	int			nlocked = 0;

	for (int i = 0; i < n; i++)
		if (rows[i].written)
		{
			MzcPersistRow tmp = rows[nlocked];

			rows[nlocked++] = rows[i];
			rows[i] = tmp;
			rows[nlocked - 1].written = false;
		}
	return nlocked;
}

/*
 * Lock the catalog rows of rows[0..n) (sorted by gid) that nobody else
 * holds: bound rows first, then the collections rows of those left, which
 * have no bound or were skipped (see rec_bounds.c).  Moves the
 * locked rows to the front, in gid order; returns their number.
 */
static int
lock_rows(MzcPersistRow *rows, int n)
{
	int			nbound;
	int			nfree = 0;

	lock_with(true, rows, n);
	nbound = locked_to_front(rows, n);
	if (nbound < n)
	{
		qsort(rows + nbound, n - nbound, sizeof(MzcPersistRow), cmp_row_gid);
		lock_with(false, rows + nbound, n - nbound);
		nfree = locked_to_front(rows + nbound, n - nbound);
	}
	qsort(rows, nbound + nfree, sizeof(MzcPersistRow), cmp_row_gid);
	return nbound + nfree;
}

/*
 * If a table's row was written, move the tables' shared upper to the
 * timeline they were published at (rec_epoch.c).
 */
static void
write_timeline(MzcPersistRow *rows, int n)
{
	mzc_ts		upper = 0;
	bool		written;
	int64		bytes;

	for (int i = 0; i < n; i++)
		if (rows[i].written && rows[i].kind == MZC_KIND_TABLE &&
			!rows[i].upper.empty && rows[i].upper.ts > upper)
			upper = rows[i].upper.ts;
	if (upper == 0)
		return;
	if (!mzcoord_rec_write_timeline(upper, &written, &bytes))
		elog(ERROR, "mzcoord: could not write the table timeline");
	if (written)
		count_row(MZC_CATALOG_EPOCH, bytes);
}

/*
 * Write rows[0..n) (all locked by lock_rows, sorted by gid) with
 * mzcoord_rec_publish, the bound guard leaving the clamp to the statement.
 */
static void
write_rows(MzcPersistRow *rows, int n)
{
	MzcRecPublish *in = palloc0(sizeof(MzcRecPublish) * Max(n, 1));
	MzcRecPublished *out = NULL;
	int			nout;
	int			rc;

	for (int i = 0; i < n; i++)
	{
		in[i].gid = rows[i].gid;
		in[i].since_empty = rows[i].since.empty;
		in[i].since = rows[i].since.ts;
		in[i].upper_empty = rows[i].upper.empty;
		in[i].upper = rows[i].upper.ts;
		in[i].own_upper = rows[i].own_upper;
		in[i].publish = rows[i].publish;
		in[i].has_bound = rows[i].has_bound;
		in[i].has_tid = ItemPointerIsValid(&rows[i].bound_tid);
		in[i].tid = rows[i].bound_tid;
	}
	mzcoord_authority_set_clamping(true);
	PG_TRY();
	{
		rc = mzcoord_rec_publish(in, n, mzcoord_authority_epoch(), &out, &nout);
	}
	PG_FINALLY();
	{
		mzcoord_authority_set_clamping(false);
	}
	PG_END_TRY();
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "mzcoord: could not publish frontiers: %s",
			 SPI_result_code_string(rc));
	mark_written(rows, n, out, nout);
	write_timeline(rows, n);
}

/*
 * Publish the rows (see rec_bounds.c), under the epoch: nothing is written
 * when the fence is not available this tick, and the process exits when
 * the epoch was superseded.  Sets rows[i].written and .committed for the
 * rows written; the others are tried again at the next tick.
 *
 * One writer per durable value: a source's upper is written only by its
 * advance (source.c), in the transaction that writes its updates, so the
 * tick leaves it alone; every other upper, every bound and every since is
 * the tick's.
 */
static void
persist_rows(MzcPersistRow *rows, int n)
{
	for (int i = 0; i < n; i++)
		rows[i].written = false;
	if (mzcoord_authority_fence())
	{
		qsort(rows, n, sizeof(MzcPersistRow), cmp_row_gid);
		(void) publish_or_yield(rows, n);
	}
	qsort(rows, n, sizeof(MzcPersistRow), cmp_row_slot);
}

/*
 * Lock and write the rows in a subtransaction.  The statements skip
 * catalog rows that someone has locked, but the triggers they fire (a
 * requirement follows its object's upper) lock rows of
 * mzcoord.read_requirements, which a user's DROP ... CASCADE may lock
 * before it waits for the collection row the tick holds: a deadlock.  The
 * tick checks for deadlocks soon after it starts waiting, so that it is the
 * one the detector cancels, never the user's statement; it then writes
 * nothing this tick (every row stays unwritten and is looked at again at
 * the next one) and goes on.  Returns whether the statements ran.
 */
static bool
publish_or_yield(MzcPersistRow *rows, int n)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ran = false;

	(void) set_config_option("deadlock_timeout", MZC_TICK_DEADLOCK_TIMEOUT,
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, 0, false);

	/*
	 * The catalog rows the tick looks up are in shared buffers (it touches
	 * them every publication): priced as random reads from disk, a lookup
	 * of 1,000 of 100,000 bounds by primary key lost to a scan of all of
	 * them, and a publication cost what the catalog holds rather than what
	 * changed.
	 */
	(void) set_config_option("random_page_cost", MZC_TICK_RANDOM_PAGE_COST,
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, 0, false);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		int			nlocked = lock_rows(rows, n);

		if (nlocked > 0)
			write_rows(rows, nlocked);
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
		for (int i = 0; i < n; i++)
			rows[i].written = false;
		ereport(LOG,
				(errmsg("mzcoord: the tick yielded to a concurrent catalog change"),
				 errdetail("%s", edata->message),
				 errhint("The frontiers are published at the next tick.")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
	return ran;
}

/* Earliest revisit first (pairingheap keeps the greatest first). */
static int
cmp_revisit(const pairingheap_node *a, const pairingheap_node *b, void *arg)
{
	mzc_ts		x = pairingheap_const_container(MzcRevisit, node, a)->at;
	mzc_ts		y = pairingheap_const_container(MzcRevisit, node, b)->at;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The revisit heap and its nodes, once per process (outside the lock). */
static void
revisits_init(void)
{
	MemoryContext old;

	if (revisits != NULL)
		return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	revisit_nodes = palloc0(sizeof(MzcRevisit) * mzcoord_ctl->capacity);
	revisits = pairingheap_allocate(cmp_revisit, NULL);
	MemoryContextSwitchTo(old);
}

/*
 * Look at slot s again once the table timeline reaches at (MZC_TS_MAX:
 * nothing that time does will move it; what else does marks it).  An
 * earlier pending revisit of the same collection stands.  Caller holds the
 * lock.
 */
static void
defer_revisit_locked(int32 s, mzc_ts at)
{
	MzcRevisit *r = &revisit_nodes[s];
	int64		gid = mzcoord_ctl_info[s].gid;

	if (at == MZC_TS_MAX)
		return;
	if (r->queued && r->gid == gid && r->at <= at)
		return;
	if (r->queued)
		pairingheap_remove(revisits, &r->node);
	r->at = at;
	r->slot = s;
	r->gid = gid;
	r->queued = true;
	pairingheap_add(revisits, &r->node);
}

/*
 * Put the revisits that are due at table_upper (MZC_TS_MAX: all) on the
 * recheck list (of this tick: called before it is taken).  Caller holds
 * the lock exclusively.
 */
static void
take_due_revisits_locked(mzc_ts table_upper)
{
	while (!pairingheap_is_empty(revisits))
	{
		MzcRevisit *r = pairingheap_container(MzcRevisit, node,
											  pairingheap_first(revisits));

		if (r->at > table_upper)
			break;
		(void) pairingheap_remove_first(revisits);
		r->queued = false;
		if (mzcoord_ctl_info[r->slot].gid == r->gid &&
			mzcoord_ctl_slots[r->slot].state == MZC_COLL_ACTIVE)
			mzcoord_ctl_mark_recheck(r->slot);
	}
}

/*
 * mzcoord.publish_interval changed: revisits put off under the old one are
 * looked at now (each is put off again as the new one says).  Caller holds
 * the lock exclusively.
 */
static void
interval_changed_locked(void)
{
	if (revisits_interval == mzcoord_publish_interval)
		return;
	revisits_interval = mzcoord_publish_interval;
	take_due_revisits_locked(MZC_TS_MAX);
}

/*
 * The first tick of a coordinator process that found the controller
 * ready (no bootstrap, which looks at everything): revisits put off by an
 * earlier process are gone, so every active collection is looked at once.
 * Caller holds the lock exclusively.
 */
static void
revisit_all_once_locked(void)
{
	if (revisits_loaded)
		return;
	revisits_loaded = true;
	for (int32 s = 0; s < mzcoord_ctl->colls.high; s++)
		if (mzcoord_ctl_slots[s].state == MZC_COLL_ACTIVE)
			mzcoord_ctl_mark_recheck(s);
}

/*
 * Tables share the timeline: a table's upper is the timeline's
 * (mzcoord_ctl_slot_upper), and its implied capability follows its policy
 * only when the tick visits it.  Advance the table in slot s, if active,
 * to the table upper; caller holds the lock exclusively.
 */
static void
advance_table_locked(int32 s, mzc_ts table_upper)
{
	mzc_collection *c = &mzcoord_ctl_slots[s];
	mzc_frontier want;

	if (c->state != MZC_COLL_ACTIVE ||
		mzcoord_ctl_info[s].kind != MZC_KIND_TABLE)
		return;
	want = mzc_policy_frontier(&c->policy, mzc_frontier_at(table_upper));
	if (mzc_frontier_lt(c->implied, want))
		(void) mzc_coll_advance_upper(&mzcoord_ctl->colls, s,
									  mzc_frontier_at(table_upper),
									  NULL, NULL);
}

/*
 * Was the table in slot held below its policy when its since was last
 * written (by a lease, a dependent, a frozen since)?  Then a change of its
 * holds may be the release someone waits for.  Caller holds the lock.
 */
static bool
was_held_locked(int32 s)
{
	MzcSlotInfo *info = &mzcoord_ctl_info[s];

	return info->persisted && (info->held_back ||
		mzc_frontier_lt(info->durable_since,
						mzc_policy_frontier(&mzcoord_ctl_slots[s].policy,
											info->durable_upper)));
}

/*
 * Advance the tables on the recheck list (a new table, a new policy, a
 * lease that moved, a publication that is due), the written ones, and
 * those on the core's dirty list that were held below their policy (a
 * dependent dropped, a hold released).  An idle table is on none of these:
 * nothing above its since needs compacting, and its since stays where it
 * is.  A transaction hold that comes and goes on a table that follows its
 * policy, or the durable hold the tick itself moved, is no reason to
 * publish it again.  Caller holds the lock exclusively.
 */
static void
advance_visited_tables_locked(mzc_ts table_upper, const int32 *visit,
							  int nvisit)
{
	for (int32 s = mzc_colls_dirty_first(&mzcoord_ctl->colls); s != MZC_NIL;
		 s = mzc_colls_dirty_next(&mzcoord_ctl->colls, s))
		if (was_held_locked(s))
			advance_table_locked(s, table_upper);
	for (int i = 0; i < nvisit; i++)
		advance_table_locked(visit[i], table_upper);
}

/* Does any tracked collection depend on another?  Caller holds the lock. */
static bool
any_dependencies_locked(void)
{
	for (int32 i = 0; i < mzcoord_ctl->ntick_slots; i++)
	{
		mzc_collection *c = &mzcoord_ctl_slots[mzcoord_ctl_tick_slots[i]];

		if (c->state != MZC_COLL_FREE && c->ndeps > 0)
			return true;
	}
	return false;
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
 * Did slot's since follow nothing but its policy, both as last written
 * (durable_since, under the policy applied to durable_upper) and as
 * proposed now (since)?  Nothing else holds it then: no dependent, no
 * lease, no frozen since (P6), no policy changed since the last write.
 * Caller holds the lock.
 */
static bool
policy_only_locked(int32 s, mzc_frontier since)
{
	mzc_collection *c = &mzcoord_ctl_slots[s];
	MzcSlotInfo *info = &mzcoord_ctl_info[s];

	return info->persisted && c->ndependents == 0 && !info->held_back &&
		!info->reconfigured &&
		mzc_frontier_eq(since, mzc_policy_frontier(&c->policy, c->upper)) &&
		mzc_frontier_eq(info->durable_since,
						mzc_policy_frontier(&c->policy, info->durable_upper));
}

/*
 * Should the tick write slot's frontiers (since, upper) now?  When not
 * because only time can change that, *again is when to look next (in
 * table-timeline time; MZC_TS_MAX: not for that reason).  Caller holds the
 * lock.
 */
static bool
needs_persist_locked(int32 s, mzc_frontier since, mzc_frontier upper,
					 mzc_ts table_upper, TimestampTz now, mzc_ts *again)
{
	MzcSlotInfo *info = &mzcoord_ctl_info[s];
	bool		upper_same = info->kind == MZC_KIND_TABLE ||
		mzc_frontier_eq(upper, info->durable_upper);

	*again = MZC_TS_MAX;
	if (info->persisted && mzc_frontier_eq(since, info->durable_since) &&
		upper_same)
		return false;

	/*
	 * The catalog is ahead (a bound raised by hand): nothing to publish
	 * until the since passes it, but keep following the policy up to it.
	 */
	if (info->persisted && upper_same &&
		mzc_frontier_lt(since, info->durable_since))
	{
		*again = mzc_policy_next_change(&mzcoord_ctl_slots[s].policy, upper);
		return false;
	}

	/*
	 * Coalesce advances that merely follow the policy (as Materialize
	 * rate-limits since downgrades, K4): at most one write per
	 * publish_interval.  Delaying a bound only keeps history longer, and
	 * after a restart such a since is re-derived from the policy and the
	 * upper, which never regress.  A since that was or is held by anything
	 * else (a lease, a dependent, a frozen since, a new policy) moves
	 * because someone changed something, maybe waiting for it: written at
	 * once, as is a changed upper of a non-table.  A bound the catalog
	 * clamped (a requirement or lease the controller does not hold) is
	 * proposed again at the same rate, until the clamp is gone.  The slot
	 * is looked at again when the interval is over (the table timeline
	 * moves at least as fast as the clock).
	 */
	if (mzcoord_publish_interval > 0 && upper_same &&
		(policy_only_locked(s, since) || info->clamped) &&
		!TimestampDifferenceExceeds(info->persisted_at, now,
									mzcoord_publish_interval))
	{
		long		secs;
		int			usecs;
		int64		left_ms;

		TimestampDifference(info->persisted_at, now, &secs, &usecs);
		left_ms = mzcoord_publish_interval - (secs * 1000 + usecs / 1000);
		*again = mzc_ts_add(table_upper, Max(left_ms, 1));
		return false;
	}
	return true;
}

/*
 * Does the table in slot have history above its committed bound, which a
 * later bound would let compaction consolidate?  Then the tick keeps
 * visiting it.  Caller holds the lock.
 */
static bool
table_has_more_locked(int32 s)
{
	MzcSlotInfo *info = &mzcoord_ctl_info[s];

	return info->kind == MZC_KIND_TABLE && info->persisted &&
		!info->durable_since.empty &&
		mzcoord_ctl_last_write_locked(s) > info->durable_since.ts;
}

/*
 * Look at one slot the tick visits: forget the maps of a slot that is gone,
 * or add a row for an active one whose durable frontiers must be written.
 * Returns the number of rows added (0 or 1).
 */
static int
collect_slot_locked(int32 s, MzcPersistRow *row, mzc_ts table_upper,
					const MzcTickHolds *holds, TimestampTz now)
{
	mzc_collection *c = &mzcoord_ctl_slots[s];
	mzc_frontier since;
	mzc_frontier upper;
	mzc_ts		again;

	if (c->state == MZC_COLL_GONE)
	{
		mzcoord_ctl_unmap_gid(s);
		mzcoord_ctl_unmap_rel(s);
		mzcoord_ctl_untrack_slot(s);
		return 0;
	}
	if (c->state != MZC_COLL_ACTIVE)
		return 0;				/* free, or dropped: its catalog row is gone */
	since = durable_since(s, holds, table_upper);
	/* Read-only: nothing is published, the since stays at its bound. */
	if (mzcoord_read_only && mzcoord_ctl_info[s].persisted)
		since = mzcoord_ctl_info[s].durable_since;
	upper = mzcoord_ctl_slot_upper(s, table_upper);
	if (!needs_persist_locked(s, since, upper, table_upper, now, &again))
	{
		bool		held = mzc_frontier_lt(since,
										   mzc_policy_frontier(&c->policy, c->upper));

		/* Held now: its release is published at once (policy_only_locked). */
		if (held)
			mzcoord_ctl_info[s].held_back = true;
		if (again != MZC_TS_MAX)
			defer_revisit_locked(s, again);
		else if (table_has_more_locked(s))
		{
			/*
			 * History above the bound: held, the tick looks again next time
			 * (a hold that goes does not always say so); else when the
			 * policy next moves its since.
			 */
			if (held)
				mzcoord_ctl_mark_recheck(s);
			else
				defer_revisit_locked(s, mzc_policy_next_change(&c->policy,
															   upper));
		}
		return 0;
	}
	row->slot = s;
	row->gid = mzcoord_ctl_info[s].gid;
	row->since = since;
	row->upper = upper;
	row->kind = mzcoord_ctl_info[s].kind;

	/*
	 * The tick writes the upper of an index in its row, and the tables'
	 * shared one (write_timeline).  Not that of a source, a materialized
	 * view or a sink: their upper is their progress, written by the
	 * transaction that makes it (an advance, a refresh, an export) together
	 * with its data.  One writer per column.
	 */
	row->own_upper = row->kind == MZC_KIND_INDEX;
	row->publish = !mzcoord_read_only;
	row->has_bound = false;		/* learnt when its row is locked */
	return 1;
}

/*
 * Collect the rows to persist: the slots on the core's dirty list and in
 * visit[] (the recheck list and the written tables, each slot once), or
 * every slot on a resync.  Returns the number of rows, in slot order;
 * caller holds the lock exclusively.
 */
static int
collect_changed_locked(MzcPersistRow *rows, const int32 *visit, int nvisit,
					   mzc_ts table_upper, const MzcTickHolds *holds,
					   bool resync, TimestampTz now)
{
	int			nrows = 0;

	if (resync)
	{
		for (int32 s = 0; s < mzcoord_ctl->colls.high; s++)
			if (mzcoord_ctl_slots[s].state != MZC_COLL_FREE)
				nrows += collect_slot_locked(s, &rows[nrows], table_upper,
											 holds, now);
		return nrows;
	}
	for (int32 s = mzc_colls_dirty_first(&mzcoord_ctl->colls); s != MZC_NIL;
		 s = mzc_colls_dirty_next(&mzcoord_ctl->colls, s))
		nrows += collect_slot_locked(s, &rows[nrows], table_upper,
									 holds, now);
	for (int i = 0; i < nvisit; i++)
	{
		/* A dirty slot was looked at above already. */
		if (mzcoord_ctl_slots[visit[i]].dirty)
			continue;
		nrows += collect_slot_locked(visit[i], &rows[nrows], table_upper,
									 holds, now);
	}

	/* Write in slot order, as a scan of every slot would. */
	qsort(rows, nrows, sizeof(MzcPersistRow), cmp_row_slot);
	return nrows;
}

/*
 * The slots the tick visits besides the dirty ones, each once: the tables
 * written since the last tick join the recheck list, which is taken.
 * Slots marked from now on go on a new list, for the next tick.  visit has
 * room for capacity slots.  Returns the number; caller holds the lock
 * exclusively.
 */
static int
take_visits_locked(int32 *visit)
{
	int			nwritten = mzcoord_ctl_take_written_locked(visit);

	for (int i = 0; i < nwritten; i++)
		mzcoord_ctl_mark_recheck(visit[i]);
	return mzcoord_ctl_take_rechecks(visit);
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
	int32	   *visit;
	int			nvisit;
	int32		tracked;
	mzc_frontier *min_dep_hold;
	MzcLeaseLimit *lease_room;
	MzcTickHolds holds;
	bool		any_deps;
	MemoryContext cxt = CurrentMemoryContext;
	TimestampTz now = GetCurrentTimestamp();

	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	need_boot = !mzcoord_ctl->ready || mzcoord_ctl->ext_oid != ext ||
		mzcoord_ctl->rebootstrap;
	tracked = mzcoord_ctl->ntick_slots;
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
	revisits_init();

	/*
	 * Everything the exclusive section needs is allocated before it; the
	 * dependents' holds start at {} for every slot (outside the lock), and
	 * are needed only if a collection has dependencies (views, indexes and
	 * sinks are tracked: none tracked, none to look at).
	 */
	rows = MemoryContextAlloc(cxt, sizeof(MzcPersistRow) * mzcoord_ctl->capacity);
	visit = palloc(sizeof(int32) * mzcoord_ctl->capacity);
	lease_room = palloc(sizeof(MzcLeaseLimit) * Max(mzcoord_lease_limits_room(), 1));
	min_dep_hold = NULL;
	if (tracked > 0)
	{
		min_dep_hold = palloc(sizeof(mzc_frontier) * mzcoord_ctl->capacity);
		for (int32 s = 0; s < mzcoord_ctl->capacity; s++)
			min_dep_hold[s] = mzc_frontier_empty();
	}

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	if (min_dep_hold == NULL && mzcoord_ctl->ntick_slots > 0)
	{
		/* A creation's commit tracked a slot meanwhile: allocate, retry. */
		LWLockRelease(mzcoord_ctl->lock);
		min_dep_hold = palloc(sizeof(mzc_frontier) * mzcoord_ctl->capacity);
		for (int32 s = 0; s < mzcoord_ctl->capacity; s++)
			min_dep_hold[s] = mzc_frontier_empty();
		LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	}
	mzcoord_ctl->table_upper = table_upper;
	/* Leases past their expiry stop holding (lease.c). */
	(void) mzcoord_lease_tick_locked(now);
	revisit_all_once_locked();
	interval_changed_locked();
	take_due_revisits_locked(table_upper);
	nvisit = take_visits_locked(visit);
	advance_visited_tables_locked(table_upper, visit, nvisit);
	recheck_views_ahead_locked(table_upper);
	any_deps = min_dep_hold != NULL && any_dependencies_locked();
	if (any_deps)
	{
		advance_indexes_locked(table_upper);
		dependent_holds_locked(min_dep_hold);
		recheck_inputs_of_changed_locked();
	}
	holds.min_dep_hold = any_deps ? min_dep_hold : NULL;
	holds.leases = mzcoord_lease_limits_locked(lease_room);
	nrows = collect_changed_locked(rows, visit, nvisit, table_upper, &holds,
								   mzcoord_ctl->resync, now);
	mzc_colls_clear_dirty(&mzcoord_ctl->colls);
	if (nrows > 0)
		mzcoord_ctl->resync = true; /* until the rows below are durable */
	LWLockRelease(mzcoord_ctl->lock);
	elog(DEBUG1, "mzcoord tick: visited %d collections, %d to persist",
		 nvisit, nrows);

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
 * Tell the compactor that slot's bound moved (mzcoord_ctl_news, each slot
 * at most once).  Caller holds the lock exclusively.
 */
static void
note_published_locked(int32 s)
{
	if (mzcoord_ctl_news_queued[s])
		return;
	mzcoord_ctl_news_queued[s] = true;
	mzcoord_ctl_news[mzcoord_ctl->nnews++] = s;
}

/*
 * Can a new bound of slot let compaction do anything?  A table written
 * nowhere above its last committed bound has nothing there to consolidate,
 * and compaction was told of every older bound (or, if it started since,
 * read them from the catalog: autocompact.c): it is not told.  Caller
 * holds the lock, before durable_since moves.
 */
static bool
may_compact_locked(int32 s)
{
	MzcSlotInfo *info = &mzcoord_ctl_info[s];

	return info->kind != MZC_KIND_TABLE || !info->persisted ||
		info->durable_since.empty ||
		mzcoord_ctl_last_write_locked(s) > info->durable_since.ts;
}

/*
 * The collections whose bound moved since the last call (at most room of
 * them, the earliest first), into out; returns their number.  Compaction
 * looks at nothing else that was idle (autocompact.c).  Takes the lock.
 */
int
mzcoord_tick_take_published(int64 *out, int room)
{
	int			n;

	if (!mzcoord_tick_has_news())
		return 0;
	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	n = Min(mzcoord_ctl->nnews, room);
	for (int i = 0; i < n; i++)
	{
		int32		s = mzcoord_ctl_news[i];

		out[i] = mzcoord_ctl_info[s].gid;
		mzcoord_ctl_news_queued[s] = false;
	}
	if (n < mzcoord_ctl->nnews)
		memmove(mzcoord_ctl_news, mzcoord_ctl_news + n,
				sizeof(int32) * (mzcoord_ctl->nnews - n));
	mzcoord_ctl->nnews -= n;
	LWLockRelease(mzcoord_ctl->lock);
	return n;
}

/*
 * Has a tick published a bound the compactor has not taken?  Lock-free: an
 * aligned int32 the tick writes only under the exclusive lock; a stale
 * answer is corrected at the next step.
 */
bool
mzcoord_tick_has_news(void)
{
	return mzcoord_ctl->nnews > 0;
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
			if (!mzc_frontier_eq(info->durable_since, pending_rows[i].committed) &&
				may_compact_locked(pending_rows[i].slot))
				note_published_locked(pending_rows[i].slot);
			info->persisted = true;
			info->reconfigured = false;
			info->held_back = mzc_frontier_lt(pending_rows[i].since,
											  mzc_policy_frontier(&mzcoord_ctl_slots[pending_rows[i].slot].policy,
																  mzcoord_ctl_slots[pending_rows[i].slot].upper));
			info->durable_since = pending_rows[i].committed;
			info->durable_upper = pending_rows[i].upper;
			info->persisted_at = GetCurrentTimestamp();
			info->clamped = mzc_frontier_lt(pending_rows[i].committed,
											pending_rows[i].since);
			/*
			 * Visit it again if it was written above the new bound, if the
			 * catalog held the bound below the since, or if the bound is
			 * ahead of the since (raised by hand): the since follows up to
			 * it.
			 */
			if (info->clamped ||
				mzc_frontier_lt(pending_rows[i].since, pending_rows[i].committed))
				mzcoord_ctl_mark_recheck(pending_rows[i].slot);
			else if (table_has_more_locked(pending_rows[i].slot))
				mzcoord_ctl_mark_recheck(pending_rows[i].slot);
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
 * read): move the table timeline, and the indexes that follow it, in
 * memory only (a table's upper is the timeline's; its since moves at the
 * next tick that visits it).  What changed stays dirty for the next tick
 * to persist, as it would between a tick's exclusive section and its
 * commit.  Outside a transaction; cannot fail but for an error writing the
 * ceiling.
 */
void
mzcoord_controller_advance_timeline(void)
{
	mzc_ts		table_upper = mzcoord_oracle_tick();

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	if (mzcoord_ctl->ready && table_upper > mzcoord_ctl->table_upper)
	{
		mzcoord_ctl->table_upper = table_upper;
		if (any_dependencies_locked())
			advance_indexes_locked(table_upper);
	}
	LWLockRelease(mzcoord_ctl->lock);
}


PG_FUNCTION_INFO_V1(mzcoord_tick_traffic);

/*
 * SQL: mzcoord._tick_traffic(OUT table_name text, OUT rows_written bigint,
 *		OUT bytes_written bigint, OUT held_back bigint) RETURNS SETOF record
 *
 * The catalog traffic of the tick's publications since the server started:
 * one row per catalog table it writes; held_back (on the compaction_bounds
 * row) counts bounds that moved but were left for a later tick to
 * coalesce.  Lock-free reads of atomic counters.
 */
Datum
mzcoord_tick_traffic(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	static const char *const names[MZC_CATALOG_TABLES] = {
		"compaction_bounds", "collections", "coordinator_epoch"
	};

	mzcoord_require_shmem();
	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < MZC_CATALOG_TABLES; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, i != MZC_CATALOG_BOUNDS};

		values[0] = CStringGetTextDatum(names[i]);
		values[1] = Int64GetDatum((int64) pg_atomic_read_u64(&mzcoord_ctl->catalog_rows[i]));
		values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&mzcoord_ctl->catalog_bytes[i]));
		values[3] = Int64GetDatum((int64) pg_atomic_read_u64(&mzcoord_ctl->bounds_coalesced));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
