/*-------------------------------------------------------------------------
 *
 * maintain.c
 *	  Maintenance: refresh the materialized views and run the exports of
 *	  the sinks whose inputs moved on, in a pool of maintenance workers.
 *
 * Two halves, in two kinds of process:
 *
 * - The coordinator dispatches (mzcoord_maintain_dispatch), after each
 *   tick, when woken by a commit and whenever a worker finishes a step.
 *   It lists, from the controller, every materialized view and sink whose
 *   upper is behind the least upper of its inputs, and hands each a free
 *   maintenance slot (dispatch.c), starting where the previous round
 *   stopped so that no object starves.  An object never has two steps at
 *   once, and one that failed waits out a back-off that doubles from 1 s
 *   to a minute; the coordinator alone keeps the back-offs.
 *
 * - A maintenance worker runs the step it was handed
 *   (mzcoord_maintain_worker_step) in a transaction of its own
 *   (refresh.c, export.c evaluate and write as the object's owner), so a
 *   crash leaves a step whole or not at all, under
 *   mzcoord.maintenance_step_timeout.  A step that fails is rolled back (a
 *   subtransaction), its error is recorded in mzcoord.maintenance
 *   (visible in mzcoord.maintenance_status) and the coordinator retries it
 *   later.  A step over the timeout is canceled and recorded as such
 *   (57014).  A step canceled because its object is being dropped
 *   (mzcoord.drop) records nothing.
 *
 * No step waits for another, and the tick waits for none: a slow view
 * occupies one worker until the timeout, and the others go on.
 *
 * mzcoord.maintenance has one writer: this file, in the maintenance
 * workers; a row is written only by the step of its object, and an object
 * has one step at a time.
 *
 * IDENTIFICATION
 *	  src/compute/maintain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "controller.h"
#include "dispatch.h"
#include "export.h"
#include "extension.h"
#include "ids.h"
#include "maintain.h"
#include "rec_items.h"
#include "rec_maintenance.h"
#include "refresh.h"
#include "settings.h"
#include "support.h"

/* Back-off after a failed step: 1 s doubling to this many seconds. */
#define MZC_MAINTAIN_MAX_BACKOFF_S 60

/*
 * The longest a step waits for a lock (lock_timeout in its transaction):
 * a user's transaction that holds a conflicting lock on an input (an
 * uncommitted ALTER TABLE, LOCK TABLE) makes the step fail (55P03) and be
 * retried later rather than hold a maintenance worker for as long as the
 * user's transaction lasts.  Well below deadlock_timeout (1 s by default):
 * when a user's DDL and a step wait for each other (DROP TABLE ... CASCADE
 * locks an input, then the view the step holds), the step gives up first,
 * so the deadlock detector never cancels the user's statement.
 */
#define MZC_MAINTAIN_LOCK_TIMEOUT "200"
#define MZC_MAINTAIN_DEADLOCK_TIMEOUT "20"

/*
 * Per object whose last step failed (the coordinator's, backend-local):
 * when it may run again.  The entry also tells the worker to record the
 * next success, which clears the failures.
 */
typedef struct RetryEntry
{
	int64		gid;			/* key */
	int			failures;		/* consecutive */
	TimestampTz retry_at;
} RetryEntry;

static HTAB *retries = NULL;
static MemoryContext maintain_cxt = NULL;
static int	next_pos = 0;		/* where the next round starts in the list */

/* A maintenance worker's step timer, and whether it fired. */
static TimeoutId step_timeout_id = MAX_TIMEOUTS;
static volatile sig_atomic_t step_timed_out = false;

/* What one step did. */
typedef struct StepOutcome
{
	bool		did;
	MzcStepCounts counts;		/* for mzcoord.maintenance */
} StepOutcome;

static void
maintain_init(void)
{
	if (retries != NULL)
		return;
	maintain_cxt = AllocSetContextCreate(TopMemoryContext, "mzcoord maintenance",
										 ALLOCSET_DEFAULT_SIZES);
	retries = mzcoord_local_hash("mzcoord maintenance retries", 64,
								 sizeof(int64), sizeof(RetryEntry), TopMemoryContext);
}

