/*-------------------------------------------------------------------------
 *
 * standby.c
 *	  Reads on a hot standby: a collection's frontiers from what recovery
 *	  replayed, instead of from the coordinator, which does not run there.
 *
 * A standby holds a copy of everything a read needs: the history and the
 * relation, the catalog (each collection's compaction bound and durable
 * upper) and, from the oracle's WAL records, the table timeline's upper
 * (ceiling.c).  A read at `at` on a standby
 *
 * 1. waits until `at` is below the replayed upper: every write at or
 *	  before `at` is then replayed (a table's through the timeline's record,
 *	  which follows every commit below it in WAL; a source's or a
 *	  materialized view's through its catalog upper, committed with the
 *	  updates);
 * 2. takes its snapshot, and only then
 * 3. reads the collection's compaction bound in that snapshot: a bound at
 *	  or below `at` means that no compaction the snapshot can see passed
 *	  `at` (the primary commits a bound before it compacts up to it, and a
 *	  standby's snapshots follow the commit order of WAL), so the read is
 *	  exact; a bound above `at` refuses the read (55000), exactly as the
 *	  primary refuses a read below a since.
 *
 * Nothing here holds a time beyond the reading statement: the snapshot
 * keeps what it needs (history rows a later compaction removes stay
 * visible to it, and with hot_standby_feedback the primary keeps them; a
 * conflict cancels the query rather than answer wrongly).
 *
 * IDENTIFICATION
 *	  src/storage/standby.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "acquire.h"
#include "errors.h"
#include "ids.h"
#include "oracle.h"
#include "standby.h"
#include "support.h"

/* The durable upper of a collection other than a table (NULL: empty). */
static const char *const upper_sql =
"SELECT c.upper FROM mzcoord.collections c WHERE c.global_id = $1";

/* The tables' shared durable upper, published by the coordinator. */
static const char *const timeline_sql =
"SELECT e.timeline FROM mzcoord.coordinator_epoch e";

/* The compaction bound, in the read's snapshot (NULL: empty). */
static const char *const bound_sql =
"SELECT b.bound FROM mzcoord.compaction_bounds b"
" WHERE b.global_id = $1";

/*
 * Run sql (one text parameter, the global id gid, or none if gid is NULL) and return the first column of
 * its one row: *found false if there is no row, *isnull if it is NULL.  In
 * snapshot if given, else in a fresh one.
 */
static int64
standby_value(const char *sql, const char *gid, Snapshot snapshot,
			  bool *found, bool *isnull)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	int64		v = 0;
	int			rc;

	values[0] = gid ? CStringGetTextDatum(gid) : (Datum) 0;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (snapshot != NULL)
	{
		SPIPlanPtr	plan = SPI_prepare(sql, gid ? 1 : 0, argtypes);

		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		rc = SPI_execute_snapshot(plan, values, NULL, snapshot,
								  InvalidSnapshot, true, false, 1);
	}
	else
		rc = SPI_execute_with_args(sql, gid ? 1 : 0, argtypes, values, NULL,
								   true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "mzcoord: could not read the replayed catalog: %s",
			 SPI_result_code_string(rc));
	*found = SPI_processed > 0;
	*isnull = true;
	if (*found)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0],
									  SPI_tuptable->tupdesc, 1, isnull);

		if (!*isnull)
			v = DatumGetInt64(d);
	}
	SPI_finish();
	return v;
}

/*
 * The replayed upper of the collection: is `at` complete on this standby?
 */
static bool
standby_complete(const MzcHistory *h, const char *gid, int64 at)
{
	bool		found;
	bool		isnull;
	int64		upper;

	if (h->kind == MZC_KIND_TABLE)
	{
		upper = mzcoord_oracle_replayed_upper();
		if (upper > at)
			return true;
		upper = standby_value(timeline_sql, NULL, NULL, &found, &isnull);
		return found && !isnull && upper > at;
	}
	upper = standby_value(upper_sql, gid, NULL, &found, &isnull);
	if (!found)
		mzcoord_report_not_registered(h->relid);
	return isnull || upper > at;	/* NULL: the empty upper, complete */
}

/*
 * Wait until `at` is complete on this standby (cancellable; the standby
 * replays the primary's progress, nothing here can speed it up).
 */
void
mzcoord_standby_wait_complete(const MzcHistory *h, int64 at)
{
	char	   *gid = mzcoord_gid_text(h->gid);

	/* As on the primary: a table's timeline never reaches such a time. */
	if (h->kind == MZC_KIND_TABLE)
		mzcoord_check_user_time(at, "timestamp");
	for (;;)
	{
		mzcoord_prepare_upper_wait();
		if (standby_complete(h, gid, at))
			break;
		CHECK_FOR_INTERRUPTS();
		mzcoord_upper_wait(100);
	}
	mzcoord_end_upper_wait();
}

/*
 * Refuse the read at `at` if the collection's compaction bound in snapshot
 * (the read's own) is above it.
 */
void
mzcoord_standby_check_read(const MzcHistory *h, int64 at, Snapshot snapshot)
{
	bool		found;
	bool		isnull;
	int64		bound = standby_value(bound_sql, mzcoord_gid_text(h->gid),
									  snapshot, &found, &isnull);

	if (!found)
		mzcoord_report_not_registered(h->relid);
	if (isnull || bound > at)
	{
		const char *name = mzcoord_qualified_relname(h->relid);
		mzc_frontier since;

		since.empty = isnull;
		since.ts = isnull ? 0 : bound;
		mzcoord_report_since_violation(at, 1, &name, &since);
	}
}
