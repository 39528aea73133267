/*-------------------------------------------------------------------------
 *
 * rec_bounds.c
 *	  The statements on mzcoord.compaction_bounds (see rec_bounds.h for the
 *	  writers).
 *
 * IDENTIFICATION
 *	  src/records/rec_bounds.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "rec_bounds.h"
#include "rec_spi.h"

bool
mzcoord_rec_bound(int64 gid, int64 *bound, bool *isnull)
{
	return mzcoord_rec_gid_int8("SELECT bound FROM mzcoord.compaction_bounds"
								" WHERE global_id OPERATOR(pg_catalog.=) $1",
								"compaction bound", gid, bound, isnull);
}

int64
mzcoord_rec_max_bound_of(const Oid *rels, int n)
{
	Oid			argtypes[1] = {OIDARRAYOID};
	Datum	   *elems = palloc(sizeof(Datum) * n);
	Datum		values[1];
	int64		floor = 0;
	bool		isnull;

	for (int i = 0; i < n; i++)
		elems[i] = ObjectIdGetDatum(rels[i]);
	values[0] = PointerGetDatum(construct_array(elems, n, OIDOID, sizeof(Oid),
												true, TYPALIGN_INT));
	if (SPI_execute_with_args("SELECT pg_catalog.max(b.bound)"
							  "  FROM mzcoord.compaction_bounds b"
							  "  JOIN mzcoord.collections c"
							  "    ON c.global_id OPERATOR(pg_catalog.=) b.global_id"
							  "  JOIN mzcoord.items i ON i.id OPERATOR(pg_catalog.=) c.item_id"
							  " WHERE i.relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the compaction bounds");
	if (SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									  1, &isnull);

		if (!isnull)
			floor = DatumGetInt64(d);
	}
	return floor;
}

/* The compaction bound, in the read's snapshot (NULL: empty). */
int
mzcoord_rec_replayed_bound(const char *gidtext, Snapshot snapshot,
						   bool *found, int64 *value, bool *isnull)
{
	return mzcoord_rec_int8("SELECT b.bound FROM mzcoord.compaction_bounds b"
							" WHERE b.global_id = $1",
							gidtext, snapshot, found, value, isnull);
}

/*
 * The tick's publication (src/controller/tick.c), two statements.  The
 * first locks the catalog rows to write: the compaction bound of a
 * collection that has one (lock_bounds_sql), else, for the few rows that
 * this did not lock, its mzcoord.collections row (lock_free_sql of
 * rec_collections.c).  Rows that another transaction has locked (a
 * source's upper advance, DDL, a creation holding an input's bound FOR
 * SHARE) are skipped rather than waited for: the coordinator must not
 * stall behind a user's open transaction.  Each returns the collections
 * whose rows it holds, and lock_bounds_sql where each bound row is: the
 * write finds it by that ctid ($8), without a second index lookup (locked,
 * the row stays where it is; a ctid that no longer names the row finds
 * nothing, and the row is retried at the next tick).  Both are driven by
 * the list (unnest joined to the primary key), so that their cost follows
 * the rows published, not the size of the catalog.
 *
 * The second, with a snapshot taken after the locks (a creation that held
 * a bound FOR SHARE to record a requirement has committed, and its
 * requirement is seen), writes them set-based: the compaction bound
 * becomes join(old bound, proposal), clamped to at most the least read
 * requirement and active lease on the collection (and never below the old
 * bound).  The bound is the durable since of a collection that has one
 * ($7: its bound row was locked); mzcoord.collections is written only for
 * one without (an index: its since and upper).  A table's upper is the
 * timeline's, written once per publication for all of them
 * (mzcoord_rec_write_timeline), never per table: a publication costs one row per
 * changed bound.  The bound guard only checks monotonicity meanwhile (see
 * mzcoord_authority_set_clamping).  Every bound row is stamped with the
 * epoch, which the caller checked under lock.  It returns each row written
 * with its since; a row with a bound that is not to be published
 * (read-only mode) is returned with the bound it has.
 *
 * Runs as superuser: every operator and function is qualified.  (The
 * multi-argument unnest in FROM cannot be: the parser expands it only
 * unqualified, into calls of pg_catalog.unnest.)
 */
