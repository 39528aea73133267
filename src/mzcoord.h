/*-------------------------------------------------------------------------
 *
 * mzcoord.h
 *	  Declarations shared by the PostgreSQL glue of mzcoord.
 *
 * The pure semantics (frontiers, policies, timestamp and as-of selection)
 * live in src/core and know nothing of PostgreSQL; everything in this header
 * is glue: settings, shared memory, the background workers.
 *
 * IDENTIFICATION
 *	  src/mzcoord.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_H
#define MZCOORD_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

/* Settings (init.c) */
extern char *mzcoord_database;
extern int	mzcoord_tick_interval;
extern int	mzcoord_max_collections;
extern int	mzcoord_max_holds;
extern int	mzcoord_since_persist_interval;
extern int	mzcoord_ready_timeout;
extern int	mzcoord_max_future;
extern int	mzcoord_max_holds_per_backend;
extern int	mzcoord_max_holds_per_role;
extern bool mzcoord_auto_compact;

/* True once _PG_init ran inside shared_preload_libraries processing. */
extern bool mzcoord_preloaded;

/*
 * State of the coordinator as published for mzcoord.worker_status().
 */
typedef enum MzcWorkerState
{
	MZC_WORKER_STOPPED = 0,		/* no coordinator process */
	MZC_WORKER_WAITING_DATABASE,	/* mzcoord.database does not exist */
	MZC_WORKER_STARTING,		/* coordinator registered, not yet running */
	MZC_WORKER_WAITING_EXTENSION,	/* connected, extension absent or busy */
	MZC_WORKER_RUNNING			/* ticking with the extension present */
} MzcWorkerState;

#define MZC_ERROR_LEN 256

/*
 * The search_path of every statement mzcoord runs with rights other than the
 * caller's: the coordinator's, and a backend's switched to an owner.  Only
 * built-ins resolve unqualified names; pg_temp last so that a temporary
 * object never shadows one.
 */
#define MZC_SAFE_SEARCH_PATH "pg_catalog, pg_temp"

/*
 * Worker status block.  Protected by its own spinlock "mutex"; writers copy
 * plain values in and readers copy the whole block out, nothing else happens
 * while the spinlock is held.
 */
typedef struct MzcWorkerStatus
{
	slock_t		mutex;
	MzcWorkerState state;
	int			launcher_pid;	/* 0 when no launcher runs */
	int			coordinator_pid;	/* 0 when no coordinator runs */
	TimestampTz started_at;		/* coordinator start, 0 if never */
	int64		ticks;			/* completed ticks of this coordinator */
	TimestampTz last_tick_at;	/* end of the last completed tick */
	int64		last_tick_us;	/* duration of the last tick */
	int64		total_tick_us;	/* duration of all ticks of this coordinator */
	int64		starts;			/* coordinators started since shmem init */
	TimestampTz last_error_at;
	char		last_error[MZC_ERROR_LEN];
} MzcWorkerStatus;

/*
 * The root of mzcoord's shared memory.  See shmem.c for the locking contract.
 */
typedef struct MzcShared
{
	LWLock	   *lock;			/* the controller lock (shmem.c) */
	MzcWorkerStatus worker;
} MzcShared;

extern MzcShared *mzcoord_shared;

/* shmem.c */
extern void mzcoord_shmem_request(void);
extern void mzcoord_shmem_startup(void);
extern void mzcoord_require_shmem(void);

/* worker.c */
extern void mzcoord_register_launcher(void);
extern bool mzcoord_extension_ready(void);

/* extension_drop.c */
extern void mzcoord_install_drop_hook(void);
extern Size mzcoord_drop_guard_shmem_size(void);
extern void mzcoord_drop_guard_shmem_init(void);
extern void mzcoord_extension_guard(void);
extern void mzcoord_extension_lock_for_dependency(void);
extern void mzcoord_extension_check_waiters(void);
extern PGDLLEXPORT void mzcoord_launcher_main(Datum main_arg);
extern PGDLLEXPORT void mzcoord_coordinator_main(Datum main_arg);

/*
 * errors.c: error reports shared by the SQL functions of the core and the
 * controller.  The frontier types come from the pure core (src/core).
 */
#include "frontier.h"

/*
 * Raises SQLSTATE 55000 "timestamp N is not valid for all inputs", with a
 * detail naming each of the n blocking inputs (names[i], which the report
 * quotes) and its since (sinces[i]; {} reads "no readable time"), and a hint
 * about as_of_at_least and retain history.
 */
extern void mzcoord_report_since_violation(mzc_ts ts, int n,
										   const char *const *names,
										   const mzc_frontier *sinces) pg_attribute_noreturn();

#endif							/* MZCOORD_H */
