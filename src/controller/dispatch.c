/*-------------------------------------------------------------------------
 *
 * dispatch.c
 *	  The maintenance slots and the coordinator's wake-up.
 *
 * Refreshes and exports run in a pool of maintenance workers, one slot per
 * worker (mzcoord.max_maintenance_workers).  The coordinator only decides
 * which object's step goes to which idle slot, and sets the worker's latch;
 * the worker runs the step (src/compute/maintain.c) and hands back its
 * outcome, setting the coordinator's latch.  An object never has two steps
 * at once.  A backend that drops an object whose step runs cancels that
 * step here (SIGINT to the worker), so the drop waits for nothing.
 *
 * The slots live in this plane, below the catalog and storage, because
 * mzcoord.drop (catalog) cancels steps and a committing writer (through
 * stage.c's commit callback) wakes the coordinator; both find the
 * processes to signal here.  See dispatch.h for the locking contract.
 *
 * IDENTIFICATION
 *	  src/controller/dispatch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "controller.h"
#include "dispatch.h"
#include "settings.h"

typedef struct MzcMaintSlot
{
	int			pid;			/* its worker, 0 if none */
	int			pgprocno;		/* its worker's PGPROC, -1 if none */
	int			coordinator_pid;	/* the coordinator that started it */
	MzcMaintSlotState state;
	int64		gid;			/* the object of the step (not IDLE) */
	MzcKind		kind;
	bool		after_failure;	/* the object's previous step failed */
	bool		cancel_requested;	/* a drop canceled the step */
	bool		failed;			/* DONE: the outcome */
	int64		failures;
} MzcMaintSlot;

typedef struct MzcDispatch
{
	LWLock	   *lock;
	int			coordinator_pid;	/* 0 if none */
	int			coordinator_pgprocno;	/* -1 if none */
	pg_atomic_uint32 wake;		/* a commit moved a collection with
								 * dependents */
	int			nslots;
	MzcMaintSlot slots[FLEXIBLE_ARRAY_MEMBER];
} MzcDispatch;

static MzcDispatch *dispatch = NULL;

/* Backend-local: this transaction wrote a collection with dependents. */
static bool wake_at_commit = false;

Size
mzcoord_dispatch_shmem_size(void)
{
	return add_size(offsetof(MzcDispatch, slots),
					mul_size(sizeof(MzcMaintSlot), mzcoord_max_maintenance_workers));
}

void
mzcoord_dispatch_shmem_init(LWLock *lock, bool found_unused)
{
	bool		found;

	dispatch = ShmemInitStruct("mzcoord dispatch", mzcoord_dispatch_shmem_size(),
							   &found);
	if (!found)
	{
		memset(dispatch, 0, mzcoord_dispatch_shmem_size());
		dispatch->coordinator_pgprocno = -1;
		pg_atomic_init_u32(&dispatch->wake, 0);
		dispatch->nslots = mzcoord_max_maintenance_workers;
		for (int i = 0; i < dispatch->nslots; i++)
			dispatch->slots[i].pgprocno = -1;
	}
	dispatch->lock = lock;
}

static void
set_latch_of(int pgprocno)
{
	if (pgprocno >= 0)
		SetLatch(&ProcGlobal->allProcs[pgprocno].procLatch);
}

/* ----------------------------------------------------------------
 * The coordinator
 * ----------------------------------------------------------------
 */

/* The coordinator registers itself (on) or leaves (off, at exit). */
void
mzcoord_dispatch_set_coordinator(bool on)
{
	LWLockAcquire(dispatch->lock, LW_EXCLUSIVE);
	if (on)
	{
		dispatch->coordinator_pid = MyProcPid;
		dispatch->coordinator_pgprocno = MyProc->pgprocno;
	}
	else if (dispatch->coordinator_pid == MyProcPid)
	{
		dispatch->coordinator_pid = 0;
		dispatch->coordinator_pgprocno = -1;
	}
	LWLockRelease(dispatch->lock);
}

int
mzcoord_dispatch_nslots(void)
{
	return dispatch->nslots;
}

/* Whether a commit asked for the coordinator since the last call. */
bool
mzcoord_dispatch_take_wake(void)
{
	return pg_atomic_exchange_u32(&dispatch->wake, 0) != 0;
}

/*
 * The finished steps, into out (room for nslots), their slots freed.  A
 * slot whose worker is gone (it exited between steps) is freed too.
 */
int
mzcoord_dispatch_harvest(MzcStepDone *out)
{
	int			n = 0;

	LWLockAcquire(dispatch->lock, LW_EXCLUSIVE);
	for (int i = 0; i < dispatch->nslots; i++)
	{
		MzcMaintSlot *s = &dispatch->slots[i];

		if (s->state != MZC_MSLOT_DONE)
			continue;
		out[n].gid = s->gid;
		out[n].failed = s->failed;
		out[n].failures = s->failures;
		n++;
		s->state = MZC_MSLOT_IDLE;
		s->gid = 0;
	}
	LWLockRelease(dispatch->lock);
	return n;
}

