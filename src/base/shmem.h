/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  The registry of mzcoord's shared memory areas and the LWLocks of the
 *	  "mzcoord" tranche.  shmem.c states the lock order.
 *
 * IDENTIFICATION
 *	  src/base/shmem.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_SHMEM_H
#define MZCOORD_SHMEM_H

#include "postgres.h"

#include "fmgr.h"
#include "storage/lwlock.h"

/* LWLocks of the "mzcoord" tranche, in lock order. */
#define MZC_LOCK_CONTROLLER 0
#define MZC_LOCK_CEILING 1
#define MZC_LOCK_ORACLE 2
#define MZC_LOCK_DISPATCH 3
#define MZC_NUM_LWLOCKS 4

/*
 * An area: its size (called in the postmaster, after the settings are
 * final) and its initialisation (found: the areas existed already, as in
 * an EXEC_BACKEND child; each area still looks itself up).
 */
typedef Size (*MzcShmemSizeFn) (void);
typedef void (*MzcShmemInitFn) (LWLockPadded *locks, bool found);

extern void mzcoord_shmem_register(MzcShmemSizeFn size, MzcShmemInitFn init);
extern void mzcoord_shmem_request(void);
extern void mzcoord_shmem_startup(void);
extern bool mzcoord_shmem_attached(void);
extern void mzcoord_require_shmem(void);

#endif							/* MZCOORD_SHMEM_H */
