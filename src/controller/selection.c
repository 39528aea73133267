/*-------------------------------------------------------------------------
 *
 * selection.c
 *	  Timestamp selection for a read: the selection of
 *	  mzcoord.select_timestamp() (which takes the read holds at the chosen
 *	  time and waits for the inputs to be complete there) and of
 *	  mzcoord.explain_timestamp() (funcs/selectfuncs.c parses their
 *	  arguments and renders the explanation), and the data plane's wait for
 *	  completeness (mzcoord_ctl_wait_complete).  On a hot standby both
 *	  decide from the replayed frontiers (standby.c).
 *
 * The decision itself is the pure core's mzc_determine_timestamp (reference
 * 2.5).  It is taken under the shared controller lock; the holds are taken
 * under the exclusive one after checking that no since moved past the
 * chosen time meanwhile, which keeps the exclusive section short.
 *
 * IDENTIFICATION
 *	  src/controller/selection.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "acquire.h"
#include "controller.h"
#include "oracle.h"
#include "readhold.h"
#include "selection.h"
#include "settings.h"
#include "shmem.h"
#include "standby.h"
#include "collections.h"
#include "frontier.h"
#include "tsselect.h"

/*
 * Start a selection over targets[0..n) (from mzcoord_targets_from_array),
 * asked by the SQL function fn_oid.
 */
void
mzcoord_ts_call_init(MzcTsCall *c, MzcTarget *targets, int n,
					 mzc_isolation isolation, mzc_when_kind when,
					 mzc_ts when_ts, Oid fn_oid)
{
	memset(c, 0, sizeof(*c));
	c->targets = targets;
	c->n = n;
	c->isolation = isolation;
	c->when = when;
	c->when_ts = when_ts;
	c->fn_oid = fn_oid;
	c->inputs = palloc(sizeof(mzc_ts_input) * n);
	c->lower = palloc(sizeof(mzc_ts_constraint) * (n + MZC_TS_EXTRA_LOWER));
	c->blocking = palloc(sizeof(int32) * n);
}

/*
 * Can target t ever be complete at ts?  It can if it already is (a sealed
 * collection is complete at every time).  Otherwise no upper can
 * pass the largest timestamp, and the table timeline follows the clock: it
 * cannot reach a time more than mzcoord.max_future beyond the current time
 * within the future mzcoord allows anywhere else (appends, uppers and
 * refresh times are refused there too).  A source's upper is advanced
 * explicitly, so for other collections only the largest timestamp is out
 * of reach.  Caller holds the lock and resolved the targets.  Returns the
 * reason (MZC_TS_REACHABLE if none).
 */
static MzcTsReach
target_reach_locked(const MzcTarget *t, mzc_ts ts, mzc_ts table_limit)
{
	if (!mzc_frontier_le_ts(t->upper, ts))
		return MZC_TS_REACHABLE;
	if (ts == MZC_TS_MAX)
		return MZC_TS_AT_MAX;
	if (mzcoord_ctl_info[t->slot].kind == MZC_KIND_TABLE && ts > table_limit)
		return MZC_TS_BEYOND_FUTURE;
	return MZC_TS_REACHABLE;
}

/* The latest time the table timeline may reach: see target_reach_locked. */
static mzc_ts
table_time_limit(void)
{
	mzc_ts		now = Max(mzcoord_now_ms(), mzcoord_oracle_readable());

	return now + (mzc_ts) mzcoord_max_future * 60 * 1000;
}

/*
 * Refuse a wait for ts that can never end (reason why, for target t), at
 * once and before anything is held: otherwise it would last until
 * statement_timeout.
 */
static void
report_unreachable(const MzcTarget *t, mzc_ts ts, MzcTsReach why)
{
	if (why == MZC_TS_AT_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp " INT64_FORMAT " can never be complete for \"%s\"",
						(int64) ts, mzcoord_qualified_relname(t->relid)),
				 errdetail("No upper can pass the largest timestamp; only a sealed collection is complete there."),
				 errhint("Read at a timestamp below " INT64_FORMAT ".", PG_INT64_MAX)));
	if (why == MZC_TS_BEYOND_FUTURE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timestamp " INT64_FORMAT " is too far in the future to read \"%s\"",
						(int64) ts, mzcoord_qualified_relname(t->relid)),
				 errdetail("The table timeline does not reach times more than mzcoord.max_future (%d min) beyond the current time.",
						   mzcoord_max_future)));
}

