/*-------------------------------------------------------------------------
 *
 * authority.c
 *	  The coordinator's durable epoch and the fence of every publication.
 *
 * The catalog is the authority on how far each collection may be
 * compacted (mzcoord.compaction_bounds, src/sql/35_authority.sql), so a
 * coordinator that lost its place (a newer one started, or an operator
 * fenced it) must not write bounds.  Every coordinator takes a new epoch in
 * its first transaction with the extension (incrementing the one row of
 * mzcoord.coordinator_epoch) and, before each publication, locks that row
 * FOR SHARE and compares it with its own: a newer epoch ends the process
 * before it writes anything, and no newer epoch can commit until the
 * publication has (an increment waits for the row lock).
 *
 * The publication also takes SHARE ROW EXCLUSIVE on the epoch table, which
 * the consistency check takes in SHARE mode: the check then sees the
 * bounds and the controller's live sinces from the same side of every
 * publication.  The lock is only tried: a long check delays a publication
 * by a tick, it never stalls the coordinator.
 *
 * IDENTIFICATION
 *	  src/controller/authority.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"

#include "authority.h"
#include "controller.h"
#include "rec_epoch.h"

/*
 * The largest epoch a coordinator may take; the guard of the table refuses
 * any above it (src/sql/70_hardening.sql), which leaves room for restarts.
 */
#define MZC_EPOCH_MAX INT64CONST(4611686018427387904)

/* This process's epoch and the extension it was taken for. */
static int64 my_epoch = 0;

/*
 * Shows the epoch this coordinator holds in controller_status().  The
 * shared copy is needed because my_epoch lives only in this process; the
 * controller's own epoch counts bootstraps of this server's shared memory
 * (it starts again at 1 after a restart or a promotion) and is no durable
 * epoch.
 */
static void
show_epoch(int64 epoch)
{
	if (mzcoord_ctl != NULL)
		pg_atomic_write_u64(&mzcoord_ctl->coordinator_epoch, (uint64) epoch);
}
static Oid	my_ext = InvalidOid;

static Oid
epoch_relid(void)
{
	Oid			nsp = get_namespace_oid("mzcoord", false);
	Oid			rel = get_relname_relid("coordinator_epoch", nsp);

	if (!OidIsValid(rel))
		elog(ERROR, "mzcoord: table mzcoord.coordinator_epoch is missing");
	return rel;
}

void
mzcoord_authority_begin(Oid ext)
{
	bool		found;
	int64		epoch;

	if (my_ext == ext && my_epoch > 0)
		return;

	/*
	 * The table is guarded (src/sql/70_hardening.sql), but a superuser can
	 * disable the guard: say what is wrong and how to repair it rather than
	 * fail on the increment.
	 */
	if (!mzcoord_rec_epoch_read(&found, &epoch))
		elog(ERROR, "mzcoord: could not read the coordinator epoch");
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("mzcoord coordinator: the coordinator epoch is missing"),
				 errdetail("Table mzcoord.coordinator_epoch has no row; the coordinator cannot start without it."),
				 errhint("As a superuser, restore the row with an epoch no lower than any published: INSERT INTO mzcoord.coordinator_epoch (epoch) SELECT coalesce(max(epoch), 0) FROM mzcoord.compaction_bounds;")));
	if (epoch >= MZC_EPOCH_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("mzcoord coordinator: the coordinator epoch is exhausted"),
				 errdetail("The epoch in mzcoord.coordinator_epoch is at least " INT64_FORMAT "; the coordinator cannot take a new one.",
						   MZC_EPOCH_MAX),
				 errhint("As a superuser, with no coordinator running, disable the trigger coordinator_epoch_guard, set the epoch to the largest epoch in mzcoord.compaction_bounds, and enable the trigger again.")));

	/*
	 * Waits for a publication of an older coordinator to commit (it holds
	 * the row FOR SHARE); that coordinator's next publication then finds
	 * this epoch and stops.
	 */
	if (!mzcoord_rec_epoch_take(MyProcPid, &my_epoch))
		elog(ERROR, "mzcoord: could not take a coordinator epoch");
	my_ext = ext;
	show_epoch(my_epoch);
	ereport(LOG,
			(errmsg("mzcoord coordinator: publishing under epoch " INT64_FORMAT,
					my_epoch)));
}

