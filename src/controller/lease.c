/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  Leases (issues 11, 23): durable read protection of tables, sources,
 *	  materialized views and indexes for clients outside any one
 *	  transaction, with an expiry so that an abandoned lease cannot pin
 *	  history forever.
 *
 * What a lease holds is each collection's since.  A view's since is its
 * own history (a view holds its inputs at its progress, not at its since).
 * An index's since is where it holds the relation it indexes (a read of an
 * index at a time is a read of that relation then): a lease on an index
 * therefore protects that relation through the index's dependency hold,
 * and the relation's bound, which never passes its live since, with it.
 * Privileges are those of the relation an index is on.
 *
 * This file owns the shared lease table; the SQL functions that create,
 * renew, advance, drop and show leases are leasefuncs.c, which changes the
 * table only through the mzcoord_lease_stage_* functions here.
 *
 * State.  The durable record is a row of mzcoord.lease_records, written
 * through mzcoord._lease_write() (SECURITY DEFINER, not executable by
 * PUBLIC; called by leasefuncs.c through fmgr after the checks made as the
 * caller).
 * In shared memory each lease is an MzcLease entry plus a leased reader of
 * the core's shard model (critical.c, reference K6/K7), which keeps its
 * heartbeat and ttl: renewing is a heartbeat, advancing a leased downgrade
 * (never backwards), and the tick's mzc_shard_expire() decides expiry.  The
 * core's shard since is not used (a lease holds collections, not a shard);
 * the protection is the lease's counts in the collections' counted
 * frontiers (collections.c), which is what keeps the since and therefore
 * compaction back.  model_holds.c's token model is not used: its issuer applies
 * batches to bare counted frontiers, bypassing the collections' implied
 * capabilities, sinces and dirty lists that mzc_coll_acquire() maintains.
 *
 * Handover.  A call that creates, renews or advances a lease first takes
 * transaction holds at the lease's time, as acquire_read_hold does, and
 * writes the record; at COMMIT, in the critical section in which publish.c
 * releases the transaction's holds, the lease's counts are installed (or
 * moved) before those holds go, so no instant leaves the relations
 * unprotected.  Nothing of a lease changes in shared memory before COMMIT,
 * and an abort leaves nothing.  Pool nodes and the entry are reserved in
 * the call, so COMMIT cannot run out of them; it never raises.
 *
 * Expiry.  A lease is expired once now > heartbeat + ttl.  From that
 * instant nothing honours it: read_at coverage, renew and advance look at
 * the clock, not at the tick.  Its counts are released by the next tick
 * (mzcoord_lease_tick_locked), so the since and compaction may stay back
 * at most one tick interval longer, never shorter.  A renew that started
 * before the expiry and commits after it installs the counts again: its
 * transaction holds kept the relations at held_at in between.
 *
 * Restarts.  The coordinator's bootstrap reads the records, starts each
 * leased collection at meet(its catalog since, the times of its active
 * leases) and installs their counts before the controller is ready.  The
 * tick keeps the durable since of a leased collection at the lease
 * (tick.c), and a bootstrap covers a crash between a lease's commit and
 * that tick: compaction never passed the live since, which the lease's
 * transaction holds kept at or below held_at.
 *
 * IDENTIFICATION
 *	  src/controller/lease.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "collections.h"
#include "controller.h"
#include "failpoint.h"
#include "ids.h"
#include "lease.h"
#include "rec_leases.h"
#include "oracle.h"
#include "readhold.h"
#include "settings.h"
#include "shmem.h"
#include "critical.h"
#include "frontier.h"


/*
 * One lease in shared memory.  All fields: the controller lock.  An entry
 * is in use from the call that creates it (committed false, pending_pid
 * its backend) until the COMMIT of its drop.
 */
typedef struct MzcLease
{
	bool		in_use;
	bool		committed;		/* its record is committed */
	bool		counted;		/* its counts are in the core */
	int			pending_pid;	/* !committed: the creating backend */
	uint64		epoch;			/* controller incarnation of its slots */
	char		name[NAMEDATALEN];
	Oid			owner;
	int32		nrels;
	int32		slots[MZC_LEASE_MAX_RELS];	/* -1: not held (gone) */
	int64		gids[MZC_LEASE_MAX_RELS];
	mzc_ts		held_at;
	int64		ttl_ms;
	int64		expires_ms;		/* heartbeat + ttl, ms since 2000 */
	int32		reader;			/* its leased reader, or -1 */
	TimestampTz created_at;
} MzcLease;

/* The area: this header, then MzcLease[capacity], then the readers. */
typedef struct MzcLeaseArea
{
	int32		capacity;		/* fixed at startup */
	int32		used_bound;		/* no entry from here on is in use: the
								 * walks stop here, so that their cost
								 * follows the leases there are, not the
								 * capacity (controller lock; written
								 * under it exclusively) */
	mzc_shard	shard;			/* leased readers, one per counted lease */
} MzcLeaseArea;

static MzcLeaseArea *lease_area = NULL;
static MzcLease *leases = NULL;
static mzc_shard_reader *lease_readers = NULL;

