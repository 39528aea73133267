/*-------------------------------------------------------------------------
 *
 * oracle.c
 *	  The timestamp oracle and the table timeline.
 *
 * Every registered table shares one timeline (Materialize's txn-wal upper).
 * A table write's timestamp is fixed when its transaction commits, as
 * Materialize assigns table writes their timestamp in a group commit:
 *
 * - At its first write a transaction takes a provisional timestamp W (the
 *   one it will most likely commit at) and records its updates there.  It
 *   is "open": it holds nothing back, so an idle or long writer costs nobody
 *   else anything.
 * - At pre-commit it is "sealed" at its commit timestamp C: W itself when W
 *   is still above every time anyone may have read at (closed_ts) and not
 *   below its floor, otherwise the next free timestamp; the data plane then
 *   moves its own updates (and only those) from W to C.  From the seal until
 *   the transaction has ended, the upper cannot pass C.
 *
 * The floor is what a transaction observed: a READ COMMITTED statement, a
 * TRUNCATE or an ALTER TABLE that reads with a fresh snapshot sees every
 * transaction sealed before it, so it must commit at or after the largest
 * sealed timestamp of that moment (it may retract rows they inserted).
 *
 * The closed timestamp closed_ts is the largest time at which no new write
 * can commit; the read timestamp (complete) is
 *
 *	 read_ts = min(closed_ts, least sealed commit timestamp - 1)
 *
 * and all registered tables share the upper read_ts + 1.  A strict
 * serializable read closes the timeline at or after every write sealed
 * before it started (max_sealed), then waits only for the sealed writers at
 * or below its time to finish committing: a read that starts after a commit
 * returned sees it, and never waits for an open writer.  The coordinator's
 * tick closes idle time up to the wall clock, but not past an open writer
 * while it records a bulk write (it would only have to move it all again).  Several transactions may
 * share one commit timestamp (a group commit), so write bursts do not run
 * the oracle ahead of the clock.
 *
 * Durability.  Nothing is handed out above a durable ceiling: before a
 * timestamp above it is used, the ceiling is raised (a WAL record and a
 * small file, ceiling.c, as sequences log values ahead), and the tick
 * raises it well before it is reached, so it costs one write per interval,
 * not one per transaction.  After any restart the timeline starts above the
 * ceiling: no timestamp handed out or read before a crash can be handed out
 * again; a standby replays the records (ceiling_replayed), so the same
 * holds after a failover.  From where a bootstrap resumed, ahead of the
 * clock, the timeline advances at half the clock's rate until the clock
 * catches up (timeline_now_locked).
 *
 * Only registered tables form this timeline: sources and scheduled
 * refreshes carry their own times and never move the oracle.
 *
 * LOCKING: the oracle state below is protected by the oracle lock (second
 * lock of the "mzcoord" tranche); the durable ceiling (durable_ceiling,
 * durable_lsn, the record and the file) by the ceiling lock (third), which
 * is taken without the oracle lock held and is never held while waiting for
 * the oracle lock in exclusive mode by anyone else but its holder, nor
 * while waiting for a synchronous standby.  logged_upper is an atomic,
 * only ever raised.  Lock order: controller lock, ceiling lock, oracle
 * lock.  Nothing that can fail runs under the oracle lock.  Waiters for the
 * upper sleep on upper_cv, broadcast whenever read_ts or a source upper
 * advances.
 *
 * IDENTIFICATION
 *	  src/timeline/oracle.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>
#include <sys/stat.h>

#include "access/xlog.h"
#include "common/file_perm.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "port/pg_crc32c.h"
#include "storage/backendid.h"
#include "storage/condition_variable.h"
#include "storage/fd.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/sinvaladt.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "ceiling.h"
#include "extension.h"
#include "oracle.h"
#include "settings.h"
#include "shmem.h"

/* A backend's write in the current transaction. */
typedef enum MzcWriteState
{
	MZC_WRITE_NONE = 0,
	MZC_WRITE_OPEN,				/* provisional timestamp, holds nothing */
	MZC_WRITE_SEALED			/* committing at ts: holds the upper below it */
} MzcWriteState;

typedef struct MzcWriteSlot
{
	MzcWriteState state;
	mzc_ts		ts;
	bool		bulk;			/* recording a bulk write right now */
} MzcWriteSlot;