bool
mzcoord_authority_fence(void)
{
	int64		current;

	if (!ConditionalLockRelationOid(epoch_relid(), ShareRowExclusiveLock))
		return false;
	if (!mzcoord_rec_epoch_lock(&current))
		elog(ERROR, "mzcoord: could not read the coordinator epoch");
	if (current != my_epoch)
	{
		/*
		 * This process no longer holds an epoch; clear it unless the newer
		 * coordinator already shows its own.
		 */
		if (mzcoord_ctl != NULL)
		{
			uint64		shown = (uint64) my_epoch;

			(void) pg_atomic_compare_exchange_u64(&mzcoord_ctl->coordinator_epoch,
												  &shown, 0);
		}
		ereport(FATAL,
				(errcode(ERRCODE_ADMIN_SHUTDOWN),
				 errmsg("mzcoord coordinator: fenced: epoch " INT64_FORMAT " superseded by epoch " INT64_FORMAT ", exiting without publishing",
						my_epoch, current),
				 errdetail("Another coordinator started, or the epoch in mzcoord.coordinator_epoch was advanced.")));
	}
	/* Also after a reset cleared it while this coordinator kept its epoch. */
	show_epoch(my_epoch);
	return true;
}

int64
mzcoord_authority_epoch(void)
{
	return my_epoch;
}

/*
 * Set by the tick (tick.c) around its publication statement, which clamps
 * every bound to the requirements and leases itself, set-based; the guard
 * below then checks only what no writer may break.  Backend-local: no SQL
 * can set it.
 */
static bool publication_clamps = false;

void
mzcoord_authority_set_clamping(bool on)
{
	publication_clamps = on;
}

/*
 * The lowest time a read requirement or an active lease keeps on the
 * collection (mzcoord._protection_limit); false if none limits it.
 */
static bool
protection_limit(Datum global_id, int64 *limit)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {global_id};
	bool		isnull = true;
	int			rc;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "mzcoord: SPI_connect failed");
	rc = SPI_execute_with_args("SELECT mzcoord._protection_limit($1)", 1,
							   argtypes, values, NULL, false, 1);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "mzcoord: could not read the protection of a collection");
	*limit = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										 SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return !isnull;
}

/* Attribute numbers of global_id and bound in mzcoord.compaction_bounds. */
#define MZC_BOUND_GID_ATT 1
#define MZC_BOUND_BOUND_ATT 2

/*
 * The row trigger BEFORE UPDATE on mzcoord.compaction_bounds
 * (mzcoord._bounds_guard): a bound never decreases, whoever writes it
 * (NULL, the empty frontier, is final), and is never above a requirement or
 * an active lease on its collection.  The clamp runs after the row is
 * locked, with a fresh snapshot (SPI in a volatile call): a creation that
 * recorded a requirement while holding the row FOR SHARE has committed by
 * then, and its requirement is seen.  The coordinator's publication clamps
 * in its own statement, which reads after it locked its rows.
 */
PG_FUNCTION_INFO_V1(mzcoord_bounds_guard);

Datum
mzcoord_bounds_guard(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	HeapTuple	newtup;
	bool		old_null;
	bool		new_null;
	Datum		old_bound;
	Datum		new_bound;
	Datum		gid;
	bool		gid_null;
	int64		limit;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(td->tg_event) ||
		!TRIGGER_FIRED_BY_UPDATE(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._bounds_guard() must be a BEFORE UPDATE row trigger")));
	desc = td->tg_relation->rd_att;
	newtup = td->tg_newtuple;
	gid = heap_getattr(newtup, MZC_BOUND_GID_ATT, desc, &gid_null);
	if (!datumIsEqual(gid, heap_getattr(td->tg_trigtuple, MZC_BOUND_GID_ATT,
										desc, &old_null), false, -1) ||
		gid_null || old_null)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the collection of a compaction bound")));
	old_bound = heap_getattr(td->tg_trigtuple, MZC_BOUND_BOUND_ATT, desc, &old_null);
	new_bound = heap_getattr(newtup, MZC_BOUND_BOUND_ATT, desc, &new_null);
	if ((old_null && !new_null) ||
		(!old_null && !new_null && DatumGetInt64(new_bound) < DatumGetInt64(old_bound)))
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("compaction bound of collection %s cannot decrease from %s to %s",
						TextDatumGetCString(gid),
						old_null ? "{}" : psprintf(INT64_FORMAT, DatumGetInt64(old_bound)),
						new_null ? "{}" : psprintf(INT64_FORMAT, DatumGetInt64(new_bound))),
				 errdetail("History up to the bound may already be compacted.")));
	if (!publication_clamps && protection_limit(gid, &limit) &&
		(new_null || DatumGetInt64(new_bound) > limit))
	{
		int			col = MZC_BOUND_BOUND_ATT;
		bool		isnull = old_null;
		Datum		value = old_null ? (Datum) 0 :
			Int64GetDatum(Max(DatumGetInt64(old_bound), limit));

		newtup = heap_modify_tuple_by_cols(newtup, desc, 1, &col, &value, &isnull);
	}
	return PointerGetDatum(newtup);
}
