/*-------------------------------------------------------------------------
 *
 * oracle.c
 *	  The timestamp oracle and the table timeline.
 *
 * write_ts() hands out write timestamps at least the wall clock (milliseconds
 * since the Unix epoch) and greater than every timestamp anyone may have
 * read at.  A transaction that writes a registered table takes its write
 * timestamp at its first write and is "in flight" until it ends.
 *
 * The read timestamp read_ts is the largest time at which every write is
 * complete and no write will ever come: a reader may read there.  It is
 * closed lazily, whenever someone observes it (a read choosing its time, a
 * read waiting for a time, the frontiers, the coordinator's tick):
 *
 *	 read_ts = (least in-flight write ts) - 1, or the largest write timestamp
 *			   handed out when nothing is in flight; it never goes back.
 *
 * A new write gets max(now, read_ts + 1, last_write_ts + 1): greater than
 * every timestamp handed out before.  At more than one write per millisecond
 * that runs the oracle ahead of the clock, and every since (a lag behind the
 * upper) would then stall after the burst until the clock caught up.  So
 * once the oracle is MZC_MAX_AHEAD_MS ahead of the clock, a new write joins
 * the latest write timestamp instead, as long as nobody can have read there
 * (it is above read_ts): a group commit, as Materialize batches table writes
 * under one oracle timestamp.  Write timestamps never go back, so a write can
 * never retract a row inserted at a later time.
 *
 * All registered tables share one upper, read_ts + 1 (Materialize's txn-wal
 * upper), so a committed write at t is readable at every time >= t once the
 * upper has passed t, no upper ever passes a write still in flight, and a
 * strict serializable read that starts after a write committed observes (and
 * closes) a read timestamp at or after it.  The tick also closes idle time
 * up to the wall clock (an empty write at now).
 *
 * LOCKING: the oracle state below is protected by the oracle lock (second
 * lock of the "mzcoord" tranche).  Lock order: the controller lock, when
 * needed, is always taken before the oracle lock.  Nothing here can fail
 * while the lock is held.  Waiters for the upper sleep on upper_cv, which is
 * broadcast whenever read_ts or a source upper advances.
 *
 * IDENTIFICATION
 *	  src/oracle.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/backendid.h"
#include "storage/condition_variable.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/sinvaladt.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "controller.h"
#include "mzcoord.h"

typedef struct MzcOracle
{
	LWLock	   *lock;
	ConditionVariable upper_cv;
	mzc_ts		last_write_ts;	/* largest write timestamp handed out */
	mzc_ts		read_ts;		/* closed: complete, and no write will come */
	int			ninflight;
	int			nslots;			/* MaxBackends + 1, indexed by backend id */
	VirtualTransactionId *writers;	/* nslots entries: who is in flight */
	mzc_ts		inflight[FLEXIBLE_ARRAY_MEMBER];	/* -1: no write in flight */
} MzcOracle;

/*
 * How far ahead of the wall clock write timestamps may run before new
 * writes join the latest open write timestamp (group commit).
 */
#define MZC_MAX_AHEAD_MS 10

static MzcOracle *oracle = NULL;

/* This backend's write timestamp in the current transaction, -1 if none. */
static mzc_ts my_write_ts = -1;

Size
mzcoord_oracle_shmem_size(void)
{
	Size		size = MAXALIGN(add_size(offsetof(MzcOracle, inflight),
										 mul_size(MaxBackends + 1, sizeof(mzc_ts))));

	return add_size(size, mul_size(MaxBackends + 1, sizeof(VirtualTransactionId)));
}

