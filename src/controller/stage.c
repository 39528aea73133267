/*-------------------------------------------------------------------------
 *
 * stage.c
 *	  Transaction-scoped controller state of this backend: staged catalog
 *	  changes, the write timestamp, and the transaction callbacks that
 *	  publish or discard them together with the transaction's read holds.
 *
 * Shared memory is not transactional.  Catalog implications therefore only
 * *stage* controller changes here, in backend-local memory, tagged with the
 * (sub)transaction that staged them.  At PRE_COMMIT the changes are checked
 * and the shared capacity they need is reserved (this may still fail and
 * abort the transaction); at COMMIT they are published, and the transaction's
 * read holds are released, in ONE critical section of the controller lock, so
 * that between the as-of selection of a new object and the enforcement of
 * its own holds on its inputs there is no instant at which an input is
 * unprotected (the handover).  On abort everything is discarded; a rolled
 * back savepoint discards what it staged.  Read holds taken in a savepoint
 * that rolls back are kept until the top-level transaction ends (holding
 * longer is always safe).
 *
 * Prepared transactions cannot keep backend-local state, so PREPARE of a
 * transaction that holds, writes a registered table or staged changes is
 * rejected.
 *
 * Backend exit releases everything through the abort callback (and, as a
 * safety net, readhold.c's before_shmem_exit callback).
 *
 * This module stages and decides when; publish.c checks, reserves and
 * applies, and readhold.c keeps the transaction's holds.
 *
 * IDENTIFICATION
 *	  src/controller/stage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "controller.h"
#include "dispatch.h"
#include "ids.h"
#include "lease.h"
#include "oracle.h"
#include "publish.h"
#include "readhold.h"
#include "shmem.h"
#include "stage.h"
#include "standby.h"
#include "support.h"
#include "frontier.h"

PG_FUNCTION_INFO_V1(mzcoord_stage_collection);
PG_FUNCTION_INFO_V1(mzcoord_stage_policy);
PG_FUNCTION_INFO_V1(mzcoord_stage_drop);
PG_FUNCTION_INFO_V1(mzcoord_stage_inputs);
PG_FUNCTION_INFO_V1(mzcoord_hold_inputs);
PG_FUNCTION_INFO_V1(mzcoord_write_ts_sql);
PG_FUNCTION_INFO_V1(mzcoord_creation_ts_sql);
PG_FUNCTION_INFO_V1(mzcoord_creation_refresh_ts);

/* Staged changes of the current transaction, in TopTransactionContext. */
static List *staged = NIL;

/* Did this transaction reserve shared capacity at PRE_COMMIT? */
static bool reserved = false;
static MzcReservation reservation;

static bool callbacks_registered = false;

static void mzc_xact_callback(XactEvent event, void *arg);
static void mzc_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								 SubTransactionId parentSubid, void *arg);

/*
 * Register the transaction callbacks; called from _PG_init in every process
 * that loads the library with shared memory available.
 */
void
mzcoord_stage_init(void)
{
	mzcoord_register_xact_callbacks(&callbacks_registered,
									mzc_xact_callback, mzc_subxact_callback);
}

/* ----------------------------------------------------------------
 * Staging
 * ----------------------------------------------------------------
 */

static MzcStaged *
mzc_new_staged(MzcStageOp op, int64 gid)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	MzcStaged  *s = palloc0(sizeof(MzcStaged));

	s->op = op;
	s->gid = gid;
	s->nest_level = GetCurrentTransactionNestLevel();
	staged = lappend(staged, s);
	MemoryContextSwitchTo(old);
	return s;
}

/* The CREATE this transaction staged for gid, or NULL. */
static MzcStaged *
mzc_staged_create(int64 gid)
{
	ListCell   *lc;

	foreach(lc, staged)
	{
		MzcStaged  *s = lfirst(lc);

		if (s->op == MZC_STAGE_CREATE && s->gid == gid)
			return s;
	}
	return NULL;
}

/*
 * Split gids in place: those of published collections first (returns their
 * count), then those this transaction staged itself.
 */
static int
mzc_partition_published(int64 *gids, int n)
{
	int			k = 0;

	for (int i = 0; i < n; i++)
		if (mzc_staged_create(gids[i]) == NULL)
		{
			int64		tmp = gids[k];

			gids[k++] = gids[i];
			gids[i] = tmp;
		}
	return k;
}

static int64
mzc_gid_arg(text *t, const char *what)
{
	char	   *s = text_to_cstring(t);
	int64		gid;

	if (!mzcoord_parse_gid(s, &gid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid %s: \"%s\"", what, s),
				 errdetail("Global ids have the form u<N>.")));
	return gid;
}

