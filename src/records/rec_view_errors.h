/*-------------------------------------------------------------------------
 *
 * rec_view_errors.h
 *	  The rows of mzcoord.view_errors: the ranges of times at which a
 *	  materialized view is in error (src/storage/viewerrors.c).
 *
 * Writers (doc/architecture.md, "Ownership and locking"):
 *
 *	mzcoord.view_errors		every column: a view's refresh
 *							(src/compute/refresh.c, in its transaction,
 *							through mzcoord_rec_view_errors_begin, _end and
 *							_forget); and apply_replacement
 *							(src/compute/replace.c, as the extension owner,
 *							through mzcoord_rec_view_errors_swap), which ends
 *							the target's ranges at the swap time and takes
 *							the replacement's
 *
 * The readers take the caller's SPI connection; the writers connect
 * themselves.
 *
 * IDENTIFICATION
 *	  src/records/rec_view_errors.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_VIEW_ERRORS_H
#define MZCOORD_REC_VIEW_ERRORS_H

#include "postgres.h"

#include "utils/snapshot.h"

/* One error range of a view: no contents in [from_ts, upto_ts). */
typedef struct MzcViewError
{
	int64		from_ts;
	int64		upto_ts;		/* -1: open */
	int			sqlerrcode;
	char	   *message;
} MzcViewError;

extern bool mzcoord_rec_view_errors_in(int64 gid, Snapshot snapshot,
									   int64 from, int64 upto,
									   MemoryContext cxt, MzcViewError *err);
extern bool mzcoord_rec_view_errors_open(int64 gid, Snapshot snapshot,
										 MemoryContext cxt, MzcViewError *err);
extern int	mzcoord_rec_view_errors_bounds(int64 gid, Snapshot snapshot,
										   int64 from, int64 upto,
										   MemoryContext cxt, int64 **times);
extern void mzcoord_rec_view_errors_begin(int64 gid, int64 from_ts,
										  int sqlerrcode, const char *message);
extern void mzcoord_rec_view_errors_end(int64 gid, int64 upto_ts);
extern void mzcoord_rec_view_errors_forget(int64 gid, int64 since);
extern void mzcoord_rec_view_errors_swap(const char *target_id,
										 const char *replacement_id, int64 at);

#endif							/* MZCOORD_REC_VIEW_ERRORS_H */
