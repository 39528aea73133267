/*-------------------------------------------------------------------------
 *
 * rec_view_errors.c
 *	  The statements of C on mzcoord.view_errors (see rec_view_errors.h;
 *	  what the ranges mean is in src/storage/viewerrors.c).
 *
 * IDENTIFICATION
 *	  src/records/rec_view_errors.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "ids.h"
#include "rec_view_errors.h"
#include "support.h"

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
 * Run plan (a query of one error range) with values in snapshot, and read
 * its row into err (its message in cxt); false if there is none.
 */
static bool
one_error(SPIPlanPtr plan, Datum *values, Snapshot snapshot, int64 gid,
		  MemoryContext cxt, MzcViewError *err)
{
	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, NULL, snapshot, InvalidSnapshot,
							 true, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the errors of materialized view " MZC_GID_FMT,
			 gid);
	if (SPI_processed != 1)
		return false;
	fetch_error(err, cxt);
	return true;
}

/*
 * The first error range of collection gid that overlaps the times [from,
 * upto] (both included), as snapshot sees mzcoord.view_errors, into err
 * (its message in cxt): false if none.
 */
bool
mzcoord_rec_view_errors_in(int64 gid, Snapshot snapshot, int64 from,
						   int64 upto, MemoryContext cxt, MzcViewError *err)
{
	Oid			argtypes[3] = {TEXTOID, INT8OID, INT8OID};
	Datum		values[3];
	SPIPlanPtr	plan;

	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	values[1] = Int64GetDatum(from);
	values[2] = Int64GetDatum(upto);
	plan = SPI_prepare("SELECT e.from_ts, e.upto_ts, e.sqlstate, e.message"
					   "  FROM mzcoord.view_errors e"
					   " WHERE e.item_id OPERATOR(pg_catalog.=) $1"
					   "   AND e.from_ts OPERATOR(pg_catalog.<=) $3"
					   "   AND (e.upto_ts IS NULL OR e.upto_ts OPERATOR(pg_catalog.>) $2)"
					   " ORDER BY e.from_ts LIMIT 1", 3, argtypes);
	return one_error(plan, values, snapshot, gid, cxt, err);
}

/*
 * The open error range of collection gid, as snapshot sees
 * mzcoord.view_errors, into err (its message in cxt); false if none.
 */
bool
mzcoord_rec_view_errors_open(int64 gid, Snapshot snapshot, MemoryContext cxt,
							 MzcViewError *err)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(mzcoord_gid_text(gid))};
	SPIPlanPtr	plan;

	plan = SPI_prepare("SELECT e.from_ts, e.upto_ts, e.sqlstate, e.message"
					   "  FROM mzcoord.view_errors e"
					   " WHERE e.item_id OPERATOR(pg_catalog.=) $1"
					   "   AND e.upto_ts IS NULL", 1, argtypes);
	return one_error(plan, values, snapshot, gid, cxt, err);
}

/*
 * The boundaries (from_ts and upto_ts) of the error ranges of collection
 * gid that lie in [from, upto) (upto -1: no end), as snapshot sees them.
 * Returns how many, into *times, allocated in cxt (NULL if none).
 */
int
mzcoord_rec_view_errors_bounds(int64 gid, Snapshot snapshot, int64 from,
							   int64 upto, MemoryContext cxt, int64 **times)
{
	Oid			argtypes[3] = {TEXTOID, INT8OID, INT8OID};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', upto < 0 ? 'n' : ' '};
	SPIPlanPtr	plan;
	int			n = 0;

	*times = NULL;
	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	values[1] = Int64GetDatum(from);
	values[2] = Int64GetDatum(upto);
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
mzcoord_rec_view_errors_begin(int64 gid, int64 from_ts, int sqlerrcode,
							  const char *message)
{
	write_errors("INSERT INTO mzcoord.view_errors"
				 "   (item_id, from_ts, upto_ts, sqlstate, message)"
				 " VALUES ($1, $2, NULL, $3, $4)",
				 gid, from_ts, sqlerrcode, message, SPI_OK_INSERT);
}

/* The open error range of view gid ends at upto_ts (excluded). */
void
mzcoord_rec_view_errors_end(int64 gid, int64 upto_ts)
{
	write_errors("UPDATE mzcoord.view_errors SET upto_ts = $2"
				 " WHERE item_id OPERATOR(pg_catalog.=) $1 AND upto_ts IS NULL",
				 gid, upto_ts, 0, NULL, SPI_OK_UPDATE);
}

/* Delete the ranges of view gid that end at or below since: unreadable. */
void
mzcoord_rec_view_errors_forget(int64 gid, int64 since)
{
	write_errors("DELETE FROM mzcoord.view_errors"
				 " WHERE item_id OPERATOR(pg_catalog.=) $1"
				 "   AND upto_ts OPERATOR(pg_catalog.<=) $2",
				 gid, since, 0, NULL, SPI_OK_DELETE);
}

/* Run one statement of the swap with (target, replacement, at). */
static void
swap_step(const char *sql, Datum *values, int expected)
{
	Oid			argtypes[3] = {TEXTOID, TEXTOID, INT8OID};
	int			ret;

	ret = SPI_execute_with_args(sql, 3, argtypes, values, NULL, false, 0);
	if (ret != expected)
		elog(ERROR, "could not move the errors of materialized view %s: %s",
			 TextDatumGetCString(values[0]), SPI_result_code_string(ret));
}

/*
 * A replacement (item replacement_id) takes the place of materialized view
 * target_id at `at`: the target's error ranges end at `at` (those from `at`
 * on go), and the replacement's ranges from `at` on become the target's.
 * The caller runs it as the extension owner, in apply_replacement's
 * transaction.
 */
void
mzcoord_rec_view_errors_swap(const char *target_id, const char *replacement_id,
							 int64 at)
{
	Datum		values[3];

	values[0] = CStringGetTextDatum(target_id);
	values[1] = CStringGetTextDatum(replacement_id);
	values[2] = Int64GetDatum(at);
	mzcoord_spi_connect();
	swap_step("UPDATE mzcoord.view_errors SET upto_ts = $3"
			  " WHERE item_id OPERATOR(pg_catalog.=) $1"
			  "   AND from_ts OPERATOR(pg_catalog.<) $3"
			  "   AND (upto_ts IS NULL OR upto_ts OPERATOR(pg_catalog.>) $3)",
			  values, SPI_OK_UPDATE);
	swap_step("DELETE FROM mzcoord.view_errors"
			  " WHERE item_id OPERATOR(pg_catalog.=) $1"
			  "   AND from_ts OPERATOR(pg_catalog.>=) $3",
			  values, SPI_OK_DELETE);
	swap_step("INSERT INTO mzcoord.view_errors"
			  "   (item_id, from_ts, upto_ts, sqlstate, message)"
			  " SELECT $1, GREATEST(e.from_ts, $3), e.upto_ts, e.sqlstate, e.message"
			  "   FROM mzcoord.view_errors e"
			  "  WHERE e.item_id OPERATOR(pg_catalog.=) $2"
			  "    AND (e.upto_ts IS NULL OR e.upto_ts OPERATOR(pg_catalog.>) $3)",
			  values, SPI_OK_INSERT);
	SPI_finish();
}