typedef struct MzcOracle
{
	LWLock	   *lock;
	LWLock	   *ceiling_lock;
	ConditionVariable upper_cv;
	mzc_ts		closed_ts;		/* no write commits at or below it */
	mzc_ts		max_sealed;		/* largest commit timestamp taken */
	mzc_ts		ceiling;		/* durable: nothing is used above it */
	mzc_ts		resume_ts;		/* where the last bootstrap resumed */
	mzc_ts		resume_wall;	/* the wall clock at that moment */
	mzc_ts		replayed_upper; /* standby: the table upper replayed */
	pg_atomic_uint64 logged_upper;	/* the largest table upper logged
									 * (lock-free) */
	/* Under the ceiling lock, not the oracle lock: */
	mzc_ts		durable_ceiling;	/* the largest ceiling written */
	XLogRecPtr	durable_lsn;	/* the end of its WAL record */
	int			nsealed;
	int			nopen;
	int			nbulk;			/* open writers recording a bulk write */
	int			nslots;			/* MaxBackends + 1, indexed by backend id */
	VirtualTransactionId *writers;	/* nslots entries: whose write it is */
	MzcWriteSlot slots[FLEXIBLE_ARRAY_MEMBER];
} MzcOracle;

/*
 * The ceiling is raised to MZC_CEILING_WINDOW_MS beyond what is needed, and
 * the tick raises it once less than half of that is left, so writers almost
 * never wait for the file.  After a crash the timeline resumes at most this
 * far ahead of the clock.
 */
#define MZC_CEILING_WINDOW_MS 2000
static MzcOracle *oracle = NULL;

static mzc_ts timeline_now_locked(void);
static void log_upper(mzc_ts upper);

/* This backend's write in the current transaction (mirrors its slot). */
static MzcWriteState my_state = MZC_WRITE_NONE;
static mzc_ts my_write_ts = -1;

/* The least commit timestamp the transaction's observations allow. */
static mzc_ts my_floor = 0;

/* Sealed before pre-commit, by the catalog (a registration time). */
static bool my_sealed_early = false;

/* The commit timestamp of this session's last committed write, -1 if none. */
static mzc_ts my_last_commit_ts = -1;

Size
mzcoord_oracle_shmem_size(void)
{
	Size		size = MAXALIGN(add_size(offsetof(MzcOracle, slots),
										 mul_size(MaxBackends + 1, sizeof(MzcWriteSlot))));

	return add_size(size, mul_size(MaxBackends + 1, sizeof(VirtualTransactionId)));
}

/* ----------------------------------------------------------------
 * The durable ceiling
 * ----------------------------------------------------------------
 */

/*
 * Make the ceiling at least need (plus the window).  Called without the
 * oracle lock; the caller re-checks under it afterwards.  The new ceiling
 * is written (WAL and file) under the ceiling lock, then, without it,
 * replicated to synchronous standbys, and only then used: a waiting
 * standby never stalls a concurrent raiser uninterruptibly, and a second
 * raiser that finds the ceiling already written waits for the same record.
 */
static void
ceiling_raise(mzc_ts need)
{
	mzc_ts		current;
	mzc_ts		target;
	XLogRecPtr	lsn;

	LWLockAcquire(oracle->ceiling_lock, LW_EXCLUSIVE);
	LWLockAcquire(oracle->lock, LW_SHARED);
	current = oracle->ceiling;
	target = Max(need, timeline_now_locked());
	LWLockRelease(oracle->lock);
	if (current >= need)
	{
		LWLockRelease(oracle->ceiling_lock);
		return;
	}
	if (oracle->durable_ceiling < need)
	{
		target = target > PG_INT64_MAX - MZC_CEILING_WINDOW_MS ?
			PG_INT64_MAX : target + MZC_CEILING_WINDOW_MS;
		oracle->durable_lsn = mzcoord_ceiling_write(target);
		oracle->durable_ceiling = target;
	}
	target = oracle->durable_ceiling;
	lsn = oracle->durable_lsn;
	LWLockRelease(oracle->ceiling_lock);

	mzcoord_ceiling_replicate(lsn);

	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	oracle->ceiling = Max(oracle->ceiling, target);
	LWLockRelease(oracle->lock);
}

