/*-------------------------------------------------------------------------
 *
 * introspect.c
 *	  The controller's introspection SQL functions: _controller_collections,
 *	  _controller_holds, _controller_status and _controller_validate.
 *
 * Each copies what it shows out of shared memory under the shared
 * controller lock into memory allocated before, and builds its rows after
 * releasing it.  Nothing here changes the controller; no C code calls these.
 *
 * IDENTIFICATION
 *	  src/funcs/introspect.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "collcheck.h"
#include "collections.h"
#include "controller.h"
#include "ids.h"
#include "oracle.h"
#include "readhold.h"
#include "shmem.h"
#include "frontier.h"

PG_FUNCTION_INFO_V1(mzcoord_controller_collections);
PG_FUNCTION_INFO_V1(mzcoord_controller_holds);
PG_FUNCTION_INFO_V1(mzcoord_controller_status);
PG_FUNCTION_INFO_V1(mzcoord_controller_validate);

static const char *
state_name(mzc_coll_state st)
{
	switch (st)
	{
		case MZC_COLL_FREE:
			return "free";
		case MZC_COLL_ACTIVE:
			return "active";
		case MZC_COLL_DROPPED:
			return "dropped";
		case MZC_COLL_GONE:
			return "gone";
	}
	return "?";
}

typedef struct MzcCollCopy
{
	int32		slot;
	mzc_collection c;
	MzcSlotInfo info;
	mzc_frontier since;
	mzc_frontier upper;
} MzcCollCopy;

/* Copy every live collection out under the shared lock. */
static MzcCollCopy *
copy_collections(int *n)
{
	/* Slots taken after this read are left out, as if created later. */
	int32		room = mzcoord_ctl->colls.high;
	MzcCollCopy *out = palloc(sizeof(MzcCollCopy) * Max(room, 1));
	int			k = 0;
	mzc_ts		table_upper;

	/*
	 * Looking at the frontiers is a read: it closes the table timeline at
	 * the writes committed so far, so that a user sees the upper pass a write
	 * that committed before the look.
	 */
	(void) mzcoord_oracle_read_ts();
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	table_upper = mzcoord_table_upper();
	for (int32 s = 0; s < Min(room, mzcoord_ctl->colls.high); s++)
	{
		if (mzcoord_ctl_slots[s].state == MZC_COLL_FREE || mzcoord_ctl_slots[s].state == MZC_COLL_GONE)
			continue;
		out[k].slot = s;
		out[k].c = mzcoord_ctl_slots[s];
		out[k].info = mzcoord_ctl_info[s];
		out[k].since = mzc_coll_since(&mzcoord_ctl->colls, s);
		out[k].upper = mzcoord_ctl_slot_upper(s, table_upper);
		out[k].c.implied = mzcoord_ctl_slot_implied(s, table_upper);
		k++;
	}
	LWLockRelease(mzcoord_ctl->lock);
	*n = k;
	return out;
}

/*
 * mzcoord._controller_collections(): every collection the controller
 * tracks, with its live frontiers.
 */
Datum
mzcoord_controller_collections(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MzcCollCopy *cs;
	int			n;

	mzcoord_require_shmem();
	InitMaterializedSRF(fcinfo, 0);
	cs = copy_collections(&n);
	for (int i = 0; i < n; i++)
	{
		Datum		v[12];
		bool		nl[12];
		MzcCollCopy *x = &cs[i];

		memset(nl, 0, sizeof(nl));
		v[0] = CStringGetTextDatum(mzcoord_gid_text(x->info.gid));
		v[1] = CStringGetTextDatum(x->info.item_id);
		v[2] = ObjectIdGetDatum(x->info.relid);
		nl[2] = !OidIsValid(x->info.relid);
		v[3] = CStringGetTextDatum(mzcoord_kind_name(x->info.kind));
		v[4] = CStringGetTextDatum(state_name(x->c.state));
		v[5] = mzcoord_frontier_datum(x->since, &nl[5]);
		v[6] = mzcoord_frontier_datum(x->upper, &nl[6]);
		v[7] = mzcoord_frontier_datum(x->c.implied, &nl[7]);
		v[8] = mzcoord_frontier_datum(x->info.durable_since, &nl[8]);
		nl[8] |= !x->info.persisted;
		v[9] = mzcoord_frontier_datum(x->info.durable_upper, &nl[9]);
		nl[9] |= !x->info.persisted;
		v[10] = Int64GetDatum(x->info.retain_ms);
		v[11] = Int32GetDatum(x->c.ndependents);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nl);
	}
	return (Datum) 0;
}

typedef struct MzcHoldCopy
{
	int64		gid;
	Oid			relid;
	const char *kind;
	int			pid;
	BackendId	backend;
	LocalTransactionId lxid;
	char		item_id[MZC_ITEM_ID_LEN];
	mzc_ts		time;
	TimestampTz since;
	mzc_frontier implied;
} MzcHoldCopy;

/*
 * Copy every hold out (hs has room for max_holds plus one per dependency
 * edge); returns the number.  Caller holds the lock.
 */
