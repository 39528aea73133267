/*-------------------------------------------------------------------------
 *
 * rec_bounds.c
 *	  The statements on mzcoord.compaction_bounds (see rec_bounds.h for the
 *	  writers).
 *
 * IDENTIFICATION
 *	  src/records/rec_bounds.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "rec_bounds.h"
#include "rec_spi.h"

bool
mzcoord_rec_bound(int64 gid, int64 *bound, bool *isnull)
{
	return mzcoord_rec_gid_int8("SELECT bound FROM mzcoord.compaction_bounds"
								" WHERE global_id OPERATOR(pg_catalog.=) $1",
								"compaction bound", gid, bound, isnull);
}

/* The compaction bound, in the read's snapshot (NULL: empty). */
int
mzcoord_rec_replayed_bound(const char *gidtext, Snapshot snapshot,
						   bool *found, int64 *value, bool *isnull)
{
	return mzcoord_rec_int8("SELECT b.bound FROM mzcoord.compaction_bounds b"
							" WHERE b.global_id = $1",
							gidtext, snapshot, found, value, isnull);
}
