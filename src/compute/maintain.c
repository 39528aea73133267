/*-------------------------------------------------------------------------
 *
 * maintain.c
 *	  The coordinator's maintenance pass: refresh the materialized views
 *	  and run the exports of the sinks whose inputs moved on.
 *
 * After each tick (and its compaction step) the coordinator lists, from
 * the controller, every materialized view and sink whose upper is behind
 * the least upper of its inputs: there is work to do.  Each gets one step
 * in a transaction of its own (refresh.c, export.c), so a crash leaves a
 * step whole or not at all, and one failing object never holds up the
 * others.  A step that fails is rolled back (a subtransaction), its error
 * is recorded in mzcoord.maintenance (visible in
 * mzcoord.maintenance_status), and it is retried after a back-off that
 * doubles up to a minute; a query cancel or a shutdown ends the pass.
 *
 * mzcoord.maintenance has one writer: this file, in the coordinator.  The
 * pass spends at most about one tick interval, but always runs its first
 * step; it starts where the previous pass stopped, so no object starves.
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
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "controller.h"
#include "export.h"
#include "extension.h"
#include "ids.h"
#include "maintain.h"
#include "refresh.h"
#include "settings.h"
#include "support.h"

/* Back-off after a failed step: 1 s doubling to this many seconds. */
#define MZC_MAINTAIN_MAX_BACKOFF_S 60

/*
 * The longest a step waits for a lock (lock_timeout in its transaction):
 * a user's transaction that holds a conflicting lock on an input (an
 * uncommitted ALTER TABLE, LOCK TABLE) makes the step fail (55P03) and be
 * retried later rather than stall the coordinator, whose tick every
 * frontier waits for.  Well below deadlock_timeout (1 s by default): when a
 * user's DDL and a step wait for each other (DROP TABLE ... CASCADE locks
 * an input, then the view the step holds), the step gives up first, so the
 * deadlock detector never cancels the user's statement.
 */
#define MZC_MAINTAIN_LOCK_TIMEOUT "200"
#define MZC_MAINTAIN_DEADLOCK_TIMEOUT "20"

/* Per object (backend-local, the coordinator's): when it may run again. */
typedef struct RetryEntry
{
	int64		gid;			/* key */
	int			failures;		/* consecutive */
	TimestampTz retry_at;
} RetryEntry;

static HTAB *retries = NULL;
static MemoryContext maintain_cxt = NULL;
static int	next_pos = 0;		/* where the next pass starts in the list */

/* What one step did, for mzcoord.maintenance. */
typedef struct StepOutcome
{
	bool		did;
	int64		new_upper;		/* -1: the empty frontier */
	int64		rows;
	int			times;
	int			incremental;	/* times refreshed from the inputs' updates */
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
record_outcome(int64 gid, const StepOutcome *o, ErrorData *edata,
			   double duration_ms)
{
	Oid			argtypes[8] = {TEXTOID, INT8OID, INT8OID, INT4OID, FLOAT8OID,
	TEXTOID, TEXTOID, INT4OID};
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	int64		failures = 0;
	bool		isnull;
	int			ret;

	values[0] = CStringGetTextDatum(mzcoord_gid_text(gid));
	values[1] = Int64GetDatum(o != NULL ? o->new_upper : 0);
	nulls[1] = (o == NULL || o->new_upper < 0) ? 'n' : ' ';
	values[2] = Int64GetDatum(o != NULL ? o->rows : 0);
	values[3] = Int32GetDatum(o != NULL ? o->times : 0);
	values[4] = Float8GetDatum(duration_ms);
	values[7] = Int32GetDatum(o != NULL ? o->incremental : 0);
	if (edata != NULL)
	{
		values[5] = CStringGetTextDatum(edata->message ? edata->message : "unknown error");
		values[6] = CStringGetTextDatum(unpack_sql_state(edata->sqlerrcode));
	}
	else
		nulls[5] = nulls[6] = 'n';

	mzcoord_spi_connect();
	/* The item may have been dropped meanwhile: then there is no row. */
	ret = SPI_execute_with_args(edata == NULL ?
								"INSERT INTO mzcoord.maintenance AS m"
								"   (item_id, steps, upper, updates, times,"
								"    incremental_times, last_step_at, last_step_ms)"
								" SELECT i.id, 1, $2, $3, $4, $8, pg_catalog.now(), $5"
								"   FROM mzcoord.items i"
								"  WHERE i.id OPERATOR(pg_catalog.=) $1"
								" ON CONFLICT (item_id) DO UPDATE"
								"    SET steps = m.steps OPERATOR(pg_catalog.+) 1,"
								"        upper = $2,"
								"        updates = m.updates OPERATOR(pg_catalog.+) $3,"
								"        times = m.times OPERATOR(pg_catalog.+) $4,"
								"        incremental_times = m.incremental_times"
								"            OPERATOR(pg_catalog.+) $8,"
								"        last_step_at = pg_catalog.now(), last_step_ms = $5,"
								"        failures = 0"
								" RETURNING m.failures"
								:
								"INSERT INTO mzcoord.maintenance AS m"
								"   (item_id, failures, error, error_code, error_at)"
								" SELECT i.id, 1, $6, $7, pg_catalog.now()"
								"   FROM mzcoord.items i"
								"  WHERE i.id OPERATOR(pg_catalog.=) $1"
								" ON CONFLICT (item_id) DO UPDATE"
								"    SET failures = m.failures OPERATOR(pg_catalog.+) 1,"
								"        error = $6, error_code = $7,"
								"        error_at = pg_catalog.now()"
								" RETURNING m.failures",
								8, argtypes, values, nulls, false, 0);
	if (ret != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not record the maintenance of " MZC_GID_FMT ": %s",
			 gid, SPI_result_code_string(ret));
	if (SPI_processed == 1)
		failures = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
											   SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return failures;
}

/*
 * Lock the object's item row FOR KEY SHARE, never waiting (SKIP LOCKED):
 * a drop deletes the row and then drops the relation, so a step that holds
 * the row first cannot deadlock with it, and until the step commits the
 * row (which mzcoord.maintenance refers to) stays.  False if the item is
 * gone or being changed: the next pass tries again.
 */
static bool
claim_item(int64 gid)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(mzcoord_gid_text(gid))};
	bool		found;

	mzcoord_spi_connect();
	if (SPI_execute_with_args("SELECT 1 FROM mzcoord.items i"
							  " WHERE i.id OPERATOR(pg_catalog.=) $1"
							  "   FOR KEY SHARE SKIP LOCKED",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the item of " MZC_GID_FMT, gid);
	found = SPI_processed == 1;
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
		o->new_upper = res.new_upper;
		o->rows = res.rows_changed;
		o->times = res.times;
		o->incremental = res.incremental;
	}
	else
	{
		MzcExportResult res;

		o->did = mzcoord_export_sink(gid, &res);
		o->new_upper = res.new_upper;
		o->rows = res.rows_exported;
		o->times = res.times;
	}
}

