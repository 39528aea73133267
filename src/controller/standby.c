/*-------------------------------------------------------------------------
 *
 * standby.c
 *	  A collection's frontiers on a hot standby, from what recovery
 *	  replayed, instead of from the coordinator, which does not run there;
 *	  the reads of the data plane (read_at, changes) and timestamp
 *	  selection use them there.
 *
 * A standby holds a copy of everything a read needs: the history and the
 * relation, the catalog (each collection's compaction bound and durable
 * upper) and, from the oracle's WAL records, the table timeline's upper
 * (ceiling.c).  A read at `at` on a standby (storage/read.c,
 * storage/changes.c)
 *
 * 1. waits until `at` is below the replayed upper: every write at or
 *	  before `at` is then replayed (a table's through the timeline's record,
 *	  which follows every commit below it in WAL; a source's or a
 *	  materialized view's through its catalog upper, committed with the
 *	  updates);
 * 2. takes its snapshot, and only then
 * 3. reads the collection's compaction bound in that snapshot: a bound at
 *	  or below `at` means that no compaction the snapshot can see passed
 *	  `at` (the primary commits a bound before it compacts up to it, and a
 *	  standby's snapshots follow the commit order of WAL), so the read is
 *	  exact; a bound above `at` refuses the read (55000), exactly as the
 *	  primary refuses a read below a since.
 *
 * Nothing here holds a time beyond the reading statement: the snapshot
 * keeps what it needs (history rows a later compaction removes stay
 * visible to it, and with hot_standby_feedback the primary keeps them; a
 * conflict cancels the query rather than answer wrongly).
 *
 * Timestamp selection on a standby (selection.c) decides from the same
 * frontiers; a strict serializable one first asks the primary for its read
 * timestamp (mzcoord_standby_primary_read_ts).  The times a standby's
 * transactions read at are held per backend (standby holds, below) for the
 * lease keeper (worker/keeper.c), which holds them on the primary.
 *
 * LOCKING: the standby holds area has one spinlock, held only to copy a
 * slot in or out; a backend writes only its own slot, the keeper reads
 * all and sets the keeper latch pointer.  The connection to the primary
 * and the uppers the primary reported are backend-local.  The replayed
 * table upper is the oracle's (oracle.c, under its lock).
 *
 * IDENTIFICATION
 *	  src/controller/standby.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogrecovery.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "replication/walreceiver.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "acquire.h"
#include "errors.h"
#include "ids.h"
#include "oracle.h"
#include "rec_bounds.h"
#include "rec_collections.h"
#include "rec_epoch.h"
#include "rec_storage.h"
#include "settings.h"
#include "standby.h"
#include "support.h"

/* A records function that reads one int8 value (see mzcoord_rec_int8). */
typedef int (*MzcRecValueFn) (const char *gidtext, Snapshot snapshot,
							  bool *found, int64 *value, bool *isnull);

/*
 * Uppers the primary reported to this backend's strict serializable reads
 * (mzcoord_standby_primary_read_ts), for collections whose durable upper
 * lags their live one: an idle materialized view's upper advances in the
 * primary's memory only, until its next refresh.  Each holds from the
 * moment this standby has replayed the WAL position the primary reported
 * with it: every refresh below the upper had committed before it.  A few
 * entries, the oldest replaced first.
 */
#define MZC_PRIMARY_UPPERS 64

typedef struct MzcPrimaryUpper
{
	Oid			relid;
	mzc_frontier upper;
	XLogRecPtr	lsn;
} MzcPrimaryUpper;

static MzcPrimaryUpper primary_uppers[MZC_PRIMARY_UPPERS];
static int	nprimary_uppers = 0;
static int	next_primary_upper = 0;

static void
remember_primary_upper(Oid relid, mzc_frontier upper, XLogRecPtr lsn)
{
	int			i;

	for (i = 0; i < nprimary_uppers; i++)
		if (primary_uppers[i].relid == relid)
			break;
	if (i == nprimary_uppers)
	{
		if (nprimary_uppers < MZC_PRIMARY_UPPERS)
			i = nprimary_uppers++;
		else
		{
			i = next_primary_upper;
			next_primary_upper = (next_primary_upper + 1) % MZC_PRIMARY_UPPERS;
		}
	}
	primary_uppers[i].relid = relid;
	primary_uppers[i].upper = upper;
	primary_uppers[i].lsn = lsn;
}

