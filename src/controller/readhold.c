/*-------------------------------------------------------------------------
 *
 * readhold.c
 *	  Every read hold: the shared pool of transaction hold entries with its
 *	  per-backend and per-role limits, and this backend's own list of the
 *	  holds its transaction took.
 *
 * A transaction hold is one count in the core's accounting (which keeps the
 * collection's since at or below it), one MzcHoldEntry in shared memory (for
 * introspection and the per-role limit), and one MzcLocalHold in this
 * backend's list (so that commit, abort or exit can release it).  All three
 * are made together under the controller lock exclusively, and released
 * together at the end of the transaction.
 *
 * The local list lives in TopMemoryContext.  Room for new holds is reserved
 * (mzcoord_reserve_local_holds) before the lock is taken, so that recording
 * them inside the critical section cannot fail.
 *
 * IDENTIFICATION
 *	  src/controller/readhold.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "collections.h"
#include "controller.h"
#include "ids.h"
#include "oracle.h"
#include "readhold.h"
#include "settings.h"
#include "frontier.h"

/* A transaction hold of this backend. */
typedef struct MzcLocalHold
{
	uint64		epoch;			/* controller incarnation it belongs to */
	int32		slot;
	int32		entry;			/* its introspection entry */
	mzc_ts		time;
} MzcLocalHold;

/* Transaction holds of this backend, in TopMemoryContext. */
static MzcLocalHold *local_holds = NULL;
static int	nlocal_holds = 0;
static int	maxlocal_holds = 0;

static bool exit_callback_registered = false;

static void mzcoord_report_no_collection(int64 gid) pg_attribute_noreturn();

/* ----------------------------------------------------------------
 * This backend's holds
 * ----------------------------------------------------------------
 */

static void
holds_exit_callback(int code, Datum arg)
{
	/* Normally the abort callback already did this; this is the safety net. */
	mzcoord_release_local_holds();

	/*
	 * Writers of registered tables register this callback too (through
	 * mzcoord_reserve_local_holds(0)) so that their write ends on exit.
	 */
	mzcoord_oracle_end_write();
}

/*
 * Make room for n more local holds BEFORE taking the controller lock, so
 * that recording them inside the critical section cannot fail.  Also makes
 * sure the exit callback is registered (n may be 0 just for that).
 */
void
mzcoord_reserve_local_holds(int n)
{
	if (!exit_callback_registered)
	{
		before_shmem_exit(holds_exit_callback, (Datum) 0);
		exit_callback_registered = true;
	}
	if (nlocal_holds + n <= maxlocal_holds)
		return;
	if (local_holds == NULL)
	{
		maxlocal_holds = Max(16, n);
		local_holds = MemoryContextAlloc(TopMemoryContext,
										 maxlocal_holds * sizeof(MzcLocalHold));
	}
	else
	{
		maxlocal_holds = Max(maxlocal_holds * 2, nlocal_holds + n);
		local_holds = repalloc(local_holds,
							   maxlocal_holds * sizeof(MzcLocalHold));
	}
}

/* Record a hold; room was reserved with mzcoord_reserve_local_holds. */
static void
record_local_hold(const MzcLocalHold *hold)
{
	Assert(nlocal_holds < maxlocal_holds);
	local_holds[nlocal_holds++] = *hold;
}

int
mzcoord_local_hold_count(void)
{
	return nlocal_holds;
}

/*
 * Does this backend hold slot (of controller incarnation epoch) at a time
 * at or before `at`?  Its own holds are transaction holds, so this is
 * "does the current transaction hold it".
 */
bool
mzcoord_local_holds_cover(uint64 epoch, int32 slot, mzc_ts at)
{
	for (int i = 0; i < nlocal_holds; i++)
		if (local_holds[i].epoch == epoch && local_holds[i].slot == slot &&
			local_holds[i].time <= at)
			return true;
	return false;
}

/* ----------------------------------------------------------------
 * The shared hold pool
 * ----------------------------------------------------------------
 */

/*
 * The effective per-session and per-role limits: -1 means a quarter and a
 * half of the hold entries, so that neither one session nor one role can
 * ever take all of them.
 */
static int32
holds_per_backend_limit(void)
{
	if (mzcoord_max_holds_per_backend >= 0)
		return mzcoord_max_holds_per_backend;
	return Max(mzcoord_ctl->max_holds / 4, 1);
}

static int32
holds_per_role_limit(void)
{
	if (mzcoord_max_holds_per_role >= 0)
		return mzcoord_max_holds_per_role;
	return Max(mzcoord_ctl->max_holds / 2, 1);
}

/* Holds charged to role; caller holds the lock. */
static int32
role_holds_locked(Oid role)
{
	MzcRoleEntry *e = hash_search(mzcoord_ctl_role_hash, &role, HASH_FIND, NULL);

	return e ? e->nholds : 0;
}

/*
 * Charge (diff > 0) or credit (diff < 0) role; caller holds the lock
 * exclusively.  Entering cannot fail: each entry stands for at least one of
 * the max_holds hold entries, and the table has room for that many.
 */