/* The global id of argument 0 of the _stage_* functions, not null. */
static int64
required_gid_arg(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("global id must not be null")));
	return mzc_gid_arg(PG_GETARG_TEXT_PP(0), "global id");
}

/* Parse a text[] of global ids into a palloc'd array. */
static int64 *
mzc_gid_array(ArrayType *arr, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	int64	   *out;

	mzcoord_text_array_elems(arr, "global ids", &elems, &nulls, n);
	out = palloc(sizeof(int64) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("global ids must not be null")));
		out[i] = mzc_gid_arg(DatumGetTextPP(elems[i]), "global id");
	}
	return out;
}

static mzc_frontier
mzc_frontier_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	int64		v;

	if (PG_ARGISNULL(argno))
		return mzc_frontier_empty();
	v = PG_GETARG_INT64(argno);
	if (!mzc_ts_valid(v))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", what)));
	return mzc_frontier_at(v);
}

/* The input global ids of argument argno (NULL: none), at most MZC_MAX_INPUTS. */
static int64 *
inputs_arg(FunctionCallInfo fcinfo, int argno, int *n)
{
	int64	   *inputs = NULL;

	*n = 0;
	if (!PG_ARGISNULL(argno))
		inputs = mzc_gid_array(PG_GETARG_ARRAYTYPE_P(argno), n);
	if (*n > MZC_MAX_INPUTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a collection cannot have more than %d inputs",
						MZC_MAX_INPUTS)));
	return inputs;
}

/* A copy of inputs[0..n) for the staged change, in the transaction's memory. */
static void
staged_set_inputs(MzcStaged *s, const int64 *inputs, int n)
{
	s->ninputs = n;
	if (n == 0)
		return;
	s->inputs = MemoryContextAlloc(TopTransactionContext, sizeof(int64) * n);
	memcpy(s->inputs, inputs, sizeof(int64) * n);
}

/*
 * SQL: mzcoord._stage_collection(global_id text, item_id text,
 *		relation regclass, kind text, since bigint, upper bigint,
 *		inputs text[])
 */
Datum
mzcoord_stage_collection(PG_FUNCTION_ARGS)
{
	int64		gid;
	char	   *item_id;
	Oid			relid;
	char	   *kindname;
	MzcKind		kind;
	mzc_frontier since;
	mzc_frontier upper;
	int64	   *inputs = NULL;
	int			ninputs = 0;
	MzcStaged  *s;

	mzcoord_require_shmem();
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("global id, item id, relation and kind must not be null")));
	gid = mzc_gid_arg(PG_GETARG_TEXT_PP(0), "global id");
	item_id = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (strlen(item_id) >= MZC_ITEM_ID_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid item id: \"%s\"", item_id)));
	relid = PG_GETARG_OID(2);
	kindname = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (!mzcoord_kind_parse(kindname, &kind))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized item kind: \"%s\"", kindname)));
	since = mzc_frontier_arg(fcinfo, 4, "since");
	upper = mzc_frontier_arg(fcinfo, 5, "upper");
	if (since.empty)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a new collection cannot have an empty since")));
	if (!mzc_frontier_le(since, upper) && !upper.empty)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("since %lld is beyond upper %lld",
						(long long) since.ts, (long long) upper.ts)));
	inputs = inputs_arg(fcinfo, 6, &ninputs);

	/*
	 * Inputs must be live collections now (rechecked at PRE_COMMIT), or be
	 * created by this transaction before this one.
	 */
	if (ninputs > 0)
	{
		int64	   *copy = palloc(sizeof(int64) * ninputs);

		memcpy(copy, inputs, sizeof(int64) * ninputs);
		mzcoord_ctl_check_inputs(copy, mzc_partition_published(copy, ninputs));
	}
	if (mzc_staged_create(gid) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("collection \"%s\" is already being created",
						text_to_cstring(PG_GETARG_TEXT_PP(0)))));
	mzcoord_ctl_require_ready();

	s = mzc_new_staged(MZC_STAGE_CREATE, gid);
	strlcpy(s->item_id, item_id, sizeof(s->item_id));
	s->relid = relid;
	s->kind = kind;
	s->since = since;
	s->upper = upper;
	staged_set_inputs(s, inputs, ninputs);
	PG_RETURN_VOID();
}

/*
 * SQL: mzcoord._stage_inputs(global_id text, inputs text[])
 *
 * A materialized view reads new inputs from now on (its definition was
 * replaced): at commit it holds them where it holds its inputs and lets the
 * old ones go (mzc_coll_set_deps).  The caller holds the new inputs there
 * until then.
 */
