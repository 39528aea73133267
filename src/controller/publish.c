/*-------------------------------------------------------------------------
 *
 * publish.c
 *	  Publication of the catalog changes a transaction staged (stage.c):
 *	  their check at staging time, the reservation of shared capacity at
 *	  PRE_COMMIT, their application at COMMIT; and the durable hold.
 *
 * Shared memory is not transactional: catalog implications only stage
 * changes in backend-local memory.  PRE_COMMIT checks them and reserves
 * what they need (it may still raise and abort the transaction).  COMMIT
 * applies them and releases the transaction's read holds in one critical
 * section of the controller lock (the handover), and never raises: a core
 * failure there is logged and makes the next tick rebuild the controller.
 *
 * The durable hold: each collection keeps one count at the since the
 * catalog has committed (MzcSlotInfo.durable_hold) -- its committed
 * compaction bound, for a collection with history -- moved by the tick only
 * after its transaction committed (tick.c).  The live since never passes
 * the durable one, so no since regresses across a restart and compaction
 * never passes a durable since.
 *
 * IDENTIFICATION
 *	  src/controller/publish.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/extension.h"
#include "utils/timestamp.h"

#include "collections.h"
#include "controller.h"
#include "ids.h"
#include "lease.h"
#include "oracle.h"
#include "publish.h"
#include "readhold.h"
#include "settings.h"
#include "frontier.h"
#include "policy.h"

/* ----------------------------------------------------------------
 * Staging time
 * ----------------------------------------------------------------
 */

/*
 * Check (at staging time) that the inputs are live collections.  Inputs
 * staged by the same transaction are filtered out by the caller.
 */
void
mzcoord_ctl_check_inputs(const int64 *gids, int n)
{
	int			bad = -1;

	if (n == 0)
		return;
	mzcoord_ctl_require_ready();
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	for (int i = 0; i < n && bad < 0; i++)
	{
		int32		slot = mzcoord_ctl_slot_of_gid(gids[i]);

		if (slot < 0 || mzcoord_ctl_slots[slot].state != MZC_COLL_ACTIVE)
			bad = i;
	}
	LWLockRelease(mzcoord_ctl->lock);
	if (bad >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("collection \"" MZC_GID_FMT "\" does not exist",
						gids[bad])));
}

/* ----------------------------------------------------------------
 * PRE_COMMIT: reservation
 * ----------------------------------------------------------------
 */

/*
 * The CREATEs of a staged list, by global id: (gid, position) sorted, so
 * that "the collection created earlier in the list" is a binary search
 * rather than a walk back through the list for every change (a transaction
 * that changes the policy of 100,000 tables would otherwise take seconds
 * under the exclusive lock).
 */
typedef struct MzcStagedCreate
{
	int64		gid;
	int			pos;
} MzcStagedCreate;

typedef struct MzcCreateIndex
{
	MzcStagedCreate *entries;
	int			n;
} MzcCreateIndex;

static int
cmp_staged_create(const void *a, const void *b)
{
	const MzcStagedCreate *x = a;
	const MzcStagedCreate *y = b;

	if (x->gid != y->gid)
		return x->gid < y->gid ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos ? 1 : 0;
}

/* Index the CREATEs of staged (before taking the lock: it allocates). */
static MzcCreateIndex
index_creates(List *staged)
{
	MzcCreateIndex ci;
	ListCell   *lc;

	ci.entries = palloc(sizeof(MzcStagedCreate) * Max(list_length(staged), 1));
	ci.n = 0;
	foreach(lc, staged)
	{
		MzcStaged  *s = lfirst(lc);

		if (s->op == MZC_STAGE_CREATE)
		{
			ci.entries[ci.n].gid = s->gid;
			ci.entries[ci.n].pos = foreach_current_index(lc);
			ci.n++;
		}
	}
	qsort(ci.entries, ci.n, sizeof(MzcStagedCreate), cmp_staged_create);
	return ci;
}