/* A change of a lease made by this transaction, applied at COMMIT. */
typedef enum MzcLeaseOpKind
{
	MZC_LEASE_CREATE,
	MZC_LEASE_RENEW,
	MZC_LEASE_ADVANCE,
	MZC_LEASE_DROP
} MzcLeaseOpKind;

typedef struct MzcLeaseOp
{
	MzcLeaseOpKind kind;
	int			nest_level;
	uint64		epoch;
	int32		entry;
	int32		nodes;			/* pool nodes reserved for it */
	mzc_ts		at;				/* CREATE, ADVANCE */
	int64		expires_ms;		/* CREATE, RENEW */
} MzcLeaseOp;

/* This transaction's lease changes, in TopMemoryContext. */
static MzcLeaseOp *lease_ops = NULL;
static int	nlease_ops = 0;
static int	maxlease_ops = 0;

/* Records read by a bootstrap, until it installs them. */
typedef struct MzcLeaseBoot
{
	char		name[NAMEDATALEN];
	Oid			owner;
	int32		ngids;
	int64		gids[MZC_LEASE_MAX_RELS];
	mzc_ts		held_at;
	int64		ttl_ms;
	int64		expires_ms;
	TimestampTz created_at;
	bool		active;
} MzcLeaseBoot;

static MzcLeaseBoot *boot_leases = NULL;
static int	nboot_leases = 0;

/* ----------------------------------------------------------------
 * Shared memory and small helpers
 * ----------------------------------------------------------------
 */

/* Tables, sources, materialized views and indexes can be leased. */
static bool
leasable_kind(MzcKind kind)
{
	return kind == MZC_KIND_TABLE || kind == MZC_KIND_SOURCE ||
		kind == MZC_KIND_MATERIALIZED_VIEW || kind == MZC_KIND_INDEX;
}


/* Leases in shared memory: a sixteenth of the hold entries, at least 64. */
static int32
lease_capacity(void)
{
	return Max(64, mzcoord_max_holds / 16);
}

/* The room of the area, fixed at startup (read without the lock). */
int32
mzcoord_lease_area_capacity(void)
{
	return lease_area->capacity;
}

Size
mzcoord_lease_shmem_size(void)
{
	Size		size = MAXALIGN(sizeof(MzcLeaseArea));

	size = add_size(size, MAXALIGN(mul_size(lease_capacity(), sizeof(MzcLease))));
	size = add_size(size, MAXALIGN(mul_size(lease_capacity(),
											sizeof(mzc_shard_reader))));
	return size;
}

void
mzcoord_lease_shmem_init(void)
{
	bool		found;
	char	   *p;

	lease_area = ShmemInitStruct("mzcoord leases", mzcoord_lease_shmem_size(),
								 &found);
	p = (char *) lease_area + MAXALIGN(sizeof(MzcLeaseArea));
	leases = (MzcLease *) p;
	p += MAXALIGN(sizeof(MzcLease) * lease_capacity());
	lease_readers = (mzc_shard_reader *) p;
	if (!found)
	{
		lease_area->capacity = lease_capacity();
		lease_area->used_bound = 0;
		memset(leases, 0, sizeof(MzcLease) * lease_area->capacity);
		for (int32 i = 0; i < lease_area->capacity; i++)
			leases[i].reader = -1;
		mzc_shard_init(&lease_area->shard, lease_readers, lease_area->capacity,
					   mzc_frontier_at(0));
	}
}

/* Milliseconds since 2000-01-01, the leases' clock. */
int64
mzcoord_lease_ms(TimestampTz t)
{
	return (int64) (t / 1000);
}

TimestampTz
mzcoord_lease_time(int64 ms)
{
	return (TimestampTz) ms * 1000;
}

static uint64
ctl_epoch(void)
{
	return pg_atomic_read_u64(&mzcoord_ctl->epoch);
}

/*
 * Is the lease past its expiry at now_ms (critical.c's rule for leased
 * readers: heartbeat + lease < now)?  An entry without a reader is.
 */
static bool
lease_expired(const MzcLease *l, int64 now_ms)
{
	const mzc_shard_reader *r;

	if (l->reader < 0)
		return true;
	r = &lease_readers[l->reader];
	return !r->in_use || r->last_heartbeat_ms < now_ms - r->lease_ms;
}

/* The entry of lease `name` visible to this backend, or -1. */
static int32
find_lease_locked(const char *name)
{
	for (int32 i = 0; i < lease_area->used_bound; i++)
	{
		MzcLease   *l = &leases[i];

		if (l->in_use && l->epoch == ctl_epoch() &&
			(l->committed || l->pending_pid == MyProcPid) &&
			strcmp(l->name, name) == 0)
			return i;
	}
	return -1;
}

/* Leases (committed or being created) owned by role. */
static int32
role_leases_locked(Oid role)
{
	int32		n = 0;

	for (int32 i = 0; i < lease_area->used_bound; i++)
		if (leases[i].in_use && leases[i].epoch == ctl_epoch() &&
			leases[i].owner == role)
			n++;
	return n;
}

