/*-------------------------------------------------------------------------
 *
 * rec_maintenance.c
 *	  The statement of C on mzcoord.maintenance (see rec_maintenance.h).
 *
 * IDENTIFICATION
 *	  src/records/rec_maintenance.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "ids.h"
#include "rec_maintenance.h"

/*
 * Record the outcome of a step of gid in mzcoord.maintenance, in the
 * step's transaction (the caller is connected to SPI): a success (o), or
 * a failure (edata, o NULL).  Returns the consecutive failures now.
 */
int64
mzcoord_rec_maintenance_record(int64 gid, const MzcStepCounts *o,
							   ErrorData *edata, double duration_ms)
{
	Oid			argtypes[8] = {TEXTOID, INT8OID, INT8OID, INT4OID, FLOAT8OID,
	TEXTOID, TEXTOID, INT4OID};
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	int64		failures = 0;
	bool		isnull;
	int			ret;

	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	values[1] = Int64GetDatum(o != NULL ? o->new_upper : 0);
	nulls[1] = (o == NULL || o->new_upper < 0) ? 'n' : ' ';
	values[2] = Int64GetDatum(o != NULL ? o->rows : 0);
	values[3] = Int32GetDatum(o != NULL ? o->times : 0);
	values[4] = Float8GetDatum(duration_ms);
	values[7] = Int32GetDatum(o != NULL ? o->incremental : 0);
	if (edata != NULL)
	{
		values[5] = CStringGetTextDatum(edata->message ? edata->message : "unknown error");
		values[6] = CStringGetTextDatum(unpack_sql_state(edata->sqlerrcode));
	}
	else
		nulls[5] = nulls[6] = 'n';

	/* The item may have been dropped meanwhile: then there is no row. */
	ret = SPI_execute_with_args(edata == NULL ?
								"INSERT INTO mzcoord.maintenance AS m"
								"   (item_id, steps, upper, updates, times,"
								"    incremental_times, last_step_at, last_step_ms)"
								" SELECT i.id, 1, $2, $3, $4, $8, pg_catalog.now(), $5"
								"   FROM mzcoord.items i"
								"  WHERE i.id OPERATOR(pg_catalog.=) $1"
								" ON CONFLICT (item_id) DO UPDATE"
								"    SET steps = m.steps OPERATOR(pg_catalog.+) 1,"
								"        upper = $2,"
								"        updates = m.updates OPERATOR(pg_catalog.+) $3,"
								"        times = m.times OPERATOR(pg_catalog.+) $4,"
								"        incremental_times = m.incremental_times"
								"            OPERATOR(pg_catalog.+) $8,"
								"        last_step_at = pg_catalog.now(), last_step_ms = $5,"
								"        failures = 0"
								" RETURNING m.failures"
								:
								"INSERT INTO mzcoord.maintenance AS m"
								"   (item_id, failures, error, error_code, error_at)"
								" SELECT i.id, 1, $6, $7, pg_catalog.now()"
								"   FROM mzcoord.items i"
								"  WHERE i.id OPERATOR(pg_catalog.=) $1"
								" ON CONFLICT (item_id) DO UPDATE"
								"    SET failures = m.failures OPERATOR(pg_catalog.+) 1,"
								"        error = $6, error_code = $7,"
								"        error_at = pg_catalog.now()"
								" RETURNING m.failures",
								8, argtypes, values, nulls, false, 0);
	if (ret != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not record the maintenance of " MZC_GID_FMT ": %s",
			 gid, SPI_result_code_string(ret));
	if (SPI_processed == 1)
		failures = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
											   SPI_tuptable->tupdesc, 1, &isnull));
	return failures;
}