static int
copy_holds_locked(MzcHoldCopy *hs)
{
	int			n = 0;
	mzc_ts		table_upper = mzcoord_table_upper();

	for (int32 i = 0; i < mzcoord_ctl->max_holds; i++)
	{
		MzcHoldEntry *h = &mzcoord_ctl_holds[i];

		if (!h->in_use)
			continue;
		hs[n].gid = mzcoord_ctl_info[h->slot].gid;
		hs[n].relid = mzcoord_ctl_info[h->slot].relid;
		hs[n].kind = "transaction";
		hs[n].pid = h->pid;
		hs[n].backend = h->backend;
		hs[n].lxid = h->lxid;
		hs[n].item_id[0] = '\0';
		hs[n].time = h->time;
		hs[n].since = h->acquired_at;
		hs[n].implied = mzcoord_ctl_slot_implied(h->slot, table_upper);
		n++;
	}
	for (int32 s = 0; s < mzcoord_ctl->colls.high; s++)
	{
		mzc_collection *c = &mzcoord_ctl_slots[s];

		/* A sealed or dropped view or sink holds nothing any more. */
		if (c->state == MZC_COLL_FREE || c->state == MZC_COLL_GONE ||
			c->dep_hold.empty)
			continue;
		for (int d = 0; d < c->ndeps; d++)
		{
			int32		dep = c->deps[d];

			hs[n].gid = mzcoord_ctl_info[dep].gid;
			hs[n].relid = mzcoord_ctl_info[dep].relid;
			hs[n].kind = "maintained";
			hs[n].pid = 0;
			strlcpy(hs[n].item_id, mzcoord_ctl_info[s].item_id, MZC_ITEM_ID_LEN);
			hs[n].time = c->dep_hold.ts;
			hs[n].since = mzcoord_ctl_info[s].created_at;
			hs[n].implied = mzcoord_ctl_slot_implied(dep, table_upper);
			n++;
		}
	}
	return n;
}

/*
 * mzcoord._controller_holds(): every hold on every collection: transaction
 * holds, and the holds maintained collections keep on their inputs.
 */
Datum
mzcoord_controller_holds(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MzcHoldCopy *hs;
	int			n = 0;
	int			cap;

	mzcoord_require_shmem();
	InitMaterializedSRF(fcinfo, 0);
	cap = mzcoord_ctl->max_holds + mzcoord_ctl->capacity * MZC_COLL_MAX_DEPS;
	hs = palloc(sizeof(MzcHoldCopy) * cap);

	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	n = copy_holds_locked(hs);
	LWLockRelease(mzcoord_ctl->lock);

	for (int i = 0; i < n; i++)
	{
		Datum		v[9];
		bool		nl[9];
		MzcHoldCopy *h = &hs[i];

		memset(nl, 0, sizeof(nl));
		v[0] = CStringGetTextDatum(mzcoord_gid_text(h->gid));
		v[1] = ObjectIdGetDatum(h->relid);
		nl[1] = !OidIsValid(h->relid);
		v[2] = CStringGetTextDatum(h->kind);
		if (h->pid != 0)
		{
			v[3] = Int32GetDatum(h->pid);
			v[4] = CStringGetTextDatum(psprintf("%d/%u", h->backend, h->lxid));
			nl[5] = true;
		}
		else
		{
			nl[3] = nl[4] = true;
			v[5] = CStringGetTextDatum(h->item_id);
		}
		v[6] = Int64GetDatum(h->time);
		v[7] = TimestampTzGetDatum(h->since);
		/* How far this hold keeps the since behind what the policy wants. */
		if (h->implied.empty || h->implied.ts <= h->time)
			v[8] = Int64GetDatum(0);
		else
			v[8] = Int64GetDatum(h->implied.ts - h->time);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nl);
	}
	return (Datum) 0;
}

/*
 * mzcoord._controller_status(): readiness and capacity.
 */
Datum
mzcoord_controller_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		v[11];
	bool		nl[11];
	MzcController copy;
	uint64		epoch;

	mzcoord_require_shmem();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	memcpy(&copy, mzcoord_ctl, sizeof(copy));
	/* The durable epoch the coordinator holds, not the bootstrap counter. */
	epoch = pg_atomic_read_u64(&mzcoord_ctl->coordinator_epoch);
	LWLockRelease(mzcoord_ctl->lock);

	memset(nl, 0, sizeof(nl));
	v[0] = BoolGetDatum(copy.ready);
	v[1] = Int64GetDatum((int64) epoch);
	v[2] = Int64GetDatum(copy.bootstraps);
	v[3] = TimestampTzGetDatum(copy.ready_at);
	nl[3] = copy.ready_at == 0;
	v[4] = Int32GetDatum(copy.capacity - copy.colls.nfree);
	v[5] = Int32GetDatum(copy.capacity);
	v[6] = Int32GetDatum(copy.max_holds - copy.nholds_free);
	v[7] = Int32GetDatum(copy.max_holds);
	v[8] = Int64GetDatum(mzcoord_oracle_readable());
	v[9] = CStringGetTextDatum(copy.bootstrap_error);
	nl[9] = copy.bootstrap_error[0] == '\0';
	v[10] = Float8GetDatum(copy.bootstrap_us / 1000.0);
	nl[10] = copy.ready_at == 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, v, nl)));
}