/* Whether a step of gid is assigned or running. */
bool
mzcoord_dispatch_running(int64 gid)
{
	bool		running = false;

	LWLockAcquire(dispatch->lock, LW_SHARED);
	for (int i = 0; i < dispatch->nslots && !running; i++)
		running = dispatch->slots[i].state != MZC_MSLOT_IDLE &&
			dispatch->slots[i].gid == gid;
	LWLockRelease(dispatch->lock);
	return running;
}

/*
 * Hand a step of gid to an idle slot whose worker is attached and wake
 * the worker.  False if no slot is free.
 */
bool
mzcoord_dispatch_assign(int64 gid, MzcKind kind, bool after_failure)
{
	int			pgprocno = -1;

	LWLockAcquire(dispatch->lock, LW_EXCLUSIVE);
	for (int i = 0; i < dispatch->nslots; i++)
	{
		MzcMaintSlot *s = &dispatch->slots[i];

		if (s->state != MZC_MSLOT_IDLE || s->pid == 0 ||
			s->coordinator_pid != MyProcPid)
			continue;
		s->state = MZC_MSLOT_ASSIGNED;
		s->gid = gid;
		s->kind = kind;
		s->after_failure = after_failure;
		s->cancel_requested = false;
		s->failed = false;
		s->failures = 0;
		pgprocno = s->pgprocno;
		break;
	}
	LWLockRelease(dispatch->lock);
	set_latch_of(pgprocno);
	return pgprocno >= 0;
}

/* The pid of the slot's worker, 0 if none. */
int
mzcoord_dispatch_worker_pid(int slot)
{
	int			pid;

	LWLockAcquire(dispatch->lock, LW_SHARED);
	pid = dispatch->slots[slot].pid;
	LWLockRelease(dispatch->lock);
	return pid;
}

/* ----------------------------------------------------------------
 * A maintenance worker
 * ----------------------------------------------------------------
 */

/*
 * Take the slot; false if another worker has it.  The coordinator is woken:
 * it may have work waiting for a worker.
 */
bool
mzcoord_dispatch_attach(int slot, int coordinator_pid)
{
	MzcMaintSlot *s = &dispatch->slots[slot];
	bool		ok = false;
	int			coordinator = -1;

	LWLockAcquire(dispatch->lock, LW_EXCLUSIVE);
	if (s->pid == 0)
	{
		s->pid = MyProcPid;
		s->pgprocno = MyProc->pgprocno;
		s->coordinator_pid = coordinator_pid;
		s->state = MZC_MSLOT_IDLE;
		s->gid = 0;
		ok = true;
		coordinator = dispatch->coordinator_pgprocno;
	}
	LWLockRelease(dispatch->lock);
	set_latch_of(coordinator);
	return ok;
}

/*
 * The worker exits: a step it had is done and failed (the coordinator
 * backs off that object: a step that ends its worker must not end the
 * next one at once).  Cannot fail.
 */
void
mzcoord_dispatch_detach(int slot)
{
	MzcMaintSlot *s = &dispatch->slots[slot];
	int			coordinator = -1;

	LWLockAcquire(dispatch->lock, LW_EXCLUSIVE);
	if (s->pid == MyProcPid)
	{
		if (s->state == MZC_MSLOT_ASSIGNED || s->state == MZC_MSLOT_RUNNING)
		{
			s->state = MZC_MSLOT_DONE;
			s->failed = true;
			s->failures = 0;
		}
		s->pid = 0;
		s->pgprocno = -1;
		coordinator = dispatch->coordinator_pgprocno;
	}
	LWLockRelease(dispatch->lock);
	set_latch_of(coordinator);
}

/* Whether the coordinator that started this worker still runs. */
bool
mzcoord_dispatch_coordinator_alive(int coordinator_pid)
{
	bool		alive;

	LWLockAcquire(dispatch->lock, LW_SHARED);
	alive = dispatch->coordinator_pid == coordinator_pid;
	LWLockRelease(dispatch->lock);
	return alive;
}

/*
 * Start the step assigned to the slot, if any.  A query cancel still
 * pending was meant for an earlier step (see dispatch.h): it is cleared
 * here, under the lock that every cancel is sent under.
 */
bool
mzcoord_dispatch_begin(int slot, int64 *gid, MzcKind *kind,
					   bool *after_failure)
{
	MzcMaintSlot *s = &dispatch->slots[slot];
	bool		ok = false;

	LWLockAcquire(dispatch->lock, LW_EXCLUSIVE);
	if (s->state == MZC_MSLOT_ASSIGNED && !s->cancel_requested)
	{
		s->state = MZC_MSLOT_RUNNING;
		*gid = s->gid;
		*kind = s->kind;
		*after_failure = s->after_failure;
		QueryCancelPending = false;
		ok = true;
	}
	else if (s->state == MZC_MSLOT_ASSIGNED)
	{
		/*
		 * Canceled before it began: nothing is recorded; "failed" makes the
		 * coordinator wait a moment before it hands the object out again,
		 * by which time the drop holds its lock.
		 */
		s->state = MZC_MSLOT_DONE;
		s->failed = true;
	}
	LWLockRelease(dispatch->lock);
	return ok;
}

