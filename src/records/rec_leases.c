/*-------------------------------------------------------------------------
 *
 * rec_leases.c
 *	  The statements in C on mzcoord.lease_records (see rec_leases.h for
 *	  the writers).
 *
 * IDENTIFICATION
 *	  src/records/rec_leases.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "ids.h"
#include "rec_leases.h"

static const char *const read_leases_sql =
"SELECT l.name, l.owner::pg_catalog.oid, l.global_ids, l.held_at,"
"       (pg_catalog.extract('epoch', l.ttl) OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8,"
"       l.expires_at, l.created_at"
"  FROM mzcoord.lease_records l";

/* The global ids of the text[] d that parse, at most max of them. */
static int
parse_gids(Datum d, int max, int64 *gids)
{
	Datum	   *elems;
	bool	   *nulls;
	int			ne;
	int			n = 0;

	deconstruct_array(DatumGetArrayTypeP(d), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &ne);
	for (int i = 0; i < ne && n < max; i++)
		if (!nulls[i] &&
			mzcoord_parse_gid(TextDatumGetCString(elems[i]), &gids[n]))
			n++;
	return n;
}

void
mzcoord_rec_read_leases(int max_gids, MzcRecLease **rows, int *nrows)
{
	uint64		n;
	MzcRecLease *out;

	if (SPI_execute(read_leases_sql, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "mzcoord: could not read the lease records");
	n = SPI_processed;
	out = palloc0(sizeof(MzcRecLease) * Max(n, 1));
	for (uint64 r = 0; r < n; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MzcRecLease *l = &out[r];
		bool		isnull;

		strlcpy(l->name, SPI_getvalue(tup, desc, 1), NAMEDATALEN);
		l->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
		l->gids = palloc(sizeof(int64) * Max(max_gids, 1));
		l->ngids = parse_gids(SPI_getbinval(tup, desc, 3, &isnull), max_gids,
							  l->gids);
		l->held_at = DatumGetInt64(SPI_getbinval(tup, desc, 4, &isnull));
		l->ttl_ms = DatumGetInt64(SPI_getbinval(tup, desc, 5, &isnull));
		l->expires_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 6, &isnull));
		l->created_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 7, &isnull));
	}
	*rows = out;
	*nrows = (int) n;
}
