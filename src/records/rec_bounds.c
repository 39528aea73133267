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