/* Whether gid is waiting out a back-off at now. */
static bool
backing_off(int64 gid, TimestampTz now)
{
	RetryEntry *e = hash_search(retries, &gid, HASH_FIND, NULL);

	return e != NULL && e->retry_at > now;
}

/*
 * Record the outcome of a step in mzcoord.maintenance, in the step's
 * transaction: a success (outcome), or a failure (edata).  Returns the
 * consecutive failures now.
 */
static int64
record_outcome(int64 gid, const MzcStepCounts *o, ErrorData *edata,
			   double duration_ms)
{
	int64		failures;

	mzcoord_spi_connect();
	failures = mzcoord_rec_maintenance_record(gid, o, edata, duration_ms);
	SPI_finish();
	return failures;
}

/*
 * Lock the object's item row, never waiting (mzcoord_rec_items_claim).
 * False if the item is gone or being changed: the next pass tries again.
 */
static bool
claim_item(int64 gid)
{
	bool		found;

	mzcoord_spi_connect();
	found = mzcoord_rec_items_claim(gid);
	SPI_finish();
	return found;
}

/*
 * Record a failed step, in a subtransaction of its own: the record itself
 * can fail (the item was dropped meanwhile, or its row is locked past
 * lock_timeout), and that must not take the coordinator down.  Returns the
 * consecutive failures, 0 if they could not be recorded.
 */
static int64
record_failure(int64 gid, ErrorData *edata, double duration_ms)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	int64		failures = 0;

	BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		failures = record_outcome(gid, NULL, edata, duration_ms);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		if (e->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			e->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
			ReThrowError(e);
		ereport(WARNING,
				(errmsg("mzcoord: could not record the failure of " MZC_GID_FMT ": %s",
						gid, e->message ? e->message : "unknown error")));
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return failures;
}

/* The step of one object: a refresh or an export. */
static void
run_step(int64 gid, MzcKind kind, StepOutcome *o)
{
	memset(o, 0, sizeof(*o));
	if (!claim_item(gid))
		return;
	if (kind == MZC_KIND_MATERIALIZED_VIEW)
	{
		MzcRefreshResult res;

		o->did = mzcoord_refresh_view(gid, &res);
		o->counts.new_upper = res.new_upper;
		o->counts.rows = res.rows_changed;
		o->counts.times = res.times;
		o->counts.incremental = res.incremental;
	}
	else
	{
		MzcExportResult res;

		o->did = mzcoord_export_sink(gid, &res);
		o->counts.new_upper = res.new_upper;
		o->counts.rows = res.rows_exported;
		o->counts.times = res.times;
	}
}

/* Seconds of back-off after this many consecutive failures. */
static int
backoff_secs(int failures)
{
	return Min(MZC_MAINTAIN_MAX_BACKOFF_S, 1 << Min(Max(failures, 1) - 1, 6));
}

/* ----------------------------------------------------------------
 * A maintenance worker: one step
 * ----------------------------------------------------------------
 */

/* The step timer fired: cancel the step as a query cancel would. */
static void
step_timeout_handler(void)
{
	step_timed_out = true;
	QueryCancelPending = true;
	InterruptPending = true;
	SetLatch(MyLatch);
}

/* Once per maintenance worker, before its first step. */
void
mzcoord_maintain_worker_init(void)
{
	step_timeout_id = RegisterTimeout(USER_TIMEOUT, step_timeout_handler);
}

static void
step_timer_start(void)
{
	step_timed_out = false;
	if (mzcoord_maintenance_step_timeout > 0)
		enable_timeout_after(step_timeout_id, mzcoord_maintenance_step_timeout);
}

static void
step_timer_stop(void)
{
	disable_timeout(step_timeout_id, false);
}