/*
 * Recovery replays a ceiling the primary raised (on a standby, or after a
 * crash): it is kept in this server's file, and everything up to it counts
 * as handed out, so a promoted standby resumes above it.  Runs in the
 * startup process.
 */
static void
ceiling_replayed(mzc_ts ceiling)
{
	LWLockAcquire(oracle->ceiling_lock, LW_EXCLUSIVE);
	if (ceiling > oracle->durable_ceiling)
	{
		mzcoord_ceiling_store(ceiling);
		oracle->durable_ceiling = ceiling;
	}
	LWLockRelease(oracle->ceiling_lock);

	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	oracle->ceiling = Max(oracle->ceiling, ceiling);
	oracle->closed_ts = Max(oracle->closed_ts, ceiling);
	oracle->max_sealed = Max(oracle->max_sealed, ceiling);
	LWLockRelease(oracle->lock);
	ConditionVariableBroadcast(&oracle->upper_cv);
}

/*
 * Log the table upper for standbys (ceiling.c) if it is above every one
 * logged so far, only where WAL can reach a standby.  The caller saw every
 * commit below upper end, so their commit records precede this one.  The
 * tick logs each advance.  In a session with mzcoord.log_read_upper (the
 * connection a standby's strict reads use) a strict read, and a read that
 * waited for the timeline, log their own, so that the standby need not
 * wait for the next tick to answer at the time the primary gave it; other
 * sessions' reads write no WAL.  Not flushed: the next commit or the WAL
 * writer (wal_writer_delay) sends it on.
 */
static void
log_upper(mzc_ts upper)
{
	uint64		cur;

	if (!XLogStandbyInfoActive() || RecoveryInProgress())
		return;
	cur = pg_atomic_read_u64(&oracle->logged_upper);
	while ((mzc_ts) cur < upper)
	{
		if (pg_atomic_compare_exchange_u64(&oracle->logged_upper, &cur,
										   (uint64) upper))
		{
			mzcoord_ceiling_log_upper(upper);
			return;
		}
	}
}

/*
 * Recovery replays the table upper the primary's tick logged: every commit
 * below it is replayed.  Wakes standby readers waiting for it.
 */
static void
upper_replayed(mzc_ts upper)
{
	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	oracle->replayed_upper = Max(oracle->replayed_upper, upper);
	LWLockRelease(oracle->lock);
	ConditionVariableBroadcast(&oracle->upper_cv);
}

/* From _PG_init while preloading: the oracle's WAL records are replayed. */
void
mzcoord_oracle_register_wal(void)
{
	mzcoord_ceiling_register(ceiling_replayed, upper_replayed);
}

/*
 * On a standby: the table timeline's upper as far as replayed (0 before the
 * first record).
 */
mzc_ts
mzcoord_oracle_replayed_upper(void)
{
	mzc_ts		upper;

	LWLockAcquire(oracle->lock, LW_SHARED);
	upper = oracle->replayed_upper;
	LWLockRelease(oracle->lock);
	return upper;
}

void
mzcoord_oracle_shmem_init(LWLock *lock, LWLock *ceiling_lock, bool found)
{
	oracle = ShmemInitStruct("mzcoord oracle", mzcoord_oracle_shmem_size(),
							 &found);
	if (!found)
	{
		mzc_ts		ceiling = mzcoord_ceiling_load();

		oracle->lock = lock;
		oracle->ceiling_lock = ceiling_lock;
		ConditionVariableInit(&oracle->upper_cv);

		/*
		 * Anything up to the ceiling may have been handed out or read before
		 * a crash: the new timeline starts above it.
		 */
		oracle->ceiling = ceiling;
		oracle->closed_ts = ceiling;
		oracle->max_sealed = ceiling;
		oracle->resume_ts = 0;
		oracle->resume_wall = 0;
		oracle->replayed_upper = 0;
		pg_atomic_init_u64(&oracle->logged_upper, 0);
		oracle->durable_ceiling = ceiling;
		oracle->durable_lsn = InvalidXLogRecPtr;
		oracle->nsealed = 0;
		oracle->nopen = 0;
		oracle->nbulk = 0;
		oracle->nslots = MaxBackends + 1;
		oracle->writers = (VirtualTransactionId *)
			((char *) oracle + MAXALIGN(offsetof(MzcOracle, slots) +
										sizeof(MzcWriteSlot) * oracle->nslots));
		for (int i = 0; i < oracle->nslots; i++)
		{
			oracle->slots[i].state = MZC_WRITE_NONE;
			oracle->slots[i].ts = -1;
			oracle->slots[i].bulk = false;
			SetInvalidVirtualTransactionId(oracle->writers[i]);
		}
	}
}

