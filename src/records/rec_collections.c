/*-------------------------------------------------------------------------
 *
 * rec_collections.c
 *	  The statements on mzcoord.collections that read or advance one
 *	  collection's upper (see rec_collections.h for the writers).
 *
 * IDENTIFICATION
 *	  src/records/rec_collections.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

#include "rec_collections.h"
#include "rec_spi.h"

int
mzcoord_rec_read_upper(const char *gidtext, Snapshot snapshot, bool *found,
					   int64 *upper, bool *isnull)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(gidtext)};
	SPIPlanPtr	plan;
	int			ret;

	*found = false;
	*upper = 0;
	*isnull = true;
	plan = SPI_prepare("SELECT upper FROM mzcoord.collections"
					   " WHERE global_id OPERATOR(pg_catalog.=) $1",
					   1, argtypes);
	if (plan == NULL)
		return 0;
	ret = SPI_execute_snapshot(plan, values, NULL, snapshot,
							   InvalidSnapshot, true, false, 1);
	if (ret == SPI_OK_SELECT && SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0],
									  SPI_tuptable->tupdesc, 1, isnull);

		*found = true;
		if (!*isnull)
			*upper = DatumGetInt64(d);
	}
	return ret;
}

/*
 * The one statement that writes the upper of a source, a materialized view
 * or a sink.  The fresh snapshot sees the upper that the previous holder of
 * the collection's lock committed (the caller holds that lock).
 */
static const char *const advance_upper_sql =
"UPDATE mzcoord.collections SET upper = $2"
" WHERE global_id OPERATOR(pg_catalog.=) $1";

bool
mzcoord_rec_advance_upper(const char *gidtext, int64 upper)
{
	Oid			argtypes[2] = {TEXTOID, INT8OID};
	Datum		values[2] = {CStringGetTextDatum(gidtext), Int64GetDatum(upper)};
	char		nulls[2] = {' ', upper < 0 ? 'n' : ' '};
	SPIPlanPtr	plan;

	plan = SPI_prepare(advance_upper_sql, 2, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", advance_upper_sql,
			 SPI_result_code_string(SPI_result));
	return SPI_execute_snapshot(plan, values, nulls, GetLatestSnapshot(),
								InvalidSnapshot, false, true, 0) == SPI_OK_UPDATE &&
		SPI_processed == 1;
}

/* The durable upper of a collection other than a table (NULL: empty). */
int
mzcoord_rec_replayed_upper(const char *gidtext, Snapshot snapshot,
						   bool *found, int64 *value, bool *isnull)
{
	return mzcoord_rec_int8("SELECT c.upper FROM mzcoord.collections c WHERE c.global_id = $1",
							gidtext, NULL, found, value, isnull);
}

/*
 * For the few rows of a publication that lock_bounds_sql (rec_bounds.c)
 * did not lock, their mzcoord.collections row: see mzcoord_rec_publish.
 */
static const char *const lock_free_sql =
"SELECT c.global_id, NULL::pg_catalog.tid FROM pg_catalog.unnest($1) AS g(global_id)"
"  JOIN mzcoord.collections c"
"    ON c.global_id OPERATOR(pg_catalog.=) g.global_id"
" WHERE NOT EXISTS (SELECT 1 FROM mzcoord.compaction_bounds x"
"                    WHERE x.global_id OPERATOR(pg_catalog.=) c.global_id)"
"   FOR NO KEY UPDATE OF c SKIP LOCKED";

int
mzcoord_rec_lock_unbounded(const int64 *gids, int n, MzcRecLocked **rows,
						   int *nrows)
{
	return mzcoord_rec_lock(lock_free_sql, gids, n, rows, nrows);
}

int
mzcoord_rec_current_upper(const char *gidtext, bool *found, int64 *upper,
						  bool *isnull)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(gidtext)};
	int			ret;

	*found = false;
	*upper = 0;
	*isnull = true;
	ret = SPI_execute_with_args("SELECT c.upper FROM mzcoord.collections c WHERE c.global_id OPERATOR(pg_catalog.=) $1",
								1, argtypes, values, NULL, false, 1);
	if (ret == SPI_OK_SELECT && SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0],
									  SPI_tuptable->tupdesc, 1, isnull);

		*found = true;
		if (!*isnull)
			*upper = DatumGetInt64(d);
	}
	return ret;
}
