/*-------------------------------------------------------------------------
 *
 * bootstrap.c
 *	  Building the controller from the catalog: at the coordinator's first
 *	  tick, after the extension was (re)created, after a failed publication
 *	  and on request (mzcoord._controller_rebootstrap()).
 *
 * The catalog rows are read with SPI; a collection with history starts at
 * its committed compaction bound (mzcoord.compaction_bounds, the authority:
 * its durable hold sits there, so nothing compacted becomes readable and no
 * since regresses), any other at its durable since.  Then the as-ofs of
 * maintained collections are selected (reference 2.6), and the controller
 * is emptied and rebuilt in one exclusive section.  A publication between the catalog read and the
 * build is noticed through MzcController.publications and makes the
 * rebuild read again.
 *
 * IDENTIFICATION
 *	  src/controller/bootstrap.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "asof.h"
#include "bootstrap.h"
#include "controller.h"
#include "failpoint.h"
#include "ids.h"
#include "lease.h"
#include "oracle.h"
#include "settings.h"
#include "publish.h"
#include "collections.h"
#include "frontier.h"

PG_FUNCTION_INFO_V1(mzcoord_controller_rebootstrap);

/* One collection as the catalog describes it. */
typedef struct MzcBootRow
{
	int64		gid;
	char		item_id[MZC_ITEM_ID_LEN];
	MzcKind		kind;
	Oid			relid;
	bool		is_primary;
	bool		has_bound;		/* since is its committed compaction bound */
	mzc_frontier since;
	mzc_frontier upper;
	int64		retain_ms;
	int			ninputs;
	int64		inputs[MZC_MAX_INPUTS];
	int32		slot;			/* once created */
	int32		dataflow;		/* index into the as-of dataflows, or -1 */
	bool		leased;			/* since lowered to an active lease */
} MzcBootRow;

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
static MzcBootRow *
boot_read_catalog(int *nrows)
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

static int
boot_find(MzcBootRow *rows, int n, int64 gid)
{
	for (int i = 0; i < n; i++)
		if (rows[i].gid == gid)
			return i;
	return -1;
}

/*
 * As-of selection (reference 2.6) for every maintained object: the durable
 * frontiers of the storage collections are the hard constraints.  Sets the
 * since each maintained collection starts at.
 */
static void
boot_select_as_ofs(MzcBootRow *rows, int n)
{
	mzc_asof_storage *storage = palloc0(sizeof(mzc_asof_storage) * Max(n, 1));
	mzc_asof_dataflow *dfs = palloc0(sizeof(mzc_asof_dataflow) * Max(n, 1));
	int32	   *inputs = palloc0(sizeof(int32) * Max(n, 1) * MZC_MAX_INPUTS);
	int			ndf = 0;
	mzc_asof_request req;
	mzc_error	err;

	for (int i = 0; i < n; i++)
	{
		storage[i].since = rows[i].since;
		storage[i].upper = rows[i].upper;
	}
	for (int i = 0; i < n; i++)
	{
		mzc_asof_dataflow *df;
		int32	   *in = &inputs[ndf * MZC_MAX_INPUTS];
		int			k = 0;

		if (rows[i].kind == MZC_KIND_TABLE || rows[i].kind == MZC_KIND_SOURCE ||
			!rows[i].is_primary)
			continue;
		for (int j = 0; j < rows[i].ninputs; j++)
		{
			int			idx = boot_find(rows, n, rows[i].inputs[j]);

			if (idx >= 0)
				in[k++] = idx;
		}
		df = &dfs[ndf];
		df->storage_inputs = in;
		df->nstorage_inputs = k;
		df->export_storage = rows[i].kind == MZC_KIND_INDEX ? -1 : i;
		if (rows[i].kind == MZC_KIND_INDEX)
		{
			df->has_policy = true;
			df->policy = mzcoord_ctl_retain_policy(rows[i].retain_ms);
		}
		rows[i].dataflow = ndf++;
	}
	if (ndf == 0)
		return;

	memset(&req, 0, sizeof(req));
	req.storage = storage;
	req.nstorage = n;
	req.dataflows = dfs;
	req.ndataflows = ndf;
	req.now = mzcoord_now_ms();
	if (mzc_select_as_ofs(&req, NULL, &err) != MZC_OK)
		elog(ERROR, "mzcoord: as-of selection failed: %s", err.message);

	/*
	 * A collection with a compaction bound keeps its bound as its since:
	 * the as-of its dataflow restarts at is no permission to compact.
	 */
	for (int i = 0; i < n; i++)
		if (rows[i].dataflow >= 0 && !dfs[rows[i].dataflow].as_of.empty &&
			!rows[i].has_bound)
			rows[i].since = mzc_frontier_join(rows[i].since,
											  dfs[rows[i].dataflow].as_of);
}

