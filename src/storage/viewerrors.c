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
 * commit together with the view's history and upper.  Reads consult them
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
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/elog.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "controller.h"
#include "ids.h"
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

/* Copy the row of view_errors at SPI_tuptable->vals[0] into err. */
static void
fetch_error(MzcViewError *err, MemoryContext cxt)
{
	HeapTuple	tup = SPI_tuptable->vals[0];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	bool		isnull;
	Datum		d;
	char	   *state;
	MemoryContext old;

	err->from_ts = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	d = SPI_getbinval(tup, desc, 2, &isnull);
	err->upto_ts = isnull ? -1 : DatumGetInt64(d);
	state = SPI_getvalue(tup, desc, 3);
	if (state == NULL || strlen(state) != 5)
		err->sqlerrcode = ERRCODE_DATA_EXCEPTION;
	else
		err->sqlerrcode = MAKE_SQLSTATE(state[0], state[1], state[2],
										state[3], state[4]);
	old = MemoryContextSwitchTo(cxt);
	err->message = SPI_getvalue(tup, desc, 4);
	if (err->message == NULL)
		err->message = pstrdup("unknown error");
	MemoryContextSwitchTo(old);
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
	Oid			argtypes[3] = {TEXTOID, INT8OID, INT8OID};
	Datum		values[3];
	SPIPlanPtr	plan;
	bool		found;
	MemoryContext cxt = CurrentMemoryContext;

	if (!may_have_errors(gid))
		return false;
	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	values[1] = Int64GetDatum(from);
	values[2] = Int64GetDatum(upto);
	mzcoord_spi_connect();
	plan = SPI_prepare("SELECT e.from_ts, e.upto_ts, e.sqlstate, e.message"
					   "  FROM mzcoord.view_errors e"
					   " WHERE e.item_id OPERATOR(pg_catalog.=) $1"
					   "   AND e.from_ts OPERATOR(pg_catalog.<=) $3"
					   "   AND (e.upto_ts IS NULL OR e.upto_ts OPERATOR(pg_catalog.>) $2)"
					   " ORDER BY e.from_ts LIMIT 1", 3, argtypes);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, NULL, snapshot, InvalidSnapshot,
							 true, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the errors of materialized view " MZC_GID_FMT,
			 gid);
	found = SPI_processed == 1;
	if (found)
		fetch_error(err, cxt);
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
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(mzcoord_gid_text(gid))};
	SPIPlanPtr	plan;
	bool		found;
	MemoryContext cxt = CurrentMemoryContext;

	if (!may_have_errors(gid))
		return false;
	mzcoord_spi_connect();
	plan = SPI_prepare("SELECT e.from_ts, e.upto_ts, e.sqlstate, e.message"
					   "  FROM mzcoord.view_errors e"
					   " WHERE e.item_id OPERATOR(pg_catalog.=) $1"
					   "   AND e.upto_ts IS NULL", 1, argtypes);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, NULL, snapshot,
							 InvalidSnapshot, true, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the errors of materialized view " MZC_GID_FMT,
			 gid);
	found = SPI_processed == 1;
	if (found)
		fetch_error(err, cxt);
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
	Oid			argtypes[3] = {TEXTOID, INT8OID, INT8OID};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', upto < 0 ? 'n' : ' '};
	SPIPlanPtr	plan;
	int			n = 0;
	MemoryContext cxt = CurrentMemoryContext;

	*times = NULL;
	if (!may_have_errors(gid))
		return 0;
	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	values[1] = Int64GetDatum(from);
	values[2] = Int64GetDatum(upto);
	mzcoord_spi_connect();
	plan = SPI_prepare("SELECT b.ts FROM mzcoord.view_errors e,"
					   "       LATERAL (VALUES (e.from_ts), (e.upto_ts)) b(ts)"
					   " WHERE e.item_id OPERATOR(pg_catalog.=) $1"
					   "   AND b.ts OPERATOR(pg_catalog.>=) $2"
					   "   AND ($3 IS NULL OR b.ts OPERATOR(pg_catalog.<) $3)",
					   3, argtypes);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, nulls, snapshot, InvalidSnapshot,
							 true, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the errors of materialized view " MZC_GID_FMT,
			 gid);
	if (SPI_processed > 0)
	{
		*times = MemoryContextAlloc(cxt, sizeof(int64) * SPI_processed);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;

			(*times)[n++] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
														SPI_tuptable->tupdesc,
														1, &isnull));
		}
	}
	SPI_finish();
	return n;
}

/* Run one write of view_errors with (gid, ts[, sqlstate, message]). */
static void
write_errors(const char *sql, int64 gid, int64 ts, int sqlerrcode,
			 const char *message, int expected)
{
	Oid			argtypes[4] = {TEXTOID, INT8OID, TEXTOID, TEXTOID};
	Datum		values[4];
	int			nargs = message != NULL ? 4 : 2;
	int			ret;

	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	values[1] = Int64GetDatum(ts);
	if (message != NULL)
	{
		values[2] = CStringGetTextDatum(unpack_sql_state(sqlerrcode));
		values[3] = CStringGetTextDatum(message);
	}
	mzcoord_spi_connect();
	ret = SPI_execute_with_args(sql, nargs, argtypes, values, NULL, false, 0);
	if (ret != expected)
		elog(ERROR, "could not record the errors of materialized view " MZC_GID_FMT ": %s",
			 gid, SPI_result_code_string(ret));
	SPI_finish();
}

/* View gid is in error from from_ts (an open range). */
void
mzcoord_view_error_begin(int64 gid, int64 from_ts, int sqlerrcode,
						 const char *message)
{
	write_errors("INSERT INTO mzcoord.view_errors"
				 "   (item_id, from_ts, upto_ts, sqlstate, message)"
				 " VALUES ($1, $2, NULL, $3, $4)",
				 gid, from_ts, sqlerrcode, message, SPI_OK_INSERT);
}

/* The open error range of view gid ends at upto_ts (excluded). */
void
mzcoord_view_error_end(int64 gid, int64 upto_ts)
{
	write_errors("UPDATE mzcoord.view_errors SET upto_ts = $2"
				 " WHERE item_id OPERATOR(pg_catalog.=) $1 AND upto_ts IS NULL",
				 gid, upto_ts, 0, NULL, SPI_OK_UPDATE);
}

/* Delete the ranges of view gid that end at or below since: unreadable. */
void
mzcoord_view_error_forget(int64 gid, int64 since)
{
	write_errors("DELETE FROM mzcoord.view_errors"
				 " WHERE item_id OPERATOR(pg_catalog.=) $1"
				 "   AND upto_ts OPERATOR(pg_catalog.<=) $2",
				 gid, since, 0, NULL, SPI_OK_DELETE);
}