/*
 * The oracle's read timestamp for the call, and the table upper after it.
 * A strict serializable read and a read of the freshest table write close
 * the timeline at every write committed so far (the linearization point);
 * the other levels only look.
 */
static void
ts_call_oracle_ts(MzcTsCall *c)
{
	if (c->isolation == MZC_ISO_STRICT_SERIALIZABLE ||
		c->when == MZC_WHEN_FRESHEST_TABLE_WRITE)
		c->oracle_ts = mzcoord_oracle_read_ts_upper(&c->table_upper);
	else
	{
		c->oracle_ts = mzcoord_oracle_readable();
		c->table_upper = c->oracle_ts + 1;
	}
}

/*
 * The core's decision over c->inputs and c->oracle_ts (the frontiers and
 * the oracle's time, however they were learnt), into c->res and c->status.
 */
static void
ts_call_decide(MzcTsCall *c)
{
	mzc_ts_request req;

	memset(&req, 0, sizeof(req));
	req.isolation = c->isolation;
	req.when = c->when;
	req.when_ts = c->when_ts;
	req.inputs = c->inputs;
	req.ninputs = c->n;
	req.timeline = true;
	req.has_oracle_ts = true;
	req.oracle_ts = c->oracle_ts;
	req.mode = MZC_TS_VERIFY;
	mzc_ts_result_init(&c->res, c->lower, c->n + MZC_TS_EXTRA_LOWER,
					   c->blocking, c->n);
	c->status = mzc_determine_timestamp(&req, &c->res, &c->err);
}

/*
 * Determine the timestamp; caller holds the lock (any mode) and observed
 * the oracle's read timestamp (c->oracle_ts) before taking it.
 */
static void
ts_call_determine_locked(MzcTsCall *c)
{
	c->unreachable = -1;
	c->bad = mzcoord_resolve_targets_locked(c->targets, c->n, c->table_upper);
	if (c->bad >= 0)
		return;
	for (int i = 0; i < c->n; i++)
	{
		c->inputs[i].since = c->targets[i].since;
		c->inputs[i].upper = c->targets[i].upper;
	}
	ts_call_decide(c);
	if (c->check_reach && c->status == MZC_OK && !c->res.respond_immediately)
		for (int i = 0; i < c->n && c->unreachable < 0; i++)
		{
			c->unreachable_why = target_reach_locked(&c->targets[i],
													 c->res.timestamp,
													 c->table_limit);
			if (c->unreachable_why != MZC_TS_REACHABLE)
				c->unreachable = i;
		}
}

/*
 * On a hot standby, where no coordinator runs: the same decision from the
 * replayed frontiers (standby.c).  A strict serializable read (or one of
 * the freshest table write) reads at or after the primary's read
 * timestamp, which it asks the primary for; the other levels look at the
 * replayed table upper.  Takes no hold.
 */
static void
ts_call_determine_standby(MzcTsCall *c)
{
	Snapshot	snapshot = GetLatestSnapshot();
	mzc_ts		table_upper = 0;
	Oid		   *relids = palloc(sizeof(Oid) * c->n);

	c->unreachable = -1;
	c->bad = -1;
	c->kinds = palloc(sizeof(MzcKind) * c->n);
	for (int i = 0; i < c->n; i++)
	{
		MzcTarget  *t = &c->targets[i];

		relids[i] = t->relid;
		if (!mzcoord_standby_collection(t->relid, &t->gid, &c->kinds[i]))
		{
			c->bad = i;
			return;
		}
		t->slot = -1;
		t->since = mzcoord_standby_since(t->relid, t->gid, snapshot);
		t->upper = mzcoord_standby_upper(t->relid, t->gid, c->kinds[i]);
		if (c->kinds[i] == MZC_KIND_TABLE)
			table_upper = t->upper.ts;
		c->inputs[i].since = t->since;
		c->inputs[i].upper = t->upper;
	}
	if (c->isolation == MZC_ISO_STRICT_SERIALIZABLE ||
		c->when == MZC_WHEN_FRESHEST_TABLE_WRITE)
		c->oracle_ts = mzcoord_standby_primary_read_ts(relids, c->n);
	else
	{
		if (table_upper == 0)
			table_upper = mzcoord_oracle_replayed_upper();
		c->oracle_ts = Max(table_upper - 1, 0);
	}
	c->table_upper = c->oracle_ts + 1;
	ts_call_decide(c);
}

