/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The mzcoord launcher and the mzcoord coordinator background workers.
 *
 * Two processes, so that a missing database never turns into a loop of FATAL
 * connection errors in the server log:
 *
 * - The launcher is registered statically at preload.  It connects to no
 *   database (it reads only the shared catalog pg_database), waits until the
 *   database named by mzcoord.database exists, then starts the coordinator as
 *   a dynamic worker and supervises it: whenever the coordinator is gone
 *   (error, SIGTERM, pg_terminate_backend, dropped database) the launcher
 *   starts it again after a backoff.  If the launcher itself dies the
 *   postmaster restarts it; a running coordinator is adopted through the pid
 *   it publishes in shared memory, so there is never more than one.
 *
 * - The coordinator connects to mzcoord.database and ticks every
 *   mzcoord.tick_interval milliseconds.  It starts the maintenance workers
 *   (mzcoord.max_maintenance_workers dynamic workers, restarted when they
 *   exit) and hands them refresh and export steps (maintain.c): after each
 *   tick, whenever a worker finishes one, and when a commit that moved a
 *   table others read wakes it (its latch).  Woken between ticks, it only
 *   moves the table timeline in memory and dispatches; the regular tick
 *   keeps its interval.  Each tick is one short transaction
 *   that first checks that the extension exists and is not being dropped or
 *   altered (it takes a conditional share lock on the extension object, which
 *   DROP EXTENSION holds exclusively); without the extension it does nothing.
 *   An extension whose catalog is of another version than the library's
 *   (MZC_CATALOG_VERSION: the library was updated, ALTER EXTENSION mzcoord
 *   UPDATE has not run yet) counts as absent too: the coordinator waits,
 *   says so once in the log, and starts when the update has committed.
 *   An error inside a tick is recorded in shared memory for
 *   mzcoord.worker_status(), then ends the process; the launcher restarts it.
 *
 * - A maintenance worker runs the steps handed to its slot, one at a time,
 *   and exits when the coordinator that started it is gone.
 *
 * - The compactor (one dynamic worker, started by the coordinator like the
 *   maintenance workers and gone with it) compacts histories up to their
 *   published bounds (autocompact.c): a step once per tick interval, when
 *   the coordinator's tick published bounds (it sets the compactor's
 *   latch), and every MZC_COMPACTOR_BUSY_MS while a backlog remains.  Out
 *   of the coordinator, so that no compaction, however large, delays a tick.
 *
 * All exit on postmaster death (WL_EXIT_ON_PM_DEATH), reload settings on
 * SIGHUP, and leave their loop on SIGTERM.
 *
 * IDENTIFICATION
 *	  src/worker/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "autocompact.h"
#include "controller.h"
#include "dispatch.h"
#include "extension.h"
#include "ids.h"
#include "maintain.h"
#include "settings.h"
#include "shmem.h"
#include "tick.h"
#include "worker.h"

/* The worker status block (its own shared memory area, see worker.h). */
static MzcWorkerStatus *worker_status = NULL;

Size
mzcoord_worker_shmem_size(void)
{
	return MAXALIGN(sizeof(MzcWorkerStatus));
}

void
mzcoord_worker_shmem_init(LWLockPadded *locks, bool found_unused)
{
	bool		found;

	worker_status = ShmemInitStruct("mzcoord worker status",
									mzcoord_worker_shmem_size(), &found);
	if (!found)
	{
		memset(worker_status, 0, sizeof(MzcWorkerStatus));
		SpinLockInit(&worker_status->mutex);
		worker_status->state = MZC_WORKER_STOPPED;
	}
}

/* Seconds before the postmaster restarts a launcher that failed. */
#define MZC_LAUNCHER_RESTART_SECS 5

/* Backoff of the launcher between coordinator restarts, in milliseconds. */
#define MZC_RESTART_DELAY_MIN_MS 1000
#define MZC_RESTART_DELAY_MAX_MS 30000
/* A coordinator that lived this long resets the backoff. */
#define MZC_HEALTHY_RUN_MS 60000

