/*-------------------------------------------------------------------------
 *
 * worker.h
 *	  The background workers: the launcher, the coordinator and the status
 *	  block they publish for mzcoord.worker_status().
 *
 * IDENTIFICATION
 *	  src/worker/worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_WORKER_H
#define MZCOORD_WORKER_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "fmgr.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "ids.h"

/*
 * State of the coordinator as published for mzcoord.worker_status().
 */
typedef enum MzcWorkerState
{
	MZC_WORKER_STOPPED = 0,		/* no coordinator process */
	MZC_WORKER_WAITING_DATABASE,	/* mzcoord.database does not exist */
	MZC_WORKER_STARTING,		/* coordinator registered, not yet running */
	MZC_WORKER_WAITING_EXTENSION,	/* connected, extension absent or busy */
	MZC_WORKER_RUNNING,			/* ticking with the extension present */
	MZC_WORKER_WAITING_UPDATE	/* the extension's catalog is of another
								 * version: waits for ALTER EXTENSION mzcoord
								 * UPDATE */
} MzcWorkerState;


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

extern Size mzcoord_worker_shmem_size(void);
extern void mzcoord_worker_shmem_init(LWLockPadded *locks, bool found);
extern void mzcoord_register_launcher(void);
extern PGDLLEXPORT void mzcoord_launcher_main(Datum main_arg);
extern PGDLLEXPORT void mzcoord_coordinator_main(Datum main_arg);
extern PGDLLEXPORT void mzcoord_maintenance_worker_main(Datum main_arg);
extern PGDLLEXPORT void mzcoord_compactor_main(Datum main_arg);

#endif							/* MZCOORD_WORKER_H */