/* upper, or the primary's report for relid once replayed, if later. */
static mzc_frontier
with_primary_upper(Oid relid, mzc_frontier upper)
{
	for (int i = 0; i < nprimary_uppers; i++)
		if (primary_uppers[i].relid == relid &&
			primary_uppers[i].lsn <= GetXLogReplayRecPtr(NULL) &&
			mzc_frontier_lt(upper, primary_uppers[i].upper))
			return primary_uppers[i].upper;
	return upper;
}

/*
 * Run the records function read (its one text parameter, the global id gid,
 * or none if gid is NULL) and return the value it read: *found false if
 * there is no row, *isnull if it is NULL.  In snapshot if given, else in a
 * fresh one.
 */
static int64
standby_value(MzcRecValueFn read, const char *gid, Snapshot snapshot,
			  bool *found, bool *isnull)
{
	int64		v;
	int			rc;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = read(gid, snapshot, found, &v, isnull);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "mzcoord: could not read the replayed catalog: %s",
			 SPI_result_code_string(rc));
	SPI_finish();
	return v;
}

/* The collection of relid on this standby: its global id and kind. */
bool
mzcoord_standby_collection(Oid relid, int64 *gid, MzcKind *kind)
{
	MzcRecStorage row;
	bool		found;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (!mzcoord_rec_storage_replayed(relid, &row, &found))
		elog(ERROR, "mzcoord: could not read the replayed catalog");
	if (found &&
		(!mzcoord_parse_gid(row.global_id, gid) ||
		 !mzcoord_kind_parse(row.kind, kind)))
		elog(ERROR, "invalid row in mzcoord.storage for relation %u", relid);
	SPI_finish();
	return found;
}

/*
 * The replayed upper of collection gid (of relid, of kind), in a fresh
 * snapshot.
 */
mzc_frontier
mzcoord_standby_upper(Oid relid, int64 gid, MzcKind kind)
{
	mzc_frontier upper = {false, 0};
	bool		found;
	bool		isnull;

	if (kind == MZC_KIND_TABLE)
	{
		int64		durable = standby_value(mzcoord_rec_replayed_timeline, NULL, NULL, &found,
											&isnull);

		upper.ts = mzcoord_oracle_replayed_upper();
		if (found && !isnull)
			upper.ts = Max(upper.ts, durable);
		return upper;
	}
	upper.ts = standby_value(mzcoord_rec_replayed_upper, mzcoord_gid_text(gid), NULL, &found,
							 &isnull);
	if (!found)
		mzcoord_report_not_registered(relid);
	upper.empty = isnull;		/* NULL: the empty upper, complete */
	if (isnull)
		upper.ts = 0;
	return with_primary_upper(relid, upper);
}

/*
 * The compaction bound of collection gid (of relid) in snapshot: no read
 * below it is exact there.
 */
mzc_frontier
mzcoord_standby_since(Oid relid, int64 gid, Snapshot snapshot)
{
	mzc_frontier since = {false, 0};
	bool		found;
	bool		isnull;

	since.ts = standby_value(mzcoord_rec_replayed_bound, mzcoord_gid_text(gid), snapshot,
							 &found, &isnull);
	if (!found)
		mzcoord_report_not_registered(relid);
	if (isnull)
		since.ts = 0;
	since.empty = isnull;
	return since;
}

/*
 * Wait until `at` is complete on this standby (cancellable; the standby
 * replays the primary's progress, nothing here can speed it up).
 */
void
mzcoord_standby_wait_complete(Oid relid, int64 gid, MzcKind kind, int64 at)
{
	/* As on the primary: a table's timeline never reaches such a time. */
	if (kind == MZC_KIND_TABLE)
		mzcoord_check_user_time(at, "timestamp");
	for (;;)
	{
		mzcoord_prepare_upper_wait();
		if (!mzc_frontier_le_ts(mzcoord_standby_upper(relid, gid, kind), at))
			break;
		CHECK_FOR_INTERRUPTS();
		mzcoord_upper_wait(100);
	}
	mzcoord_end_upper_wait();
}

/*
 * Refuse the read at `at` if the collection's compaction bound in snapshot
 * (the read's own) is above it.
 */