PG_FUNCTION_INFO_V1(mzcoord_worker_status);

static void mzc_fill_worker(BackgroundWorker *worker, const char *name,
							const char *function);
static void mzc_connect(const char *dbname, const char *appname);

/* ----------------------------------------------------------------
 * Shared status helpers
 * ----------------------------------------------------------------
 */

static void
mzc_set_state(MzcWorkerState state)
{
	MzcWorkerStatus *ws = worker_status;

	SpinLockAcquire(&ws->mutex);
	ws->state = state;
	SpinLockRelease(&ws->mutex);
}

static void
mzc_record_error(const char *message)
{
	MzcWorkerStatus *ws = worker_status;
	char		buf[MZC_ERROR_LEN];
	TimestampTz now = GetCurrentTimestamp();

	/* Format outside the spinlock; inside, only copy. */
	strlcpy(buf, message, sizeof(buf));

	SpinLockAcquire(&ws->mutex);
	memcpy(ws->last_error, buf, sizeof(buf));
	ws->last_error_at = now;
	SpinLockRelease(&ws->mutex);
}

static int
mzc_coordinator_pid(void)
{
	MzcWorkerStatus *ws = worker_status;
	int			pid;

	SpinLockAcquire(&ws->mutex);
	pid = ws->coordinator_pid;
	SpinLockRelease(&ws->mutex);
	return pid;
}

/*
 * The workers run as the bootstrap superuser, and connecting applied the
 * database's and the role's search_path (ALTER DATABASE/ROLE ... SET), which
 * a database owner controls.  Every statement they run through SPI, and the
 * body of every plpgsql function those call, would resolve unqualified
 * functions and operators there: a database owner could shadow length() or
 * "=" in public and run code as superuser.  So connect, then pin
 * search_path to the built-ins for the life of the process; PGC_S_OVERRIDE
 * outranks every other source, so neither those settings nor a
 * configuration reload on SIGHUP can change it.
 */
static void
mzc_connect(const char *dbname, const char *appname)
{
	BackgroundWorkerInitializeConnection(dbname, NULL, 0);
	SetConfigOption("search_path", MZC_SAFE_SEARCH_PATH,
					PGC_SUSET, PGC_S_OVERRIDE);
	pgstat_report_appname(appname);
}

/* Reload the configuration file if a SIGHUP asked for it. */
static void
mzc_reload_if_pending(void)
{
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
}

/* ----------------------------------------------------------------
 * Registration
 * ----------------------------------------------------------------
 */