/* ----------------------------------------------------------------
 * Reading the timeline
 * ----------------------------------------------------------------
 */

/*
 * The wall clock in milliseconds since the Unix epoch, plus the test-only
 * mzcoord.clock_offset of this session (0 unless a test sets it).
 */
mzc_ts
mzcoord_now_ms(void)
{
	TimestampTz now = GetCurrentTimestamp();

	/* TimestampTz counts microseconds since 2000-01-01. */
	return (mzc_ts) (now / 1000) +
		(mzc_ts) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000 +
		(mzc_ts) mzcoord_clock_offset;
}

/*
 * The timeline's clock; lock held (any mode).  It is the wall clock, except
 * after a bootstrap that resumed ahead of it (above a ceiling, which runs up
 * to a few seconds ahead): from there it advances at half the wall clock's
 * rate until the wall clock catches up, so writes after a restart or a
 * promotion keep distinct, increasing timestamps instead of all sharing the
 * resumed time.
 */
static mzc_ts
timeline_now_locked(void)
{
	mzc_ts		wall = mzcoord_now_ms();
	mzc_ts		slow;

	if (wall >= oracle->resume_ts)
		return wall;
	slow = oracle->resume_ts + (wall - oracle->resume_wall) / 2;
	return Max(wall, slow);
}

/* read_ts: complete, nothing more will commit there.  Lock held (any mode). */
static mzc_ts
readable_locked(void)
{
	mzc_ts		r = oracle->closed_ts;

	if (oracle->nsealed > 0)
	{
		for (int i = 0; i < oracle->nslots; i++)
			if (oracle->slots[i].state == MZC_WRITE_SEALED &&
				oracle->slots[i].ts - 1 < r)
				r = oracle->slots[i].ts - 1;
	}
	return r;
}

/* The next free commit timestamp; lock held. */
static mzc_ts
next_commit_locked(mzc_ts now, mzc_ts floor)
{
	mzc_ts		c = Max(now, oracle->closed_ts + 1);

	/* Join the latest group if nobody can have read there yet. */
	c = Max(c, oracle->max_sealed);
	return Max(c, floor);
}

/*
 * Take the oracle lock exclusively and choose a commit timestamp within the
 * ceiling: the current transaction's own write timestamp if may_keep and
 * nobody can have read there and it is not below floor, else the next free
 * one.  While the choice is beyond the ceiling, raise the ceiling (without
 * the lock, see the lock order) and choose again.  Returns with the lock
 * held.
 */
static mzc_ts
lock_commit_ts(mzc_ts floor, bool may_keep)
{
	for (;;)
	{
		mzc_ts		c;

		LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
		if (may_keep && my_write_ts > oracle->closed_ts && my_write_ts >= floor)
			c = my_write_ts;
		else
			c = next_commit_locked(timeline_now_locked(), floor);
		if (c <= oracle->ceiling)
			return c;
		LWLockRelease(oracle->lock);
		ceiling_raise(c);
	}
}

/*
 * Record the current transaction's write state and timestamp in its slot,
 * release the oracle lock (held exclusively), and remember both in the
 * backend.  Returns ts.
 */
static mzc_ts
set_my_write_ts_unlock(MzcWriteState state, mzc_ts ts)
{
	oracle->slots[MyBackendId].state = state;
	oracle->slots[MyBackendId].ts = ts;
	LWLockRelease(oracle->lock);

	my_state = state;
	my_write_ts = ts;
	return ts;
}

/*
 * Close the timeline at target (never back); raises the ceiling first if
 * target is beyond it.  Returns closed_ts afterwards.
 */
static mzc_ts
close_at(mzc_ts target)
{
	mzc_ts		closed;

	for (;;)
	{
		LWLockAcquire(oracle->lock, LW_SHARED);
		closed = oracle->closed_ts;
		if (target <= closed)
		{
			LWLockRelease(oracle->lock);
			return closed;
		}
		if (target <= oracle->ceiling)
			break;
		LWLockRelease(oracle->lock);
		ceiling_raise(target);
	}
	LWLockRelease(oracle->lock);

	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	if (target <= oracle->ceiling)
		oracle->closed_ts = Max(oracle->closed_ts, target);
	closed = oracle->closed_ts;
	LWLockRelease(oracle->lock);
	ConditionVariableBroadcast(&oracle->upper_cv);
	return closed;
}

