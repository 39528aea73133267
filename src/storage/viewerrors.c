/*-------------------------------------------------------------------------
 *
 * viewerrors.c
 *	  The data errors of materialized views: mzcoord.view_errors.
 *
 * A data error while a view's query is evaluated at time t (a division by
 * zero, a failed cast, a domain's constraint: mzcoord_is_data_error) is a
 * property of the view's contents at t, as in Materialize, not a failure
 * of the coordinator: the refresh (src/compute/refresh.c) records that the
 * view is in error from t, keeps its last good contents, and closes the
 * range [from_ts, upto_ts) at the next time the query has a value again.
 * Its upper moves on, so the view never gets stuck behind a bad row and
 * never pins its inputs.
 *
 * The ranges are written only by the refresh, in its transaction, so they
 * commit together with the view's history and upper (the statements on
 * the table are in src/records/rec_view_errors.c).  Reads consult them
 * with the snapshot they read the history with: a read at a time in a
 * range raises the range's error (its SQLSTATE, its message), since the
 * history holds the last good contents there, not the view's.  A range
 * whose upto_ts is at or below the since can no longer be read and is
 * deleted by the next refresh.
 *
 * IDENTIFICATION
 *	  src/storage/viewerrors.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "executor/spi.h"
#include "utils/elog.h"
#include "utils/snapmgr.h"

#include "controller.h"
#include "ids.h"
#include "rec_view_errors.h"
#include "support.h"
#include "viewerrors.h"

/*
 * Whether an error is a data error: one that depends on the data the
 * query reads at a time, not on the coordinator, privileges, locks or
 * resources.  Class 22 (data exception: division by zero, invalid input,
 * out of range), 23 (integrity constraint violation: a cast to a domain
 * whose CHECK or NOT NULL fails) and 21 (cardinality violation: a scalar
 * subquery that returns more than one row); and a time an input view did
 * not evaluate (MZC_ERRCODE_NOT_EVALUATED), which is unreadable in every
 * view over it too.
 */
bool
mzcoord_is_data_error(int sqlerrcode)
{
	int			category = ERRCODE_TO_CATEGORY(sqlerrcode);

	return category == ERRCODE_DATA_EXCEPTION ||
		category == ERRCODE_INTEGRITY_CONSTRAINT_VIOLATION ||
		category == ERRCODE_CARDINALITY_VIOLATION ||
		sqlerrcode == MZC_ERRCODE_NOT_EVALUATED;
}

/*
 * Can collection gid have error ranges (is it a materialized view)?  Asked
 * of the controller, which spares a table's reads the query; a hot standby
 * has none, and looks in mzcoord.view_errors itself.
 */
static bool
may_have_errors(int64 gid)
{
	MzcCollectionInfo info;

	if (RecoveryInProgress())
		return true;
	return mzcoord_ctl_lookup_gid(gid, &info) &&
		info.kind == MZC_KIND_MATERIALIZED_VIEW;
}

/*
 * The first error range of collection gid that overlaps the times [from,
 * upto] (both included), as snapshot sees mzcoord.view_errors: false if
 * none.  Only materialized views have errors: for other collections
 * nothing is looked up.
 */
bool
mzcoord_view_error_in(int64 gid, Snapshot snapshot, int64 from, int64 upto,
					  MzcViewError *err)
{
	bool		found;
	MemoryContext cxt = CurrentMemoryContext;

	if (!may_have_errors(gid))
		return false;
	mzcoord_spi_connect();
	found = mzcoord_rec_view_errors_in(gid, snapshot, from, upto, cxt, err);
	SPI_finish();
	return found;
}

/* Raise err, the error of view rel at time `at`. */
static void
mzcoord_view_error_raise(Relation rel, const MzcViewError *err, int64 at)
{
	if (err->upto_ts < 0)
		ereport(ERROR,
				(errcode(err->sqlerrcode),
				 errmsg("materialized view \"%s\" has an error at time " INT64_FORMAT ": %s",
						RelationGetRelationName(rel), at, err->message),
				 errdetail("The view is in error since time " INT64_FORMAT ".",
						   err->from_ts),
				 errhint("See mzcoord.view_errors.")));
	ereport(ERROR,
			(errcode(err->sqlerrcode),
			 errmsg("materialized view \"%s\" has an error at time " INT64_FORMAT ": %s",
					RelationGetRelationName(rel), at, err->message),
			 errdetail("The view is in error from time " INT64_FORMAT " to time " INT64_FORMAT ", excluded.",
					   err->from_ts, err->upto_ts),
			 errhint("See mzcoord.view_errors.")));
}

/*
 * If rel (collection gid) is a materialized view with an error range that
 * overlaps [from, upto] in snapshot, raise its error, at the first time of
 * the overlap.
 */
void
mzcoord_view_error_check(Relation rel, int64 gid, Snapshot snapshot,
						 int64 from, int64 upto)
{
	MzcViewError err;

	if (mzcoord_view_error_in(gid, snapshot, from, upto, &err))
		mzcoord_view_error_raise(rel, &err, Max(from, err.from_ts));
}

/*
 * The open error range of collection gid (only a materialized view has
 * one), as snapshot sees mzcoord.view_errors; false if none.
 */
bool
mzcoord_view_error_open(int64 gid, Snapshot snapshot, MzcViewError *err)
{
	bool		found;
	MemoryContext cxt = CurrentMemoryContext;

	if (!may_have_errors(gid))
		return false;
	mzcoord_spi_connect();
	found = mzcoord_rec_view_errors_open(gid, snapshot, cxt, err);
	SPI_finish();
	return found;
}

/*
 * The boundaries (from_ts and upto_ts) of the error ranges of collection
 * gid that lie in [from, upto) (upto -1: no end), as snapshot sees them:
 * the times at which the contents of a view change without an update in
 * its history.  Returns how many, into a palloc'd *times.
 */
int
mzcoord_view_error_bounds(int64 gid, Snapshot snapshot, int64 from,
						  int64 upto, int64 **times)
{
	int			n;
	MemoryContext cxt = CurrentMemoryContext;

	*times = NULL;
	if (!may_have_errors(gid))
		return 0;
	mzcoord_spi_connect();
	n = mzcoord_rec_view_errors_bounds(gid, snapshot, from, upto, cxt, times);
	SPI_finish();
	return n;
}
