/*-------------------------------------------------------------------------
 *
 * readscan.h
 *	  The read_at scan: mzcoord.read_at in a FROM clause, streamed.
 *
 * IDENTIFICATION
 *	  src/storage/readscan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_READSCAN_H
#define MZCOORD_READSCAN_H

#include "postgres.h"

extern void mzcoord_readscan_init(void);

#endif							/* MZCOORD_READSCAN_H */