/* "materialized view public.v" for gid, in a transaction. */
static char *
object_label(int64 gid, MzcKind kind)
{
	MzcCollectionInfo info;
	const char *label = kind == MZC_KIND_SINK ? "sink" : "materialized view";
	char	   *name;

	if (!mzcoord_ctl_lookup_gid(gid, &info) ||
		(name = get_rel_name(info.relid)) == NULL)
		return psprintf("%s %s", label, mzcoord_gid_text(gid));
	return psprintf("%s %s", label,
					quote_qualified_identifier(get_namespace_name(get_rel_namespace(info.relid)),
											   name));
}

/*
 * The error recorded for a step the timer canceled: 57014, naming the
 * object and the limit, so that maintenance_status says what happened.
 */
static void
name_timeout(ErrorData *edata, int64 gid, MzcKind kind)
{
	edata->message = psprintf("%s of %s canceled: it ran longer than \"mzcoord.maintenance_step_timeout\" (%d ms)",
							  kind == MZC_KIND_SINK ? "export" : "refresh",
							  object_label(gid, kind),
							  mzcoord_maintenance_step_timeout);
}

/* After a failed step: a WARNING in the server log. */
static void
warn_failure(int64 gid, MzcKind kind, ErrorData *edata, int64 failures)
{
	ereport(WARNING,
			(errcode(edata->sqlerrcode),
			 errmsg("mzcoord: could not %s %s " MZC_GID_FMT ": %s",
					kind == MZC_KIND_SINK ? "export" : "refresh",
					kind == MZC_KIND_SINK ? "sink" : "materialized view",
					gid, edata->message ? edata->message : "unknown error"),
			 errdetail("It is retried in %d seconds; see mzcoord.maintenance_status.",
					   backoff_secs((int) Min(failures, 30)))));
}

/*
 * A failed step, its subtransaction rolled back: record it, unless a drop
 * canceled it (the object is going away).  Returns the consecutive
 * failures recorded (0: not recorded).  A shutdown is thrown on.
 */