/* Make room for one more op before the lock is taken. */
void
mzcoord_lease_reserve_op(void)
{
	if (nlease_ops < maxlease_ops)
		return;
	maxlease_ops = Max(8, maxlease_ops * 2);
	if (lease_ops == NULL)
		lease_ops = MemoryContextAlloc(TopMemoryContext,
									   sizeof(MzcLeaseOp) * maxlease_ops);
	else
		lease_ops = repalloc(lease_ops, sizeof(MzcLeaseOp) * maxlease_ops);
}

static void
record_op(MzcLeaseOpKind kind, int32 entry, int32 nodes, mzc_ts at,
		  int64 expires_ms)
{
	MzcLeaseOp *op = &lease_ops[nlease_ops++];

	op->kind = kind;
	op->nest_level = GetCurrentTransactionNestLevel();
	op->epoch = ctl_epoch();
	op->entry = entry;
	op->nodes = nodes;
	op->at = at;
	op->expires_ms = expires_ms;
}

/*
 * The time lease `entry` holds once this transaction's earlier ops are
 * applied: its latest staged advance, or its committed time.
 */
static mzc_ts
effective_held_at(int32 entry)
{
	for (int i = nlease_ops - 1; i >= 0; i--)
		if (lease_ops[i].entry == entry &&
			(lease_ops[i].kind == MZC_LEASE_ADVANCE ||
			 lease_ops[i].kind == MZC_LEASE_CREATE))
			return lease_ops[i].at;
	return leases[entry].held_at;
}

/* ----------------------------------------------------------------
 * Counts in the core
 * ----------------------------------------------------------------
 */

/* Problems of COMMIT and the tick are logged and make the tick rebuild. */
static void
core_failed(const char *what, const MzcLease *l, const mzc_error *err)
{
	elog(WARNING, "mzcoord: could not %s lease \"%s\": %s; the controller will be rebuilt from the catalog",
		 what, l->name, err->message);
	mzcoord_ctl->rebootstrap = true;
}

/*
 * Install the lease's counts at held_at on every slot the backend holds
 * there (a slot it does not hold any more is given up), and give it a
 * leased reader with its heartbeat.  Caller holds the lock exclusively.
 */
static void
install_counts_locked(int32 entry, bool need_local_hold)
{
	MzcLease   *l = &leases[entry];
	mzc_error	err;
	int32		reader;

	for (int i = 0; i < l->nrels; i++)
	{
		if (l->slots[i] < 0)
			continue;
		if (need_local_hold &&
			!mzcoord_local_holds_cover(l->epoch, l->slots[i], l->held_at))
		{
			l->slots[i] = -1;
			continue;
		}
		if (mzc_coll_acquire(&mzcoord_ctl->colls, l->slots[i], l->held_at,
							 NULL, &err) != MZC_OK)
		{
			core_failed("install", l, &err);
			l->slots[i] = -1;
			continue;
		}
		mzcoord_ctl_mark_recheck(l->slots[i]);
	}
	l->counted = true;
	if (mzc_shard_register_leased(&lease_area->shard, entry,
								  l->expires_ms - l->ttl_ms, l->ttl_ms,
								  &reader, &err) != MZC_OK ||
		mzc_shard_leased_downgrade(&lease_area->shard, reader,
								   mzc_frontier_at(l->held_at),
								   l->expires_ms - l->ttl_ms, &err) != MZC_OK)
	{
		core_failed("register", l, &err);
		l->reader = -1;
	}
	else
		l->reader = reader;
}

/*
 * Move the lease's count on each of its collections from held_at to `to`
 * ({}: release them), and have the tick look at each again.  A core
 * failure is reported (what: the operation) and the collection forgotten
 * by this lease.  Caller holds the lock.
 */
static void
move_counts_locked(MzcLease *l, const char *what, mzc_frontier to)
{
	mzc_error	err;

	for (int i = 0; i < l->nrels; i++)
	{
		mzc_status	st;

		if (l->slots[i] < 0)
			continue;
		/* A release also works on a dropped collection (waiting for it). */
		st = to.empty ?
			mzc_coll_release(&mzcoord_ctl->colls, l->slots[i], l->held_at,
							 NULL, &err) :
			mzc_coll_downgrade(&mzcoord_ctl->colls, l->slots[i], l->held_at,
							   to, NULL, &err);
		if (st != MZC_OK)
		{
			core_failed(what, l, &err);
			l->slots[i] = -1;
		}
		else
			mzcoord_ctl_mark_recheck(l->slots[i]);
	}
}

/* Release the lease's counts and its reader; caller holds the lock. */
static void
release_counts_locked(int32 entry)
{
	MzcLease   *l = &leases[entry];

	if (l->counted)
		move_counts_locked(l, "release", mzc_frontier_empty());
	l->counted = false;

	/*
	 * critical.c has no deregistration of a leased reader (persist only
	 * expires them): free it here, as mzc_shard_expire() would.
	 */
	if (l->reader >= 0)
		lease_readers[l->reader].in_use = false;
	l->reader = -1;
}

