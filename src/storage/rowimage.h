/*-------------------------------------------------------------------------
 *
 * rowimage.h
 *	  Row sets keyed by the binary image of rows.
 *
 * IDENTIFICATION
 *	  src/storage/rowimage.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_ROWIMAGE_H
#define MZCOORD_ROWIMAGE_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "utils/palloc.h"

/*
 * Consolidation of rows by their binary image.  A row set maps
 * each distinct row to an int64 count; rows are copied into the set's
 * memory context.
 */
typedef struct MzcRowEntry
{
	struct MzcRowEntry *link;	/* insertion order */
	uint32		hash;
	int64		count;
	void	   *extra;			/* for the caller */
	Datum	   *values;
	bool	   *isnull;
} MzcRowEntry;

typedef struct MzcRowSet
{
	MemoryContext cxt;
	TupleDesc	desc;			/* the rows' descriptor (attributes compared) */
	struct rowslots_hash *table;	/* simplehash of entries (rowimage.c) */
	int64		nentries;
	MzcRowEntry *first;
	MzcRowEntry *last;
} MzcRowSet;

extern MzcRowSet *mzcoord_rowset_create(TupleDesc desc, MemoryContext parent);
extern uint32 mzcoord_row_hash(TupleDesc desc, Datum *values, bool *isnull);
extern bool mzcoord_row_equal(TupleDesc desc, Datum *v1, bool *n1,
							  Datum *v2, bool *n2);
extern MzcRowEntry *mzcoord_rowset_find(MzcRowSet *set, Datum *values,
										bool *isnull, uint32 hash);
extern MzcRowEntry *mzcoord_rowset_add(MzcRowSet *set, Datum *values,
									   bool *isnull, uint32 hash, int64 count);
extern void mzcoord_rowset_destroy(MzcRowSet *set);

#endif							/* MZCOORD_ROWIMAGE_H */