void
mzcoord_oracle_shmem_init(LWLock *lock, bool found)
{
	oracle = ShmemInitStruct("mzcoord oracle", mzcoord_oracle_shmem_size(),
							 &found);
	if (!found)
	{
		oracle->lock = lock;
		ConditionVariableInit(&oracle->upper_cv);
		oracle->last_write_ts = 0;
		oracle->read_ts = 0;
		oracle->ninflight = 0;
		oracle->nslots = MaxBackends + 1;
		oracle->writers = (VirtualTransactionId *)
			((char *) oracle + MAXALIGN(offsetof(MzcOracle, inflight) +
										sizeof(mzc_ts) * oracle->nslots));
		for (int i = 0; i < oracle->nslots; i++)
		{
			oracle->inflight[i] = -1;
			SetInvalidVirtualTransactionId(oracle->writers[i]);
		}
	}
}

/* The wall clock in milliseconds since the Unix epoch. */
mzc_ts
mzcoord_now_ms(void)
{
	TimestampTz now = GetCurrentTimestamp();

	/* TimestampTz counts microseconds since 2000-01-01. */
	return (mzc_ts) (now / 1000) +
		(mzc_ts) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
}

/*
 * The read timestamp observation would close now: the least in-flight write
 * timestamp - 1, or the last write timestamp when nothing is in flight, or
 * the current one if that is later.  Caller holds the lock (either mode).
 */
static mzc_ts
mzc_oracle_closable(void)
{
	mzc_ts		candidate = oracle->last_write_ts;

	if (oracle->ninflight > 0)
	{
		for (int i = 0; i < oracle->nslots; i++)
			if (oracle->inflight[i] >= 0 && oracle->inflight[i] - 1 < candidate)
				candidate = oracle->inflight[i] - 1;
	}
	return Max(candidate, oracle->read_ts);
}

/*
 * Observe, and so close, the read timestamp.  Shared lock when nothing is to
 * close (the common case of reads without writes in between).
 */
static mzc_ts
mzc_oracle_close(void)
{
	mzc_ts		ts;

	LWLockAcquire(oracle->lock, LW_SHARED);
	ts = mzc_oracle_closable();
	if (ts == oracle->read_ts)
	{
		LWLockRelease(oracle->lock);
		return ts;
	}
	LWLockRelease(oracle->lock);

	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	ts = mzc_oracle_closable();
	oracle->read_ts = ts;
	LWLockRelease(oracle->lock);
	return ts;
}

/* The next write timestamp; caller holds the lock exclusively. */
static mzc_ts
mzc_oracle_next_write(mzc_ts now)
{
	mzc_ts		w = Max(now, oracle->read_ts + 1);

	if (oracle->last_write_ts >= now + MZC_MAX_AHEAD_MS &&
		oracle->last_write_ts > oracle->read_ts)
		w = Max(w, oracle->last_write_ts);	/* join the open group */
	else
		w = Max(w, oracle->last_write_ts + 1);
	oracle->last_write_ts = w;
	return w;
}

/*
 * The current transaction's write timestamp: allocated at the first call and
 * in flight until the transaction ends (mzcoord_oracle_end_write).
 */
mzc_ts
mzcoord_write_ts(void)
{
	mzc_ts		now;
	VirtualTransactionId vxid;

	if (my_write_ts >= 0)
		return my_write_ts;

	Assert(MyBackendId > 0 && MyBackendId < oracle->nslots);
	now = mzcoord_now_ms();
	GET_VXID_FROM_PGPROC(vxid, *MyProc);

	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	my_write_ts = mzc_oracle_next_write(now);
	oracle->inflight[MyBackendId] = my_write_ts;
	oracle->writers[MyBackendId] = vxid;
	oracle->ninflight++;
	LWLockRelease(oracle->lock);

	return my_write_ts;
}

/*
 * The largest write timestamp handed out so far (0 if none since shared
 * memory was initialised).  A writer whose timestamp is below it knows that
 * some transaction may have written after it started writing.
 */
mzc_ts
mzcoord_oracle_last_write_ts(void)
{
	mzc_ts		ts;

	LWLockAcquire(oracle->lock, LW_SHARED);
	ts = oracle->last_write_ts;
	LWLockRelease(oracle->lock);
	return ts;
}

