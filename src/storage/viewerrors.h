/*-------------------------------------------------------------------------
 *
 * viewerrors.h
 *	  The data errors of materialized views, mzcoord.view_errors
 *	  (viewerrors.c).
 *
 * IDENTIFICATION
 *	  src/storage/viewerrors.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_VIEWERRORS_H
#define MZCOORD_VIEWERRORS_H

#include "postgres.h"

#include "utils/rel.h"
#include "utils/snapshot.h"

#include "rec_view_errors.h"

/*
 * The error of a time a view did not evaluate (refresh.c: a recomputed
 * view under load evaluates only the last time of a step): such a time is
 * unreadable, and so is every view over it at that time.
 */
#define MZC_ERRCODE_NOT_EVALUATED MAKE_SQLSTATE('5','5','M','Z','1')

extern bool mzcoord_is_data_error(int sqlerrcode);
extern bool mzcoord_view_error_in(int64 gid, Snapshot snapshot, int64 from,
								  int64 upto, MzcViewError *err);
extern void mzcoord_view_error_check(Relation rel, int64 gid,
									 Snapshot snapshot, int64 from,
									 int64 upto);
extern bool mzcoord_view_error_open(int64 gid, Snapshot snapshot,
									MzcViewError *err);
extern int	mzcoord_view_error_bounds(int64 gid, Snapshot snapshot, int64 from,
									  int64 upto, int64 **times);

#endif							/* MZCOORD_VIEWERRORS_H */