static const char *const lock_bounds_sql =
"SELECT b.global_id, b.ctid FROM pg_catalog.unnest($1) AS g(global_id)"
"  JOIN mzcoord.compaction_bounds b"
"    ON b.global_id OPERATOR(pg_catalog.=) g.global_id"
"   FOR NO KEY UPDATE OF b SKIP LOCKED";

static const char *const publish_sql =
"WITH v AS ("
"  SELECT * FROM unnest($1, $2, $3, $4, $6, $7, $8)"
"         AS v(global_id, since, upper, own_upper, publish, has_bound, tid)),"
" req AS ("
"  SELECT r.input_global_id AS global_id, pg_catalog.min(r.at) AS at"
"    FROM v JOIN mzcoord.read_requirements r"
"           ON r.input_global_id OPERATOR(pg_catalog.=) v.global_id"
"   WHERE r.at IS NOT NULL GROUP BY 1),"
" lease AS ("
"  SELECT g.global_id, pg_catalog.min(l.held_at) AS at"
"    FROM mzcoord.lease_records l,"
"         pg_catalog.unnest(l.global_ids) AS g(global_id)"
"   WHERE l.expires_at OPERATOR(pg_catalog.>) pg_catalog.now() GROUP BY 1),"
" prop AS ("
"  SELECT v.global_id, v.tid, v.since, LEAST(req.at, lease.at) AS lim"
"    FROM v LEFT JOIN req ON req.global_id OPERATOR(pg_catalog.=) v.global_id"
"         LEFT JOIN lease ON lease.global_id OPERATOR(pg_catalog.=) v.global_id"
"   WHERE v.publish AND v.has_bound),"
" nb AS ("
"  UPDATE mzcoord.compaction_bounds b"
"     SET bound = CASE WHEN p.lim IS NOT NULL"
"                       AND (b.bound IS NULL OR p.since IS NULL"
"                            OR GREATEST(b.bound, p.since) OPERATOR(pg_catalog.>) p.lim)"
"                      THEN CASE WHEN b.bound IS NULL THEN NULL"
"                                ELSE GREATEST(b.bound, p.lim) END"
"                      WHEN b.bound IS NULL OR p.since IS NULL THEN NULL"
"                      ELSE GREATEST(b.bound, p.since) END,"
"         epoch = $5, published_at = pg_catalog.now()"
"    FROM prop p"
"   WHERE b.ctid OPERATOR(pg_catalog.=) p.tid"
"  RETURNING b.global_id, b.bound,"
"            pg_catalog.pg_column_size(b.*)::pg_catalog.int8 AS bytes),"
" nc AS ("
"  UPDATE mzcoord.collections c"
"     SET since = CASE WHEN v.publish THEN v.since ELSE c.since END,"
"         upper = CASE WHEN v.own_upper THEN v.upper ELSE c.upper END"
"    FROM v"
"   WHERE NOT v.has_bound"
"     AND c.global_id OPERATOR(pg_catalog.=) v.global_id"
"     AND NOT EXISTS (SELECT 1 FROM mzcoord.compaction_bounds x"
"                      WHERE x.global_id OPERATOR(pg_catalog.=) v.global_id)"
"  RETURNING c.global_id, c.since,"
"            pg_catalog.pg_column_size(c.*)::pg_catalog.int8 AS bytes)"
"SELECT nb.global_id, nb.bound, 0, nb.bytes FROM nb"
" UNION ALL SELECT nc.global_id, nc.since, 1, nc.bytes FROM nc"
" UNION ALL SELECT v.global_id, b.bound, -1, 0::pg_catalog.int8"
"   FROM v JOIN mzcoord.compaction_bounds b"
"          ON b.global_id OPERATOR(pg_catalog.=) v.global_id"
"  WHERE v.has_bound AND NOT v.publish";