/* Move the counts from held_at to `at` (never back); caller holds the lock. */
static void
advance_counts_locked(int32 entry, mzc_ts at)
{
	MzcLease   *l = &leases[entry];
	mzc_error	err;

	if (l->counted)
	{
		move_counts_locked(l, "advance", mzc_frontier_at(at));
		if (l->reader >= 0 && lease_readers[l->reader].in_use)
			(void) mzc_shard_leased_downgrade(&lease_area->shard, l->reader,
											  mzc_frontier_at(at),
											  l->expires_ms - l->ttl_ms, &err);
	}
	l->held_at = at;
}

static void
free_entry_locked(int32 entry)
{
	release_counts_locked(entry);
	memset(&leases[entry], 0, sizeof(MzcLease));
	leases[entry].reader = -1;
	while (lease_area->used_bound > 0 &&
		   !leases[lease_area->used_bound - 1].in_use)
		lease_area->used_bound--;
}

/* ----------------------------------------------------------------
 * The transaction: COMMIT, ABORT and savepoints
 * ----------------------------------------------------------------
 */

bool
mzcoord_lease_pending(void)
{
	return nlease_ops > 0;
}

static void
apply_op_locked(const MzcLeaseOp *op)
{
	MzcLease   *l = &leases[op->entry];

	switch (op->kind)
	{
		case MZC_LEASE_CREATE:
			l->committed = true;
			l->pending_pid = 0;
			l->held_at = op->at;
			l->expires_ms = op->expires_ms;
			install_counts_locked(op->entry, true);
			break;
		case MZC_LEASE_RENEW:
			l->expires_ms = op->expires_ms;
			if (l->counted && l->reader >= 0 && lease_readers[l->reader].in_use)
				(void) mzc_shard_heartbeat(&lease_area->shard, l->reader,
										   op->expires_ms - l->ttl_ms, NULL);
			else
			{
				/* Expired since the call: the transaction held it meanwhile. */
				release_counts_locked(op->entry);
				install_counts_locked(op->entry, true);
			}
			break;
		case MZC_LEASE_ADVANCE:
			advance_counts_locked(op->entry, op->at);
			break;
		case MZC_LEASE_DROP:
			free_entry_locked(op->entry);
			break;
	}
}

/*
 * COMMIT (publish.c, in the critical section that then releases the
 * transaction's holds): apply this transaction's lease changes.  Never
 * raises.  Changes made for an older controller incarnation are not
 * applied: a rebuild reads the committed records again.
 */
void
mzcoord_lease_commit_locked(void)
{
	for (int i = 0; i < nlease_ops; i++)
	{
		MzcLeaseOp *op = &lease_ops[i];

		if (op->epoch != ctl_epoch())
		{
			mzcoord_ctl->rebootstrap = true;
			continue;
		}
		mzcoord_ctl->reserved_nodes -= op->nodes;
		apply_op_locked(op);
	}
	nlease_ops = 0;
}

/* Undo ops[from..] (their reservations and entries being created). */
static void
undo_ops_locked(int from)
{
	for (int i = nlease_ops - 1; i >= from; i--)
	{
		MzcLeaseOp *op = &lease_ops[i];

		if (op->epoch != ctl_epoch())
			continue;
		mzcoord_ctl->reserved_nodes -= op->nodes;
		if (op->kind == MZC_LEASE_CREATE)
			free_entry_locked(op->entry);
	}
	nlease_ops = from;
}

void
mzcoord_lease_abort(void)
{
	if (nlease_ops == 0)
		return;
	if (mzcoord_ctl != NULL && lease_area != NULL)
	{
		LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
		undo_ops_locked(0);
		LWLockRelease(mzcoord_ctl->lock);
	}
	nlease_ops = 0;
}

/* A savepoint ends: its ops go to the parent, or are undone. */
void
mzcoord_lease_subxact(int level, bool commit)
{
	int			keep = 0;

	if (nlease_ops == 0)
		return;
	if (commit)
	{
		for (int i = 0; i < nlease_ops; i++)
			if (lease_ops[i].nest_level >= level)
				lease_ops[i].nest_level = level - 1;
		return;
	}
	/* Ops are in call order, so a savepoint's ops are a suffix. */
	while (keep < nlease_ops && lease_ops[keep].nest_level < level)
		keep++;
	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	undo_ops_locked(keep);
	LWLockRelease(mzcoord_ctl->lock);
}

/* ----------------------------------------------------------------
 * The tick, compaction bounds and read_at
 * ----------------------------------------------------------------
 */

/*
 * Release the counts of every lease whose expiry passed (K6: the shard
 * removes readers whose heartbeat + lease < now); the collections are
 * marked for the tick to look at.  Caller holds the lock exclusively.
 * Returns the number of leases released.
 */
