/*-------------------------------------------------------------------------
 *
 * rec_collections.h
 *	  The statements of C that read mzcoord.collections together with the
 *	  items (rec_items.h): the bootstrap's read of the catalog and the
 *	  consistency check of collections without history.
 *
 * Writers of mzcoord.collections: see doc/architecture.md, "Ownership and
 * locking" (the catalog's DDL functions and implications create a row; the
 * tick writes an index's since and upper; a source's, view's or sink's
 * upper is written by the transaction that makes the progress).
 *
 * The caller is connected to SPI.
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

#include "frontier.h"
#include "ids.h"

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