/*
 * A leasable collection starts at meet(catalog since, its active leases):
 * the lease records are durable holds of their own (lease.c).  Such a since
 * is written back to the catalog by the next tick.  A table's, source's or
 * view's since is its own history, whose bound never passed an active
 * lease (the publication clamps it).  An index's is where it reads the
 * relation it indexes, and the as-of selection above may have put it past
 * its leases: it goes back to them, but never below that relation's since
 * (the relation's bound did not pass the index's live since, which the
 * lease held).  Indexes come second, after their relations.
 */
static void
boot_apply_leases(MzcBootRow *rows, int n)
{
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++)
		{
			MzcKind		kind = rows[i].kind;
			mzc_frontier since;

			if (kind == MZC_KIND_SINK || (kind == MZC_KIND_INDEX) != (pass == 1))
				continue;
			since = mzcoord_lease_boot_since(rows[i].gid, rows[i].since);
			for (int j = 0; kind == MZC_KIND_INDEX && j < rows[i].ninputs; j++)
			{
				int			idx = boot_find(rows, n, rows[i].inputs[j]);

				if (idx >= 0)
					since = mzc_frontier_join(since, rows[idx].since);
			}
			rows[i].leased = mzc_frontier_lt(since, rows[i].since);
			rows[i].since = since;
		}
}

/*
 * When a restart pretends slot's frontiers were last written: spread over
 * the last publish_interval, so that the first coalesced publications of
 * many collections after a restart fall on different ticks.
 */
static TimestampTz
boot_persisted_at(int32 slot)
{
	int64		spread_ms = Max(mzcoord_publish_interval, 1);

	return GetCurrentTimestamp() - ((int64) slot * 7919 % spread_ms) * 1000;
}

/*
 * Build the controller from the catalog rows; caller holds the lock
 * exclusively.  On failure the controller is left empty and not ready.
 */
static bool
boot_build_locked(MzcBootRow *rows, int n, mzc_ts table_upper, Oid ext,
				  mzc_error *err)
{
	bool		progress = true;
	int			done = 0;

	mzcoord_ctl_clear();
	(void) pg_atomic_fetch_add_u64(&mzcoord_ctl->epoch, 1);
	mzcoord_ctl->table_upper = table_upper;

	/* Create in dependency layers: a collection after its inputs. */
	while (done < n && progress)
	{
		progress = false;
		for (int i = 0; i < n; i++)
		{
			int32		deps[MZC_MAX_INPUTS];
			bool		ready = true;
			mzc_frontier upper;

			if (rows[i].slot >= 0 || rows[i].since.empty)
				continue;
			for (int j = 0; j < rows[i].ninputs && ready; j++)
			{
				int			idx = boot_find(rows, n, rows[i].inputs[j]);

				if (idx < 0 || rows[idx].since.empty)
					deps[j] = -1;	/* input gone: nothing to hold */
				else if (rows[idx].slot < 0)
					ready = false;
				else
					deps[j] = rows[idx].slot;
			}
			if (!ready)
				continue;
			{
				int			k = 0;

				for (int j = 0; j < rows[i].ninputs; j++)
					if (deps[j] >= 0)
						deps[k++] = deps[j];
				upper = rows[i].kind == MZC_KIND_TABLE ?
					mzc_frontier_at(table_upper) : rows[i].upper;
				if (!mzcoord_ctl_create_locked(rows[i].gid, rows[i].item_id,
											   rows[i].is_primary ? rows[i].relid : InvalidOid,
											   rows[i].kind, rows[i].since, upper,
											   deps, k, &rows[i].slot, err))
					return false;
			}
			mzcoord_ctl_info[rows[i].slot].persisted = !rows[i].leased;
			mzcoord_ctl_info[rows[i].slot].persisted_at = boot_persisted_at(rows[i].slot);
			mzcoord_ctl_info[rows[i].slot].durable_since = rows[i].since;
			mzcoord_ctl_info[rows[i].slot].durable_upper = rows[i].upper;
			progress = true;
			done++;
		}
	}

	/* The leases' counts, before anything can move a since (lease.c). */
	mzcoord_lease_boot_install_locked();

	/* Policies only once every collection and its holds exist (I5). */
	for (int i = 0; i < n; i++)
	{
		mzc_policy p;

		if (rows[i].slot < 0)
			continue;
		mzcoord_ctl_info[rows[i].slot].retain_ms = rows[i].retain_ms;
		p = mzcoord_ctl_policy_for(rows[i].kind, rows[i].retain_ms);
		if (mzc_coll_set_policy(&mzcoord_ctl->colls, rows[i].slot, &p, NULL, err) != MZC_OK)
			return false;
	}

	mzcoord_ctl->ready = true;
	mzcoord_ctl->ext_oid = ext;
	mzcoord_ctl->database_oid = MyDatabaseId;
	mzcoord_ctl->rebootstrap = false;
	mzcoord_ctl->resync = false;
	mzcoord_ctl->bootstraps++;
	mzcoord_ctl->ready_at = GetCurrentTimestamp();
	mzcoord_ctl->bootstrap_error[0] = '\0';
	return true;
}

