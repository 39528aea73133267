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

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"

#include "authority.h"
#include "controller.h"

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
	Oid			argtypes[1] = {INT4OID};
	Datum		values[1] = {Int32GetDatum(MyProcPid)};
	bool		isnull;

	if (my_ext == ext && my_epoch > 0)
		return;

	/*
	 * The table is guarded (src/sql/70_hardening.sql), but a superuser can
	 * disable the guard: say what is wrong and how to repair it rather than
	 * fail on the increment.
	 */
	if (SPI_execute("SELECT epoch FROM mzcoord.coordinator_epoch",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "mzcoord: could not read the coordinator epoch");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("mzcoord coordinator: the coordinator epoch is missing"),
				 errdetail("Table mzcoord.coordinator_epoch has no row; the coordinator cannot start without it."),
				 errhint("As a superuser, restore the row with an epoch no lower than any published: INSERT INTO mzcoord.coordinator_epoch (epoch) SELECT coalesce(max(epoch), 0) FROM mzcoord.compaction_bounds;")));
	if (DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
									SPI_tuptable->tupdesc, 1, &isnull)) >=
		MZC_EPOCH_MAX)
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
	if (SPI_execute_with_args("UPDATE mzcoord.coordinator_epoch"
							  "   SET epoch = epoch OPERATOR(pg_catalog.+) 1,"
							  "       started_at = pg_catalog.now(), pid = $1"
							  " RETURNING epoch",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_UPDATE_RETURNING ||
		SPI_processed != 1)
		elog(ERROR, "mzcoord: could not take a coordinator epoch");
	my_epoch = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										   SPI_tuptable->tupdesc, 1, &isnull));
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
	bool		isnull;

	if (!ConditionalLockRelationOid(epoch_relid(), ShareRowExclusiveLock))
		return false;
	if (SPI_execute("SELECT epoch FROM mzcoord.coordinator_epoch FOR SHARE",
					false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "mzcoord: could not read the coordinator epoch");
	current = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull));
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