/*
 * The strict serializable read timestamp: at or after every write sealed
 * so far and every time read before, closed so that nothing commits there
 * any more.  The caller waits for the upper to pass it (sealed writers at
 * or below it are finishing their commit).
 */
mzc_ts
mzcoord_oracle_read_ts(void)
{
	mzc_ts		upper;

	return mzcoord_oracle_read_ts_upper(&upper);
}

/*
 * The same, and the table upper right after closing.  Reads without writes
 * in between find nothing to close: one shared lock acquisition serves them.
 */
mzc_ts
mzcoord_oracle_read_ts_upper(mzc_ts *upper)
{
	mzc_ts		target;

	LWLockAcquire(oracle->lock, LW_SHARED);
	target = Max(oracle->closed_ts, oracle->max_sealed);
	if (target == oracle->closed_ts)
	{
		*upper = readable_locked() + 1;
		LWLockRelease(oracle->lock);
	}
	else
	{
		LWLockRelease(oracle->lock);
		target = close_at(target);
		*upper = mzcoord_table_upper();
	}
	/* A standby's strict read asked the primary for this time (log_upper). */
	if (mzcoord_log_read_upper)
		log_upper(*upper);
	return target;
}

/*
 * The latest commit timestamp or closed time, without closing anything:
 * every committed table update is at or below it.
 */
mzc_ts
mzcoord_oracle_latest(void)
{
	mzc_ts		ts;

	LWLockAcquire(oracle->lock, LW_SHARED);
	ts = Max(oracle->closed_ts, oracle->max_sealed);
	LWLockRelease(oracle->lock);
	return ts;
}

/* The current read timestamp, without closing anything. */
mzc_ts
mzcoord_oracle_readable(void)
{
	mzc_ts		r;

	LWLockAcquire(oracle->lock, LW_SHARED);
	r = readable_locked();
	LWLockRelease(oracle->lock);
	return r;
}

/* The shared upper of all registered tables. */
mzc_ts
mzcoord_table_upper(void)
{
	return mzcoord_oracle_readable() + 1;
}

/*
 * A creation time for collections with a timeline of their own (sources,
 * materialized views without inputs): the clock, and never below the table
 * timeline, so that reads across both behave as users expect.  Registers no
 * write.
 */
mzc_ts
mzcoord_oracle_now(void)
{
	mzc_ts		now;
	mzc_ts		closed;

	LWLockAcquire(oracle->lock, LW_SHARED);
	now = timeline_now_locked();
	closed = oracle->closed_ts;
	LWLockRelease(oracle->lock);
	return Max(now, closed + 1);
}

/*
 * Refuse a time a user supplies (an append, an upper, a refresh time) that
 * is more than mzcoord.max_future beyond the wall clock: such a time can
 * never become readable in practice, and would only pin whatever follows it.
 */
void
mzcoord_check_user_time(int64 ts, const char *what)
{
	mzc_ts		now = mzcoord_now_ms();
	mzc_ts		limit = now + (mzc_ts) mzcoord_max_future * 60 * 1000;

	/*
	 * The last representable time can never be passed by an upper (upper
	 * would be ts + 1): refuse it whatever mzcoord.max_future allows.
	 */
	if (ts == PG_INT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s " INT64_FORMAT " is out of range", what,
						(int64) ts),
				 errdetail("Times must be less than " INT64_FORMAT ".",
						   PG_INT64_MAX)));
	if (ts > limit)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s " INT64_FORMAT " is too far in the future", what,
						(int64) ts),
				 errdetail("Times more than mzcoord.max_future (%d min) beyond the current time are refused.",
						   mzcoord_max_future)));
}

/* ----------------------------------------------------------------
 * Writing
 * ----------------------------------------------------------------
 */

/*
 * The current transaction's write timestamp: a provisional one at the first
 * call (the transaction is open until it ends or is sealed), the commit
 * timestamp once sealed.
 */