Datum
mzcoord_stage_inputs(PG_FUNCTION_ARGS)
{
	int64		gid;
	int64	   *inputs = NULL;
	int			ninputs = 0;
	MzcStaged  *s;

	mzcoord_require_shmem();
	gid = required_gid_arg(fcinfo);
	inputs = inputs_arg(fcinfo, 1, &ninputs);
	if (ninputs > 0)
		mzcoord_ctl_check_inputs(inputs, ninputs);
	mzcoord_ctl_require_ready();

	s = mzc_new_staged(MZC_STAGE_INPUTS, gid);
	staged_set_inputs(s, inputs, ninputs);
	PG_RETURN_VOID();
}

/*
 * SQL: mzcoord._stage_policy(global_id text, retain_history_ms bigint)
 */
Datum
mzcoord_stage_policy(PG_FUNCTION_ARGS)
{
	int64		gid;
	MzcStaged  *s;

	mzcoord_require_shmem();
	gid = required_gid_arg(fcinfo);
	if (!PG_ARGISNULL(1) && PG_GETARG_INT64(1) <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("retain history must be positive")));

	s = mzc_new_staged(MZC_STAGE_POLICY, gid);
	s->retain_ms = PG_ARGISNULL(1) ? MZC_DEFAULT_RETAIN_MS : PG_GETARG_INT64(1);
	PG_RETURN_VOID();
}

/*
 * SQL: mzcoord._stage_drop(global_id text)
 */
Datum
mzcoord_stage_drop(PG_FUNCTION_ARGS)
{
	int64		gid;

	mzcoord_require_shmem();
	gid = required_gid_arg(fcinfo);
	(void) mzc_new_staged(MZC_STAGE_DROP, gid);
	PG_RETURN_VOID();
}

/*
 * Stage the advance of a source's upper: readers see it only once the
 * transaction that wrote the data up to it has committed.  The caller
 * validated the upper (not behind the current one).
 */
void
mzcoord_stage_upper(int64 gid, mzc_frontier upper)
{
	MzcStaged  *s;

	mzcoord_ctl_require_ready();
	s = mzc_new_staged(MZC_STAGE_UPPER, gid);
	s->upper = upper;
}

/*
 * SQL: mzcoord._hold_inputs(global_ids text[]) RETURNS bigint
 *
 * Transaction holds on each input at its current since; returns the least
 * valid read, the as-of of the object being installed.
 */
Datum
mzcoord_hold_inputs(PG_FUNCTION_ARGS)
{
	int64	   *gids;
	int			n;

	mzcoord_require_shmem();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("global ids must not be null")));
	gids = mzc_gid_array(PG_GETARG_ARRAYTYPE_P(0), &n);

	/*
	 * Collections this transaction creates itself cannot move before it
	 * commits: their staged since needs no hold.
	 */
	{
		int			npub = mzc_partition_published(gids, n);
		mzc_ts		least = mzcoord_ctl_hold_gids(gids, npub);

		for (int i = npub; i < n; i++)
		{
			MzcStaged  *s = mzc_staged_create(gids[i]);

			least = Max(least, s->since.ts);
		}
		PG_RETURN_INT64(least);
	}
}

/*
 * SQL: mzcoord._write_ts() RETURNS bigint: the commit timestamp of the
 * current transaction, fixed now (a table's registration time, where its
 * registration copy is recorded).  The transaction holds the table timeline
 * below it until it ends.
 */
Datum
mzcoord_write_ts_sql(PG_FUNCTION_ARGS)
{
	mzcoord_require_shmem();
	mzcoord_ctl_require_ready();
	/* Registers the exit callback that ends the write on backend exit. */
	mzcoord_reserve_local_holds(0);
	/* Its registration copy sees every write sealed so far. */
	(void) mzcoord_oracle_observe(0);
	PG_RETURN_INT64(mzcoord_oracle_seal_early());
}

/*
 * SQL: mzcoord._creation_ts() RETURNS bigint: the creation time of a
 * collection with a timeline of its own (a source, a materialized view
 * without inputs).  Takes no write timestamp.
 */
Datum
mzcoord_creation_ts_sql(PG_FUNCTION_ARGS)
{
	mzcoord_require_shmem();
	mzcoord_ctl_require_ready();
	PG_RETURN_INT64(mzcoord_oracle_now());
}

/*
 * SQL: mzcoord._creation_refresh_ts(global_ids text[]) RETURNS bigint
 *
 * The time of an 'at creation' refresh of a view over these inputs: the
 * creation's strict serializable time, so that it sees every write
 * committed before the call.  For an input on the table timeline (a table,
 * or a view or index, whose times follow the tables) that is the oracle's
 * read timestamp, closing the timeline at every write committed so far;
 * for a source, whose times are its appends, the last time it is complete
 * at (upper - 1).  The caller holds the inputs and raises the view's as-of
 * to this time, so it stays readable until the refresh ran, and it is
 * committed with the view.
 */
