/*-------------------------------------------------------------------------
 *
 * compact.h
 *	  Physical compaction of histories.
 *
 * IDENTIFICATION
 *	  src/storage/compact.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_COMPACT_H
#define MZCOORD_COMPACT_H

#include "postgres.h"

#include "controller.h"
#include "history.h"

/* What one compaction did. */
typedef struct MzcCompaction
{
	int64		frontier;		/* compacted frontier afterwards */
	int64		rows_in;		/* rows below it that consolidated */
	int64		rows_out;		/* rows written at it, their sums */
	int64		rows_left;		/* rows at or below it afterwards (-1: not
								 * counted, nothing consolidated) */
	bool		compacted;		/* false: nothing to do */
} MzcCompaction;

extern int64 mzcoord_compaction_target(const MzcCollectionInfo *info);
extern bool mzcoord_compact_history(const MzcHistory *h, int64 since, bool wait,
									MzcCompaction *res);

#endif							/* MZCOORD_COMPACT_H */