static void
mzc_fill_worker(BackgroundWorker *worker, const char *name,
				const char *function)
{
	memset(worker, 0, sizeof(BackgroundWorker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* Never on a standby: there is nothing to coordinate there. */
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	snprintf(worker->bgw_library_name, BGW_MAXLEN, "mzcoord");
	snprintf(worker->bgw_function_name, BGW_MAXLEN, "%s", function);
	snprintf(worker->bgw_name, BGW_MAXLEN, "%s", name);
	snprintf(worker->bgw_type, BGW_MAXLEN, "%s", name);
	worker->bgw_main_arg = (Datum) 0;
}

/*
 * Called from _PG_init while shared_preload_libraries is processed.
 */
void
mzcoord_register_launcher(void)
{
	BackgroundWorker worker;

	mzc_fill_worker(&worker, "mzcoord launcher", "mzcoord_launcher_main");
	worker.bgw_restart_time = MZC_LAUNCHER_RESTART_SECS;
	worker.bgw_notify_pid = 0;
	RegisterBackgroundWorker(&worker);
}

/* ----------------------------------------------------------------
 * Maintenance workers (started by the coordinator)
 * ----------------------------------------------------------------
 */

/* The coordinator's handles of its maintenance workers, per slot. */
static BackgroundWorkerHandle **maint_handles = NULL;
static TimestampTz *maint_next_start = NULL;

/* A maintenance worker that failed is started again after this long. */
#define MZC_MAINT_RESTART_MS 1000

/*
 * Start the maintenance workers that do not run (the first time, or
 * after one exited).  A slot still held by a worker of an earlier
 * coordinator is left until that worker has gone.
 */
static void
mzc_start_maintenance_workers(void)
{
	int			n = mzcoord_dispatch_nslots();
	TimestampTz now = GetCurrentTimestamp();

	if (maint_handles == NULL)
	{
		maint_handles = MemoryContextAllocZero(TopMemoryContext,
											   sizeof(BackgroundWorkerHandle *) * n);
		maint_next_start = MemoryContextAllocZero(TopMemoryContext,
												  sizeof(TimestampTz) * n);
	}
	for (int i = 0; i < n; i++)
	{
		BackgroundWorker worker;
		pid_t		pid;

		if (maint_handles[i] != NULL &&
			GetBackgroundWorkerPid(maint_handles[i], &pid) == BGWH_STOPPED)
		{
			pfree(maint_handles[i]);
			maint_handles[i] = NULL;
			maint_next_start[i] = TimestampTzPlusMilliseconds(now, MZC_MAINT_RESTART_MS);
		}
		if (maint_handles[i] != NULL || now < maint_next_start[i] ||
			mzcoord_dispatch_worker_pid(i) != 0)
			continue;
		mzc_fill_worker(&worker, "mzcoord maintenance worker",
						"mzcoord_maintenance_worker_main");
		worker.bgw_restart_time = BGW_NEVER_RESTART;
		worker.bgw_notify_pid = MyProcPid;
		worker.bgw_main_arg = Int32GetDatum(i);
		memcpy(worker.bgw_extra, &MyProcPid, sizeof(int));
		if (!RegisterDynamicBackgroundWorker(&worker, &maint_handles[i]))
		{
			maint_handles[i] = NULL;
			maint_next_start[i] = TimestampTzPlusMilliseconds(now, MZC_RESTART_DELAY_MAX_MS);
			ereport(WARNING,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("mzcoord coordinator could not start maintenance worker %d", i),
					 errhint("Raise \"max_worker_processes\" or lower \"mzcoord.max_maintenance_workers\".")));
		}
	}
}

/* The coordinator's handle of its compactor, and when to start it again. */
static BackgroundWorkerHandle *compactor_handle = NULL;
static TimestampTz compactor_next_start = 0;

/*
 * Start the compactor if it does not run (the first time, or after it
 * exited: then after MZC_MAINT_RESTART_MS).
 */
static void
mzc_start_compactor(void)
{
	BackgroundWorker worker;
	TimestampTz now = GetCurrentTimestamp();
	pid_t		pid;

	if (compactor_handle != NULL &&
		GetBackgroundWorkerPid(compactor_handle, &pid) == BGWH_STOPPED)
	{
		pfree(compactor_handle);
		compactor_handle = NULL;
		compactor_next_start = TimestampTzPlusMilliseconds(now, MZC_MAINT_RESTART_MS);
	}
	if (compactor_handle != NULL || now < compactor_next_start)
		return;
	mzc_fill_worker(&worker, "mzcoord compactor", "mzcoord_compactor_main");
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	worker.bgw_notify_pid = MyProcPid;
	memcpy(worker.bgw_extra, &MyProcPid, sizeof(int));
	if (!RegisterDynamicBackgroundWorker(&worker, &compactor_handle))
	{
		compactor_handle = NULL;
		compactor_next_start = TimestampTzPlusMilliseconds(now, MZC_RESTART_DELAY_MAX_MS);
		ereport(WARNING,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("mzcoord coordinator could not start the compactor"),
				 errhint("Raise \"max_worker_processes\".")));
	}
}