int
mzcoord_lease_tick_locked(TimestampTz now)
{
	int			n = 0;

	/* No lease: no leased reader either. */
	if (lease_area == NULL || lease_area->used_bound == 0)
		return 0;
	(void) mzc_shard_expire(&lease_area->shard, mzcoord_lease_ms(now));
	for (int32 i = 0; i < lease_area->used_bound; i++)
	{
		MzcLease   *l = &leases[i];

		if (!l->in_use || !l->committed || !l->counted ||
			l->epoch != ctl_epoch())
			continue;
		if (l->reader >= 0 && lease_readers[l->reader].in_use)
			continue;
		release_counts_locked(i);
		n++;
		/* Test only: a crash with some expired leases released, not all. */
		mzcoord_failpoint_check("lease_expiry");
	}
	return n;
}

static int
cmp_limit(const void *a, const void *b)
{
	int32		x = ((const MzcLeaseLimit *) a)->slot;
	int32		y = ((const MzcLeaseLimit *) b)->slot;

	if (x != y)
		return x < y ? -1 : 1;
	return ((const MzcLeaseLimit *) a)->at < ((const MzcLeaseLimit *) b)->at ? -1 :
		((const MzcLeaseLimit *) a)->at > ((const MzcLeaseLimit *) b)->at ? 1 : 0;
}

/* Room mzcoord_lease_limits_locked may need, in entries. */
int
mzcoord_lease_limits_room(void)
{
	return lease_area == NULL ? 0 : lease_area->capacity * MZC_LEASE_MAX_RELS;
}

/*
 * Where the active leases hold each slot, for one tick: one entry per
 * leased slot, the least time of its leases, sorted by slot, in room
 * (allocated by the caller before it took the lock, with
 * mzcoord_lease_limits_room entries).  The tick asks for many slots; one
 * pass over the leases here keeps that independent of how many leases
 * there are.  Caller holds the controller lock.
 */
MzcLeaseLimits
mzcoord_lease_limits_locked(MzcLeaseLimit *room)
{
	MzcLeaseLimits lim = {room, 0};
	int64		now_ms = mzcoord_lease_ms(GetCurrentTimestamp());
	int			n = 0;

	if (lease_area == NULL)
		return lim;
	for (int32 i = 0; i < lease_area->used_bound; i++)
	{
		MzcLease   *l = &leases[i];

		if (!l->in_use || !l->committed || !l->counted ||
			l->epoch != ctl_epoch() || lease_expired(l, now_ms))
			continue;
		for (int r = 0; r < l->nrels; r++)
		{
			room[n].slot = l->slots[r];
			room[n].at = l->held_at;
			n++;
		}
	}
	/* Sorted by slot, then time: the first entry of a slot is its least. */
	qsort(room, n, sizeof(MzcLeaseLimit), cmp_limit);
	for (int i = 0; i < n; i++)
		if (lim.n == 0 || room[lim.n - 1].slot != room[i].slot)
			room[lim.n++] = room[i];
	return lim;
}

