/*-------------------------------------------------------------------------
 *
 * autocompact.h
 *	  The coordinator's compaction step (autocompact.c).
 *
 * IDENTIFICATION
 *	  src/storage/autocompact.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_AUTOCOMPACT_H
#define MZCOORD_AUTOCOMPACT_H

#include "postgres.h"

/* Shared memory (registered by _PG_init): the step's counters. */
extern Size mzcoord_compaction_shmem_size(void);
extern void mzcoord_compaction_shmem_init(void);

/* The coordinator's step, after its tick committed. */
extern void mzcoord_storage_tick(void);

#endif							/* MZCOORD_AUTOCOMPACT_H */
