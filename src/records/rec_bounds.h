/*-------------------------------------------------------------------------
 *
 * rec_bounds.h
 *	  The statements on mzcoord.compaction_bounds, the durable since of
 *	  every collection that has a bound.
 *
 * Writers of mzcoord.compaction_bounds (one per column):
 *	- the row: the catalog's implications (src/catalog), when the
 *	  collection is created; its deletion cascades from mzcoord.collections;
 *	- bound, epoch, published_at: the tick's publication
 *	  (src/controller/tick.c), fenced by src/controller/authority.c.
 *
 * Every function expects SPI connected by the caller.
 *
 * IDENTIFICATION
 *	  src/records/rec_bounds.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_BOUNDS_H
#define MZCOORD_REC_BOUNDS_H

#include "postgres.h"

#include "utils/snapshot.h"

/*
 * The committed compaction bound of gid, with a fresh snapshot: how far the
 * catalog permits compaction (a bound written by a publication that did
 * not commit permits nothing).  Returns false when the collection has no
 * bound row (nothing permitted); *isnull for the empty frontier
 * (everything permitted).
 */
extern bool mzcoord_rec_bound(int64 gid, int64 *bound, bool *isnull);

/*
 * The compaction bound of collection gidtext in snapshot, on a hot standby
 * (NULL: the empty frontier).  Returns the SPI result; see
 * mzcoord_rec_int8.
 */
extern int	mzcoord_rec_replayed_bound(const char *gidtext, Snapshot snapshot,
									   bool *found, int64 *value,
									   bool *isnull);

#endif							/* MZCOORD_REC_BOUNDS_H */