/*
 * Position of the last CREATE of gid before position upto in the list, or
 * -1 if none.
 */
static int
created_before(const MzcCreateIndex *ci, int64 gid, int upto)
{
	int			lo = 0;
	int			hi = ci->n;
	int			found = -1;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (ci->entries[mid].gid < gid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ci->n && ci->entries[lo].gid == gid &&
		 ci->entries[lo].pos < upto; lo++)
		found = ci->entries[lo].pos;
	return found;
}

/*
 * Dependency edges reachable from the collection gid will be when the staged
 * change at position upto is published: a collection staged earlier in the
 * list has the edges computed for it (edges[]), a published one those of
 * the live graph.  Caller holds the lock exclusively (the traversal marks
 * of the core change).  A missing collection counts 0; it is reported.
 */
static int64
staged_gid_edges_locked(const MzcCreateIndex *ci, int upto,
						const int64 *edges, int64 gid)
{
	int32		slot;
	int			i = created_before(ci, gid, upto);

	if (i >= 0)
		return edges[i];
	slot = mzcoord_ctl_slot_of_gid(gid);
	return slot >= 0 ? mzc_coll_reachable_edges(&mzcoord_ctl->colls, slot) : 0;
}

/*
 * Pool nodes that publishing the staged changes may need; caller holds the
 * lock exclusively.
 *
 * The core admits an operation only if the pool has a free node for each
 * node its own batch adds plus one per dependency edge reachable from the
 * collection (the propagation moves at most one count per edge), and an
 * admitted operation never uses more than it was admitted for.  COMMIT runs
 * the changes in list order, so reserving the sum of their admission bounds
 * guarantees that every one of them is admitted in turn: no change runs out
 * of nodes mid-publication.  Per change that is
 *
 *	CREATE			2 + inputs (the collection's own count, its durable hold
 *					at the same time, one count on each input);
 *	POLICY, UPPER	1 + E (the implied capability moves);
 *	DROP			2 * (1 + E) (the durable hold is released, then the
 *					implied capability; each may propagate).
 *
 * E is computed from the live graph, not assumed: the edges reachable from
 * a collection never change while it lives (its inputs are fixed at
 * creation and kept alive by its holds on them), so the bound computed at
 * PRE_COMMIT still holds at COMMIT.  For a collection the same transaction
 * creates, E is its inputs plus the edges reachable from each of them.  A
 * plain table has E = 0, so registering or dropping many tables needs a few
 * nodes each, not the worst case of a collection with the deepest graph.
 */
static int64
staged_nodes_locked(List *staged, const MzcCreateIndex *ci)
{
	int			n = list_length(staged);
	int64	   *edges = palloc0(sizeof(int64) * Max(n, 1));
	int64		max_edges = (int64) mzcoord_ctl->capacity * MZC_COLL_MAX_DEPS;
	int64		nodes = 0;

	for (int i = 0; i < n; i++)
	{
		MzcStaged  *s = list_nth(staged, i);
		int64		e;

		switch (s->op)
		{
			case MZC_STAGE_CREATE:
				e = s->ninputs;
				for (int k = 0; k < s->ninputs; k++)
					e += staged_gid_edges_locked(ci, i, edges, s->inputs[k]);
				edges[i] = Min(e, max_edges);
				nodes += 2 + s->ninputs;
				break;
			case MZC_STAGE_POLICY:
			case MZC_STAGE_UPPER:
				nodes += 1 + staged_gid_edges_locked(ci, i, edges, s->gid);
				break;
			case MZC_STAGE_DROP:
				nodes += 2 * (1 + staged_gid_edges_locked(ci, i, edges, s->gid));
				break;
			case MZC_STAGE_INPUTS:
				/* New holds, and the propagation of the old and new graphs. */
				e = s->ninputs + staged_gid_edges_locked(ci, i, edges, s->gid);
				for (int k = 0; k < s->ninputs; k++)
					e += staged_gid_edges_locked(ci, i, edges, s->inputs[k]);
				nodes += 2 * (1 + Min(e, max_edges));
				break;
		}
	}
	pfree(edges);
	return nodes;
}