/*
 * Move the current transaction's write timestamp forward, to at least every
 * write timestamp handed out so far (joining the latest if nobody can have
 * read there yet) and beyond every read timestamp; returns it.  The caller
 * (the data plane) must move every update it recorded at the old timestamp
 * before it commits.  The transaction stays in flight throughout, now at the
 * new timestamp, so the upper can pass the old one: nothing committed there.
 */
mzc_ts
mzcoord_rebase_write_ts(void)
{
	mzc_ts		now = mzcoord_now_ms();

	Assert(my_write_ts >= 0);
	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	my_write_ts = mzc_oracle_next_write(now);
	oracle->inflight[MyBackendId] = my_write_ts;
	LWLockRelease(oracle->lock);

	/* The old timestamp may be closable now. */
	ConditionVariableBroadcast(&oracle->upper_cv);
	return my_write_ts;
}

/* Does the current transaction hold a write timestamp? */
bool
mzcoord_has_write_ts(void)
{
	return my_write_ts >= 0;
}

/*
 * End of the current transaction (commit or abort): the write is no longer in
 * flight.  Called from the transaction callbacks; cannot fail.
 */
void
mzcoord_oracle_end_write(void)
{
	if (my_write_ts < 0 || oracle == NULL)
	{
		my_write_ts = -1;
		return;
	}

	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	if (oracle->inflight[MyBackendId] >= 0)
	{
		oracle->inflight[MyBackendId] = -1;
		SetInvalidVirtualTransactionId(oracle->writers[MyBackendId]);
		oracle->ninflight--;
	}
	LWLockRelease(oracle->lock);

	/*
	 * The read timestamp is closed lazily, by whoever reads next (closing it
	 * here would give every later write a new timestamp); wake the waiters.
	 */
	my_write_ts = -1;
	ConditionVariableBroadcast(&oracle->upper_cv);
}

/*
 * The tick: an empty write at the current time moves idle time forward, and
 * closes the read timestamp.  Returns the table timeline upper afterwards.
 */
mzc_ts
mzcoord_oracle_tick(void)
{
	mzc_ts		now = mzcoord_now_ms();
	mzc_ts		upper;

	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	if (oracle->ninflight == 0)
		(void) mzc_oracle_next_write(now);
	oracle->read_ts = mzc_oracle_closable();
	upper = oracle->read_ts + 1;
	LWLockRelease(oracle->lock);

	ConditionVariableBroadcast(&oracle->upper_cv);
	return upper;
}

/* The oracle's read timestamp (observing it closes it). */
mzc_ts
mzcoord_oracle_read_ts(void)
{
	return mzc_oracle_close();
}

/* The shared upper of all registered tables. */
mzc_ts
mzcoord_table_upper(void)
{
	return mzcoord_oracle_read_ts() + 1;
}

/*
 * Bootstrap: time never goes backwards across a restart, even if the clock
 * does: start at the largest durable upper if it is ahead of the clock.
 */
void
mzcoord_oracle_bootstrap(mzc_ts max_durable_upper)
{
	mzc_ts		now = mzcoord_now_ms();
	mzc_ts		start = Max(now, max_durable_upper);

	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	if (oracle->ninflight == 0)
		(void) mzc_oracle_next_write(start);
	oracle->read_ts = mzc_oracle_closable();
	LWLockRelease(oracle->lock);
	ConditionVariableBroadcast(&oracle->upper_cv);
}

/*
 * Wait until the table timeline has passed ts (ts < upper).  While a write
 * at or before ts is in flight, wait on that writer's virtual transaction
 * lock: a heavyweight lock wait, visible in pg_locks, served by the deadlock
 * detector, and cancellable.  Otherwise only time has to pass: sleep on the
 * upper condition variable until a tick or a commit advances the upper.
 */
