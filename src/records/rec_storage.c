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
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "ids.h"
#include "support.h"
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
mzcoord_rec_storage_lock_unless_held(int64 gid)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	SPIPlanPtr	plan;

	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	plan = SPI_prepare("SELECT 1 FROM mzcoord.storage"
					   " WHERE global_id OPERATOR(pg_catalog.=) $1"
					   " FOR NO KEY UPDATE SKIP LOCKED", 1, argtypes);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, false, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the storage row of u" INT64_FORMAT, gid);
	return SPI_processed == 1;
}

bool
mzcoord_rec_storage_compacted_to(int64 gid, int64 since, int64 rows_left)
{
	Oid			argtypes[3] = {TEXTOID, INT8OID, INT8OID};
	Datum		values[3];
	SPIPlanPtr	plan;

	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	values[1] = Int64GetDatum(since);
	values[2] = Int64GetDatum(rows_left);
	plan = SPI_prepare("UPDATE mzcoord.storage"
					   "   SET compacted = $2,"
					   "       compacted_rows = CASE WHEN $3 OPERATOR(pg_catalog.<) 0"
					   "                        THEN compacted_rows ELSE $3 END,"
					   "       compacted_at = pg_catalog.now(),"
					   "       compactions = compactions OPERATOR(pg_catalog.+) 1"
					   " WHERE global_id OPERATOR(pg_catalog.=) $1", 3, argtypes);
	return plan != NULL &&
		SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, false, true, 0) == SPI_OK_UPDATE;
}

bool
mzcoord_rec_storage_compactions(const int64 *gids, int n, MzcRecStorage **rows,
								int *nrows)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));
	Oid			argtypes[1] = {TEXTARRAYOID};
	Datum		values[1];

	for (int i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(mzcoord_gid_text(gids[i]));
	values[0] = PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false,
												TYPALIGN_INT));
	*nrows = 0;
	if (SPI_execute_with_args("SELECT s.global_id, s.relation::oid, s.history::oid,"
							  "       s.compacted, s.compacted_rows, s.compacted_at"
							  "  FROM mzcoord.storage s"
							  " WHERE s.global_id OPERATOR(pg_catalog.=) ANY ($1)",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		return false;
	*rows = palloc0(sizeof(MzcRecStorage) * Max(SPI_processed, 1));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MzcRecStorage *row = &(*rows)[(*nrows)++];
		bool		isnull;

		row->global_id = SPI_getvalue(tup, desc, 1);
		row->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
		row->histid = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
		row->compacted = DatumGetInt64(SPI_getbinval(tup, desc, 4, &isnull));
		row->compacted_rows = DatumGetInt64(SPI_getbinval(tup, desc, 5, &isnull));
		row->compacted_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 6, &isnull));
	}
	return true;
}

bool
mzcoord_rec_storage_behind_bounds(char ***gids, int *n)
{
	*n = 0;
	if (SPI_execute("SELECT s.global_id FROM mzcoord.storage s"
					"  JOIN mzcoord.compaction_bounds b"
					"    ON b.global_id OPERATOR(pg_catalog.=) s.global_id"
					" WHERE b.bound OPERATOR(pg_catalog.>) s.compacted",
					true, 0) != SPI_OK_SELECT)
		return false;
	*gids = palloc(sizeof(char *) * Max(SPI_processed, 1));
	for (uint64 r = 0; r < SPI_processed; r++)
		(*gids)[(*n)++] = SPI_getvalue(SPI_tuptable->vals[r],
									   SPI_tuptable->tupdesc, 1);
	return true;
}

bool
mzcoord_rec_storage_replayed(Oid relid, MzcRecStorage *row, bool *found)
{
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	*found = false;
	if (SPI_execute_with_args("SELECT s.global_id, s.kind FROM mzcoord.storage s"
							  " WHERE s.relation OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		return false;
	if (SPI_processed > 0)
	{
		row->global_id = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		row->kind = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		*found = true;
	}
	return true;
}

MzcRecStorage *
mzcoord_rec_storage_all(MemoryContext cxt, int *nrows)
{
	MzcRecStorage *rows = NULL;

	*nrows = 0;
	mzcoord_spi_exec("SELECT global_id, relation::pg_catalog.oid, kind,"
			 "       history::pg_catalog.oid, compacted"
			 "  FROM mzcoord.storage ORDER BY pg_catalog.length(global_id), global_id",
			 SPI_OK_SELECT);
	if (SPI_processed > 0)
		rows = MemoryContextAllocZero(cxt, sizeof(MzcRecStorage) * SPI_processed);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MzcRecStorage *r = &rows[(*nrows)++];
		bool		isnull;
		MemoryContext old = MemoryContextSwitchTo(cxt);

		r->global_id = SPI_getvalue(tup, desc, 1);
		r->kind = SPI_getvalue(tup, desc, 3);
		MemoryContextSwitchTo(old);
		r->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
		r->histid = DatumGetObjectId(SPI_getbinval(tup, desc, 4, &isnull));
		r->compacted = DatumGetInt64(SPI_getbinval(tup, desc, 5, &isnull));
	}
	return rows;
}

/* The first column of every row of the last SPI result, as text. */
static void
first_column(char ***values, int *n)
{
	*n = 0;
	*values = palloc(sizeof(char *) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
		(*values)[(*n)++] = SPI_getvalue(SPI_tuptable->vals[i],
										 SPI_tuptable->tupdesc, 1);
}

void
mzcoord_rec_storage_orphans(char ***gids, int *n)
{
	mzcoord_spi_exec("SELECT s.global_id FROM mzcoord.storage s"
					 " WHERE NOT EXISTS (SELECT 1 FROM mzcoord.collections c"
					 "                    WHERE c.global_id OPERATOR(pg_catalog.=) s.global_id)"
					 " ORDER BY 1", SPI_OK_SELECT);
	first_column(gids, n);
}

void
mzcoord_rec_storage_ddl_targets(Oid **relids, int *n)
{
	mzcoord_spi_exec("WITH cmd AS ("
			 "  SELECT DISTINCT c.objid FROM pg_catalog.pg_event_trigger_ddl_commands() c"
			 "   WHERE c.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass)"
			 " SELECT s.relation::pg_catalog.oid FROM mzcoord.storage s"
			 "  WHERE s.relation::pg_catalog.oid IN ("
			 "        SELECT objid FROM cmd"
			 "        UNION SELECT i.inhparent FROM pg_catalog.pg_inherits i"
			 "               JOIN cmd ON i.inhrelid OPERATOR(pg_catalog.=) cmd.objid"
			 "        UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i"
			 "               JOIN cmd ON i.inhparent OPERATOR(pg_catalog.=) cmd.objid)"
			 "  ORDER BY 1",
			 SPI_OK_SELECT);
	*n = 0;
	*relids = palloc(sizeof(Oid) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		(*relids)[(*n)++] = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
														   SPI_tuptable->tupdesc,
														   1, &isnull));
	}
}