/* Raise that the count pool cannot take the staged changes. */
static void
report_no_node_space(int64 needed, int32 available)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("too many mzcoord catalog changes in one transaction"),
			 errdetail("Publishing them needs up to " INT64_FORMAT " entries of the shared count pool, and %d are available.",
					   needed, available),
			 errhint("Raise mzcoord.max_collections, which sizes the pool, or make the changes in smaller transactions.")));
}

/*
 * Does every staged change other than a DROP find what it refers to (a live
 * collection, or one created earlier in the list), and does no CREATE exist
 * already?  Sets
 * *missing and *duplicate to an offending global id; caller holds the lock.
 */
static void
staged_check_locked(List *staged, const MzcCreateIndex *ci, int64 *missing,
					int64 *duplicate)
{
	ListCell   *lc;

	foreach(lc, staged)
	{
		MzcStaged  *s = lfirst(lc);
		int			pos = foreach_current_index(lc);

		if (s->op == MZC_STAGE_CREATE)
		{
			if (mzcoord_ctl_slot_of_gid(s->gid) >= 0 ||
				created_before(ci, s->gid, pos) >= 0)
				*duplicate = s->gid;
			for (int i = 0; i < s->ninputs; i++)
			{
				int32		slot = mzcoord_ctl_slot_of_gid(s->inputs[i]);

				if ((slot < 0 || !mzc_coll_live(&mzcoord_ctl->colls, slot)) &&
					created_before(ci, s->inputs[i], pos) < 0)
					*missing = s->inputs[i];
			}
		}
		else if (s->op != MZC_STAGE_DROP &&
				 mzcoord_ctl_slot_of_gid(s->gid) < 0 &&
				 created_before(ci, s->gid, pos) < 0)
			*missing = s->gid;
		if (s->op == MZC_STAGE_INPUTS)
			for (int i = 0; i < s->ninputs; i++)
				if (mzcoord_ctl_slot_of_gid(s->inputs[i]) < 0 &&
					created_before(ci, s->inputs[i], pos) < 0)
					*missing = s->inputs[i];

		/*
		 * A DROP of a collection the controller no longer has is not refused:
		 * the catalog row goes either way, after which both sides agree
		 * again (if the controller still has a dropped slot for it,
		 * publishing fails and rebuilds the controller from the catalog).
		 * Refusing it would leave the user unable to drop the object.
		 */
	}
}

/*
 * PRE_COMMIT: check the staged changes against the controller and reserve
 * what publishing them needs.  May raise (the transaction then aborts).
 */
void
mzcoord_ctl_reserve(List *staged, MzcReservation *r)
{
	ListCell   *lc;
	int32		slots = 0;
	int64		nodes = 0;
	int32		nodes_available = 0;
	int64		missing = -1;
	int64		duplicate = -1;
	bool		ready;
	bool		full_slots = false;
	bool		full_nodes = false;
	MzcCreateIndex creates;

	/*
	 * Created together with the extension: nothing to publish (the
	 * controller cannot serve an extension that is not committed yet); the
	 * coordinator's bootstrap loads it all from the catalog after the commit.
	 */
	if (mzcoord_ctl_extension_created_here(get_extension_oid("mzcoord", true)))
	{
		r->epoch = PG_UINT64_MAX;
		r->slots = 0;
		r->nodes = 0;
		return;
	}

	foreach(lc, staged)
	{
		MzcStaged  *s = lfirst(lc);

		slots += s->op == MZC_STAGE_CREATE ? 1 : 0;
	}

	creates = index_creates(staged);
	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	ready = mzcoord_ctl->ready;
	if (ready)
	{
		staged_check_locked(staged, &creates, &missing, &duplicate);
		nodes = staged_nodes_locked(staged, &creates);
		nodes_available = mzcoord_ctl->pool.nfree -
			mzcoord_ctl->reserved_nodes;
		full_slots = mzcoord_ctl->colls.nfree -
			mzcoord_ctl->reserved_slots < slots;
		full_nodes = nodes_available < nodes;
		if (missing < 0 && duplicate < 0 && !full_slots && !full_nodes)
		{
			mzcoord_ctl->reserved_slots += slots;
			mzcoord_ctl->reserved_nodes += (int32) nodes;
			r->epoch = pg_atomic_read_u64(&mzcoord_ctl->epoch);
			r->slots = slots;
			r->nodes = (int32) nodes;
		}
	}
	LWLockRelease(mzcoord_ctl->lock);

	if (!ready)
		ereport(ERROR,
				(errcode(ERRCODE_CANNOT_CONNECT_NOW),
				 errmsg("the mzcoord controller is starting up"),
				 errdetail("Catalog changes cannot be published before the coordinator loaded the catalog.")));
	if (missing >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("collection \"" MZC_GID_FMT "\" does not exist", missing)));
	if (duplicate >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("collection \"" MZC_GID_FMT "\" already exists", duplicate)));
	if (full_slots)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many mzcoord collections"),
				 errdetail("All %d collection slots of shared memory are in use.",
						   mzcoord_max_collections),
				 errhint("Raise mzcoord.max_collections, or drop collections.")));
	if (full_nodes)
		report_no_node_space(nodes, nodes_available);
}