mzc_ts
mzcoord_write_ts(void)
{
	VirtualTransactionId vxid;
	mzc_ts		w;

	if (my_state != MZC_WRITE_NONE)
		return my_write_ts;

	Assert(MyBackendId > 0 && MyBackendId < oracle->nslots);
	GET_VXID_FROM_PGPROC(vxid, *MyProc);
	w = lock_commit_ts(0, false);
	oracle->writers[MyBackendId] = vxid;
	oracle->nopen++;
	return set_my_write_ts_unlock(MZC_WRITE_OPEN, w);
}

/* Does the current transaction hold a write timestamp? */
bool
mzcoord_has_write_ts(void)
{
	return my_state != MZC_WRITE_NONE;
}

/*
 * The current transaction has seen (or may retract) what every transaction
 * sealed so far wrote, and must commit at or after floor as well (floor 0:
 * only the former).  Returns false if its commit timestamp is already fixed
 * below that: it cannot move, and must fail.  Without a write in progress
 * there is nothing to constrain: its first write comes after all of it.
 */
bool
mzcoord_oracle_observe(mzc_ts floor)
{
	if (my_state == MZC_WRITE_NONE)
		return true;
	LWLockAcquire(oracle->lock, LW_SHARED);
	my_floor = Max(my_floor, Max(floor, oracle->max_sealed));
	LWLockRelease(oracle->lock);
	return my_state == MZC_WRITE_OPEN || my_floor <= my_write_ts;
}

/*
 * Fix the current transaction's commit timestamp: its provisional timestamp
 * if nobody can have read there and it is not below its floor, else the
 * next free one.  From now on the upper stays below it until the transaction
 * ends.  Returns it; the caller moves the updates recorded at other
 * timestamps there before the commit.  Sealing twice returns the same
 * timestamp.  Takes a write timestamp first if the transaction has none
 * (the catalog fixes a registration time this way).
 */
mzc_ts
mzcoord_oracle_seal(void)
{
	mzc_ts		c;
	mzc_ts		floor = my_floor;

	if (my_state == MZC_WRITE_NONE)
		(void) mzcoord_write_ts();
	if (my_state == MZC_WRITE_SEALED)
		return my_write_ts;

	c = lock_commit_ts(floor, true);
	if (oracle->slots[MyBackendId].bulk)
		oracle->nbulk--;
	oracle->slots[MyBackendId].bulk = false;
	oracle->nopen--;
	oracle->nsealed++;
	oracle->max_sealed = Max(oracle->max_sealed, c);
	return set_my_write_ts_unlock(MZC_WRITE_SEALED, c);
}

/*
 * Fix the commit timestamp now, while the transaction still runs: the
 * catalog records a table's registration at it.
 */
mzc_ts
mzcoord_oracle_seal_early(void)
{
	bool		was_sealed = my_state == MZC_WRITE_SEALED;
	mzc_ts		c = mzcoord_oracle_seal();

	if (!was_sealed)
		my_sealed_early = true;
	return c;
}

/*
 * Pre-commit: a commit timestamp the catalog fixed early is a registration
 * time; close it before the commit becomes visible, so that no write to the
 * new table can join it and the table is complete there.  (It is within the
 * ceiling: it was handed out.)
 */
void
mzcoord_oracle_pre_commit(void)
{
	if (!my_sealed_early)
		return;
	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	oracle->closed_ts = Max(oracle->closed_ts, my_write_ts);
	LWLockRelease(oracle->lock);
}

/* The transaction committed: remember its commit timestamp (cannot fail). */
void
mzcoord_oracle_committed(void)
{
	if (my_state == MZC_WRITE_SEALED)
		my_last_commit_ts = my_write_ts;
}

PG_FUNCTION_INFO_V1(mzcoord_last_commit_ts);

/*
 * SQL: mzcoord.last_commit_ts() RETURNS bigint: the commit timestamp of this
 * session's last committed transaction that wrote a registered table (NULL
 * if none).  A read at or after it sees that transaction.
 */
Datum
mzcoord_last_commit_ts(PG_FUNCTION_ARGS)
{
	if (my_last_commit_ts < 0)
		PG_RETURN_NULL();
	PG_RETURN_INT64(my_last_commit_ts);
}

/*
 * End of the current transaction (commit or abort): the write is over.
 * Called from the transaction callbacks; cannot fail.
 */