/* At the coordinator's exit: its maintenance workers and compactor go too. */
static void
mzc_stop_maintenance_workers(void)
{
	mzcoord_dispatch_set_coordinator(false);
	if (compactor_handle != NULL)
		TerminateBackgroundWorker(compactor_handle);
	if (maint_handles == NULL)
		return;
	for (int i = 0; i < mzcoord_dispatch_nslots(); i++)
		if (maint_handles[i] != NULL)
			TerminateBackgroundWorker(maint_handles[i]);
}

/*
 * The start of a worker the coordinator started (a maintenance worker, the
 * compactor): signals, then shared memory.  SIGTERM ends it at once (die),
 * as a backend.  Returns the pid of that coordinator (in bgw_extra), whose
 * exit ends it too.
 */
static int
mzc_coordinator_child_start(void)
{
	int			coordinator_pid;

	memcpy(&coordinator_pid, MyBgworkerEntry->bgw_extra, sizeof(int));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	mzcoord_require_shmem();
	return coordinator_pid;
}

/* A compactor with a backlog takes its next step after this long. */
#define MZC_COMPACTOR_BUSY_MS 50

/*
 * The compactor: compaction steps (autocompact.c) until the coordinator
 * whose pid is in bgw_extra is gone.  An error in a step ends the process;
 * the coordinator starts another one.
 */