/*
 * Problems found by validation, formatted into buffers allocated before the
 * controller lock is taken (nothing allocates under it).  Beyond max, more
 * problems are dropped.
 */
typedef struct MzcProblems
{
	char		(*msgs)[3][MZC_ERRMSG_LEN];	/* check, object, detail */
	int			n;
	int			max;
} MzcProblems;

static void add_problem(MzcProblems *p, const char *check, const char *object,
						const char *fmt,...) pg_attribute_printf(4, 5);

static void
add_problem(MzcProblems *p, const char *check, const char *object,
			const char *fmt,...)
{
	va_list		args;

	if (p->n >= p->max)
		return;
	strlcpy(p->msgs[p->n][0], check, MZC_ERRMSG_LEN);
	strlcpy(p->msgs[p->n][1], object, MZC_ERRMSG_LEN);
	va_start(args, fmt);
	vsnprintf(p->msgs[p->n][2], MZC_ERRMSG_LEN, fmt, args);
	va_end(args);
	p->n++;
}

/* since <= upper, and the global id maps to the slot; caller holds the lock. */
static void
validate_slots_locked(MzcProblems *p, mzc_ts table_upper)
{
	for (int32 s = 0; s < mzcoord_ctl->colls.high && p->n < p->max; s++)
	{
		mzc_frontier since;
		mzc_frontier upper;
		char		gid[MZC_ERRMSG_LEN];

		if (mzcoord_ctl_slots[s].state != MZC_COLL_ACTIVE)
			continue;
		snprintf(gid, sizeof(gid), MZC_GID_FMT, mzcoord_ctl_info[s].gid);
		since = mzc_coll_since(&mzcoord_ctl->colls, s);
		upper = mzcoord_ctl_slot_upper(s, table_upper);
		if (!upper.empty && !mzc_frontier_le(since, upper))
			add_problem(p, "since <= upper", gid,
						"since " INT64_FORMAT " is beyond upper " INT64_FORMAT,
						since.ts, upper.ts);
		if (mzcoord_ctl_slot_of_gid(mzcoord_ctl_info[s].gid) != s)
			add_problem(p, "global id map", gid,
						"the global id does not map to its slot");
	}
}

/*
 * since <= every transaction hold, and every hold in use is charged to
 * exactly one role; caller holds the lock.
 */
static void
validate_holds_locked(MzcProblems *p)
{
	int64		charged;
	int64		in_use;

	for (int32 i = 0; i < mzcoord_ctl->max_holds && p->n < p->max; i++)
	{
		MzcHoldEntry *h = &mzcoord_ctl_holds[i];
		char		gid[MZC_ERRMSG_LEN];

		if (!h->in_use)
			continue;
		if (!mzc_frontier_le_ts(mzc_coll_since(&mzcoord_ctl->colls, h->slot),
								h->time))
		{
			snprintf(gid, sizeof(gid), MZC_GID_FMT,
					 mzcoord_ctl_info[h->slot].gid);
			add_problem(p, "since <= hold", gid,
						"hold at " INT64_FORMAT " of pid %d is below the since",
						h->time, h->pid);
		}
	}
	charged = mzcoord_holds_charged_locked();
	in_use = mzcoord_ctl->max_holds - mzcoord_ctl->nholds_free;
	if (charged != in_use)
		add_problem(p, "holds per role", "shared memory",
					INT64_FORMAT " holds are charged to roles, " INT64_FORMAT " are in use",
					charged, in_use);
}

/*
 * mzcoord._controller_validate(): the controller's own invariants, one row
 * per violation: the core's accounting, since <= upper, since <= every
 * transaction hold, the maps, and the holds charged to roles.
 */
Datum
mzcoord_controller_validate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MzcProblems p;
	mzc_error	err;

	mzcoord_require_shmem();
	InitMaterializedSRF(fcinfo, 0);

	p.n = 0;
	p.max = 64;
	p.msgs = palloc(sizeof(*p.msgs) * p.max);
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	if (mzcoord_ctl->ready)
	{
		if (mzc_colls_validate(&mzcoord_ctl->colls, &err) != MZC_OK)
			add_problem(&p, "controller accounting", "shared memory",
						"%s", err.message);
		validate_slots_locked(&p, mzcoord_table_upper());
		validate_holds_locked(&p);
	}
	LWLockRelease(mzcoord_ctl->lock);

	for (int i = 0; i < p.n; i++)
	{
		Datum		v[3];
		bool		nl[3] = {false, false, false};

		v[0] = CStringGetTextDatum(p.msgs[i][0]);
		v[1] = CStringGetTextDatum(p.msgs[i][1]);
		v[2] = CStringGetTextDatum(p.msgs[i][2]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nl);
	}
	return (Datum) 0;
}