int
mzcoord_rec_lock_bounds(const int64 *gids, int n, MzcRecLocked **rows,
						int *nrows)
{
	return mzcoord_rec_lock(lock_bounds_sql, gids, n, rows, nrows);
}

/* A one-dimensional array of n int8 (NULL where nulls[i]). */
static Datum
int8_array(Datum *values, bool *nulls, int n)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};

	return PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs,
											  INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* A one-dimensional array of n bool. */
static Datum
bool_array(Datum *values, int n)
{
	return PointerGetDatum(construct_array(values, n, BOOLOID, 1, true,
										   TYPALIGN_CHAR));
}

/* The result of publish_sql as MzcRecPublished rows. */
static void
published_rows(MzcRecPublished **out, int *nout)
{
	*out = palloc0(sizeof(MzcRecPublished) * Max(SPI_processed, 1));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MzcRecPublished *row = &(*out)[(*nout)++];
		bool		isnull;
		Datum		d;

		row->global_id = SPI_getvalue(tup, desc, 1);
		d = SPI_getbinval(tup, desc, 2, &row->since_empty);
		row->since = row->since_empty ? 0 : DatumGetInt64(d);
		row->table = DatumGetInt32(SPI_getbinval(tup, desc, 3, &isnull));
		d = SPI_getbinval(tup, desc, 4, &isnull);
		row->bytes = isnull ? 0 : DatumGetInt64(d);
	}
}

int
mzcoord_rec_publish(const MzcRecPublish *rows, int n, int64 epoch,
					MzcRecPublished **out, int *nout)
{
	Datum	   *sinces = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *uppers = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *owns = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *pubs = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *bounds = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *tids = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *tid_nulls = palloc(sizeof(bool) * Max(n, 1));
	bool	   *since_nulls = palloc(sizeof(bool) * Max(n, 1));
	bool	   *upper_nulls = palloc(sizeof(bool) * Max(n, 1));
	int64	   *gidv = palloc(sizeof(int64) * Max(n, 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	Oid			argtypes[8] = {TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
		BOOLARRAYOID, INT8OID, BOOLARRAYOID, BOOLARRAYOID, TIDARRAYOID};
	Datum		values[8];
	int			rc;

	for (int i = 0; i < n; i++)
	{
		gidv[i] = rows[i].gid;
		since_nulls[i] = rows[i].since_empty;
		sinces[i] = Int64GetDatum(rows[i].since_empty ? 0 : rows[i].since);
		upper_nulls[i] = rows[i].upper_empty;
		uppers[i] = Int64GetDatum(rows[i].upper_empty ? 0 : rows[i].upper);
		owns[i] = BoolGetDatum(rows[i].own_upper);
		pubs[i] = BoolGetDatum(rows[i].publish);
		bounds[i] = BoolGetDatum(rows[i].has_bound);
		tid_nulls[i] = !rows[i].has_bound || !rows[i].has_tid;
		tids[i] = PointerGetDatum(&rows[i].tid);
	}
	values[0] = mzcoord_rec_gid_array(gidv, n);
	values[1] = int8_array(sinces, since_nulls, n);
	values[2] = int8_array(uppers, upper_nulls, n);
	values[3] = bool_array(owns, n);
	values[4] = Int64GetDatum(epoch);
	values[5] = bool_array(pubs, n);
	values[6] = bool_array(bounds, n);
	values[7] = PointerGetDatum(construct_md_array(tids, tid_nulls, 1, dims, lbs,
												   TIDOID, sizeof(ItemPointerData),
												   false, TYPALIGN_SHORT));
	*nout = 0;
	rc = SPI_execute_with_args(publish_sql, 8, argtypes, values, NULL,
							   false, 0);
	if (rc == SPI_OK_SELECT)
		published_rows(out, nout);
	return rc;
}