void
mzcoord_compactor_main(Datum main_arg)
{
	int			coordinator_pid = mzc_coordinator_child_start();

	if (!mzcoord_dispatch_coordinator_alive(coordinator_pid) ||
		!mzcoord_compaction_attach())
		proc_exit(0);
	mzc_connect(mzcoord_database, "mzcoord compactor");

	for (;;)
	{
		bool		more;

		CHECK_FOR_INTERRUPTS();
		mzc_reload_if_pending();
		if (!mzcoord_dispatch_coordinator_alive(coordinator_pid))
			break;
		more = mzcoord_compaction_step();
		pgstat_report_stat(false);
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 more ? MZC_COMPACTOR_BUSY_MS : mzcoord_tick_interval,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	proc_exit(0);
}

static void
mzc_maintenance_worker_detach(int code, Datum arg)
{
	mzcoord_dispatch_detach(DatumGetInt32(arg));
}

/*
 * A maintenance worker: runs the steps handed to its slot (main_arg) by
 * the coordinator whose pid is in bgw_extra, until that coordinator is
 * gone.  A SIGINT cancels the running step (a drop of its object, or the
 * step timer); between steps a cancel is stale and dropped.
 */
void
mzcoord_maintenance_worker_main(Datum main_arg)
{
	int			slot = DatumGetInt32(main_arg);
	int			coordinator_pid = mzc_coordinator_child_start();

	if (slot < 0 || slot >= mzcoord_dispatch_nslots() ||
		!mzcoord_dispatch_attach(slot, coordinator_pid))
		proc_exit(0);
	on_shmem_exit(mzc_maintenance_worker_detach, Int32GetDatum(slot));

	mzc_connect(mzcoord_database, "mzcoord maintenance worker");
	mzcoord_maintain_worker_init();

	for (;;)
	{
		/* No step runs: a pending cancel was meant for one that ended. */
		QueryCancelPending = false;
		CHECK_FOR_INTERRUPTS();
		mzc_reload_if_pending();
		if (!mzcoord_dispatch_coordinator_alive(coordinator_pid))
			break;
		if (mzcoord_maintain_worker_step(slot))
			continue;
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	proc_exit(0);
}

/* ----------------------------------------------------------------
 * Launcher
 * ----------------------------------------------------------------
 */

/*
 * on_shmem_exit of both workers: a process that exits clears its pid in the
 * status block (the coordinator also its state); arg says which of the two
 * it is (true: the coordinator).
 */
static void
mzc_worker_detach(int code, Datum arg)
{
	MzcWorkerStatus *ws = worker_status;
	bool		coordinator = DatumGetBool(arg);

	SpinLockAcquire(&ws->mutex);
	if (!coordinator && ws->launcher_pid == MyProcPid)
		ws->launcher_pid = 0;
	if (coordinator && ws->coordinator_pid == MyProcPid)
	{
		ws->coordinator_pid = 0;
		ws->state = MZC_WORKER_STOPPED;
	}
	SpinLockRelease(&ws->mutex);
	if (coordinator)
		mzc_stop_maintenance_workers();
}

/*
 * Does the coordinator's database exist?  A sequential scan of the shared
 * catalog pg_database, as the autovacuum launcher does: a process connected
 * to no database cannot use catalog indexes before the shared relcache init
 * file exists.
 */
static bool
mzc_database_exists(void)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	bool		exists = false;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	(void) GetTransactionSnapshot();

	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (!exists &&
		   (tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		exists = strcmp(NameStr(db->datname), mzcoord_database) == 0;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);

	CommitTransactionCommand();
	return exists;
}

/*
 * What the launcher remembers between rounds: the coordinator it started,
 * when, and how often in a row it failed soon after starting.
 */
typedef struct LauncherState
{
	BackgroundWorkerHandle *handle;
	TimestampTz handle_started;
	TimestampTz next_start;
	int			failures;
	bool		said_missing;
	MemoryContext cxt;			/* handles outlive the lookup transactions */
} LauncherState;

/*
 * Forget a coordinator we started once it has stopped, and schedule the
 * next start: back off exponentially while the coordinator keeps failing
 * soon after its start, so that an error that recurs on every start does
 * not flood the log.
 */
static void
launcher_reap(LauncherState *ls)
{
	pid_t		pid;
	BgwHandleStatus st;
	TimestampTz now;

	if (ls->handle == NULL)
		return;
	st = GetBackgroundWorkerPid(ls->handle, &pid);
	if (st == BGWH_POSTMASTER_DIED)
		proc_exit(1);
	if (st != BGWH_STOPPED)
		return;
	now = GetCurrentTimestamp();
	pfree(ls->handle);
	ls->handle = NULL;
	if (TimestampDifferenceExceeds(ls->handle_started, now, MZC_HEALTHY_RUN_MS))
		ls->failures = 0;
	ls->next_start = TimestampTzPlusMilliseconds(now,
												 Min(MZC_RESTART_DELAY_MIN_MS << Min(ls->failures, 5),
													 MZC_RESTART_DELAY_MAX_MS));
	ls->failures++;
}

/* Register the coordinator as a dynamic background worker. */
static void
launcher_start(LauncherState *ls, TimestampTz now)
{
	BackgroundWorker worker;
	MemoryContext old;

	ls->said_missing = false;
	mzc_fill_worker(&worker, "mzcoord coordinator", "mzcoord_coordinator_main");
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	worker.bgw_notify_pid = MyProcPid;

	old = MemoryContextSwitchTo(ls->cxt);
	if (RegisterDynamicBackgroundWorker(&worker, &ls->handle))
	{
		ls->handle_started = now;
		mzc_set_state(MZC_WORKER_STARTING);
	}
	else
	{
		ls->handle = NULL;
		ls->next_start = TimestampTzPlusMilliseconds(now, MZC_RESTART_DELAY_MAX_MS);
		ereport(WARNING,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("mzcoord launcher could not start the coordinator"),
				 errhint("Raise \"max_worker_processes\".")));
	}
	MemoryContextSwitchTo(old);
}

/*
 * One round: start a coordinator if none runs and the database exists and
 * its backoff has passed.  Returns how long to sleep at most.
 */
static long
launcher_round(LauncherState *ls)
{
	long		wait_ms = mzcoord_tick_interval;
	TimestampTz now;
	long		secs;
	int			usecs;

	launcher_reap(ls);
	if (ls->handle != NULL || mzc_coordinator_pid() != 0)
		return wait_ms;
	if (!mzc_database_exists())
	{
		mzc_set_state(MZC_WORKER_WAITING_DATABASE);
		if (!ls->said_missing)
			ereport(LOG,
					(errmsg("mzcoord launcher: database \"%s\" does not exist, waiting for it to be created",
							mzcoord_database)));
		ls->said_missing = true;
		return wait_ms;
	}
	now = GetCurrentTimestamp();
	if (now >= ls->next_start)
	{
		launcher_start(ls, now);
		return wait_ms;
	}
	TimestampDifference(now, ls->next_start, &secs, &usecs);
	return Min(wait_ms, secs * 1000 + usecs / 1000 + 1);
}

/* The launcher: keeps one coordinator running for mzcoord.database. */
void
mzcoord_launcher_main(Datum main_arg)
{
	LauncherState ls = {0};

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	mzcoord_require_shmem();

	SpinLockAcquire(&worker_status->mutex);
	worker_status->launcher_pid = MyProcPid;
	SpinLockRelease(&worker_status->mutex);
	on_shmem_exit(mzc_worker_detach, BoolGetDatum(false));

	/* No database: only shared catalogs such as pg_database are readable. */
	mzc_connect(NULL, "mzcoord launcher");

	ls.cxt = AllocSetContextCreate(TopMemoryContext, "mzcoord launcher",
								   ALLOCSET_SMALL_SIZES);
	for (;;)
	{
		long		wait_ms;

		CHECK_FOR_INTERRUPTS();
		mzc_reload_if_pending();
		wait_ms = launcher_round(&ls);
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* ----------------------------------------------------------------
 * Coordinator
 * ----------------------------------------------------------------
 */

/*
 * Claim the single coordinator slot; false if another coordinator runs.
 */
static bool
mzc_claim_coordinator(void)
{
	MzcWorkerStatus *ws = worker_status;
	TimestampTz now = GetCurrentTimestamp();
	bool		claimed = false;

	SpinLockAcquire(&ws->mutex);
	if (ws->coordinator_pid == 0)
	{
		ws->coordinator_pid = MyProcPid;
		ws->started_at = now;
		ws->ticks = 0;
		ws->last_tick_at = 0;
		ws->last_tick_us = 0;
		ws->total_tick_us = 0;
		ws->starts++;
		ws->state = MZC_WORKER_WAITING_EXTENSION;
		claimed = true;
	}
	SpinLockRelease(&ws->mutex);
	return claimed;
}

/* Whether the coordinator said it waits for the update since it last ran. */
static bool said_outdated = false;

/*
 * The extension exists but its catalog is of another version than this
 * library's: say so (once until the coordinator runs again) and return
 * true.  Inside the tick's transaction.
 */
static bool
mzc_extension_outdated(Oid ext)
{
	char	   *version = mzcoord_extension_version(ext);

	if (version == NULL || strcmp(version, MZC_CATALOG_VERSION) == 0)
		return false;
	if (!said_outdated)
		ereport(LOG,
				(errmsg("mzcoord coordinator is waiting for ALTER EXTENSION mzcoord UPDATE in database \"%s\"",
						mzcoord_database),
				 errdetail("The extension's catalog is at version %s; this library needs version %s.",
						   version, MZC_CATALOG_VERSION)));
	said_outdated = true;
	return true;
}

/*
 * One tick: a transaction that runs every step if the extension is ready.
 * Returns whether the steps ran.
 */
static bool
mzc_coordinator_tick(MemoryContext tick_cxt)
{
	bool		ran = false;
	bool		outdated = false;
	Oid			ext;
	TimestampTz start = GetCurrentTimestamp();
	MemoryContext old;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	old = MemoryContextSwitchTo(tick_cxt);
	pgstat_report_activity(STATE_RUNNING, "mzcoord tick");

	if (mzcoord_extension_ready())
	{
		/*
		 * Bootstrap the controller if needed, advance the table timeline and
		 * implied capabilities, persist changed frontiers.
		 */
		mzcoord_controller_tick();
		ran = true;
		said_outdated = false;
	}
	else if (!OidIsValid(ext = get_extension_oid("mzcoord", true)))
	{
		/* The extension is gone: forget its collections. */
		mzcoord_controller_reset();
	}
	else
		outdated = mzc_extension_outdated(ext);

	MemoryContextSwitchTo(old);
	CommitTransactionCommand();
	if (ran)
	{
		mzcoord_controller_tick_committed();

		/*
		 * Running from the first committed tick on: nothing below (the
		 * maintenance backlog, compaction) holds readiness back.
		 */
		mzc_set_state(MZC_WORKER_RUNNING);
		/* Refreshes and exports go to the maintenance workers at once. */
		mzc_start_maintenance_workers();
		mzcoord_maintain_dispatch();
		/* Bounds published: the compactor looks at them now. */
		mzc_start_compactor();
		if (mzcoord_tick_has_news())
			mzcoord_compaction_wake();
	}
	pgstat_report_stat(true);
	pgstat_report_activity(STATE_IDLE, NULL);
	MemoryContextReset(tick_cxt);

	if (ran)
	{
		MzcWorkerStatus *ws = worker_status;
		TimestampTz end = GetCurrentTimestamp();

		SpinLockAcquire(&ws->mutex);
		ws->state = MZC_WORKER_RUNNING;
		ws->ticks++;
		ws->last_tick_at = end;
		ws->last_tick_us = end - start;
		ws->total_tick_us += end - start;
		SpinLockRelease(&ws->mutex);
	}
	else
		mzc_set_state(outdated ? MZC_WORKER_WAITING_UPDATE :
					  MZC_WORKER_WAITING_EXTENSION);

	return ran;
}

/*
 * Between ticks, a commit that moved a table others read woke the
 * coordinator: move the table timeline in memory, so that the steps the
 * write causes can be dispatched now.  Not a tick: nothing is persisted
 * and the tick count stays.
 */
static void
mzc_coordinator_woken(void)
{
	MzcWorkerState state;

	SpinLockAcquire(&worker_status->mutex);
	state = worker_status->state;
	SpinLockRelease(&worker_status->mutex);
	if (state == MZC_WORKER_RUNNING)
		mzcoord_controller_advance_timeline();
}

/*
 * Woken advances are at least this far apart (milliseconds): a stream of
 * commits wakes the coordinator at most this often, each time one pass
 * over the tracked slots under the controller lock.
 */
#define MZC_WAKE_MIN_MS 20

/* A wake-up not yet acted on (too soon after the last), and that last one. */
static bool wake_pending = false;
static TimestampTz last_woken = 0;

/*
 * One round of the coordinator's loop: the tick when it is due, else the
 * wake-up of a commit; then dispatch.  Returns when the next tick is due,
 * and in *wait_until when to look again at the latest.
 */
static TimestampTz
mzc_coordinator_round(MemoryContext tick_cxt, TimestampTz next_tick,
					  TimestampTz *wait_until)
{
	TimestampTz now = GetCurrentTimestamp();

	wake_pending |= mzcoord_dispatch_take_wake();
	*wait_until = next_tick;
	if (now >= next_tick)
	{
		/* The tick moves the timeline too. */
		wake_pending = false;
		mzc_coordinator_tick(tick_cxt);
		next_tick = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
												mzcoord_tick_interval);
		*wait_until = next_tick;
		return next_tick;
	}
	if (wake_pending &&
		TimestampDifferenceExceeds(last_woken, now, MZC_WAKE_MIN_MS))
	{
		wake_pending = false;
		last_woken = now;
		mzc_coordinator_woken();
	}
	else if (wake_pending)
		*wait_until = Min(next_tick,
						  TimestampTzPlusMilliseconds(last_woken, MZC_WAKE_MIN_MS));
	/* A worker finished, or the wake-up moved inputs: hand out steps. */
	if (maint_handles != NULL)
	{
		mzcoord_maintain_dispatch();
		MemoryContextReset(tick_cxt);
	}
	return next_tick;
}

void
mzcoord_coordinator_main(Datum main_arg)
{
	MemoryContext tick_cxt;
	TimestampTz next_tick = 0;
	TimestampTz wait_until = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	mzcoord_require_shmem();

	if (!mzc_claim_coordinator())
	{
		/* Another coordinator runs (a restarted launcher raced it): leave. */
		proc_exit(0);
	}
	on_shmem_exit(mzc_worker_detach, BoolGetDatum(true));
	/* Commits and maintenance workers wake this process from now on. */
	mzcoord_dispatch_set_coordinator(true);

	mzc_connect(mzcoord_database, "mzcoord coordinator");

	tick_cxt = AllocSetContextCreate(TopMemoryContext,
									 "mzcoord tick",
									 ALLOCSET_DEFAULT_SIZES);

	while (!ShutdownRequestPending)
	{
		long		wait_ms;

		mzc_reload_if_pending();

		PG_TRY();
		{
			next_tick = mzc_coordinator_round(tick_cxt, next_tick, &wait_until);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			/* Publish the error, then let the normal path end the process. */
			MemoryContextSwitchTo(TopMemoryContext);
			edata = CopyErrorData();
			mzc_record_error(edata->message ? edata->message : "unknown error");
			PG_RE_THROW();
		}
		PG_END_TRY();

		wait_ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), wait_until);
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(wait_ms, 1),
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}

	proc_exit(0);
}