void
mzcoord_ctl_unreserve(const MzcReservation *r)
{
	if (mzcoord_ctl == NULL)
		return;
	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	if (r->epoch == pg_atomic_read_u64(&mzcoord_ctl->epoch))
	{
		mzcoord_ctl->reserved_slots -= r->slots;
		mzcoord_ctl->reserved_nodes -= r->nodes;
	}
	LWLockRelease(mzcoord_ctl->lock);
}

/* ----------------------------------------------------------------
 * COMMIT: publication, and the durable hold
 * ----------------------------------------------------------------
 */

/* The read policy of a retain history (milliseconds). */
mzc_policy
mzcoord_ctl_retain_policy(int64 retain_ms)
{
	mzc_policy p;

	if (mzc_policy_lag(retain_ms, MZC_SINCE_GRANULARITY_MS, &p, NULL) != MZC_OK)
		p = mzc_policy_disabled();
	return p;
}

/* The read policy of a collection of this kind and retain history. */
mzc_policy
mzcoord_ctl_policy_for(MzcKind kind, int64 retain_ms)
{
	/* A sink is write-only: it only needs its input up to its progress. */
	if (kind == MZC_KIND_SINK)
		return mzc_policy_step_back();
	return mzcoord_ctl_retain_policy(retain_ms);
}

/*
 * The durable hold: one count at the since the catalog has committed, so
 * that the live since never passes what a restart would bring back (no
 * since regresses across a crash, and compaction, which follows the live
 * since, never passes a durable one).  The tick moves it forward once it has
 * made a later since durable.  A new collection's since is committed with
 * its catalog row, in the transaction that publishes it.
 */
static bool
durable_hold_init_locked(int32 slot, mzc_error *err)
{
	mzc_frontier since = mzc_coll_since(&mzcoord_ctl->colls, slot);

	if (since.empty)
		return true;
	if (mzc_coll_acquire(&mzcoord_ctl->colls, slot, since.ts, NULL, err) != MZC_OK)
		return false;
	mzcoord_ctl_info[slot].durable_hold = since;
	return true;
}

/* Release the durable hold (the collection is dropped); caller holds the lock. */
static bool
durable_hold_release_locked(int32 slot, mzc_error *err)
{
	mzc_frontier hold = mzcoord_ctl_info[slot].durable_hold;

	if (hold.empty)
		return true;
	mzcoord_ctl_info[slot].durable_hold = mzc_frontier_empty();
	return mzc_coll_release(&mzcoord_ctl->colls, slot, hold.ts, NULL, err) == MZC_OK;
}