void
mzcoord_wait_for_table_upper(mzc_ts ts)
{
	/* Our own write completes only when we commit: we would wait forever. */
	if (my_write_ts >= 0 && my_write_ts <= ts)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot wait for timestamp " INT64_FORMAT " to complete in a transaction that writes at " INT64_FORMAT,
						(int64) ts, (int64) my_write_ts),
				 errdetail("Registered tables are complete at a time only once every write at or before it committed."),
				 errhint("Read at an earlier time, or read after this transaction commits.")));

	for (;;)
	{
		VirtualTransactionId writer;
		mzc_ts		least = -1;

		SetInvalidVirtualTransactionId(writer);
		ConditionVariablePrepareToSleep(&oracle->upper_cv);
		if (mzc_oracle_close() >= ts)
			break;
		LWLockAcquire(oracle->lock, LW_SHARED);
		for (int i = 0; i < oracle->nslots; i++)
			if (oracle->inflight[i] >= 0 && oracle->inflight[i] <= ts &&
				(least < 0 || oracle->inflight[i] < least))
			{
				least = oracle->inflight[i];
				writer = oracle->writers[i];
			}
		LWLockRelease(oracle->lock);

		if (VirtualTransactionIdIsValid(writer))
		{
			ConditionVariableCancelSleep();
			(void) VirtualXactLock(writer, true);
			/* The writer has ended; look again. */
			continue;
		}
		(void) ConditionVariableTimedSleep(&oracle->upper_cv, 1000,
										   PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
}

/* Wake everyone waiting for an upper to advance (sources advance theirs). */
void
mzcoord_upper_advanced(void)
{
	ConditionVariableBroadcast(&oracle->upper_cv);
}

/*
 * Sleep until woken by an upper advance or until timeout_ms passed; the
 * caller re-checks its condition.  Interrupts (cancel, statement_timeout) are
 * served while sleeping.  The caller must have called
 * mzcoord_prepare_upper_wait() before checking its condition the first time.
 */
void
mzcoord_prepare_upper_wait(void)
{
	ConditionVariablePrepareToSleep(&oracle->upper_cv);
}

void
mzcoord_upper_wait(long timeout_ms)
{
	(void) ConditionVariableTimedSleep(&oracle->upper_cv, timeout_ms,
									   PG_WAIT_EXTENSION);
}

void
mzcoord_end_upper_wait(void)
{
	ConditionVariableCancelSleep();
}

PG_FUNCTION_INFO_V1(mzcoord_writes_in_flight);

/*
 * SQL: mzcoord.writes_in_flight(): the writes that hold the table
 * timeline's upper back, with their backend and transaction.
 */
Datum
mzcoord_writes_in_flight(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	mzc_ts	   *ts;
	VirtualTransactionId *vx;

	mzcoord_require_shmem();
	InitMaterializedSRF(fcinfo, 0);
	ts = palloc(sizeof(mzc_ts) * oracle->nslots);
	vx = palloc(sizeof(VirtualTransactionId) * oracle->nslots);

	LWLockAcquire(oracle->lock, LW_SHARED);
	for (int i = 0; i < oracle->nslots; i++)
		if (oracle->inflight[i] >= 0)
		{
			ts[n] = oracle->inflight[i];
			vx[n] = oracle->writers[i];
			n++;
		}
	LWLockRelease(oracle->lock);

	for (int i = 0; i < n; i++)
	{
		Datum		v[3];
		bool		nl[3] = {false, false, false};
		PGPROC	   *proc = BackendIdGetProc(vx[i].backendId);

		v[0] = Int64GetDatum(ts[i]);
		if (proc != NULL)
			v[1] = Int32GetDatum(proc->pid);
		else
			nl[1] = true;
		v[2] = CStringGetTextDatum(psprintf("%d/%u", vx[i].backendId,
											vx[i].localTransactionId));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nl);
	}
	return (Datum) 0;
}
