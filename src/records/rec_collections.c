/*-------------------------------------------------------------------------
 *
 * rec_collections.c
 *	  The statements on mzcoord.collections (see rec_collections.h for the
 *	  writers).
 *
 * IDENTIFICATION
 *	  src/records/rec_collections.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

#include "rec_collections.h"
#include "rec_spi.h"
#include "support.h"

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
	return mzcoord_rec_first_int8(ret, found, upper, isnull);
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
	return mzcoord_rec_first_int8(ret, found, upper, isnull);
}


/*
 * The durable since and upper come from mzcoord._durable_frontiers: the
 * compaction bound of a collection that has one, and for a table the
 * tables' shared upper.  Every name is qualified even though the
 * coordinator pins search_path: the query runs as superuser (see
 * mzc_pin_search_path in worker.c).
 */
static const char *const boot_query =
"SELECT c.global_id, c.item_id, i.kind, i.relation::pg_catalog.oid,"
"       c.primary_id IS NULL,"
"       CASE WHEN b.global_id IS NOT NULL THEN d.since"
"            ELSE coalesce(d.since, c.as_of) END, d.upper,"
"       (pg_catalog.extract('epoch', i.retain_history)"
"        OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8,"
"       (SELECT pg_catalog.array_agg(ii.input_global_id ORDER BY ii.input_global_id)"
"          FROM mzcoord.item_inputs ii"
"         WHERE ii.item_id OPERATOR(pg_catalog.=) c.item_id),"
"       b.global_id IS NOT NULL"
"  FROM mzcoord.collections c JOIN mzcoord.items i"
"    ON i.id OPERATOR(pg_catalog.=) c.item_id"
"  JOIN mzcoord._durable_frontiers d"
"    ON d.global_id OPERATOR(pg_catalog.=) c.global_id"
"  LEFT JOIN mzcoord.compaction_bounds b"
"    ON b.global_id OPERATOR(pg_catalog.=) c.global_id"
" ORDER BY pg_catalog.length(c.global_id), c.global_id";

static mzc_frontier
spi_frontier(HeapTuple tup, TupleDesc desc, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, desc, col, &isnull);

	return isnull ? mzc_frontier_empty() : mzc_frontier_at(DatumGetInt64(d));
}

/* Read the catalog (inside the worker's transaction, SPI connected). */
MzcBootRow *
mzcoord_rec_collections_boot(int *nrows)
{
	MzcBootRow *rows;
	uint64		n;

	if (SPI_execute(boot_query, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "mzcoord: could not read the catalog");
	n = SPI_processed;
	rows = palloc0(sizeof(MzcBootRow) * Max(n, 1));
	for (uint64 r = 0; r < n; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MzcBootRow *row = &rows[r];
		bool		isnull;
		char	   *s;
		Datum		d;

		s = SPI_getvalue(tup, desc, 1);
		if (!mzcoord_parse_gid(s, &row->gid))
			elog(ERROR, "mzcoord: invalid global id in the catalog: %s", s);
		strlcpy(row->item_id, SPI_getvalue(tup, desc, 2), MZC_ITEM_ID_LEN);
		s = SPI_getvalue(tup, desc, 3);
		if (!mzcoord_kind_parse(s, &row->kind))
			elog(ERROR, "mzcoord: invalid item kind in the catalog: %s", s);
		d = SPI_getbinval(tup, desc, 4, &isnull);
		row->relid = isnull ? InvalidOid : DatumGetObjectId(d);
		row->is_primary = DatumGetBool(SPI_getbinval(tup, desc, 5, &isnull));
		row->since = spi_frontier(tup, desc, 6);
		row->has_bound = DatumGetBool(SPI_getbinval(tup, desc, 10, &isnull));
		row->upper = spi_frontier(tup, desc, 7);
		d = SPI_getbinval(tup, desc, 8, &isnull);
		row->retain_ms = isnull ? MZC_DEFAULT_RETAIN_MS : DatumGetInt64(d);
		d = SPI_getbinval(tup, desc, 9, &isnull);
		if (!isnull && row->is_primary)
		{
			ArrayType  *arr = DatumGetArrayTypeP(d);
			Datum	   *elems;
			bool	   *nulls;
			int			ne;

			deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT,
							  &elems, &nulls, &ne);
			if (ne > MZC_MAX_INPUTS)
				elog(ERROR, "mzcoord: collection %s has more than %d inputs",
					 SPI_getvalue(tup, desc, 1), MZC_MAX_INPUTS);
			for (int i = 0; i < ne; i++)
				if (!mzcoord_parse_gid(TextDatumGetCString(elems[i]),
									   &row->inputs[i]))
					elog(ERROR, "mzcoord: invalid input id in the catalog");
			row->ninputs = ne;
		}
		row->slot = -1;
		row->dataflow = -1;
	}
	*nrows = (int) n;
	return rows;
}

/*
 * The global ids of the collections that should have a history (of a
 * table, a source or a materialized view) and have none, in order, as
 * palloc'd strings.
 */
List *
mzcoord_rec_collections_without_history(void)
{
	const char *sql = "SELECT c.global_id FROM mzcoord.collections c"
		"  JOIN mzcoord.items i ON i.id OPERATOR(pg_catalog.=) c.item_id"
		" WHERE i.kind IN ('table', 'source', 'materialized_view')"
		"   AND NOT EXISTS (SELECT 1 FROM mzcoord.storage s"
		"                    WHERE s.global_id OPERATOR(pg_catalog.=) c.global_id)"
		" ORDER BY 1";
	List	   *ids = NIL;

	mzcoord_spi_exec(sql, SPI_OK_SELECT);
	for (uint64 i = 0; i < SPI_processed; i++)
		ids = lappend(ids, SPI_getvalue(SPI_tuptable->vals[i],
										SPI_tuptable->tupdesc, 1));
	return ids;
}
