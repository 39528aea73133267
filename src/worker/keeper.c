/*-------------------------------------------------------------------------
 *
 * keeper.c
 *	  The standby's lease keeper: a background worker on a hot standby that
 *	  holds its readers' times on the primary, as hot_standby_feedback
 *	  holds their xmin.
 *
 * Transactions on the standby hold the times they select or read at
 * (controller/standby.c, until they end).  Once a second, and whenever a
 * new hold is taken, the keeper looks at them and keeps one lease on the
 * primary (mzcoord.create_lease, over a replication connection made from
 * primary_conninfo, with that role's privileges) at the least held time,
 * over the held relations:
 *
 * - nothing held: the lease is dropped;
 * - other relations, or an earlier time: the lease is made again;
 * - a later least time: the lease is advanced;
 * - otherwise it is renewed every third of mzcoord.standby_lease_ttl.
 *
 * The primary's compaction then stops at the lease.  A time the primary had
 * compacted past before the lease arrived cannot be held (create_lease
 * refuses it), and the standby's reads there are refused, as they are
 * without a keeper.  When the standby goes away the lease expires after its
 * time to live.  Each keeper process names its lease afresh; one left by a
 * keeper that failed expires the same way.  The keeper runs only during
 * recovery: it exits (for good) once the server is promoted or if it
 * starts on a primary.
 *
 * IDENTIFICATION
 *	  src/worker/keeper.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "common/pg_prng.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "frontier.h"
#include "keeper.h"
#include "settings.h"
#include "standby.h"

/* At most this many relations in a lease (create_lease's limit). */
#define MZC_KEEPER_RELS 32
/* Restart after a failure (a lost connection to the primary). */
#define MZC_KEEPER_RESTART_SECS 5

typedef struct MzcKeeper
{
	char		name[64];		/* the lease's name on the primary */
	WalReceiverConn *conn;
	bool		leased;			/* a lease exists on the primary */
	mzc_ts		at;				/* its time */
	int			nrels;
	Oid			rels[MZC_KEEPER_RELS];
	TimestampTz renewed_at;
	char	   *last_error;		/* logged once until it changes */
} MzcKeeper;

/* Run sql on the primary; false (logged once) if it failed. */
static bool
keeper_run(MzcKeeper *k, const char *sql)
{
	char	   *err = NULL;

	if (k->conn == NULL)
		k->conn = mzcoord_primary_connect("mzcoord standby lease keeper", &err);
	if (k->conn != NULL && mzcoord_primary_command(k->conn, sql, &err))
		return true;
	/* Start afresh next time: the connection may be what failed. */
	if (k->conn != NULL)
	{
		walrcv_disconnect(k->conn);
		k->conn = NULL;
	}
	if (k->last_error == NULL || strcmp(k->last_error, err) != 0)
	{
		ereport(WARNING,
				(errmsg("mzcoord standby lease keeper: could not keep lease \"%s\" on the primary",
						k->name),
				 errdetail("%s", err)));
		k->last_error = MemoryContextStrdup(TopMemoryContext, err);
	}
	return false;
}

/* Drop the lease; if that fails, it expires on its own. */
static void
keeper_drop(MzcKeeper *k)
{
	(void) keeper_run(k, psprintf("SELECT mzcoord.drop_lease(%s)",
								  quote_literal_cstr(k->name)));
	k->leased = false;
}

static void
keeper_create(MzcKeeper *k, mzc_ts at, const Oid *rels, int n)
{
	StringInfoData sql;

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT mzcoord.create_lease(%s, ARRAY[",
					 quote_literal_cstr(k->name));
	for (int i = 0; i < n; i++)
		appendStringInfo(&sql, "%s%u", i > 0 ? ", " : "", rels[i]);
	appendStringInfo(&sql, "]::pg_catalog.oid[]::pg_catalog.regclass[], "
					 INT64_FORMAT ", '%d seconds'::pg_catalog.interval)",
					 at, mzcoord_standby_lease_ttl);
	if (keeper_run(k, sql.data))
	{
		k->leased = true;
		k->at = at;
		k->nrels = n;
		memcpy(k->rels, rels, sizeof(Oid) * n);
		k->renewed_at = GetCurrentTimestamp();
	}
}

/* One look at the holds, and what the lease needs (in a transaction). */
static void
keeper_round(MzcKeeper *k)
{
	Oid			rels[MZC_KEEPER_RELS];
	int			n;
	mzc_ts		least = mzcoord_standby_held(rels, MZC_KEEPER_RELS, &n, MyLatch);
	TimestampTz now = GetCurrentTimestamp();

	if (least < 0 || n == 0)
	{
		if (k->leased)
			keeper_drop(k);
		return;
	}
	if (k->leased &&
		(least < k->at || n != k->nrels ||
		 memcmp(rels, k->rels, sizeof(Oid) * n) != 0))
		keeper_drop(k);
	if (!k->leased)
		keeper_create(k, least, rels, n);
	else if (least > k->at)
	{
		if (keeper_run(k, psprintf("SELECT mzcoord.advance_lease(%s, " INT64_FORMAT ")",
								   quote_literal_cstr(k->name), least)))
		{
			k->at = least;
			k->renewed_at = now;
		}
	}
	else if (TimestampDifferenceExceeds(k->renewed_at, now,
										mzcoord_standby_lease_ttl * 1000 / 3))
	{
		if (keeper_run(k, psprintf("SELECT mzcoord.renew_lease(%s)",
								   quote_literal_cstr(k->name))))
			k->renewed_at = now;
	}
}

void
mzcoord_keeper_main(Datum main_arg)
{
	MzcKeeper	k;
	MemoryContext round_cxt;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/* Nothing to keep on a primary, or after a promotion: exit for good. */
	if (!RecoveryInProgress())
		proc_exit(0);
	BackgroundWorkerInitializeConnection(mzcoord_database, NULL, 0);
	pgstat_report_appname("mzcoord standby lease keeper");

	memset(&k, 0, sizeof(k));
	snprintf(k.name, sizeof(k.name), "mzcoord standby %016llx",
			 (unsigned long long) pg_prng_uint64(&pg_global_prng_state));
	round_cxt = AllocSetContextCreate(TopMemoryContext, "mzcoord keeper",
									  ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		if (!RecoveryInProgress())
			proc_exit(0);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		MemoryContextSwitchTo(round_cxt);
		StartTransactionCommand();
		keeper_round(&k);
		CommitTransactionCommand();
		MemoryContextSwitchTo(TopMemoryContext);
		MemoryContextReset(round_cxt);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* From _PG_init while preloading: the keeper starts with hot standby. */
void
mzcoord_register_keeper(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = MZC_KEEPER_RESTART_SECS;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "mzcoord");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "mzcoord_keeper_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "mzcoord standby lease keeper");
	snprintf(worker.bgw_type, BGW_MAXLEN, "mzcoord standby lease keeper");
	RegisterBackgroundWorker(&worker);
}