static void
role_holds_add_locked(Oid role, int32 diff)
{
	MzcRoleEntry *e;
	bool		found;

	e = hash_search(mzcoord_ctl_role_hash, &role, diff > 0 ? HASH_ENTER_NULL : HASH_FIND,
					&found);
	if (e == NULL)
		return;
	if (diff > 0 && !found)
		e->nholds = 0;
	e->nholds += diff;
	if (e->nholds <= 0)
		(void) hash_search(mzcoord_ctl_role_hash, &role, HASH_REMOVE, NULL);
}

static int32
hold_entry_alloc(int32 slot, mzc_ts time, Oid role, TimestampTz now)
{
	int32		i = mzcoord_ctl->hold_free_head;
	MzcHoldEntry *h;

	Assert(i >= 0);
	h = &mzcoord_ctl_holds[i];
	mzcoord_ctl->hold_free_head = h->next_free;
	mzcoord_ctl->nholds_free--;
	h->in_use = true;
	h->slot = slot;
	h->time = time;
	h->pid = MyProcPid;
	h->backend = MyBackendId;
	h->role = role;
	role_holds_add_locked(role, 1);
	h->lxid = MyProc->lxid;
	h->acquired_at = now;
	return i;
}

static void
hold_entry_free(int32 i)
{
	if (i < 0 || i >= mzcoord_ctl->max_holds || !mzcoord_ctl_holds[i].in_use)
		return;
	mzcoord_ctl_holds[i].in_use = false;
	role_holds_add_locked(mzcoord_ctl_holds[i].role, -1);
	mzcoord_ctl_holds[i].next_free = mzcoord_ctl->hold_free_head;
	mzcoord_ctl->hold_free_head = i;
	mzcoord_ctl->nholds_free++;
}

/*
 * Release transaction holds (commit, abort, exit).  Never raises: holds of an
 * older controller incarnation are simply forgotten.
 */
static void
release_holds_locked(const MzcLocalHold *holds, int nholds)
{
	for (int i = 0; i < nholds; i++)
	{
		const MzcLocalHold *h = &holds[i];

		if (h->epoch != pg_atomic_read_u64(&mzcoord_ctl->epoch))
			continue;
		if (mzc_coll_release(&mzcoord_ctl->colls, h->slot, h->time, NULL, NULL) != MZC_OK)
		{
			elog(WARNING, "mzcoord: could not release a read hold at " INT64_FORMAT,
				 (int64) h->time);
			mzcoord_ctl->rebootstrap = true;
		}
		hold_entry_free(h->entry);
	}
}

/*
 * Release this backend's transaction holds in shared memory and forget
 * them; caller holds the lock exclusively.  Never raises.  COMMIT calls this
 * inside the critical section that publishes the transaction's catalog
 * changes (publish.c): the handover.
 */
void
mzcoord_release_local_holds_locked(void)
{
	release_holds_locked(local_holds, nlocal_holds);
	nlocal_holds = 0;
}

/* Release every transaction hold of this backend (takes the lock). */
void
mzcoord_release_local_holds(void)
{
	if (nlocal_holds == 0)
		return;
	if (mzcoord_ctl != NULL)
	{
		LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
		release_holds_locked(local_holds, nlocal_holds);
		LWLockRelease(mzcoord_ctl->lock);
	}
	nlocal_holds = 0;
}

/* Holds charged to roles altogether (for validation); caller holds the lock. */
int64
mzcoord_holds_charged_locked(void)
{
	HASH_SEQ_STATUS hs;
	MzcRoleEntry *re;
	int64		charged = 0;

	hash_seq_init(&hs, mzcoord_ctl_role_hash);
	while ((re = hash_seq_search(&hs)) != NULL)
		charged += re->nholds;
	return charged;
}

/*
 * Acquire one transaction hold per slot at times[i].  The caller holds the
 * lock exclusively, checked every time against the sinces and reserved local
 * room.  The holds are charged to this session and to its current role
 * (the outer user: SET ROLE counts, a SECURITY DEFINER function does not, so
 * a wrapper cannot move a caller's holds to its owner).  Returns false, and
 * takes none, when a limit or shared capacity is lacking (f says which); if
 * the core fails midway, holds acquired before that are recorded and stay
 * until the transaction ends (holding longer is always safe, and the caller
 * raises an error anyway).
 */