/*
 * SQL: mzcoord._controller_rebootstrap() RETURNS bigint
 *
 * Ask the coordinator to build the controller from the catalog again at its
 * next tick (after a restore from a dump wrote the catalog behind the
 * implications' back).  Returns the number of bootstraps so far: the
 * rebuild has happened once controller_status() shows more.
 */
Datum
mzcoord_controller_rebootstrap(PG_FUNCTION_ARGS)
{
	int64		bootstraps;

	if (mzcoord_ctl == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("mzcoord is not loaded at server start"),
				 errhint("Add mzcoord to shared_preload_libraries.")));
	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	mzcoord_ctl->rebootstrap = true;
	bootstraps = mzcoord_ctl->bootstraps;
	LWLockRelease(mzcoord_ctl->lock);
	PG_RETURN_INT64(bootstraps);
}

/*
 * Build the controller from the catalog (inside the coordinator's tick
 * transaction, SPI connected, a snapshot pushed).  Raises if the catalog
 * does not fit shared memory; the controller is then left not ready.
 */
void
mzcoord_ctl_bootstrap(Oid ext)
{
	TimestampTz start = GetCurrentTimestamp();
	MzcBootRow *rows;
	int			n;
	mzc_ts		max_upper = 0;
	mzc_ts		table_upper;
	mzc_error	err;
	bool		ok;

	/*
	 * A rebuild while the controller serves (a failed publication, a
	 * restore) must not lose a catalog change published between reading the
	 * catalog and building: read it with a fresh snapshot taken after noting
	 * the publication count, and read again if a publication came between.
	 */
	for (int attempt = 0;; attempt++)
	{
		uint64		seq;

		LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
		seq = mzcoord_ctl->publications;
		LWLockRelease(mzcoord_ctl->lock);
		PushActiveSnapshot(GetLatestSnapshot());
		rows = boot_read_catalog(&n);
		/* Test only: a crash in the middle of a bootstrap. */
		mzcoord_failpoint_check("bootstrap");
		mzcoord_lease_boot_read(start);
		PopActiveSnapshot();

		/*
		 * Time never goes back: the oracle resumes above its durable
		 * ceiling and every durable table upper.  Sources keep their own
		 * times.
		 */
		for (int i = 0; i < n; i++)
			if (rows[i].kind == MZC_KIND_TABLE && !rows[i].upper.empty &&
				rows[i].upper.ts > max_upper)
				max_upper = rows[i].upper.ts;
		mzcoord_oracle_bootstrap(max_upper);
		table_upper = mzcoord_oracle_tick();

		boot_select_as_ofs(rows, n);
		boot_apply_leases(rows, n);

		LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
		if (mzcoord_ctl->publications == seq || attempt >= 100)
			break;
		LWLockRelease(mzcoord_ctl->lock);
		pfree(rows);
	}

	memset(&err, 0, sizeof(err));
	ok = boot_build_locked(rows, n, table_upper, ext, &err);
	if (ok)
		mzcoord_ctl->bootstrap_us = GetCurrentTimestamp() - start;
	if (!ok)
	{
		mzcoord_ctl_clear();
		mzcoord_ctl->ready = false;
		mzcoord_ctl->ext_oid = InvalidOid;
		strlcpy(mzcoord_ctl->bootstrap_error, err.message, MZC_ERROR_LEN);
	}
	LWLockRelease(mzcoord_ctl->lock);

	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("mzcoord could not load the catalog into shared memory: %s",
						err.message),
				 errhint("Raise mzcoord.max_collections or mzcoord.max_holds and restart the server.")));
	ConditionVariableBroadcast(&mzcoord_ctl->ready_cv);
	ereport(LOG,
			(errmsg("mzcoord controller ready: %d collections loaded", n)));
}
