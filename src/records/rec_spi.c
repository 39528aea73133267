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
