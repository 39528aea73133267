/*-------------------------------------------------------------------------
 *
 * failpoint.c
 *	  Test-only crash points.
 *
 * The crash tests (test/t/017_crash_points.pl) need the server to die at
 * moments no signal can hit reliably: bounds written but not committed, a
 * history compacted but its compacted frontier not yet recorded, the middle
 * of a bootstrap.  The code calls mzcoord_failpoint_check() at those
 * points; when the superuser-only setting mzcoord.failpoint names the point
 * the process raises PANIC, which makes the postmaster crash-restart the
 * server exactly as stop('immediate') would.  Compiled in always, costs a
 * string comparison, and does nothing unless a superuser set the setting
 * (the coordinator sees it after ALTER SYSTEM and a reload).
 *
 * IDENTIFICATION
 *	  src/base/failpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "failpoint.h"
#include "settings.h"

void
mzcoord_failpoint_check(const char *point)
{
	if (mzcoord_failpoint == NULL || mzcoord_failpoint[0] == '\0')
		return;
	if (strcmp(mzcoord_failpoint, point) != 0)
		return;
	ereport(PANIC,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("mzcoord: failpoint \"%s\" reached", point),
			 errdetail("mzcoord.failpoint is set; it is for tests only.")));
}