void
mzcoord_standby_check_read(Oid relid, int64 gid, int64 at, Snapshot snapshot)
{
	mzc_frontier since = mzcoord_standby_since(relid, gid, snapshot);

	if (!mzc_frontier_le_ts(since, at))
	{
		const char *name = mzcoord_qualified_relname(relid);

		mzcoord_report_since_violation(at, 1, &name, &since);
	}
}

/* ----------------------------------------------------------------
 * The primary's read timestamp, for a strict serializable read
 * ----------------------------------------------------------------
 */

/*
 * This backend's connection to the primary, kept for its later strict
 * reads (dropped after a failure, made again by the next one).
 */
static WalReceiverConn *primary_conn = NULL;

/*
 * A replication connection to the primary (primary_conninfo, to the
 * database mzcoord serves) under appname, allocated for the life of the
 * process; NULL with *err set if there is none.
 */
WalReceiverConn *
mzcoord_primary_connect(const char *appname, char **err)
{
	StringInfoData conninfo;
	WalReceiverConn *conn;
	MemoryContext old;

	if (PrimaryConnInfo == NULL || PrimaryConnInfo[0] == '\0')
	{
		*err = pstrdup("primary_conninfo is not set.");
		return NULL;
	}
	load_file("libpqwalreceiver", false);
	/* A later keyword wins: the database the coordinator serves. */
	initStringInfo(&conninfo);
	appendStringInfo(&conninfo, "%s dbname='", PrimaryConnInfo);
	for (const char *c = mzcoord_database; *c; c++)
	{
		if (*c == '\'' || *c == '\\')
			appendStringInfoChar(&conninfo, '\\');
		appendStringInfoChar(&conninfo, *c);
	}
	appendStringInfoChar(&conninfo, '\'');
	/* Kept across queries and transactions: it lives as long as we do. */
	old = MemoryContextSwitchTo(TopMemoryContext);
	conn = walrcv_connect(conninfo.data, true, appname, err);
	MemoryContextSwitchTo(old);
	pfree(conninfo.data);
	return conn;
}

/*
 * Run sql, a statement returning one column, on the primary; false with
 * *err set if it failed.  The result is not looked at.
 */
bool
mzcoord_primary_command(WalReceiverConn *conn, const char *sql, char **err)
{
	Oid			types[1] = {TEXTOID};
	WalRcvExecResult *res = walrcv_exec(conn, sql, 1, types);
	bool		ok = res->status == WALRCV_OK_TUPLES ||
		res->status == WALRCV_OK_COMMAND;

	if (!ok)
		*err = pstrdup(res->err ? res->err : "no result");
	walrcv_clear_result(res);
	return ok;
}

static void
primary_connect(void)
{
	char	   *err = NULL;

	primary_conn = mzcoord_primary_connect("mzcoord standby read", &err);
	/* The primary logs the upper at our read times at once. */
	if (primary_conn != NULL &&
		!mzcoord_primary_command(primary_conn,
								 "SELECT pg_catalog.set_config('mzcoord.log_read_upper', 'on', false)",
								 &err))
	{
		walrcv_disconnect(primary_conn);
		primary_conn = NULL;
	}
	if (primary_conn == NULL)
		ereport(ERROR,
				(PrimaryConnInfo == NULL || PrimaryConnInfo[0] == '\0' ?
				 errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE) :
				 errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("a strict serializable read on a standby could not connect to the primary"),
				 errdetail("%s", err ? err : "unknown error"),
				 errhint("Read with isolation \"serializable\", or check primary_conninfo.")));
}

/* Run sql on the primary; on failure drop the connection and raise. */
static WalRcvExecResult *
primary_exec(const char *sql, int ntypes, Oid *types)
{
	WalRcvExecResult *res = walrcv_exec(primary_conn, sql, ntypes, types);

	if (res->status != WALRCV_OK_TUPLES)
	{
		char	   *msg = pstrdup(res->err ? res->err : "no result");

		walrcv_clear_result(res);
		walrcv_disconnect(primary_conn);
		primary_conn = NULL;
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("a strict serializable read on a standby could not get the primary's read timestamp"),
				 errdetail("%s", msg)));
	}
	return res;
}

