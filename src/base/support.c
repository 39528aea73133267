/*-------------------------------------------------------------------------
 *
 * support.c
 *	  Small helpers over the PostgreSQL API that several planes share.
 *
 * Each of these stood, line for line, in several SQL functions and caches
 * of the planes above; one copy here keeps their messages and their
 * behaviour the same everywhere.
 *
 * IDENTIFICATION
 *	  src/base/support.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"

#include "support.h"

void
mzcoord_spi_connect(void)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

void
mzcoord_spi_exec(const char *sql, int expected)
{
	int			ret = SPI_execute(sql, false, 0);

	if (ret != expected)
		elog(ERROR, "mzcoord: could not run \"%s\": %s", sql,
			 SPI_result_code_string(ret));
}

void
mzcoord_register_xact_callbacks(bool *registered, XactCallback xact,
								SubXactCallback subxact)
{
	if (*registered)
		return;
	RegisterXactCallback(xact, NULL);
	if (subxact != NULL)
		RegisterSubXactCallback(subxact, NULL);
	*registered = true;
}

HTAB *
mzcoord_local_hash(const char *name, long nelem, Size keysize,
				   Size entrysize, MemoryContext cxt)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = keysize;
	ctl.entrysize = entrysize;
	ctl.hcxt = cxt;
	return hash_create(name, nelem, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

void
mzcoord_text_array_elems(ArrayType *arr, const char *what,
						 Datum **elems, bool **nulls, int *n)
{
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", what)));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT,
					  elems, nulls, n);
}

int64
mzcoord_timestamp_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	return mzcoord_timestamp_value(PG_GETARG_DATUM(argno), PG_ARGISNULL(argno),
								   what);
}

/* A timestamp given as a bigint value: not null, not negative. */
int64
mzcoord_timestamp_value(Datum d, bool isnull, const char *what)
{
	int64		t;

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	t = DatumGetInt64(d);
	if (t < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timestamp must not be negative: " INT64_FORMAT, t)));
	return t;
}
