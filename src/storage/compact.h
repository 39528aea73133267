/*-------------------------------------------------------------------------
 *
 * compact.h
 *	  Physical compaction of histories.
 *
 * IDENTIFICATION
 *	  src/storage/compact.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_COMPACT_H
#define MZCOORD_COMPACT_H

#include "postgres.h"


extern void mzcoord_storage_tick(void);

#endif							/* MZCOORD_COMPACT_H */