/* ----------------------------------------------------------------
 * SQL: mzcoord.worker_status()
 * ----------------------------------------------------------------
 */

static const char *
mzc_state_name(MzcWorkerState state)
{
	switch (state)
	{
		case MZC_WORKER_STOPPED:
			return "stopped";
		case MZC_WORKER_WAITING_DATABASE:
			return "waiting for database";
		case MZC_WORKER_STARTING:
			return "starting";
		case MZC_WORKER_WAITING_EXTENSION:
			return "waiting for extension";
		case MZC_WORKER_RUNNING:
			return "running";
		case MZC_WORKER_WAITING_UPDATE:
			return "waiting for extension update";
	}
	return "unknown";
}

Datum
mzcoord_worker_status(PG_FUNCTION_ARGS)
{
	MzcWorkerStatus copy;
	TupleDesc	tupdesc;
	Datum		values[12];
	bool		nulls[12];
	int			i = 0;

	mzcoord_require_shmem();

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	SpinLockAcquire(&worker_status->mutex);
	memcpy(&copy, worker_status, sizeof(copy));
	SpinLockRelease(&worker_status->mutex);

	memset(nulls, 0, sizeof(nulls));

	values[i++] = CStringGetTextDatum(mzc_state_name(copy.state));
	values[i++] = CStringGetTextDatum(mzcoord_database);
	nulls[i] = copy.launcher_pid == 0;
	values[i++] = Int32GetDatum(copy.launcher_pid);
	nulls[i] = copy.coordinator_pid == 0;
	values[i++] = Int32GetDatum(copy.coordinator_pid);
	nulls[i] = copy.coordinator_pid == 0;
	values[i++] = TimestampTzGetDatum(copy.started_at);
	values[i++] = Int64GetDatum(copy.ticks);
	nulls[i] = copy.last_tick_at == 0;
	values[i++] = TimestampTzGetDatum(copy.last_tick_at);
	nulls[i] = copy.last_tick_at == 0;
	values[i++] = Float8GetDatum(copy.last_tick_us / 1000.0);
	values[i++] = Int64GetDatum(copy.starts);
	nulls[i] = copy.last_error_at == 0;
	values[i++] = CStringGetTextDatum(copy.last_error);
	nulls[i] = copy.last_error_at == 0;
	values[i++] = TimestampTzGetDatum(copy.last_error_at);
	values[i++] = Float8GetDatum(copy.total_tick_us / 1000.0);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
