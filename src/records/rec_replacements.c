/*-------------------------------------------------------------------------
 *
 * rec_replacements.c
 *	  The statements of C on mzcoord.replacements (see
 *	  rec_replacements.h).  Each connects to SPI itself.
 *
 * IDENTIFICATION
 *	  src/records/rec_replacements.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "rec_items.h"
#include "rec_replacements.h"
#include "support.h"

/* Is item_id a replacement itself (fresh: see mzcoord_rec_fresh_value)? */
bool
mzcoord_rec_replacements_is_one(const char *item_id)
{
	return mzcoord_rec_fresh_value("SELECT 1 FROM mzcoord.replacements r"
								   " WHERE r.item_id OPERATOR(pg_catalog.=) $1",
								   TEXTOID, CStringGetTextDatum(item_id)) != NULL;
}

/*
 * The pair of the replacement whose relation is relid; item_id NULL if
 * none.
 */
MzcReplacementPair
mzcoord_rec_replacements_pair(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	MzcReplacementPair p = {0};
	MemoryContext caller = CurrentMemoryContext;
	bool		isnull;

	mzcoord_spi_connect();
	if (SPI_execute_with_args("SELECT r.item_id, r.target_id, t.relation::pg_catalog.oid"
							  "  FROM mzcoord.replacements r"
							  "  JOIN mzcoord.items i ON i.id OPERATOR(pg_catalog.=) r.item_id"
							  "  JOIN mzcoord.items t ON t.id OPERATOR(pg_catalog.=) r.target_id"
							  " WHERE i.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the mzcoord catalog");
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;

		p.item_id = MemoryContextStrdup(caller, SPI_getvalue(tup, desc, 1));
		p.target_id = MemoryContextStrdup(caller, SPI_getvalue(tup, desc, 2));
		p.target_rel = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
	}
	SPI_finish();
	return p;
}