Datum
mzcoord_creation_refresh_ts(PG_FUNCTION_ARGS)
{
	int64	   *gids;
	int			n;
	int			npub;
	bool		table_timeline = false;
	mzc_ts		fresh = 0;

	mzcoord_require_shmem();
	mzcoord_ctl_require_ready();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("global ids must not be null")));
	gids = mzc_gid_array(PG_GETARG_ARRAYTYPE_P(0), &n);
	npub = mzc_partition_published(gids, n);

	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	for (int i = 0; i < npub; i++)
	{
		int32		slot = mzcoord_ctl_slot_of_gid(gids[i]);
		mzc_frontier upper;

		if (slot < 0)
			continue;			/* _hold_inputs reports it */
		if (mzcoord_ctl_info[slot].kind != MZC_KIND_SOURCE)
		{
			table_timeline = true;
			continue;
		}
		upper = mzcoord_ctl_slots[slot].upper;
		if (!upper.empty && upper.ts > 0)
			fresh = Max(fresh, upper.ts - 1);
	}
	LWLockRelease(mzcoord_ctl->lock);
	/* Created by this transaction: nothing was written to them before. */
	for (int i = npub; i < n; i++)
	{
		MzcStaged  *st = mzc_staged_create(gids[i]);

		if (st->kind != MZC_KIND_SOURCE)
			table_timeline = true;
	}
	if (table_timeline)
	{
		mzc_ts		table_upper;

		fresh = Max(fresh, mzcoord_oracle_read_ts_upper(&table_upper));
	}
	PG_RETURN_INT64(fresh);
}

/* ----------------------------------------------------------------
 * Transaction callbacks
 * ----------------------------------------------------------------
 */

static void
mzc_discard(void)
{
	if (reserved)
	{
		mzcoord_ctl_unreserve(&reservation);
		reserved = false;
	}
	/* The list lives in TopTransactionContext, which is going away. */
	staged = NIL;
}

static void
mzc_xact_callback(XactEvent event, void *arg)
{
	if (!mzcoord_shmem_attached())
		return;

	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (mzcoord_local_hold_count() > 0 || staged != NIL ||
				mzcoord_has_write_ts() || mzcoord_lease_pending())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot prepare a transaction that holds mzcoord read holds, wrote a registered table, or changed the mzcoord catalog or a lease"),
						 errhint("Commit or roll back the transaction instead.")));
			break;

		case XACT_EVENT_PRE_COMMIT:
			if (staged != NIL)
			{
				mzcoord_ctl_reserve(staged, &reservation);
				reserved = true;
			}
			mzcoord_oracle_pre_commit();
			break;

		case XACT_EVENT_COMMIT:
			mzcoord_standby_release();
			/* Publication and hold release form one critical section. */
			if (staged != NIL || mzcoord_local_hold_count() > 0 ||
				mzcoord_lease_pending())
				mzcoord_ctl_publish(staged, reserved ? &reservation : NULL);
			reserved = false;
			staged = NIL;
			mzcoord_oracle_committed();
			mzcoord_oracle_end_write();
			/* After the write let the timeline go: it can move now. */
			mzcoord_dispatch_end_xact(true);
			break;

		case XACT_EVENT_ABORT:
			mzcoord_standby_release();
			mzc_discard();
			mzcoord_lease_abort();
			mzcoord_release_local_holds();
			mzcoord_oracle_end_write();
			mzcoord_dispatch_end_xact(false);
			break;

		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			break;
	}
}

static void
mzc_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	int			level;
	ListCell   *lc;

	/* Lease changes (lease.c) follow their savepoints too. */
	if (event == SUBXACT_EVENT_ABORT_SUB || event == SUBXACT_EVENT_COMMIT_SUB)
		mzcoord_lease_subxact(GetCurrentTransactionNestLevel(),
							  event == SUBXACT_EVENT_COMMIT_SUB);
	if (staged == NIL)
		return;
	level = GetCurrentTransactionNestLevel();

	switch (event)
	{
		case SUBXACT_EVENT_ABORT_SUB:
			foreach(lc, staged)
			{
				MzcStaged  *s = lfirst(lc);

				if (s->nest_level >= level)
					staged = foreach_delete_current(staged, lc);
			}
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			foreach(lc, staged)
			{
				MzcStaged  *s = lfirst(lc);

				if (s->nest_level >= level)
					s->nest_level = level - 1;
			}
			break;
		default:
			break;
	}
}