void
mzcoord_oracle_end_write(void)
{
	my_floor = 0;
	if (my_state == MZC_WRITE_NONE || oracle == NULL)
	{
		my_state = MZC_WRITE_NONE;
		my_write_ts = -1;
		my_sealed_early = false;
		return;
	}

	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	if (oracle->slots[MyBackendId].state == MZC_WRITE_SEALED)
		oracle->nsealed--;
	else if (oracle->slots[MyBackendId].state == MZC_WRITE_OPEN)
		oracle->nopen--;
	if (oracle->slots[MyBackendId].bulk)
		oracle->nbulk--;
	oracle->slots[MyBackendId].bulk = false;
	oracle->slots[MyBackendId].state = MZC_WRITE_NONE;
	oracle->slots[MyBackendId].ts = -1;
	SetInvalidVirtualTransactionId(oracle->writers[MyBackendId]);
	LWLockRelease(oracle->lock);

	/*
	 * The read timestamp is closed lazily, by whoever reads next; wake the
	 * waiters (a sealed write no longer holds the upper back).
	 */
	my_state = MZC_WRITE_NONE;
	my_write_ts = -1;
	my_sealed_early = false;
	ConditionVariableBroadcast(&oracle->upper_cv);
}

/* ----------------------------------------------------------------
 * The tick and bootstrap
 * ----------------------------------------------------------------
 */

/*
 * The tick does not close idle time past an open writer while it records a
 * bulk write (a COPY, a large INSERT ... SELECT): the writer would only have
 * to move all of it again at its commit.  Only the tick waits; strict reads
 * close at what committed, as ever.  Returns the limit (no limit: the max).
 */
static mzc_ts
bulk_limit(void)
{
	mzc_ts		limit = PG_INT64_MAX;

	LWLockAcquire(oracle->lock, LW_SHARED);
	if (oracle->nbulk > 0)
		for (int i = 0; i < oracle->nslots; i++)
			if (oracle->slots[i].bulk && oracle->slots[i].ts - 1 < limit)
				limit = oracle->slots[i].ts - 1;
	LWLockRelease(oracle->lock);
	return limit;
}

/*
 * Mark the current transaction's open write as recording a bulk write (or
 * done with it).  Only worth it for large statements: it takes the lock.
 */
void
mzcoord_oracle_bulk(bool on)
{
	if (my_state != MZC_WRITE_OPEN)
		return;
	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	if (oracle->slots[MyBackendId].bulk != on)
	{
		oracle->slots[MyBackendId].bulk = on;
		oracle->nbulk += on ? 1 : -1;
	}
	LWLockRelease(oracle->lock);
}

/*
 * The tick: close idle time up to the wall clock, and keep the ceiling well
 * ahead of it.  Returns the table timeline upper afterwards.
 */
mzc_ts
mzcoord_oracle_tick(void)
{
	mzc_ts		now;
	mzc_ts		ceiling;
	mzc_ts		upper;

	LWLockAcquire(oracle->lock, LW_SHARED);
	now = timeline_now_locked();
	ceiling = oracle->ceiling;
	LWLockRelease(oracle->lock);
	if (ceiling - now < MZC_CEILING_WINDOW_MS / 2)
		ceiling_raise(now + MZC_CEILING_WINDOW_MS / 2);

	(void) close_at(Min(now, bulk_limit()));

	LWLockAcquire(oracle->lock, LW_SHARED);
	upper = readable_locked() + 1;
	LWLockRelease(oracle->lock);

	log_upper(upper);
	return upper;
}

/*
 * Bootstrap: the timeline never goes back, even if the clock does.  The
 * ceiling loaded at startup already covers everything handed out before a
 * crash; durable table uppers are a second witness (they travel with the
 * WAL, the ceiling file does not).  Source uppers are not part of the table
 * timeline and are not considered.
 */
void
mzcoord_oracle_bootstrap(mzc_ts max_table_upper)
{
	if (max_table_upper > 0)
		(void) close_at(max_table_upper - 1);

	/* Resume here; see timeline_now_locked. */
	LWLockAcquire(oracle->lock, LW_EXCLUSIVE);
	oracle->resume_ts = Max(oracle->closed_ts, oracle->max_sealed);
	oracle->resume_wall = mzcoord_now_ms();
	LWLockRelease(oracle->lock);
	(void) mzcoord_oracle_tick();
}

