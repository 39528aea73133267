/*-------------------------------------------------------------------------
 *
 * bootstrap.c
 *	  Building the controller from the catalog: at the coordinator's first
 *	  tick, after the extension was (re)created, after a failed publication
 *	  and on request (mzcoord._controller_rebootstrap()).
 *
 * The catalog rows are read with SPI (src/records/rec_collections.c); a
 * collection with history starts at its committed compaction bound
 * (mzcoord.compaction_bounds, the authority: its durable hold sits there,
 * so nothing compacted becomes readable and no since regresses), any other
 * at its durable since.  Then the as-ofs of
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
#include "rec_collections.h"
#include "collections.h"
#include "frontier.h"

PG_FUNCTION_INFO_V1(mzcoord_controller_rebootstrap);

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
		rows = mzcoord_rec_collections_boot(&n);
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