/*
 * Move the durable hold up to a since the catalog now has; caller holds the
 * lock.  Never back.  On a core failure (no pool node for the propagation)
 * the hold stays where it is, which is always safe; the next tick retries.
 */
void
mzcoord_ctl_durable_hold_advance_locked(int32 slot, mzc_frontier since)
{
	mzc_frontier hold = mzcoord_ctl_info[slot].durable_hold;
	mzc_error	err;

	if (hold.empty || !mzc_frontier_lt(hold, since))
		return;
	if (mzc_coll_downgrade(&mzcoord_ctl->colls, slot, hold.ts, since, NULL, &err) == MZC_OK)
		mzcoord_ctl_info[slot].durable_hold = since;
	else
		mzcoord_ctl_mark_recheck(slot);
}

/*
 * Create a collection in the core and map it; caller holds the lock.
 * Returns false on a core failure (reported in err).
 */
bool
mzcoord_ctl_create_locked(int64 gid, const char *item_id, Oid relid,
						  MzcKind kind, mzc_frontier since, mzc_frontier upper,
						  const int32 *deps, int ndeps, int32 *slot_out,
						  mzc_error *err)
{
	mzc_coll_create_args args;
	int32		slot;

	memset(&args, 0, sizeof(args));
	args.shard_since = since;
	args.requested_since = mzc_frontier_at(0);
	args.is_table = kind == MZC_KIND_TABLE;
	args.register_ts = since.empty ? 0 : since.ts;
	args.upper = kind == MZC_KIND_TABLE ? mzc_frontier_join(upper, since) : upper;
	args.deps = deps;
	args.ndeps = ndeps;
	args.hold_deps_at_since = true;
	/* A view or sink keeps what it made in storage of its own (see core). */
	args.deps_at_upper = kind == MZC_KIND_MATERIALIZED_VIEW || kind == MZC_KIND_SINK;
	if (mzc_coll_create(&mzcoord_ctl->colls, &args, &slot, err) != MZC_OK)
		return false;

	memset(&mzcoord_ctl_info[slot], 0, sizeof(MzcSlotInfo));
	mzcoord_ctl_info[slot].gid = gid;
	mzcoord_ctl_info[slot].relid = relid;
	mzcoord_ctl_info[slot].kind = kind;
	strlcpy(mzcoord_ctl_info[slot].item_id, item_id, MZC_ITEM_ID_LEN);
	mzcoord_ctl_info[slot].retain_ms = MZC_DEFAULT_RETAIN_MS;
	mzcoord_ctl_info[slot].created_at = GetCurrentTimestamp();
	mzcoord_ctl_info[slot].durable_hold = mzc_frontier_empty();
	mzcoord_ctl_info[slot].recheck_next = -1;
	mzcoord_ctl_mark_recheck(slot);
	mzcoord_ctl_track_slot(slot);
	/* A table may have history up to its upper: the tick looks at it. */
	if (kind == MZC_KIND_TABLE)
		mzcoord_ctl_reset_written_locked(slot, args.upper.ts);
	else
		mzcoord_ctl_reset_written_locked(slot, 0);
	if (!durable_hold_init_locked(slot, err))
		return false;
	if (!mzcoord_ctl_map_gid(slot))
	{
		snprintf(err->message, sizeof(err->message), "global id table is full");
		return false;
	}
	mzcoord_ctl_map_rel(slot);
	*slot_out = slot;
	return true;
}