/* After a failed step: the back-off, and a WARNING in the server log. */
static void
note_failure(int64 gid, MzcKind kind, ErrorData *edata, int64 failures)
{
	bool		found;
	RetryEntry *e = hash_search(retries, &gid, HASH_ENTER, &found);
	int			secs;

	if (!found)
		e->failures = 0;
	e->failures = failures > 0 ? (int) Min(failures, 30) : e->failures + 1;
	secs = Min(MZC_MAINTAIN_MAX_BACKOFF_S, 1 << Min(e->failures - 1, 6));
	e->retry_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), secs * 1000);
	ereport(WARNING,
			(errcode(edata->sqlerrcode),
			 errmsg("mzcoord: could not %s %s " MZC_GID_FMT ": %s",
					kind == MZC_KIND_SINK ? "export" : "refresh",
					kind == MZC_KIND_SINK ? "sink" : "materialized view",
					gid, edata->message ? edata->message : "unknown error"),
			 errdetail("It is retried in %d seconds; see mzcoord.maintenance_status.",
					   secs)));
}

/*
 * One object's step in a transaction of its own; errors are recorded and
 * retried later, except a cancel or a shutdown, which end the pass.
 */
static void
maintain_one(int64 gid, MzcKind kind)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	MemoryContext xactcxt;
	ResourceOwner xactowner;
	TimestampTz start = GetCurrentTimestamp();
	StepOutcome o;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	/* The subtransaction below returns to these. */
	xactcxt = CurrentMemoryContext;
	xactowner = CurrentResourceOwner;
	pgstat_report_activity(STATE_RUNNING, kind == MZC_KIND_SINK ?
						   "mzcoord sink export" : "mzcoord refresh");
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
	if (!mzcoord_extension_ready())
	{
		PopActiveSnapshot();
		CommitTransactionCommand();
		MemoryContextSwitchTo(oldcxt);
		return;
	}

	BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		run_step(gid, kind, &o);
		/*
		 * Only steps that did work are recorded: an idle view's upper moves
		 * every tick, and a row version per view per tick would only bloat
		 * the table.  A step after failures is always recorded (it clears
		 * them).
		 */
		if (o.did && (o.times > 0 || hash_search(retries, &gid, HASH_FIND, NULL) != NULL))
			(void) record_outcome(gid, &o, NULL,
								  (GetCurrentTimestamp() - start) / 1000.0);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(xactcxt);
		CurrentResourceOwner = xactowner;
		(void) hash_search(retries, &gid, HASH_REMOVE, NULL);
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		int64		failures;

		MemoryContextSwitchTo(xactcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(xactcxt);
		CurrentResourceOwner = xactowner;
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
			ReThrowError(edata);
		failures = record_failure(gid, edata,
								  (GetCurrentTimestamp() - start) / 1000.0);
		note_failure(gid, kind, edata, failures);
	}
	PG_END_TRY();
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(oldcxt);
}

/* Whether the object has work: its inputs are complete beyond its upper. */
static bool
has_work(const MzcMaintainedInfo *m)
{
	return m->inputs_upper.empty || m->upper.ts < m->inputs_upper.ts;
}

/*
 * The coordinator's maintenance pass, after its tick committed (outside a
 * transaction).  Read-only mode writes nothing, so it does nothing.
 */
void
mzcoord_maintain_tick(void)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	MzcMaintainedInfo *list;
	int			n;
	TimestampTz start = GetCurrentTimestamp();
	TimestampTz deadline = TimestampTzPlusMilliseconds(start,
													   Max(mzcoord_tick_interval, 20));
	int			done = 0;

	if (mzcoord_read_only)
		return;
	maintain_init();
	MemoryContextReset(maintain_cxt);
	MemoryContextSwitchTo(maintain_cxt);
	n = mzcoord_ctl_list_maintained(&list);
	if (next_pos >= n)
		next_pos = 0;
	for (int k = 0; k < n; k++)
	{
		MzcMaintainedInfo *m = &list[(next_pos + k) % n];

		if (!has_work(m) || backing_off(m->gid, start))
			continue;
		/* The first step always runs: maintenance must make progress. */
		if (done > 0 && GetCurrentTimestamp() >= deadline)
		{
			next_pos = (next_pos + k) % n;
			break;
		}
		maintain_one(m->gid, m->kind);
		MemoryContextSwitchTo(maintain_cxt);
		done++;
	}
	pgstat_report_activity(STATE_IDLE, NULL);
	MemoryContextSwitchTo(oldcxt);
}
