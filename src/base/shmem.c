/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  mzcoord's shared memory: a registry of areas, their allocation and
 *	  initialisation, and the lock order across them.
 *
 * Each plane that keeps shared state registers its area (a size and an
 * initialisation function) from _PG_init; the areas are requested together
 * in the shmem_request_hook, sized by the postmaster-level settings, and
 * (re)initialised in registration order in the shmem_startup_hook,
 * which the postmaster runs again after every crash restart: nothing in here
 * survives a crash, everything durable is in the catalog tables and is
 * reloaded by the coordinator's bootstrap.
 *
 * LOCKING CONTRACT
 *
 * - The worker status block (worker.c) is protected by its spinlock.  Holders only
 *   copy plain values in or out (at most MZC_ERROR_LEN bytes), never call
 *   functions that can fail, and never take another lock while holding it.
 *
 * - The "controller lock" (first lock of the named tranche "mzcoord")
 *   protects the controller state of controller.c; its header lists what
 *   it covers.
 *
 * - The "oracle lock" (second lock of the tranche) protects the timestamp
 *   oracle of oracle.c; the "ceiling lock" (third) serialises writes of its
 *   durable ceiling file.
 *
 * - The "dispatch lock" (fourth) protects the maintenance slots and the
 *   coordinator's wake-up of dispatch.c; dispatch.h lists what it covers.
 *
 * - Lock order: controller lock, ceiling lock, oracle lock.  The dispatch
 *   lock is never held with any of them, nor the spinlock.
 *
 * No code raises an error while it holds one of these locks with a shared
 * structure half-updated: inputs are validated and space is reserved before
 * the lock is taken, and the critical section only assigns.
 *
 * IDENTIFICATION
 *	  src/base/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "ids.h"
#include "shmem.h"

#define MZC_MAX_AREAS 8

typedef struct MzcShmemArea
{
	MzcShmemSizeFn size;
	MzcShmemInitFn init;
} MzcShmemArea;

/* Filled by _PG_init in the postmaster, inherited by every backend. */
static MzcShmemArea areas[MZC_MAX_AREAS];
static int	nareas = 0;

/* Set once this process attached; a crash restart re-attaches. */
static bool attached = false;

/* The root block: only a marker that says whether the areas exist yet. */
typedef struct MzcShared
{
	int			nareas;
} MzcShared;

void
mzcoord_shmem_register(MzcShmemSizeFn size, MzcShmemInitFn init)
{
	if (nareas >= MZC_MAX_AREAS)
		elog(ERROR, "too many mzcoord shared memory areas");
	areas[nareas].size = size;
	areas[nareas].init = init;
	nareas++;
}

/*
 * Called from the shmem_request_hook: ask for our space and our locks.
 */
void
mzcoord_shmem_request(void)
{
	Size		size = MAXALIGN(sizeof(MzcShared));

	for (int i = 0; i < nareas; i++)
		size = add_size(size, areas[i].size());
	RequestAddinShmemSpace(size);
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
	MzcShared  *root;
	LWLockPadded *locks;

	/* A crash restart re-runs this hook: never keep a stale state. */
	attached = false;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	root = ShmemInitStruct("mzcoord", MAXALIGN(sizeof(MzcShared)), &found);
	if (!found)
		root->nareas = nareas;
	locks = GetNamedLWLockTranche("mzcoord");
	for (int i = 0; i < nareas; i++)
		areas[i].init(locks, found);
	attached = true;
	LWLockRelease(AddinShmemInitLock);
}

bool
mzcoord_shmem_attached(void)
{
	return attached;
}

/*
 * Every SQL-callable function that touches shared memory calls this first.
 */
void
mzcoord_require_shmem(void)
{
	if (!attached)
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
