/*-------------------------------------------------------------------------
 *
 * rec_spi.c
 *	  What the records modules share to run their statements.
 *
 * IDENTIFICATION
 *	  src/records/rec_spi.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

#include "ids.h"
#include "rec_spi.h"

/*
 * A fresh snapshot: in a compaction's own transaction only committed values
 * count.
 */
bool
mzcoord_rec_gid_int8(const char *query, const char *what, int64 gid,
					 int64 *value, bool *isnull)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(mzcoord_gid_text(gid))};
	SPIPlanPtr	plan;
	Datum		d;

	plan = SPI_prepare(query, 1, argtypes);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, true, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the %s of u" INT64_FORMAT, what, gid);
	if (SPI_processed != 1)
		return false;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, isnull);
	*value = *isnull ? 0 : DatumGetInt64(d);
	return true;
}

int
mzcoord_rec_int8(const char *sql, const char *gidtext, Snapshot snapshot,
				 bool *found, int64 *value, bool *isnull)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	int			rc;

	values[0] = gidtext ? CStringGetTextDatum(gidtext) : (Datum) 0;
	if (snapshot != NULL)
	{
		SPIPlanPtr	plan = SPI_prepare(sql, gidtext ? 1 : 0, argtypes);

		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		rc = SPI_execute_snapshot(plan, values, NULL, snapshot,
								  InvalidSnapshot, true, false, 1);
	}
	else
		rc = SPI_execute_with_args(sql, gidtext ? 1 : 0, argtypes, values, NULL,
								   true, 1);
	return mzcoord_rec_first_int8(rc, found, value, isnull);
}

int
mzcoord_rec_first_int8(int rc, bool *found, int64 *value, bool *isnull)
{
	*found = false;
	*isnull = true;
	*value = 0;
	if (rc != SPI_OK_SELECT)
		return rc;
	*found = SPI_processed > 0;
	if (*found)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0],
									  SPI_tuptable->tupdesc, 1, isnull);

		if (!*isnull)
			*value = DatumGetInt64(d);
	}
	return rc;
}

Datum
mzcoord_rec_gid_array(const int64 *gids, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(mzcoord_gid_text(gids[i]));
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false,
										   TYPALIGN_INT));
}

int
mzcoord_rec_lock(const char *sql, const int64 *gids, int n,
				 MzcRecLocked **rows, int *nrows)
{
	Oid			argtypes[1] = {TEXTARRAYOID};
	Datum		values[1] = {mzcoord_rec_gid_array(gids, n)};
	int			rc;

	*nrows = 0;
	rc = SPI_execute_with_args(sql, 1, argtypes, values, NULL, false, 0);
	if (rc != SPI_OK_SELECT)
		return rc;
	*rows = palloc0(sizeof(MzcRecLocked) * Max(SPI_processed, 1));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		MzcRecLocked *row = &(*rows)[(*nrows)++];
		bool		isnull;
		Datum		tid = SPI_getbinval(SPI_tuptable->vals[r],
										SPI_tuptable->tupdesc, 2, &isnull);

		row->global_id = SPI_getvalue(SPI_tuptable->vals[r],
									  SPI_tuptable->tupdesc, 1);
		row->has_tid = !isnull;
		if (isnull)
			ItemPointerSetInvalid(&row->tid);
		else
			ItemPointerCopy((ItemPointer) DatumGetPointer(tid), &row->tid);
	}
	return rc;
}