/*
 * After the primary's read timestamp: the live uppers of relids[0..n) on
 * the primary and its WAL insert position, read together once that time
 * was complete there, into primary_uppers.
 */
static void
primary_uppers_after(const Oid *relids, int n)
{
	Oid			types[3] = {OIDOID, INT8OID, PG_LSNOID};
	StringInfoData sql;
	WalRcvExecResult *res;
	TupleTableSlot *slot;

	initStringInfo(&sql);
	appendStringInfoString(&sql,
						   "SELECT f.relation::pg_catalog.oid, f.upper,"
						   " pg_catalog.pg_current_wal_insert_lsn()"
						   " FROM mzcoord.frontiers f WHERE f.relation::pg_catalog.oid"
						   " OPERATOR(pg_catalog.=) ANY (ARRAY[");
	for (int i = 0; i < n; i++)
		appendStringInfo(&sql, "%s%u", i > 0 ? ", " : "", relids[i]);
	appendStringInfoString(&sql, "]::pg_catalog.oid[])");
	res = primary_exec(sql.data, 3, types);
	slot = MakeSingleTupleTableSlot(res->tupledesc, &TTSOpsMinimalTuple);
	while (tuplestore_gettupleslot(res->tuplestore, true, false, slot))
	{
		bool		relnull;
		bool		uppernull;
		bool		lsnnull;
		Datum		rel = slot_getattr(slot, 1, &relnull);
		Datum		up = slot_getattr(slot, 2, &uppernull);
		Datum		lsn = slot_getattr(slot, 3, &lsnnull);
		mzc_frontier upper = {uppernull, uppernull ? 0 : DatumGetInt64(up)};

		if (!relnull && !lsnnull)
			remember_primary_upper(DatumGetObjectId(rel), upper,
								   DatumGetLSN(lsn));
	}
	ExecDropSingleTupleTableSlot(slot);
	walrcv_clear_result(res);
}

/*
 * The primary's strict serializable read timestamp for relids[0..n), which
 * are the same relations there (a physical standby has the primary's
 * OIDs): select_timestamp on the primary closes the timeline at every
 * write committed so far and waits until its time is complete there.  A
 * standby read at or after it, once replayed past it, sees every write
 * that committed before this call began.  Asked through
 * primary_conninfo (a replication connection to the database mzcoord
 * serves, with the privileges of that role).  The primary's live uppers of
 * the relations come along (primary_uppers_after): a materialized view
 * the primary advanced in memory only is then readable here up to there,
 * once this standby has replayed as far as the primary had written.
 */
