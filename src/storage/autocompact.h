/*-------------------------------------------------------------------------
 *
 * autocompact.h
 *	  The compactor's step (autocompact.c).
 *
 * IDENTIFICATION
 *	  src/storage/autocompact.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_AUTOCOMPACT_H
#define MZCOORD_AUTOCOMPACT_H

#include "postgres.h"

/*
 * Shared memory (registered by _PG_init): the step's counters and the
 * compactor's latch.
 */
extern Size mzcoord_compaction_shmem_size(void);
extern void mzcoord_compaction_shmem_init(void);

/* The compactor process: attach (false: another one runs), and its step. */
extern bool mzcoord_compaction_attach(void);
extern bool mzcoord_compaction_step(void);

/* The coordinator, after a tick that published bounds. */
extern void mzcoord_compaction_wake(void);

#endif							/* MZCOORD_AUTOCOMPACT_H */
