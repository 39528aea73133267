/*-------------------------------------------------------------------------
 *
 * rec_collections.h
 *	  The statements on mzcoord.collections: reading or advancing one
 *	  collection's upper, the tick's lock of rows without a bound, and
 *	  the reads of the collections together with their items (the
 *	  bootstrap's read of the catalog, the consistency check of
 *	  collections without history).
 *
 * Writers of mzcoord.collections (one per column):
 *	- the row (global_id, item_id, primary_id, as_of): the catalog's DDL
 *	  functions and implications (src/catalog), when the collection is
 *	  created; its deletion cascades from mzcoord.items;
 *	- since: the tick (src/controller/tick.c), for an index only (every
 *	  other collection's durable since is its compaction bound);
 *	- upper: the tick for an index; for a source, a materialized view or a
 *	  sink, mzcoord_rec_advance_upper alone, called by the transaction that
 *	  makes the progress (src/storage/source.c: mzcoord_record_upper, for a
 *	  source's advance, a view's refresh and a replacement's swap, and for
 *	  a sink's export, src/compute/export.c); a table has no upper of its
 *	  own (the tables' shared upper is in mzcoord.coordinator_epoch).
 *
 * Every function expects SPI connected by the caller.
 *
 * IDENTIFICATION
 *	  src/records/rec_collections.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_COLLECTIONS_H
#define MZCOORD_REC_COLLECTIONS_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "utils/snapshot.h"

#include "frontier.h"
#include "ids.h"
#include "rec_spi.h"

/*
 * Read the upper of collection gidtext in snapshot.  Returns the SPI result
 * of the SELECT, or 0 if it could not be prepared; *found whether the row
 * is there, then *upper and *isnull (NULL: the empty frontier).
 */
extern int	mzcoord_rec_read_upper(const char *gidtext, Snapshot snapshot,
								   bool *found, int64 *upper, bool *isnull);

/*
 * Write the upper of collection gidtext (-1: NULL, the empty frontier), in a
 * fresh snapshot.  Returns whether exactly one row was updated.
 */
extern bool mzcoord_rec_advance_upper(const char *gidtext, int64 upper);

/*
 * The durable upper of collection gidtext (not a table) as recovery
 * replayed it, on a hot standby (snapshot unused: the statement's own).
 * Returns the SPI result; see mzcoord_rec_int8.
 */
extern int	mzcoord_rec_replayed_upper(const char *gidtext, Snapshot snapshot,
									   bool *found, int64 *value,
									   bool *isnull);

/*
 * The tick's lock of the collections rows of gids[0..n) that have no
 * compaction bound, skipping rows locked by others (see
 * mzcoord_rec_publish).  Returns the SPI result; *rows (no tid) and *nrows
 * the rows locked.
 */
extern int	mzcoord_rec_lock_unbounded(const int64 *gids, int n,
									   MzcRecLocked **rows, int *nrows);

/*
 * The upper of collection gidtext as this transaction sees it now, its own
 * writes included (not read-only: a fresh snapshot).  Returns the SPI
 * result; *found whether the row is there, then *upper and *isnull (NULL:
 * the empty frontier).
 */
extern int	mzcoord_rec_current_upper(const char *gidtext, bool *found,
									  int64 *upper, bool *isnull);

/*
 * One collection as the catalog describes it, and what the bootstrap
 * (src/controller/bootstrap.c) adds while it builds the controller.
 */
typedef struct MzcBootRow
{
	int64		gid;
	char		item_id[MZC_ITEM_ID_LEN];
	MzcKind		kind;
	Oid			relid;
	bool		is_primary;
	bool		has_bound;		/* since is its committed compaction bound */
	mzc_frontier since;
	mzc_frontier upper;
	int64		retain_ms;
	int			ninputs;
	int64		inputs[MZC_MAX_INPUTS];
	int32		slot;			/* once created */
	int32		dataflow;		/* index into the as-of dataflows, or -1 */
	bool		leased;			/* since lowered to an active lease */
} MzcBootRow;

extern MzcBootRow *mzcoord_rec_collections_boot(int *nrows);
extern List *mzcoord_rec_collections_without_history(void);

#endif							/* MZCOORD_REC_COLLECTIONS_H */
