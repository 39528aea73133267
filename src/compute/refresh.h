/*-------------------------------------------------------------------------
 *
 * refresh.h
 *	  Refreshing a materialized view (refresh.c).
 *
 * IDENTIFICATION
 *	  src/compute/refresh.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REFRESH_H
#define MZCOORD_REFRESH_H

#include "postgres.h"

#include "utils/rel.h"

#include "history.h"

/* What one refresh did. */
typedef struct MzcRefreshResult
{
	int64		from_upper;		/* the upper before */
	int64		new_upper;		/* the upper after (-1: the empty frontier) */
	int			times;			/* times evaluated */
	int			incremental;	/* of them, from the inputs' updates */
	int64		rows_changed;	/* updates written (sum of |diff|) */
	int			direct_scans;	/* relation scans that read the relation */
	int			history_scans;	/* relation scans that read a history */
	int			intervals;		/* incremental steps over many times */
	int64		skipped_upto;	/* >= 0: times from from_upper up to this
								 * one were not evaluated (unreadable) */
} MzcRefreshResult;

extern bool mzcoord_refresh_view(int64 gid, MzcRefreshResult *res);
extern void mzcoord_refresh_adopt(const MzcHistory *vh, Relation vrel,
								  const MzcHistory *rh, int64 at, int64 upper);

#endif							/* MZCOORD_REFRESH_H */
