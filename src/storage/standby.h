/*-------------------------------------------------------------------------
 *
 * standby.h
 *	  Reads on a hot standby, from the replayed frontiers (standby.c).
 *
 * IDENTIFICATION
 *	  src/storage/standby.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_STANDBY_H
#define MZCOORD_STANDBY_H

#include "postgres.h"

#include "utils/snapshot.h"

#include "history.h"

extern void mzcoord_standby_wait_complete(const MzcHistory *h, int64 at);
extern void mzcoord_standby_check_read(const MzcHistory *h, int64 at,
									   Snapshot snapshot);

#endif							/* MZCOORD_STANDBY_H */
