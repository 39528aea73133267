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
 *	  (src/controller/tick.c, mzcoord_rec_publish), fenced by
 *	  src/controller/authority.c.
 *
 * The publication also reads mzcoord.read_requirements (written by the
 * catalog's implications, which create a collection's requirements, and
 * advanced only by the trigger on collections.upper) and
 * mzcoord.lease_records (written by src/controller/lease.c).
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

#include "rec_spi.h"

/*
 * The committed compaction bound of gid, with a fresh snapshot: how far the
 * catalog permits compaction (a bound written by a publication that did
 * not commit permits nothing).  Returns false when the collection has no
 * bound row (nothing permitted); *isnull for the empty frontier
 * (everything permitted).
 */
extern bool mzcoord_rec_bound(int64 gid, int64 *bound, bool *isnull);

/*
 * The greatest committed compaction bound of the collections of the n
 * relations rels (0 if none has one), in the statement's snapshot.
 */
extern int64 mzcoord_rec_max_bound_of(const Oid *rels, int n);

/*
 * The compaction bound of collection gidtext in snapshot, on a hot standby
 * (NULL: the empty frontier).  Returns the SPI result; see
 * mzcoord_rec_int8.
 */
extern int	mzcoord_rec_replayed_bound(const char *gidtext, Snapshot snapshot,
									   bool *found, int64 *value,
									   bool *isnull);

/*
 * One row of the tick's publication (see mzcoord_rec_publish): a since or
 * upper that is empty is written as NULL; has_bound says its bound row was
 * locked (at tid, if has_tid).
 */
typedef struct MzcRecPublish
{
	int64		gid;
	bool		since_empty;
	int64		since;
	bool		upper_empty;
	int64		upper;
	bool		own_upper;		/* write its upper in its collections row */
	bool		publish;		/* publish its bound (not in read-only mode) */
	bool		has_bound;
	bool		has_tid;
	ItemPointerData tid;
} MzcRecPublish;

/*
 * A row the publication wrote, or one with a bound it held back: its global
 * id, its since (empty: NULL), the table written (0: the bound, 1: the
 * collections row, -1: a bound not published) and the row's size.
 */
typedef struct MzcRecPublished
{
	char	   *global_id;
	bool		since_empty;
	int64		since;
	int			table;
	int64		bytes;
} MzcRecPublished;

/*
 * The tick's lock of the compaction bound rows of gids[0..n), skipping rows
 * locked by others.  Returns the SPI result; *rows (with their tids) and
 * *nrows the rows locked.
 */
extern int	mzcoord_rec_lock_bounds(const int64 *gids, int n,
									MzcRecLocked **rows, int *nrows);

/*
 * The tick's publication of rows[0..n) (all locked by the lock functions),
 * stamped with epoch.  Returns the SPI result; *out and *nout the rows
 * written and held back.
 */
extern int	mzcoord_rec_publish(const MzcRecPublish *rows, int n, int64 epoch,
								MzcRecPublished **out, int *nout);

#endif							/* MZCOORD_REC_BOUNDS_H */
