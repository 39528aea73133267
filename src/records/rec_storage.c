/*-------------------------------------------------------------------------
 *
 * rec_storage.c
 *	  The statements on mzcoord.storage (see rec_storage.h for the
 *	  writers).
 *
 * IDENTIFICATION
 *	  src/records/rec_storage.c
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
#include "rec_storage.h"

/* Column col of the first row of the last SPI result, as an oid. */
static Oid
first_oid(int col)
{
	bool		isnull;

	return DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, col, &isnull));
}

bool
mzcoord_rec_storage_of_relation(Oid relid, MzcRecStorage *row, bool *found)
{
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	SPIPlanPtr	plan;

	*found = false;
	plan = SPI_prepare("SELECT s.global_id, s.kind, s.history::oid"
					   "  FROM mzcoord.storage s"
					   " WHERE s.relation OPERATOR(pg_catalog.=) $1",
					   1, argtypes);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, true, false, 1) != SPI_OK_SELECT)
		return false;
	if (SPI_processed > 0)
	{
		row->global_id = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		row->kind = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		row->histid = first_oid(3);
		*found = true;
	}
	return true;
}

bool
mzcoord_rec_storage_of_gid(const char *gidtext, MzcRecStorage *row,
						   bool *found)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(gidtext)};

	*found = false;
	if (SPI_execute_with_args("SELECT relation::pg_catalog.oid, kind,"
							  "       history::pg_catalog.oid"
							  "  FROM mzcoord.storage WHERE global_id OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		return false;
	if (SPI_processed > 0)
	{
		row->relid = first_oid(1);
		row->kind = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		row->histid = first_oid(3);
		*found = true;
	}
	return true;
}

bool
mzcoord_rec_storage_insert(const char *gidtext, Oid relid,
						   const char *kindname, Oid histid, int64 since,
						   int64 nrows)
{
	Oid			argtypes[6] = {TEXTOID, REGCLASSOID, TEXTOID, REGCLASSOID, INT8OID, INT8OID};
	Datum		values[6];

	values[0] = CStringGetTextDatum(gidtext);
	values[1] = ObjectIdGetDatum(relid);
	values[2] = CStringGetTextDatum(kindname);
	values[3] = ObjectIdGetDatum(histid);
	values[4] = Int64GetDatum(since);
	values[5] = Int64GetDatum(nrows);
	return SPI_execute_with_args("INSERT INTO mzcoord.storage"
								 " (global_id, relation, kind, history, compacted,"
								 "  compacted_rows)"
								 " VALUES ($1, $2, $3, $4, $5, $6)",
								 6, argtypes, values, NULL, false, 0) == SPI_OK_INSERT;
}

bool
mzcoord_rec_storage_compacted(int64 gid, int64 *compacted, bool *isnull)
{
	return mzcoord_rec_gid_int8("SELECT compacted FROM mzcoord.storage"
								" WHERE global_id OPERATOR(pg_catalog.=) $1",
								"compacted frontier", gid, compacted, isnull);
}

bool
mzcoord_rec_storage_compacted_to(int64 gid, int64 since, int64 rows_out)
{
	Oid			argtypes[3] = {TEXTOID, INT8OID, INT8OID};
	Datum		values[3];
	SPIPlanPtr	plan;

	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	values[1] = Int64GetDatum(since);
	values[2] = Int64GetDatum(rows_out);
	plan = SPI_prepare("UPDATE mzcoord.storage"
					   "   SET compacted = $2, compacted_rows = $3,"
					   "       compacted_at = pg_catalog.now(),"
					   "       compactions = compactions OPERATOR(pg_catalog.+) 1"
					   " WHERE global_id OPERATOR(pg_catalog.=) $1", 3, argtypes);
	return plan != NULL &&
		SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, false, true, 0) == SPI_OK_UPDATE;
}