/* The meet of the times of the active leases on slot in lim ({} if none). */
mzc_frontier
mzcoord_lease_limit_of(const MzcLeaseLimits *lim, int32 slot)
{
	int			lo = 0;
	int			hi = lim->n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (lim->entries[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < lim->n && lim->entries[lo].slot == slot)
		return mzc_frontier_at(lim->entries[lo].at);
	return mzc_frontier_empty();
}

/*
 * Does an active lease of role hold slot at or before `at`?  A lease past
 * its expiry does not, even before the tick released it.  Caller holds the
 * lock.
 */
bool
mzcoord_lease_covers_locked(int32 slot, mzc_ts at, Oid role, TimestampTz now)
{
	if (lease_area == NULL)
		return false;
	for (int32 i = 0; i < lease_area->used_bound; i++)
	{
		MzcLease   *l = &leases[i];

		if (!l->in_use || !l->committed || !l->counted || l->owner != role ||
			l->epoch != ctl_epoch() || l->held_at > at ||
			lease_expired(l, mzcoord_lease_ms(now)))
			continue;
		for (int r = 0; r < l->nrels; r++)
			if (l->slots[r] == slot)
				return true;
	}
	return false;
}

/* ----------------------------------------------------------------
 * Bootstrap
 * ----------------------------------------------------------------
 */

/*
 * Read every lease record (inside the bootstrap's snapshot, SPI
 * connected); mzcoord_lease_boot_install_locked() installs them.
 */
void
mzcoord_lease_boot_read(TimestampTz now)
{
	MzcRecLease *rows;
	int			n;

	mzcoord_rec_read_leases(MZC_LEASE_MAX_RELS, &rows, &n);
	boot_leases = palloc0(sizeof(MzcLeaseBoot) * Max(n, 1));
	nboot_leases = n;
	for (int r = 0; r < n; r++)
	{
		MzcLeaseBoot *b = &boot_leases[r];

		strlcpy(b->name, rows[r].name, NAMEDATALEN);
		b->owner = rows[r].owner;
		b->ngids = rows[r].ngids;
		memcpy(b->gids, rows[r].gids, sizeof(int64) * rows[r].ngids);
		b->held_at = rows[r].held_at;
		b->ttl_ms = rows[r].ttl_ms;
		b->expires_ms = mzcoord_lease_ms(rows[r].expires_at);
		b->created_at = rows[r].created_at;
		b->active = mzcoord_lease_ms(now) <= b->expires_ms && b->ttl_ms > 0;
	}
}

/*
 * Where a leasable collection starts after a bootstrap: its catalog since, met
 * with the times of its active leases (see the head of this file).
 */
mzc_frontier
mzcoord_lease_boot_since(int64 gid, mzc_frontier since)
{
	for (int i = 0; i < nboot_leases; i++)
	{
		if (!boot_leases[i].active || since.empty)
			continue;
		for (int g = 0; g < boot_leases[i].ngids; g++)
			if (boot_leases[i].gids[g] == gid)
				since = mzc_frontier_meet(since,
										  mzc_frontier_at(boot_leases[i].held_at));
	}
	return since;
}

/*
 * Rebuild the area from the records read, installing the counts of the
 * active leases; caller holds the lock exclusively, after the collections
 * were created (at most at their leases' times) and before the controller
 * is ready.
 */
void
mzcoord_lease_boot_install_locked(void)
{
	memset(leases, 0, sizeof(MzcLease) * lease_area->capacity);
	for (int32 i = 0; i < lease_area->capacity; i++)
		leases[i].reader = -1;
	mzc_shard_init(&lease_area->shard, lease_readers, lease_area->capacity,
				   mzc_frontier_at(0));
	nlease_ops = 0;				/* (the coordinator has none) */
	lease_area->used_bound = 0;
	for (int i = 0; i < nboot_leases && i < lease_area->capacity; i++)
	{
		MzcLeaseBoot *b = &boot_leases[i];
		MzcLease   *l = &leases[i];

		l->in_use = true;
		lease_area->used_bound = i + 1;
		l->committed = true;
		l->epoch = ctl_epoch();
		strlcpy(l->name, b->name, NAMEDATALEN);
		l->owner = b->owner;
		l->nrels = b->ngids;
		l->held_at = b->held_at;
		l->ttl_ms = b->ttl_ms;
		l->expires_ms = b->expires_ms;
		l->created_at = b->created_at;
		l->reader = -1;
		for (int g = 0; g < b->ngids; g++)
		{
			int32		slot = mzcoord_ctl_slot_of_gid(b->gids[g]);

			l->gids[g] = b->gids[g];
			if (slot >= 0 && leasable_kind(mzcoord_ctl_info[slot].kind) &&
				mzc_frontier_le_ts(mzc_coll_since(&mzcoord_ctl->colls, slot),
								   b->held_at))
				l->slots[g] = slot;
			else
				l->slots[g] = -1;
		}
		if (b->active)
			install_counts_locked(i, false);
	}
	boot_leases = NULL;
	nboot_leases = 0;
}

/* ----------------------------------------------------------------
 * Changes and copies for the SQL functions (leasefuncs.c)
 *
 * Each takes the controller lock itself, so that the SQL functions never
 * see an entry: they stage a change here, and raise what stood in its way
 * after the lock is released.
 * ----------------------------------------------------------------
 */

/* Resolve the relations to slots and the time; caller holds the lock. */
static bool
create_resolve_locked(const Oid *rels, int n, bool have_at, MzcLeaseCheck *c,
					  int32 *slots, int64 *gids)
{
	mzc_frontier least = mzc_frontier_at(0);

	for (int i = 0; i < n; i++)
	{
		int32		slot = mzcoord_ctl_slot_of_rel(rels[i]);

		if (slot < 0 || mzcoord_ctl_slots[slot].state != MZC_COLL_ACTIVE)
		{
			c->not_collection = i;
			return false;
		}
		if (!leasable_kind(mzcoord_ctl_info[slot].kind))
		{
			c->not_collection = i;
			c->not_storage = true;
			return false;
		}
		slots[i] = slot;
		gids[i] = mzcoord_ctl_info[slot].gid;
		c->sinces[i] = mzc_coll_since(&mzcoord_ctl->colls, slot);
		least = mzc_frontier_join(least, c->sinces[i]);
		/* Not below the committed compaction bound either (D3). */
		if (mzcoord_ctl_info[slot].persisted)
			least = mzc_frontier_join(least, mzcoord_ctl_info[slot].durable_since);
	}
	if (!have_at)
		c->at = least.empty ? MZC_TS_MAX : Max(least.ts, c->floor);
	for (int i = 0; i < n; i++)
		c->violation |= !mzc_frontier_le_ts(c->sinces[i], c->at);
	return !c->violation;
}

/* Check the limits, take the holds and the entry; caller holds the lock. */
static int32
create_take_locked(const char *name, Oid role, int32 *slots, int n,
				   TimestampTz now, MzcLeaseCheck *c)
{
	mzc_ts	   *times = palloc(sizeof(mzc_ts) * n);
	int32		entry = -1;

	c->taken = find_lease_locked(name) >= 0;
	c->held = role_leases_locked(role);
	c->role_limit = c->held >= mzcoord_max_leases;
	/* An entry of an older controller incarnation is free too. */
	for (int32 i = 0; i < lease_area->capacity && entry < 0; i++)
		if (!leases[i].in_use || leases[i].epoch != ctl_epoch())
			entry = i;
	c->full = entry < 0;
	c->no_nodes = mzcoord_ctl->pool.nfree - mzcoord_ctl->reserved_nodes < n;
	if (c->taken || c->role_limit || c->full || c->no_nodes)
		return -1;
	for (int i = 0; i < n; i++)
		times[i] = c->at;
	if (!mzcoord_acquire_holds_locked(slots, times, n, now, &c->hf))
	{
		c->no_holds = true;
		return -1;
	}
	/* The reader of an entry of an older incarnation is stale too. */
	if (leases[entry].in_use && leases[entry].reader >= 0)
		lease_readers[leases[entry].reader].in_use = false;
	memset(&leases[entry], 0, sizeof(MzcLease));
	leases[entry].in_use = true;
	lease_area->used_bound = Max(lease_area->used_bound, entry + 1);
	leases[entry].pending_pid = MyProcPid;
	leases[entry].epoch = ctl_epoch();
	strlcpy(leases[entry].name, name, NAMEDATALEN);
	leases[entry].owner = role;
	leases[entry].nrels = n;
	leases[entry].held_at = c->at;
	leases[entry].reader = -1;
	leases[entry].created_at = now;
	memcpy(leases[entry].slots, slots, sizeof(int32) * n);
	mzcoord_ctl->reserved_nodes += n;
	return entry;
}

/* find_and_hold_locked(): hold at the lease's own time, or take no hold. */
#define LEASE_HOLD_OWN ((mzc_ts) -2)
#define LEASE_HOLD_NONE ((mzc_ts) -1)

/*
 * Find the lease; if it is live, the caller may change it and `hold` is
 * not LEASE_HOLD_NONE, take transaction holds on its slots at `hold` (not
 * below the lease's time) and reserve nodes for its counts.  Caller holds
 * the lock exclusively.
 */
static bool
find_and_hold_locked(const char *name, mzc_ts hold, bool need_live,
					 TimestampTz now, MzcLeaseFound *f)
{
	MzcLease   *l;
	int32		slots[MZC_LEASE_MAX_RELS];
	mzc_ts		times[MZC_LEASE_MAX_RELS];
	int			k = 0;

	f->entry = find_lease_locked(name);
	if (f->entry < 0)
		return false;
	l = &leases[f->entry];
	f->owner = l->owner;
	f->expired = l->committed && lease_expired(l, mzcoord_lease_ms(now));
	f->held_at = effective_held_at(f->entry);
	f->ttl_ms = l->ttl_ms;
	if (hold == LEASE_HOLD_OWN)
		hold = f->held_at;
	if ((f->owner != GetUserId() && !superuser()) ||
		(need_live && f->expired) || hold < 0 || hold < f->held_at)
		return false;
	for (int i = 0; i < l->nrels; i++)
		if (l->slots[i] >= 0 &&
			mzcoord_ctl_slots[l->slots[i]].state == MZC_COLL_ACTIVE)
		{
			slots[k] = l->slots[i];
			times[k++] = hold;
		}
	f->no_nodes = mzcoord_ctl->pool.nfree - mzcoord_ctl->reserved_nodes < l->nrels;
	if (f->no_nodes)
		return false;
	if (!mzcoord_acquire_holds_locked(slots, times, k, now, &f->hf))
	{
		f->no_holds = true;
		return false;
	}
	mzcoord_ctl->reserved_nodes += l->nrels;
	return true;
}

static int
copy_lease_holds_locked(MzcLeaseHoldCopy *out, TimestampTz now)
{
	int			n = 0;

	for (int32 i = 0; i < lease_area->used_bound; i++)
	{
		MzcLease   *l = &leases[i];

		if (!l->in_use || !l->committed || !l->counted ||
			l->epoch != ctl_epoch() || lease_expired(l, mzcoord_lease_ms(now)))
			continue;
		for (int r = 0; r < l->nrels; r++)
		{
			if (l->slots[r] < 0)
				continue;
			out[n].gid = mzcoord_ctl_info[l->slots[r]].gid;
			out[n].relid = mzcoord_ctl_info[l->slots[r]].relid;
			strlcpy(out[n].name, l->name, NAMEDATALEN);
			out[n].held_at = l->held_at;
			out[n].created_at = l->created_at;
			out[n].implied = mzcoord_ctl_slot_implied(l->slots[r],
													 mzcoord_table_upper());
			out[n].since = mzc_coll_since(&mzcoord_ctl->colls, l->slots[r]);
			n++;
		}
	}
	return n;
}

/*
 * create_lease under the lock: resolve the relations to slots (their
 * global ids into gids) and the time, take the holds and the entry, and
 * stage the creation for COMMIT.  Returns the entry, or -1 with what
 * stood in the way in *c.  Takes the lock exclusively.
 */
int32
mzcoord_lease_stage_create(const char *name, Oid role, const Oid *rels, int n,
						   bool have_at, int64 ttl_ms, TimestampTz now,
						   MzcLeaseCheck *c, int64 *gids)
{
	int32		slots[MZC_LEASE_MAX_RELS];
	int32		entry = -1;

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	if (create_resolve_locked(rels, n, have_at, c, slots, gids))
	{
		entry = create_take_locked(name, role, slots, n, now, c);
		if (entry >= 0)
		{
			memcpy(leases[entry].gids, gids, sizeof(int64) * n);
			leases[entry].ttl_ms = ttl_ms;
			leases[entry].expires_ms = mzcoord_lease_ms(now) + ttl_ms;
			record_op(MZC_LEASE_CREATE, entry, n, c->at, mzcoord_lease_ms(now) + ttl_ms);
		}
	}
	LWLockRelease(mzcoord_ctl->lock);
	return entry;
}

/*
 * renew_lease under the lock: hold the live lease's relations at its time
 * and stage a heartbeat at now for COMMIT (the new expiry in
 * f->expires_ms).  False: what stood in the way is in *f.  Takes the lock
 * exclusively.
 */
bool
mzcoord_lease_stage_renew(const char *name, TimestampTz now, MzcLeaseFound *f)
{
	bool		ok;

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	ok = find_and_hold_locked(name, LEASE_HOLD_OWN, true, now, f);
	if (ok)
	{
		f->expires_ms = mzcoord_lease_ms(now) + f->ttl_ms;
		record_op(MZC_LEASE_RENEW, f->entry, leases[f->entry].nrels,
				  f->held_at, f->expires_ms);
	}
	LWLockRelease(mzcoord_ctl->lock);
	return ok;
}

/*
 * advance_lease under the lock: hold the live lease's relations at `at`
 * (not below its time) and stage the advance for COMMIT.  False: what
 * stood in the way is in *f.  Takes the lock exclusively.
 */
bool
mzcoord_lease_stage_advance(const char *name, mzc_ts at, TimestampTz now,
							MzcLeaseFound *f)
{
	bool		ok;

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	ok = find_and_hold_locked(name, at, true, now, f);
	if (ok)
		record_op(MZC_LEASE_ADVANCE, f->entry, leases[f->entry].nrels, at, 0);
	LWLockRelease(mzcoord_ctl->lock);
	return ok;
}

/*
 * drop_lease under the lock: stage the drop of the lease, expired or not,
 * if the caller owns it or is a superuser.  False: what stood in the way
 * is in *f.  Takes the lock exclusively.
 */
bool
mzcoord_lease_stage_drop(const char *name, TimestampTz now, MzcLeaseFound *f)
{
	bool		ok;

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	/* No holds: dropping only gives protection up. */
	(void) find_and_hold_locked(name, LEASE_HOLD_NONE, false, now, f);
	ok = f->entry >= 0 && (f->owner == GetUserId() || superuser());
	if (ok)
		record_op(MZC_LEASE_DROP, f->entry, 0, 0, 0);
	LWLockRelease(mzcoord_ctl->lock);
	return ok;
}

/*
 * The owner of lease `name` and the relations of its collections that are
 * still active (relids, *n of them), for the privilege checks of renew and
 * advance.  False if this backend sees no such lease.  Takes the lock
 * shared.
 */
bool
mzcoord_lease_owner_rels(const char *name, Oid *owner, Oid *relids, int *n)
{
	int32		entry;

	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	entry = find_lease_locked(name);
	if (entry >= 0)
	{
		MzcLease   *l = &leases[entry];

		*owner = l->owner;
		/* A dropped relation is not protected any more: nothing to check. */
		for (int i = 0; i < l->nrels; i++)
			if (l->slots[i] >= 0 &&
				mzcoord_ctl_slots[l->slots[i]].state == MZC_COLL_ACTIVE)
				relids[(*n)++] = mzcoord_ctl_info[l->slots[i]].relid;
	}
	LWLockRelease(mzcoord_ctl->lock);
	return entry >= 0;
}

/*
 * The counts of the active leases, copied into out (room for
 * mzcoord_lease_area_capacity() * MZC_LEASE_MAX_RELS) under the shared
 * lock.  Returns how many.
 */
int
mzcoord_lease_copy_holds(MzcLeaseHoldCopy *out)
{
	int			n;

	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	n = copy_lease_holds_locked(out, GetCurrentTimestamp());
	LWLockRelease(mzcoord_ctl->lock);
	return n;
}

/*
 * What _lease_validate checks, copied under the shared lock once the
 * controller is ready (nothing before): the counts of the active leases
 * (as mzcoord_lease_copy_holds) and, in *readerless, how many counted
 * leases have no reader.
 */
int
mzcoord_lease_copy_validate(MzcLeaseHoldCopy *out, int *readerless)
{
	int			n = 0;

	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	if (mzcoord_ctl->ready)
	{
		n = copy_lease_holds_locked(out, GetCurrentTimestamp());
		for (int32 i = 0; i < lease_area->used_bound; i++)
			if (leases[i].in_use && leases[i].counted && leases[i].reader < 0)
				(*readerless)++;
	}
	LWLockRelease(mzcoord_ctl->lock);
	return n;
}