static int64
step_failed(int slot, int64 gid, MzcKind kind, ErrorData *edata,
			TimestampTz start)
{
	int64		failures;

	if (edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
		ReThrowError(edata);
	if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
	{
		if (mzcoord_dispatch_cancel_requested(slot))
			return 0;
		if (step_timed_out)
			name_timeout(edata, gid, kind);
	}
	failures = record_failure(gid, edata,
							  (GetCurrentTimestamp() - start) / 1000.0);
	warn_failure(gid, kind, edata, failures);
	return failures;
}

/* Set up the step's transaction: its activity and its lock waits. */
static void
step_xact_setup(int64 gid, MzcKind kind)
{
	pgstat_report_activity(STATE_RUNNING,
						   psprintf("mzcoord %s %s",
									kind == MZC_KIND_SINK ? "export" : "refresh",
									mzcoord_gid_text(gid)));
	(void) set_config_option("lock_timeout", MZC_MAINTAIN_LOCK_TIMEOUT,
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, 0, false);

	/*
	 * In a lock cycle with a user's statement, the step must be the one the
	 * deadlock detector cancels: the process that checks first is the
	 * victim, so the step checks soon after it starts waiting.
	 */
	(void) set_config_option("deadlock_timeout", MZC_MAINTAIN_DEADLOCK_TIMEOUT,
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, 0, false);
}

/*
 * One object's step in a transaction of its own.  Returns whether it
 * failed, and the consecutive failures recorded (*failures).
 */
static bool
maintain_one(int slot, int64 gid, MzcKind kind, bool after_failure,
			 int64 *failures)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	MemoryContext xactcxt;
	ResourceOwner xactowner;
	TimestampTz start = GetCurrentTimestamp();
	StepOutcome o;
	bool		failed = false;

	*failures = 0;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	/* The subtransaction below returns to these. */
	xactcxt = CurrentMemoryContext;
	xactowner = CurrentResourceOwner;
	step_xact_setup(gid, kind);
	if (!mzcoord_extension_ready())
	{
		PopActiveSnapshot();
		CommitTransactionCommand();
		MemoryContextSwitchTo(oldcxt);
		return false;
	}

	BeginInternalSubTransaction(NULL);
	step_timer_start();
	PG_TRY();
	{
		run_step(gid, kind, &o);
		step_timer_stop();

		/*
		 * Only steps that did work are recorded: an idle view's upper moves
		 * every tick, and a row version per view per tick would only bloat
		 * the table.  A step after failures is always recorded (it clears
		 * them).
		 */
		if (o.did && (o.counts.times > 0 || after_failure))
			(void) record_outcome(gid, &o.counts, NULL,
								  (GetCurrentTimestamp() - start) / 1000.0);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(xactcxt);
		CurrentResourceOwner = xactowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		step_timer_stop();
		MemoryContextSwitchTo(xactcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(xactcxt);
		CurrentResourceOwner = xactowner;
		*failures = step_failed(slot, gid, kind, edata, start);
		failed = true;
	}
	PG_END_TRY();
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(oldcxt);
	return failed;
}

/*
 * In a maintenance worker, outside a transaction: run the step handed to
 * the slot, if any, and hand back its outcome.  Returns whether there was
 * one.
 */
bool
mzcoord_maintain_worker_step(int slot)
{
	int64		gid;
	MzcKind		kind;
	bool		after_failure;
	bool		failed;
	int64		failures;

	if (!mzcoord_dispatch_begin(slot, &gid, &kind, &after_failure))
		return false;
	failed = maintain_one(slot, gid, kind, after_failure, &failures);
	pgstat_report_activity(STATE_IDLE, NULL);
	mzcoord_dispatch_finish(slot, failed, failures);
	return true;
}

/* ----------------------------------------------------------------
 * The coordinator: dispatch
 * ----------------------------------------------------------------
 */

/* The outcomes of finished steps: back-offs start or end. */
static void
take_outcomes(void)
{
	MzcStepDone *done = palloc(sizeof(MzcStepDone) * mzcoord_dispatch_nslots());
	int			n = mzcoord_dispatch_harvest(done);

	for (int i = 0; i < n; i++)
	{
		bool		found;
		RetryEntry *e;

		/* A success ends the back-off; the entry marks a failed object. */
		if (!done[i].failed)
		{
			(void) hash_search(retries, &done[i].gid, HASH_REMOVE, NULL);
			continue;
		}
		e = hash_search(retries, &done[i].gid, HASH_ENTER, &found);
		if (!found)
			e->failures = 0;
		e->failures = done[i].failures > 0 ? (int) Min(done[i].failures, 30) :
			Min(e->failures + 1, 30);
		e->retry_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
												  backoff_secs(e->failures) * 1000);
	}
	pfree(done);
}

/* Whether the object has work: its inputs are complete beyond its upper. */
static bool
has_work(const MzcMaintainedInfo *m)
{
	return m->inputs_upper.empty || m->upper.ts < m->inputs_upper.ts;
}

/*
 * The coordinator's dispatch, outside a transaction: take the outcomes of
 * finished steps, then hand every object with work, not backing off and
 * not already at work, to a free maintenance worker.  Read-only mode
 * writes nothing, so it hands out nothing.
 */
void
mzcoord_maintain_dispatch(void)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	MzcMaintainedInfo *list;
	int			n;
	TimestampTz now = GetCurrentTimestamp();

	if (mzcoord_read_only)
		return;
	maintain_init();
	MemoryContextReset(maintain_cxt);
	MemoryContextSwitchTo(maintain_cxt);
	take_outcomes();
	n = mzcoord_ctl_list_maintained(&list);
	if (next_pos >= n)
		next_pos = 0;
	for (int k = 0; k < n; k++)
	{
		MzcMaintainedInfo *m = &list[(next_pos + k) % n];
		RetryEntry *e;

		if (!has_work(m) || backing_off(m->gid, now) ||
			mzcoord_dispatch_running(m->gid))
			continue;
		e = hash_search(retries, &m->gid, HASH_FIND, NULL);
		if (!mzcoord_dispatch_assign(m->gid, m->kind, e != NULL))
		{
			/* No worker free: the next round starts here. */
			next_pos = (next_pos + k) % n;
			break;
		}
	}
	MemoryContextSwitchTo(oldcxt);
}