bool
mzcoord_acquire_holds_locked(const int32 *slots, const mzc_ts *times, int n,
					 TimestampTz now, MzcHoldFailure *f)
{
	Oid			role = GetOuterUserId();
	int32		backend_held = nlocal_holds;
	int32		role_held;

	memset(f, 0, sizeof(*f));
	f->result = MZC_HOLD_OK;
	f->role = role;
	if (n == 0)
		return true;
	if (backend_held + n > holds_per_backend_limit())
	{
		f->result = MZC_HOLD_BACKEND_LIMIT;
		f->held = backend_held;
		f->limit = holds_per_backend_limit();
		return false;
	}
	role_held = role_holds_locked(role);
	if (role_held + n > holds_per_role_limit())
	{
		f->result = MZC_HOLD_ROLE_LIMIT;
		f->held = role_held;
		f->limit = holds_per_role_limit();
		return false;
	}
	if (mzcoord_ctl->nholds_free < n)
	{
		f->result = MZC_HOLD_NO_ENTRIES;
		return false;
	}
	if (mzcoord_ctl->pool.nfree - mzcoord_ctl->reserved_nodes < n)
	{
		f->result = MZC_HOLD_NO_NODES;
		return false;
	}
	for (int i = 0; i < n; i++)
	{
		MzcLocalHold lh;

		if (mzc_coll_acquire(&mzcoord_ctl->colls, slots[i], times[i], NULL, NULL) != MZC_OK)
		{
			f->result = MZC_HOLD_NO_NODES;
			return false;
		}
		lh.epoch = pg_atomic_read_u64(&mzcoord_ctl->epoch);
		lh.slot = slots[i];
		lh.time = times[i];
		lh.entry = hold_entry_alloc(slots[i], times[i], role, now);
		record_local_hold(&lh);
	}
	return true;
}

/* Raise that no live collection has global id gid (after the lock). */
static void
mzcoord_report_no_collection(int64 gid)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("collection \"" MZC_GID_FMT "\" does not exist", gid)));
}

/* Raise what mzcoord_acquire_holds_locked() found lacking (after the lock). */
void
mzcoord_report_no_hold_space(const MzcHoldFailure *f)
{
	switch (f->result)
	{
		case MZC_HOLD_OK:
			break;
		case MZC_HOLD_BACKEND_LIMIT:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("too many mzcoord read holds in this session"),
					 errdetail_plural("The session holds %d read hold, and at most %d are allowed.",
									  "The session holds %d read holds, and at most %d are allowed.",
									  f->held, f->held, f->limit),
					 errhint("End the transaction to release its holds, or have a superuser raise mzcoord.max_holds_per_backend.")));
			break;
		case MZC_HOLD_ROLE_LIMIT:
			{
				const char *name = GetUserNameFromId(f->role, true);

				ereport(ERROR,
						(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
						 errmsg("too many mzcoord read holds for role \"%s\"",
								name ? name : "?"),
						 errdetail_plural("The sessions of the role hold %d read hold, and at most %d are allowed.",
										  "The sessions of the role hold %d read holds, and at most %d are allowed.",
										  f->held, f->held, f->limit),
						 errhint("End transactions of the role that hold, or have a superuser raise mzcoord.max_holds_per_role.")));
			}
			break;
		case MZC_HOLD_NO_ENTRIES:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("too many mzcoord read holds"),
					 errdetail("All %d hold entries of shared memory are in use.",
							   mzcoord_max_holds),
					 errhint("Raise mzcoord.max_holds, or end transactions that hold.")));
			break;
		case MZC_HOLD_NO_NODES:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("too many mzcoord read holds"),
					 errdetail("The shared count pool is full or reserved for catalog changes being committed."),
					 errhint("Raise mzcoord.max_collections or mzcoord.max_holds, which size the pool, or end transactions that hold.")));
			break;
	}
}

/* ----------------------------------------------------------------
 * Holds on collections by global id (staging)
 * ----------------------------------------------------------------
 */

/*
 * Transaction holds on each collection at its current since; returns the
 * least valid read (the join of the sinces), or {0} for no input.
 */
mzc_ts
mzcoord_ctl_hold_gids(const int64 *gids, int n)
{
	int32	   *slots = palloc(sizeof(int32) * Max(n, 1));
	mzc_ts	   *times = palloc(sizeof(mzc_ts) * Max(n, 1));
	mzc_frontier least = mzc_frontier_at(0);
	int			bad = -1;
	bool		nospace = false;
	MzcHoldFailure hf = {0};

	TimestampTz now = GetCurrentTimestamp();

	mzcoord_ctl_require_ready();
	mzcoord_reserve_local_holds(n);

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n && bad < 0; i++)
	{
		int32		slot = mzcoord_ctl_slot_of_gid(gids[i]);

		if (slot < 0 || mzcoord_ctl_slots[slot].state != MZC_COLL_ACTIVE)
		{
			bad = i;
			break;
		}
		slots[i] = slot;
		times[i] = mzc_coll_since(&mzcoord_ctl->colls, slot).ts;
		least = mzc_frontier_join(least, mzc_frontier_at(times[i]));
	}
	if (bad < 0)
		nospace = !mzcoord_acquire_holds_locked(slots, times, n, now, &hf);
	LWLockRelease(mzcoord_ctl->lock);

	if (bad >= 0)
		mzcoord_report_no_collection(gids[bad]);
	if (nospace)
		mzcoord_report_no_hold_space(&hf);
	return least.ts;
}

