/*-------------------------------------------------------------------------
 *
 * rec_epoch.c
 *	  The statements on mzcoord.coordinator_epoch (see rec_epoch.h for the
 *	  writers).
 *
 * IDENTIFICATION
 *	  src/records/rec_epoch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"

#include "rec_epoch.h"
#include "rec_spi.h"

/* Column 1 of the first row of the last SPI result, as an int8. */
static int64
first_int8(bool *isnull)
{
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
									   SPI_tuptable->tupdesc, 1, isnull));
}

bool
mzcoord_rec_epoch_read(bool *found, int64 *epoch)
{
	bool		isnull;

	*found = false;
	*epoch = 0;
	if (SPI_execute("SELECT epoch FROM mzcoord.coordinator_epoch",
					true, 0) != SPI_OK_SELECT)
		return false;
	if (SPI_processed > 0)
	{
		*found = true;
		*epoch = first_int8(&isnull);
	}
	return true;
}

bool
mzcoord_rec_epoch_take(int32 pid, int64 *epoch)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		values[1] = {Int32GetDatum(pid)};
	bool		isnull;

	if (SPI_execute_with_args("UPDATE mzcoord.coordinator_epoch"
							  "   SET epoch = epoch OPERATOR(pg_catalog.+) 1,"
							  "       started_at = pg_catalog.now(), pid = $1"
							  " RETURNING epoch",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_UPDATE_RETURNING ||
		SPI_processed != 1)
		return false;
	*epoch = first_int8(&isnull);
	return true;
}

bool
mzcoord_rec_epoch_lock(int64 *epoch)
{
	bool		isnull;

	if (SPI_execute("SELECT epoch FROM mzcoord.coordinator_epoch FOR SHARE",
					false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		return false;
	*epoch = first_int8(&isnull);
	return true;
}

/*
 * The tables' shared durable upper: the timeline as of this publication
 * (never lowered).  A bootstrap resumes the timeline at or above it.
 */
static const char *const timeline_sql =
"UPDATE mzcoord.coordinator_epoch e SET timeline = $1"
" WHERE e.timeline IS NULL OR e.timeline OPERATOR(pg_catalog.<) $1"
" RETURNING pg_catalog.pg_column_size(e.*)::pg_catalog.int8";

bool
mzcoord_rec_write_timeline(int64 upper, bool *written, int64 *bytes)
{
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(upper)};
	bool		isnull = true;

	*written = false;
	*bytes = 0;
	if (SPI_execute_with_args(timeline_sql, 1, argtypes, values, NULL, false,
							  0) != SPI_OK_UPDATE_RETURNING)
		return false;
	if (SPI_processed > 0)
	{
		*written = true;
		*bytes = first_int8(&isnull);
		if (isnull)
			*bytes = 0;
	}
	return true;
}

/* The tables' shared durable upper, published by the coordinator. */
int
mzcoord_rec_replayed_timeline(const char *gidtext, Snapshot snapshot,
							  bool *found, int64 *value, bool *isnull)
{
	return mzcoord_rec_int8("SELECT e.timeline FROM mzcoord.coordinator_epoch e",
							NULL, NULL, found, value, isnull);
}
