/*-------------------------------------------------------------------------
 *
 * mzcoord.c
 *	  Library entry point: settings, shared memory, hooks and the launcher.
 *	  The only file that knows every plane: it wires them together.
 *
 * mzcoord only works when loaded through shared_preload_libraries: its
 * controller state lives in shared memory sized at postmaster start, and its
 * worker is registered there.  When the library is loaded any other way (a
 * plain LOAD, or CREATE EXTENSION without preloading) _PG_init defines the
 * reloadable settings and returns; every SQL function then refuses to run via
 * mzcoord_require_shmem(), and the install script calls one of them first so
 * that CREATE EXTENSION fails with a hint.
 *
 * IDENTIFICATION
 *	  src/init/mzcoord.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"

#include "autocompact.h"
#include "controller.h"
#include "dispatch.h"
#include "extension.h"
#include "keeper.h"
#include "lease.h"
#include "oracle.h"
#include "readscan.h"
#include "settings.h"
#include "shmem.h"
#include "stage.h"
#include "standby.h"
#include "worker.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
mzc_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	mzcoord_shmem_request();
}

static void
mzc_shmem_startup_hook(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	mzcoord_shmem_startup();
}

static void
oracle_area_init(LWLockPadded *locks, bool found)
{
	mzcoord_oracle_shmem_init(&locks[MZC_LOCK_ORACLE].lock,
							  &locks[MZC_LOCK_CEILING].lock, found);
}

static void
drop_guard_area_init(LWLockPadded *locks, bool found)
{
	mzcoord_drop_guard_shmem_init();
}

static void
lease_area_init(LWLockPadded *locks, bool found)
{
	mzcoord_lease_shmem_init();
}

static void
dispatch_area_init(LWLockPadded *locks, bool found)
{
	mzcoord_dispatch_shmem_init(&locks[MZC_LOCK_DISPATCH].lock, found);
}

static void
compaction_area_init(LWLockPadded *locks, bool found)
{
	mzcoord_compaction_shmem_init();
}

static void
standby_area_init(LWLockPadded *locks, bool found)
{
	mzcoord_standby_shmem_init();
}

static void
controller_area_init(LWLockPadded *locks, bool found)
{
	mzcoord_controller_shmem_init(&locks[MZC_LOCK_CONTROLLER].lock, found);
}

void
_PG_init(void)
{
	if (!mzcoord_define_settings())
		return;

	/*
	 * In initialisation order: the worker status, the oracle, the
	 * controller, its leases, the DROP EXTENSION guard, the maintenance
	 * slots, the compactor's counters and latch, the standby holds.
	 */
	mzcoord_shmem_register(mzcoord_worker_shmem_size, mzcoord_worker_shmem_init);
	mzcoord_shmem_register(mzcoord_oracle_shmem_size, oracle_area_init);
	mzcoord_shmem_register(mzcoord_controller_shmem_size, controller_area_init);
	mzcoord_shmem_register(mzcoord_lease_shmem_size, lease_area_init);
	mzcoord_shmem_register(mzcoord_drop_guard_shmem_size, drop_guard_area_init);
	mzcoord_shmem_register(mzcoord_dispatch_shmem_size, dispatch_area_init);
	mzcoord_shmem_register(mzcoord_compaction_shmem_size, compaction_area_init);
	mzcoord_shmem_register(mzcoord_standby_shmem_size, standby_area_init);
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = mzc_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = mzc_shmem_startup_hook;
	mzcoord_install_drop_hook();

	mzcoord_oracle_register_wal();
	mzcoord_register_launcher();
	mzcoord_register_keeper();
	mzcoord_stage_init();
	mzcoord_readscan_init();
}