static bool
apply_staged_locked(const MzcStaged *s, mzc_error *err)
{
	int32		slot;

	switch (s->op)
	{
		case MZC_STAGE_CREATE:
			{
				int32		deps[MZC_MAX_INPUTS];

				for (int i = 0; i < s->ninputs; i++)
				{
					deps[i] = mzcoord_ctl_slot_of_gid(s->inputs[i]);
					if (deps[i] < 0)
					{
						snprintf(err->message, sizeof(err->message),
								 "input u" INT64_FORMAT " is missing", s->inputs[i]);
						return false;
					}
				}
				return mzcoord_ctl_create_locked(s->gid, s->item_id, s->relid,
												 s->kind, s->since, s->upper,
												 deps, s->ninputs, &slot, err);
			}
		case MZC_STAGE_POLICY:
			{
				mzc_policy p;

				slot = mzcoord_ctl_slot_of_gid(s->gid);
				if (slot < 0 || mzcoord_ctl_slots[slot].state != MZC_COLL_ACTIVE)
					return true;	/* dropped meanwhile: nothing to govern */
				mzcoord_ctl_info[slot].retain_ms = s->retain_ms;
				p = mzcoord_ctl_policy_for(mzcoord_ctl_info[slot].kind, s->retain_ms);
				/* Re-configured: the tick publishes it next, uncoalesced. */
				mzcoord_ctl_info[slot].reconfigured = true;
				mzcoord_ctl_mark_recheck(slot);
				return mzc_coll_set_policy(&mzcoord_ctl->colls, slot, &p, NULL, err) == MZC_OK;
			}
		case MZC_STAGE_DROP:
			slot = mzcoord_ctl_slot_of_gid(s->gid);
			if (slot < 0)
				return true;
			mzcoord_ctl_unmap_rel(slot);
			if (!durable_hold_release_locked(slot, err))
				return false;
			return mzc_coll_drop(&mzcoord_ctl->colls, slot, NULL, err) == MZC_OK;
		case MZC_STAGE_UPPER:
			slot = mzcoord_ctl_slot_of_gid(s->gid);
			if (slot < 0 || !mzc_coll_live(&mzcoord_ctl->colls, slot))
				return true;
			return mzc_coll_advance_upper(&mzcoord_ctl->colls, slot, s->upper,
										  NULL, err) == MZC_OK;
		case MZC_STAGE_INPUTS:
			{
				int32		deps[MZC_MAX_INPUTS];

				slot = mzcoord_ctl_slot_of_gid(s->gid);
				for (int i = 0; i < s->ninputs; i++)
					if ((deps[i] = mzcoord_ctl_slot_of_gid(s->inputs[i])) < 0)
					{
						snprintf(err->message, sizeof(err->message),
								 "input u" INT64_FORMAT " is missing", s->inputs[i]);
						return false;
					}
				if (slot < 0)
					return true;	/* dropped meanwhile */
				return mzc_coll_set_deps(&mzcoord_ctl->colls, slot, deps,
										 s->ninputs, NULL, err) == MZC_OK;
			}
	}
	return true;
}

/*
 * COMMIT: publish the staged changes (if r, what PRE_COMMIT reserved, is
 * not NULL), apply the transaction's lease changes and release this
 * backend's transaction holds in one critical section (the handover).
 * Never raises.
 */
void
mzcoord_ctl_publish(List *staged, const MzcReservation *r)
{
	ListCell   *lc;

	if (mzcoord_ctl == NULL)
		return;
	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	if (r != NULL && r->epoch == pg_atomic_read_u64(&mzcoord_ctl->epoch))
	{
		mzcoord_ctl->publications++;
		mzcoord_ctl->reserved_slots -= r->slots;
		mzcoord_ctl->reserved_nodes -= r->nodes;
		foreach(lc, staged)
		{
			mzc_error	err;

			err.message[0] = '\0';
			if (!apply_staged_locked(lfirst(lc), &err))
			{
				elog(WARNING, "mzcoord: could not publish a catalog change: %s; the controller will be rebuilt from the catalog",
					 err.message);
				mzcoord_ctl->rebootstrap = true;
			}
		}
	}
	/* Leases take over from the transaction's holds before they go. */
	mzcoord_lease_commit_locked();
	mzcoord_release_local_holds_locked();
	LWLockRelease(mzcoord_ctl->lock);

	/* Readers may wait for an upper that this commit advanced. */
	foreach(lc, staged)
		if (((MzcStaged *) lfirst(lc))->op == MZC_STAGE_UPPER)
		{
			mzcoord_upper_advanced();
			break;
		}
}