/* ----------------------------------------------------------------
 * Waiting for the table upper
 * ----------------------------------------------------------------
 */

/*
 * Wait until the table timeline has passed ts (ts < upper).  The timeline is
 * closed at ts as soon as the clock or the writes sealed so far reach it.
 * While a sealed write at or before ts is finishing its commit, wait on that
 * writer's virtual transaction lock: a heavyweight lock wait, visible in
 * pg_locks, served by the deadlock detector, and cancellable.  Otherwise
 * only time has to pass: sleep on the upper condition variable until a tick
 * advances the timeline.  Open writers are never waited for.
 */
void
mzcoord_wait_for_table_upper(mzc_ts ts)
{
	/* Our own commit timestamp is final: we would wait for ourselves. */
	if (my_state == MZC_WRITE_SEALED && my_write_ts <= ts)
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
		mzc_ts		reach;

		SetInvalidVirtualTransactionId(writer);
		ConditionVariablePrepareToSleep(&oracle->upper_cv);

		LWLockAcquire(oracle->lock, LW_SHARED);
		reach = Max(oracle->max_sealed, timeline_now_locked());
		LWLockRelease(oracle->lock);
		(void) close_at(Min(ts, reach));

		LWLockAcquire(oracle->lock, LW_SHARED);
		if (readable_locked() >= ts)
		{
			LWLockRelease(oracle->lock);
			/* A standby can answer there now too, without the next tick. */
			if (mzcoord_log_read_upper)
				log_upper(ts + 1);
			break;
		}
		for (int i = 0; i < oracle->nslots; i++)
			if (oracle->slots[i].state == MZC_WRITE_SEALED &&
				oracle->slots[i].ts <= ts &&
				(least < 0 || oracle->slots[i].ts < least))
			{
				least = oracle->slots[i].ts;
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
		mzcoord_extension_check_waiters();
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
	mzcoord_extension_check_waiters();
	(void) ConditionVariableTimedSleep(&oracle->upper_cv, timeout_ms,
									   PG_WAIT_EXTENSION);
}

void
mzcoord_end_upper_wait(void)
{
	ConditionVariableCancelSleep();
}

/* ----------------------------------------------------------------
 * Introspection
 * ----------------------------------------------------------------
 */

/* The oracle's durable ceiling and closed timestamp, for worker_status. */
void
mzcoord_oracle_state(mzc_ts *closed, mzc_ts *ceiling)
{
	LWLockAcquire(oracle->lock, LW_SHARED);
	*closed = oracle->closed_ts;
	*ceiling = oracle->ceiling;
	LWLockRelease(oracle->lock);
}

PG_FUNCTION_INFO_V1(mzcoord_writes_in_flight);

/*
 * SQL: mzcoord.writes_in_flight(): the transactions writing registered
 * tables, with their (provisional or commit) timestamp, backend and
 * transaction, and whether they are committing (only those hold the table
 * timeline's upper back).
 */
Datum
mzcoord_writes_in_flight(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n = 0;
	MzcWriteSlot *ws;
	VirtualTransactionId *vx;

	mzcoord_require_shmem();
	InitMaterializedSRF(fcinfo, 0);
	ws = palloc(sizeof(MzcWriteSlot) * oracle->nslots);
	vx = palloc(sizeof(VirtualTransactionId) * oracle->nslots);

	LWLockAcquire(oracle->lock, LW_SHARED);
	for (int i = 0; i < oracle->nslots; i++)
		if (oracle->slots[i].state != MZC_WRITE_NONE)
		{
			ws[n] = oracle->slots[i];
			vx[n] = oracle->writers[i];
			n++;
		}
	LWLockRelease(oracle->lock);

	for (int i = 0; i < n; i++)
	{
		Datum		v[4];
		bool		nl[4] = {false, false, false, false};
		PGPROC	   *proc = BackendIdGetProc(vx[i].backendId);

		v[0] = Int64GetDatum(ws[i].ts);
		if (proc != NULL)
			v[1] = Int32GetDatum(proc->pid);
		else
			nl[1] = true;
		v[2] = CStringGetTextDatum(psprintf("%d/%u", vx[i].backendId,
											vx[i].localTransactionId));
		v[3] = BoolGetDatum(ws[i].state == MZC_WRITE_SEALED);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nl);
	}
	return (Datum) 0;
}