mzc_ts
mzcoord_standby_primary_read_ts(const Oid *relids, int n)
{
	Oid			types[1] = {INT8OID};
	StringInfoData sql;
	WalRcvExecResult *res;
	TupleTableSlot *slot;
	bool		isnull = true;
	mzc_ts		ts = 0;

	if (primary_conn == NULL)
		primary_connect();
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT mzcoord.select_timestamp(ARRAY[");
	for (int i = 0; i < n; i++)
		appendStringInfo(&sql, "%s%u", i > 0 ? ", " : "", relids[i]);
	appendStringInfoString(&sql, "]::pg_catalog.oid[]::pg_catalog.regclass[], 'strict serializable')");
	res = primary_exec(sql.data, 1, types);
	slot = MakeSingleTupleTableSlot(res->tupledesc, &TTSOpsMinimalTuple);
	if (tuplestore_gettupleslot(res->tuplestore, true, false, slot))
	{
		Datum		d = slot_getattr(slot, 1, &isnull);

		if (!isnull)
			ts = DatumGetInt64(d);
	}
	ExecDropSingleTupleTableSlot(slot);
	walrcv_clear_result(res);
	if (isnull)
		elog(ERROR, "mzcoord: the primary returned no read timestamp");
	primary_uppers_after(relids, n);
	return ts;
}

/* ----------------------------------------------------------------
 * Standby holds: the times this standby's transactions read at
 * ----------------------------------------------------------------
 */

/*
 * Each backend's hold: the least time its transaction selected or read at
 * on this standby, and the relations (up to MZC_STANDBY_HOLD_RELS; past
 * that the hold covers the first ones only, and the rest are as
 * unprotected as without a hold).  The lease keeper (worker/keeper.c)
 * keeps one lease on the primary at the least held time over all of them.
 *
 * LOCKING: the area's spinlock guards every slot; a backend writes only
 * its own, the keeper only reads.  Nothing but copying happens under it.
 */
#define MZC_STANDBY_HOLD_RELS 16

typedef struct MzcStandbyHold
{
	mzc_ts		ts;				/* -1: none */
	int			nrels;
	Oid			relids[MZC_STANDBY_HOLD_RELS];
} MzcStandbyHold;

typedef struct MzcStandbyHolds
{
	slock_t		mutex;
	Latch	   *keeper;			/* set when a hold is taken */
	int			nslots;
	MzcStandbyHold slots[FLEXIBLE_ARRAY_MEMBER];
} MzcStandbyHolds;

static MzcStandbyHolds *standby_holds = NULL;
static bool my_standby_hold = false;

Size
mzcoord_standby_shmem_size(void)
{
	return add_size(offsetof(MzcStandbyHolds, slots),
					mul_size(MaxBackends + 1, sizeof(MzcStandbyHold)));
}

void
mzcoord_standby_shmem_init(void)
{
	bool		found;

	standby_holds = ShmemInitStruct("mzcoord standby holds",
									mzcoord_standby_shmem_size(), &found);
	if (!found)
	{
		SpinLockInit(&standby_holds->mutex);
		standby_holds->keeper = NULL;
		standby_holds->nslots = MaxBackends + 1;
		for (int i = 0; i < standby_holds->nslots; i++)
		{
			standby_holds->slots[i].ts = -1;
			standby_holds->slots[i].nrels = 0;
		}
	}
}

/*
 * Hold relids[0..n) at ts on this standby until the transaction ends: the
 * lease keeper asks the primary to keep their history from there.  Joins
 * an earlier hold of the transaction (the least time, the union).
 */
void
mzcoord_standby_hold(const Oid *relids, int n, mzc_ts ts)
{
	MzcStandbyHold *h = &standby_holds->slots[MyBackendId];
	Latch	   *keeper;

	if (n == 0)
		return;
	SpinLockAcquire(&standby_holds->mutex);
	if (h->ts < 0 || ts < h->ts)
		h->ts = ts;
	for (int i = 0; i < n; i++)
	{
		bool		have = false;

		for (int j = 0; j < h->nrels && !have; j++)
			have = h->relids[j] == relids[i];
		if (!have && h->nrels < MZC_STANDBY_HOLD_RELS)
			h->relids[h->nrels++] = relids[i];
	}
	keeper = standby_holds->keeper;
	SpinLockRelease(&standby_holds->mutex);
	my_standby_hold = true;
	if (keeper != NULL)
		SetLatch(keeper);
}

/* At the end of the transaction: its standby hold goes. */
void
mzcoord_standby_release(void)
{
	MzcStandbyHold *h;

	if (!my_standby_hold)
		return;
	h = &standby_holds->slots[MyBackendId];
	SpinLockAcquire(&standby_holds->mutex);
	h->ts = -1;
	h->nrels = 0;
	SpinLockRelease(&standby_holds->mutex);
	my_standby_hold = false;
}

/*
 * For the lease keeper: the least held time (-1 if nothing is held) and the
 * held relations, sorted, into relids (room for max), their number into
 * *n.  latch becomes the keeper's, set at each new hold.
 */
mzc_ts
mzcoord_standby_held(Oid *relids, int max, int *n, Latch *latch)
{
	mzc_ts		least = -1;

	*n = 0;
	SpinLockAcquire(&standby_holds->mutex);
	standby_holds->keeper = latch;
	for (int i = 0; i < standby_holds->nslots; i++)
	{
		MzcStandbyHold *h = &standby_holds->slots[i];

		if (h->ts < 0)
			continue;
		if (least < 0 || h->ts < least)
			least = h->ts;
		for (int r = 0; r < h->nrels; r++)
		{
			bool		have = false;

			for (int j = 0; j < *n && !have; j++)
				have = relids[j] == h->relids[r];
			if (!have && *n < max)
				relids[(*n)++] = h->relids[r];
		}
	}
	SpinLockRelease(&standby_holds->mutex);
	qsort(relids, *n, sizeof(Oid), oid_cmp);
	return least;
}
