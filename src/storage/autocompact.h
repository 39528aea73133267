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

extern void mzcoord_storage_tick(void);

#endif							/* MZCOORD_AUTOCOMPACT_H */
