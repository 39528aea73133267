/*-------------------------------------------------------------------------
 *
 * dispatch.h
 *	  The maintenance slots (one per maintenance worker) through which the
 *	  coordinator hands out refresh and export steps, and the wake-up of
 *	  the coordinator by a commit that moves a collection with dependents.
 *
 * LOCKING CONTRACT (in the style of replication/slot.h)
 *
 * The dispatch lock (MZC_LOCK_DISPATCH) protects every field of every
 * slot and the coordinator's pgprocno and pid.  Readers copy out under it
 * shared, writers take it exclusive.  It is never held with another
 * mzcoord lock, and nothing that can fail runs under it.
 *
 * Who writes what:
 * - state IDLE -> ASSIGNED (gid, kind, after_failure): the coordinator.
 * - ASSIGNED -> RUNNING: the slot's worker, which clears its own pending
 *   query cancel under the lock, so that a cancel meant for an earlier
 *   step never hits this one.
 * - RUNNING (or ASSIGNED) -> DONE (failed, failures): the slot's worker,
 *   or its exit callback if it dies during a step.
 * - DONE -> IDLE: the coordinator, which reads the outcome first.
 * - cancel_requested: any backend (mzcoord.drop); while it holds the lock
 *   exclusively it also signals the worker (SIGINT), so the signal can
 *   only reach the step it was meant for.
 * - pid, pgprocno: the slot's worker at start and exit.
 * - wake (atomic, no lock): set by any committing backend, consumed by
 *   the coordinator.
 *
 *
 * IDENTIFICATION
 *	  src/controller/dispatch.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_DISPATCH_H
#define MZCOORD_DISPATCH_H

#include "postgres.h"

#include "storage/lwlock.h"

#include "ids.h"

typedef enum MzcMaintSlotState
{
	MZC_MSLOT_IDLE,				/* free for the coordinator to assign */
	MZC_MSLOT_ASSIGNED,			/* a step is handed to the worker */
	MZC_MSLOT_RUNNING,			/* the worker runs it */
	MZC_MSLOT_DONE				/* finished; outcome for the coordinator */
} MzcMaintSlotState;

/* What the coordinator learns of a finished step. */
typedef struct MzcStepDone
{
	int64		gid;
	bool		failed;
	int64		failures;		/* consecutive, as recorded; 0 if unknown */
} MzcStepDone;

/* Shared memory */
extern Size mzcoord_dispatch_shmem_size(void);
extern void mzcoord_dispatch_shmem_init(LWLock *lock, bool found);

/* The coordinator */
extern void mzcoord_dispatch_set_coordinator(bool on);
extern int	mzcoord_dispatch_nslots(void);
extern bool mzcoord_dispatch_take_wake(void);
extern int	mzcoord_dispatch_harvest(MzcStepDone *out);
extern bool mzcoord_dispatch_running(int64 gid);
extern bool mzcoord_dispatch_assign(int64 gid, MzcKind kind, bool after_failure);
extern int	mzcoord_dispatch_worker_pid(int slot);

/* A maintenance worker */
extern bool mzcoord_dispatch_attach(int slot, int coordinator_pid);
extern void mzcoord_dispatch_detach(int slot);
extern bool mzcoord_dispatch_coordinator_alive(int coordinator_pid);
extern bool mzcoord_dispatch_begin(int slot, int64 *gid, MzcKind *kind,
								   bool *after_failure);
extern bool mzcoord_dispatch_cancel_requested(int slot);
extern void mzcoord_dispatch_finish(int slot, bool failed, int64 failures);

/* Any backend */
extern bool mzcoord_dispatch_cancel_rel(Oid relid, bool dependents_too);
extern void mzcoord_dispatch_note_write(int64 gid);
extern void mzcoord_dispatch_end_xact(bool committed);

#endif							/* MZCOORD_DISPATCH_H */
