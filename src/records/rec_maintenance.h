/*-------------------------------------------------------------------------
 *
 * rec_maintenance.h
 *	  The rows of mzcoord.maintenance: what the maintenance steps of each
 *	  materialized view and sink did.
 *
 * Writer (doc/architecture.md, "Ownership and locking"):
 *
 *	mzcoord.maintenance		every column: the maintenance steps
 *							(src/compute/maintain.c, in the maintenance
 *							workers, through mzcoord_rec_maintenance_record;
 *							an object's row only by its own step, and an
 *							object has one step at a time)
 *
 * IDENTIFICATION
 *	  src/records/rec_maintenance.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_MAINTENANCE_H
#define MZCOORD_REC_MAINTENANCE_H

#include "postgres.h"

/* What one successful step did, for mzcoord.maintenance. */
typedef struct MzcStepCounts
{
	int64		new_upper;		/* -1: the empty frontier */
	int64		rows;
	int			times;
	int			incremental;	/* times refreshed from the inputs' updates */
} MzcStepCounts;

extern int64 mzcoord_rec_maintenance_record(int64 gid, const MzcStepCounts *o,
											ErrorData *edata,
											double duration_ms);

#endif							/* MZCOORD_REC_MAINTENANCE_H */