/* Whether a drop canceled the slot's running step. */
bool
mzcoord_dispatch_cancel_requested(int slot)
{
	bool		requested;

	LWLockAcquire(dispatch->lock, LW_SHARED);
	requested = dispatch->slots[slot].cancel_requested;
	LWLockRelease(dispatch->lock);
	return requested;
}

/* The step ended: hand back its outcome and wake the coordinator. */
void
mzcoord_dispatch_finish(int slot, bool failed, int64 failures)
{
	MzcMaintSlot *s = &dispatch->slots[slot];
	int			coordinator;

	LWLockAcquire(dispatch->lock, LW_EXCLUSIVE);
	s->state = MZC_MSLOT_DONE;
	s->failed = failed;
	s->failures = failures;
	coordinator = dispatch->coordinator_pgprocno;
	LWLockRelease(dispatch->lock);
	set_latch_of(coordinator);
}

/* ----------------------------------------------------------------
 * Any backend
 * ----------------------------------------------------------------
 */

/* Whether the collection in slot reads target, directly or through others. */
static bool
reads_slot_locked(int32 slot, int32 target, int depth)
{
	mzc_collection *c = &mzcoord_ctl_slots[slot];

	if (slot == target)
		return true;
	if (depth > 64)
		return false;
	for (int i = 0; i < c->ndeps; i++)
		if (reads_slot_locked(c->deps[i], target, depth + 1))
			return true;
	return false;
}

/*
 * Cancel the running or assigned step of relid's object, and, if
 * dependents_too, those of every object that reads it: they hold locks on
 * it that a DROP waits for.  Returns whether any step was canceled.  The
 * canceled worker records nothing and the coordinator backs off the object
 * for a moment, by which time the drop holds its lock.
 */
bool
mzcoord_dispatch_cancel_rel(Oid relid, bool dependents_too)
{
	int64		gids[64];
	bool		cancel[64];
	int			n = Min(dispatch->nslots, 64);
	bool		any = false;
	int32		target;

	LWLockAcquire(dispatch->lock, LW_SHARED);
	for (int i = 0; i < n; i++)
		gids[i] = dispatch->slots[i].state == MZC_MSLOT_IDLE ? 0 :
			dispatch->slots[i].gid;
	LWLockRelease(dispatch->lock);

	/* Which of them to cancel: the controller knows what reads what. */
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	target = mzcoord_ctl->ready ? mzcoord_ctl_slot_of_rel(relid) : -1;
	for (int i = 0; i < n; i++)
	{
		int32		s = gids[i] != 0 && target >= 0 ?
			mzcoord_ctl_slot_of_gid(gids[i]) : -1;

		cancel[i] = s >= 0 && (s == target ||
							   (dependents_too && reads_slot_locked(s, target, 0)));
	}
	LWLockRelease(mzcoord_ctl->lock);

	LWLockAcquire(dispatch->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n; i++)
	{
		MzcMaintSlot *s = &dispatch->slots[i];

		if (!cancel[i] || s->state == MZC_MSLOT_IDLE ||
			s->state == MZC_MSLOT_DONE || s->gid != gids[i])
			continue;
		s->cancel_requested = true;
		if (s->state == MZC_MSLOT_RUNNING && s->pid != 0)
			(void) kill(s->pid, SIGINT);
		any = true;
	}
	LWLockRelease(dispatch->lock);
	return any;
}

/*
 * The current transaction wrote gid's collection: if anything reads it,
 * its commit wakes the coordinator.
 */
void
mzcoord_dispatch_note_write(int64 gid)
{
	int32		s;

	if (wake_at_commit || dispatch == NULL)
		return;
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	s = mzcoord_ctl->ready ? mzcoord_ctl_slot_of_gid(gid) : -1;
	if (s >= 0 && mzcoord_ctl_slots[s].ndependents > 0)
		wake_at_commit = true;
	LWLockRelease(mzcoord_ctl->lock);
}

/*
 * End of the transaction (from stage.c's callback, after the oracle let
 * the write go): a committed write that others read wakes the coordinator,
 * which moves the timeline and hands out the steps it causes.  Cannot
 * fail.
 */
void
mzcoord_dispatch_end_xact(bool committed)
{
	int			pgprocno;

	if (!wake_at_commit)
		return;
	wake_at_commit = false;
	if (!committed || dispatch == NULL)
		return;
	pg_atomic_write_u32(&dispatch->wake, 1);
	/* An unlocked read: a stale pgprocno only costs a spurious wake-up. */
	pgprocno = dispatch->coordinator_pgprocno;
	set_latch_of(pgprocno);
}