/* On a hot standby: wait until the standby has replayed past ts. */
static void
wait_for_uppers_standby(MzcTsCall *c, mzc_ts ts)
{
	for (int i = 0; i < c->n; i++)
		mzcoord_standby_wait_complete(c->targets[i].relid, c->targets[i].gid,
									  c->kinds[i], ts);
}

/* Raise what went wrong in a determination (after the lock is released). */
static void
ts_call_report(MzcTsCall *c)
{
	if (c->bad >= 0)
		mzcoord_report_not_registered(c->targets[c->bad].relid);
	if (c->status == MZC_ERR_SINCE_VIOLATION)
		mzcoord_report_targets_violation(c->targets, c->n, c->res.candidate);
	if (c->status != MZC_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("timestamp selection failed: %s", c->err.message)));
	if (c->unreachable >= 0)
		report_unreachable(&c->targets[c->unreachable], c->res.timestamp,
						   c->unreachable_why);
}

/*
 * Are all inputs complete at ts (ts < upper)?  Tables are handled by the
 * caller through the timeline; this checks the others.
 */
static bool
uppers_passed(MzcTsCall *c, mzc_ts ts, bool *has_tables)
{
	bool		passed = true;

	*has_tables = false;
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	for (int i = 0; i < c->n && passed; i++)
	{
		int32		slot = c->targets[i].slot;

		if (!mzc_coll_live(&mzcoord_ctl->colls, slot) || mzcoord_ctl_info[slot].gid != c->targets[i].gid)
			continue;			/* dropped while we wait: nothing to wait for */
		if (mzcoord_ctl_info[slot].kind == MZC_KIND_TABLE)
		{
			*has_tables = true;
			continue;
		}
		passed = !mzc_frontier_le_ts(mzcoord_ctl_slots[slot].upper, ts);
	}
	LWLockRelease(mzcoord_ctl->lock);
	return passed;
}

/*
 * Wait, cancellably, until every input's upper has passed ts.  The read
 * holds taken before keep the since from passing ts meanwhile.  Tables wait
 * on the in-flight writers themselves (a lock wait); other collections on
 * the upper condition variable.
 */
static void
wait_for_uppers(MzcTsCall *c, mzc_ts ts)
{
	bool		has_tables;

	for (;;)
	{
		mzcoord_prepare_upper_wait();
		if (uppers_passed(c, ts, &has_tables))
			break;
		mzcoord_upper_wait(1000);
	}
	mzcoord_end_upper_wait();
	if (has_tables)
		mzcoord_wait_for_table_upper(ts);
}

/*
 * Refuse at once a read of relid at `at` that could never become complete
 * (see target_reach_locked).  Changes nothing: call it before taking holds.
 */
void
mzcoord_ctl_check_reachable(Oid relid, mzc_ts at)
{
	MzcTarget	t;
	mzc_ts		limit = table_time_limit();
	mzc_ts		table_upper = mzcoord_oracle_readable() + 1;
	int			bad;
	MzcTsReach		why = MZC_TS_REACHABLE;

	memset(&t, 0, sizeof(t));
	t.relid = relid;
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	bad = mzcoord_resolve_targets_locked(&t, 1, table_upper);
	if (bad < 0)
		why = target_reach_locked(&t, at, limit);
	LWLockRelease(mzcoord_ctl->lock);
	if (bad >= 0)
		mzcoord_report_not_registered(relid);
	report_unreachable(&t, at, why);
}

