/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  mzcoord's shared memory: allocation, initialisation, locking contract.
 *
 * Shared memory is requested in the shmem_request_hook, sized by the
 * postmaster-level settings, and (re)initialised in the shmem_startup_hook,
 * which the postmaster runs again after every crash restart: nothing in here
 * survives a crash, everything durable is in the catalog tables and is
 * reloaded by the coordinator's bootstrap.
 *
 * LOCKING CONTRACT
 *
 * - MzcShared.worker is protected by its spinlock worker.mutex.  Holders only
 *   copy plain values in or out (at most MZC_ERROR_LEN bytes), never call
 *   functions that can fail, and never take another lock while holding it.
 *
 * - MzcShared.lock (the "controller lock", first lock of the named tranche
 *   "mzcoord") protects the controller state of controller.c; its header
 *   comment lists what it covers.
 *
 * - The "oracle lock" (second lock of the tranche) protects the timestamp
 *   oracle of oracle.c; the "ceiling lock" (third) serialises writes of its
 *   durable ceiling file.
 *
 * - The DROP EXTENSION guard (extension_drop.c) is lock-free: atomics read
 *   and written with the barriers its header comment explains.
 *
 * - Lock order: controller lock, ceiling lock, oracle lock.  The spinlock is
 *   never held with any of them.
 *
 * No code raises an error while it holds one of these locks with a shared
 * structure half-updated: inputs are validated and space is reserved before
 * the lock is taken, and the critical section only assigns.
 *
 * IDENTIFICATION
 *	  src/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "controller.h"
#include "mzcoord.h"

/* LWLocks of the "mzcoord" tranche. */
#define MZC_LOCK_CONTROLLER 0
#define MZC_LOCK_ORACLE 1
#define MZC_LOCK_CEILING 2
#define MZC_NUM_LWLOCKS 3

MzcShared  *mzcoord_shared = NULL;

static Size
mzc_shmem_size(void)
{
	return MAXALIGN(sizeof(MzcShared));
}

/*
 * Everything requested: the root block, the oracle, the controller and the
 * DROP EXTENSION guard.
 */
static Size
mzc_total_size(void)
{
	Size		size = mzc_shmem_size();

	size = add_size(size, mzcoord_oracle_shmem_size());
	size = add_size(size, mzcoord_controller_shmem_size());
	size = add_size(size, mzcoord_drop_guard_shmem_size());
	return size;
}

/*
 * Called from the shmem_request_hook: ask for our space and our locks.
 */
void
mzcoord_shmem_request(void)
{
	RequestAddinShmemSpace(mzc_total_size());
	RequestNamedLWLockTranche("mzcoord", MZC_NUM_LWLOCKS);
}

/*
 * Called from the shmem_startup_hook, in the postmaster at start and after
 * every crash restart (and in EXEC_BACKEND children at their start).
 */
void
mzcoord_shmem_startup(void)
{
	bool		found;

	/* A crash restart re-runs this hook: never keep a stale pointer. */
	mzcoord_shared = NULL;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);

	mzcoord_shared = ShmemInitStruct("mzcoord", mzc_shmem_size(), &found);
	if (!found)
	{
		memset(mzcoord_shared, 0, mzc_shmem_size());
		mzcoord_shared->lock =
			&(GetNamedLWLockTranche("mzcoord"))[MZC_LOCK_CONTROLLER].lock;
		SpinLockInit(&mzcoord_shared->worker.mutex);
		mzcoord_shared->worker.state = MZC_WORKER_STOPPED;
	}
	mzcoord_oracle_shmem_init(&(GetNamedLWLockTranche("mzcoord"))[MZC_LOCK_ORACLE].lock,
							  &(GetNamedLWLockTranche("mzcoord"))[MZC_LOCK_CEILING].lock,
							  found);
	mzcoord_controller_shmem_init(mzcoord_shared->lock, found);
	mzcoord_drop_guard_shmem_init();

	LWLockRelease(AddinShmemInitLock);
}

/*
 * Every SQL-callable function that touches shared memory calls this first.
 */
void
mzcoord_require_shmem(void)
{
	if (mzcoord_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("mzcoord must be loaded via \"shared_preload_libraries\""),
				 errhint("Add mzcoord to shared_preload_libraries in postgresql.conf and restart the server.")));
}

PG_FUNCTION_INFO_V1(mzcoord_check_preloaded);

/*
 * SQL: mzcoord.check_preloaded(); the install script's first statement.
 */
Datum
mzcoord_check_preloaded(PG_FUNCTION_ARGS)
{
	mzcoord_require_shmem();
	PG_RETURN_VOID();
}
