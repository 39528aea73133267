/*-------------------------------------------------------------------------
 *
 * changes.h
 *	  The consolidated updates of a history between two times, in time
 *	  order (changes.c): mzcoord.changes() and the export of sinks.
 *
 * IDENTIFICATION
 *	  src/storage/changes.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_CHANGES_H
#define MZCOORD_CHANGES_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "utils/snapshot.h"

#include "history.h"

/*
 * Called once per consolidated update: the row (values and nulls of the
 * relation's descriptor, valid only during the call), its time and its
 * diff (never 0).  Calls come in time order.
 */
typedef void (*MzcChangeCallback) (void *arg, Datum *values, bool *isnull,
								   int64 ts, int64 diff);

/* How far a window may go in one call. */
typedef struct MzcChangeLimits
{
	int64		max_updates;	/* history rows read: stop at the next time
								 * once this many were (0: no limit) */
	int			max_times;		/* distinct times (0: no limit) */
} MzcChangeLimits;

extern bool mzcoord_history_changes(const MzcHistory *h, TupleDesc reldesc,
									Snapshot snapshot, int64 from, int64 upto,
									const MzcChangeLimits *limits,
									MzcChangeCallback emit, void *arg,
									int64 *next, int *ntimes);
extern int64 mzcoord_history_interval_end(const MzcHistory *h,
										  Snapshot snapshot, int64 from,
										  int64 upto, int64 max_updates);

#endif							/* MZCOORD_CHANGES_H */