/*
 * mzcoord.select_timestamp's selection: decide, take the read holds at the
 * chosen time and wait until every input is complete there.  Returns the
 * time.
 */
mzc_ts
mzcoord_ts_call_select(MzcTsCall *c)
{
	bool		nospace = false;
	MzcHoldFailure hf = {0};
	int32	   *slots;
	mzc_ts	   *times;
	mzc_ts		chosen;
	TimestampTz now;

	if (RecoveryInProgress())
	{
		Oid		   *relids = palloc(sizeof(Oid) * c->n);

		ts_call_determine_standby(c);
		ts_call_report(c);
		/* Held until the transaction ends: the lease keeper's business. */
		for (int i = 0; i < c->n; i++)
			relids[i] = c->targets[i].relid;
		mzcoord_standby_hold(relids, c->n, c->res.timestamp);
		if (!c->res.respond_immediately)
			wait_for_uppers_standby(c, c->res.timestamp);
		return c->res.timestamp;
	}
	mzcoord_ctl_require_ready_fn(c->fn_oid);
	mzcoord_reserve_local_holds(c->n);
	slots = palloc(sizeof(int32) * c->n);
	times = palloc(sizeof(mzc_ts) * c->n);

	ts_call_oracle_ts(c);
	now = GetCurrentTimestamp();
	c->check_reach = true;
	c->table_limit = table_time_limit();

	/*
	 * Decide under the shared lock; take the holds under the exclusive one,
	 * after checking that no since moved past the chosen time meanwhile (if
	 * one did, decide again under the exclusive lock).  This keeps the
	 * exclusive section, which every reader's commit also needs, short.
	 */
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	ts_call_determine_locked(c);
	LWLockRelease(mzcoord_ctl->lock);
	if (c->bad < 0 && c->status == MZC_OK && c->unreachable < 0)
	{
		LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
		if (!mzcoord_targets_still_valid_locked(c->targets, c->n, c->res.timestamp))
			ts_call_determine_locked(c);
		if (c->bad < 0 && c->status == MZC_OK && c->unreachable < 0)
		{
			for (int i = 0; i < c->n; i++)
			{
				slots[i] = c->targets[i].slot;
				times[i] = c->res.timestamp;
			}
			nospace = !mzcoord_acquire_holds_locked(slots, times, c->n, now, &hf);
		}
		LWLockRelease(mzcoord_ctl->lock);
	}

	ts_call_report(c);
	if (nospace)
		mzcoord_report_no_hold_space(&hf);

	chosen = c->res.timestamp;
	if (!c->res.respond_immediately)
		wait_for_uppers(c, chosen);
	return chosen;
}

/*
 * mzcoord.explain_timestamp's selection: the decision select_timestamp
 * would take now.  Takes no holds and does not wait.
 */
void
mzcoord_ts_call_explain(MzcTsCall *c)
{
	if (RecoveryInProgress())
		ts_call_determine_standby(c);
	else
	{
		mzcoord_ctl_require_ready_fn(c->fn_oid);
		ts_call_oracle_ts(c);
		LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
		ts_call_determine_locked(c);
		LWLockRelease(mzcoord_ctl->lock);
	}
	ts_call_report(c);
}

/* Wait, cancellably, until relid is complete at `at` (at < upper). */
void
mzcoord_ctl_wait_complete(Oid relid, mzc_ts at)
{
	MzcTsCall	c;

	memset(&c, 0, sizeof(c));
	c.targets = palloc0(sizeof(MzcTarget));
	c.targets[0].relid = relid;
	c.n = 1;
	c.oracle_ts = mzcoord_oracle_readable();
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	c.bad = mzcoord_resolve_targets_locked(c.targets, 1, c.oracle_ts + 1);
	LWLockRelease(mzcoord_ctl->lock);
	if (c.bad >= 0)
		mzcoord_report_not_registered(relid);
	wait_for_uppers(&c, at);
}
