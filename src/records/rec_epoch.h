/*-------------------------------------------------------------------------
 *
 * rec_epoch.h
 *	  The statements on mzcoord.coordinator_epoch, the one row of the
 *	  coordinator's durable epoch and the tables' shared upper.
 *
 * Writers of mzcoord.coordinator_epoch (one per column):
 *	- epoch, started_at, pid: a starting coordinator
 *	  (src/controller/authority.c, mzcoord_rec_epoch_take);
 *	- timeline, the tables' one shared upper: the tick
 *	  (src/controller/tick.c, mzcoord_rec_write_timeline), under the fence.
 *
 * Every function expects SPI connected by the caller.
 *
 * IDENTIFICATION
 *	  src/records/rec_epoch.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_EPOCH_H
#define MZCOORD_REC_EPOCH_H

#include "postgres.h"

#include "utils/snapshot.h"

/*
 * Read the epoch (no lock).  Returns false if the statement failed; *found
 * whether the row is there, then *epoch.
 */
extern bool mzcoord_rec_epoch_read(bool *found, int64 *epoch);

/*
 * Take the next epoch for the coordinator of process pid (waits for a
 * publication that holds the row FOR SHARE).  Returns false unless exactly
 * the one row was updated; *epoch the epoch taken.
 */
extern bool mzcoord_rec_epoch_take(int32 pid, int64 *epoch);

/*
 * Lock the row FOR SHARE and read the epoch.  Returns false unless exactly
 * the one row was read.
 */
extern bool mzcoord_rec_epoch_lock(int64 *epoch);

/*
 * Move the tables' shared upper to upper (never lowered).  Returns false if
 * the statement failed; *written whether the row moved, then *bytes its
 * size.
 */
extern bool mzcoord_rec_write_timeline(int64 upper, bool *written,
									   int64 *bytes);

/*
 * The tables' shared durable upper as recovery replayed it, on a hot
 * standby (gidtext and snapshot unused).  Returns the SPI result; see
 * mzcoord_rec_int8.
 */
extern int	mzcoord_rec_replayed_timeline(const char *gidtext,
										  Snapshot snapshot, bool *found,
										  int64 *value, bool *isnull);

#endif							/* MZCOORD_REC_EPOCH_H */
