/*-------------------------------------------------------------------------
 *
 * acquire.c
 *	  The relations of a SQL call resolved to collections, and the read
 *	  holds taken on them: mzcoord.acquire_read_hold() and the data plane's
 *	  hold for a read (mzcoord_ctl_hold_for_read).
 *
 * Relations are checked (existence, SELECT privilege) before the controller
 * lock is taken; resolving them to slots and taking the holds happen in one
 * exclusive section, and every error found there is raised after it.
 *
 * IDENTIFICATION
 *	  src/controller/acquire.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/objectaddress.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "acquire.h"
#include "controller.h"
#include "errors.h"
#include "lease.h"
#include "oracle.h"
#include "readhold.h"
#include "shmem.h"
#include "collections.h"
#include "frontier.h"

PG_FUNCTION_INFO_V1(mzcoord_acquire_read_hold);

/* ----------------------------------------------------------------
 * Resolving the relations of a SQL call
 * ----------------------------------------------------------------
 */

/*
 * regclass[] -> distinct relation OIDs, in the order given.  Errors before
 * anything is locked.
 */
MzcTarget *
mzcoord_targets_from_array(ArrayType *arr, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	MzcTarget  *t;
	int			k = 0;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("relations must be given as a one-dimensional array")));
	deconstruct_array(arr, REGCLASSOID, sizeof(Oid), true, TYPALIGN_INT,
					  &elems, &nulls, &nelems);
	if (nelems == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("at least one relation is required")));
	t = palloc0(sizeof(MzcTarget) * nelems);
	for (int i = 0; i < nelems; i++)
	{
		Oid			relid;
		bool		dup = false;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("relations must not be null")));
		relid = DatumGetObjectId(elems[i]);
		if (!OidIsValid(get_rel_relkind(relid)))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("relation with OID %u does not exist", relid)));
		for (int j = 0; j < k; j++)
			dup |= t[j].relid == relid;
		if (!dup)
			t[k++].relid = relid;

		/*
		 * A hold keeps history from being compacted: only those who may read
		 * a relation may hold it.
		 */
		if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(get_rel_relkind(relid)),
						   get_rel_name(relid));
	}
	*n = k;
	return t;
}

char *
mzcoord_qualified_relname(Oid relid)
{
	char	   *rel = get_rel_name(relid);
	char	   *nsp = get_namespace_name(get_rel_namespace(relid));

	if (rel == NULL)
		return psprintf("%u", relid);
	return quote_qualified_identifier(nsp, rel);
}

void
mzcoord_report_not_registered(Oid relid)
{
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("relation \"%s\" is not an mzcoord collection",
					mzcoord_qualified_relname(relid)),
			 errhint("Register a table with mzcoord.create_table(), or create a source or materialized view with mzcoord.")));
}

/*
 * Fill slot, since and upper of every target; caller holds the lock.
 * Returns the index of the first relation that is not a live collection,
 * or -1.
 */
int
mzcoord_resolve_targets_locked(MzcTarget *t, int n, mzc_ts table_upper)
{
	for (int i = 0; i < n; i++)
	{
		int32		slot = mzcoord_ctl_slot_of_rel(t[i].relid);

		if (slot < 0 || mzcoord_ctl_slots[slot].state != MZC_COLL_ACTIVE)
			return i;
		t[i].slot = slot;
		t[i].gid = mzcoord_ctl_info[slot].gid;
		t[i].since = mzc_coll_since(&mzcoord_ctl->colls, slot);
		t[i].upper = mzcoord_ctl_slot_upper(slot, table_upper);
	}
	return -1;
}

/*
 * Are the targets resolved under an earlier (shared) lock still the same
 * live collections, with sinces not beyond ts?  Caller holds the lock.
 */
bool
mzcoord_targets_still_valid_locked(const MzcTarget *t, int n, mzc_ts ts)
{
	for (int i = 0; i < n; i++)
	{
		int32		slot = mzcoord_ctl_slot_of_rel(t[i].relid);

		if (slot != t[i].slot || mzcoord_ctl_slots[slot].state != MZC_COLL_ACTIVE ||
			mzcoord_ctl_info[slot].gid != t[i].gid ||
			!mzc_frontier_le_ts(mzc_coll_since(&mzcoord_ctl->colls, slot), ts))
			return false;
	}
	return true;
}

/* Raise the since violation for the targets whose since is beyond ts. */
void
mzcoord_report_targets_violation(MzcTarget *t, int n, mzc_ts ts)
{
	const char **names = palloc(sizeof(char *) * n);
	mzc_frontier *sinces = palloc(sizeof(mzc_frontier) * n);
	int			k = 0;

	for (int i = 0; i < n; i++)
		if (!mzc_frontier_le_ts(t[i].since, ts))
		{
			names[k] = mzcoord_qualified_relname(t[i].relid);
			sinces[k] = t[i].since;
			k++;
		}
	mzcoord_report_since_violation(ts, k, names, sinces);
}

/* ----------------------------------------------------------------
 * SQL: acquire_read_hold
 * ----------------------------------------------------------------
 */

/*
 * mzcoord.acquire_read_hold(rels regclass[], at bigint DEFAULT NULL)
 *
 * Holds every relation at `at` (NULL: at the least time valid for all of
 * them, the join of their sinces) until the transaction ends.
 */
Datum
mzcoord_acquire_read_hold(PG_FUNCTION_ARGS)
{
	MzcTarget  *t;
	int			n;
	int			bad;
	bool		have_at = !PG_ARGISNULL(1);
	mzc_ts		at = have_at ? PG_GETARG_INT64(1) : 0;
	bool		violation = false;
	bool		nospace = false;
	MzcHoldFailure hf = {0};
	int32	   *slots;
	mzc_ts	   *times;
	mzc_ts		table_upper;
	TimestampTz now;

	mzcoord_require_shmem();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relations must not be null")));
	if (have_at && !mzc_ts_valid(at))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("hold time must not be negative: " INT64_FORMAT, at)));
	t = mzcoord_targets_from_array(PG_GETARG_ARRAYTYPE_P(0), &n);
	mzcoord_ctl_require_ready_fn(fcinfo->flinfo->fn_oid);
	mzcoord_reserve_local_holds(n);
	slots = palloc(sizeof(int32) * n);
	times = palloc(sizeof(mzc_ts) * n);
	table_upper = mzcoord_table_upper();
	now = GetCurrentTimestamp();

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	bad = mzcoord_resolve_targets_locked(t, n, table_upper);
	if (bad < 0)
	{
		mzc_frontier least = mzc_frontier_at(0);

		for (int i = 0; i < n; i++)
			least = mzc_frontier_join(least, t[i].since);
		if (!have_at)
		{
			/* Every since empty is impossible for ACTIVE slots. */
			at = least.empty ? MZC_TS_MAX : least.ts;
		}
		for (int i = 0; i < n; i++)
		{
			violation |= !mzc_frontier_le_ts(t[i].since, at);
			slots[i] = t[i].slot;
			times[i] = at;
		}
		if (!violation)
			nospace = !mzcoord_acquire_holds_locked(slots, times, n, now, &hf);
	}
	LWLockRelease(mzcoord_ctl->lock);

	if (bad >= 0)
		mzcoord_report_not_registered(t[bad].relid);
	if (violation)
		mzcoord_report_targets_violation(t, n, at);
	if (nospace)
		mzcoord_report_no_hold_space(&hf);
	PG_RETURN_INT64(at);
}

/*
 * Make sure this transaction holds relid at a time <= at, taking a hold at
 * `at` if it has none; raises the since violation if at is below the since,
 * 42809 if relid is not a collection.  An active lease of the current user
 * at or below `at` makes the hold unnecessary: returns true then, and the
 * caller must call mzcoord_ctl_check_read() once it has its snapshot, as
 * the lease may expire or be dropped at any moment.
 */
bool
mzcoord_ctl_hold_for_read(Oid relid, mzc_ts at)
{
	MzcTarget	t;
	int			bad;
	bool		covered = false;
	bool		leased = false;
	bool		violation = false;
	bool		nospace = false;
	MzcHoldFailure hf = {0};
	mzc_ts		table_upper;
	TimestampTz now;

	memset(&t, 0, sizeof(t));
	t.relid = relid;
	mzcoord_ctl_require_ready();
	mzcoord_reserve_local_holds(1);
	table_upper = mzcoord_table_upper();
	now = GetCurrentTimestamp();

	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	bad = mzcoord_resolve_targets_locked(&t, 1, table_upper);
	if (bad < 0)
	{
		/* An existing hold of this transaction at or below `at` protects it. */
		covered = mzcoord_local_holds_cover(pg_atomic_read_u64(&mzcoord_ctl->epoch),
											t.slot, at);
		if (!covered)
			leased = covered = mzcoord_lease_covers_locked(t.slot, at,
														   GetUserId(), now);
		violation = !covered && !mzc_frontier_le_ts(t.since, at);
		if (!covered && !violation)
			nospace = !mzcoord_acquire_holds_locked(&t.slot, &at, 1, now, &hf);
	}
	LWLockRelease(mzcoord_ctl->lock);

	if (bad >= 0)
		mzcoord_report_not_registered(relid);
	if (violation)
		mzcoord_report_targets_violation(&t, 1, at);
	if (nospace)
		mzcoord_report_no_hold_space(&hf);
	return leased;
}

/*
 * A read protected by a lease rather than by a hold of its own: is the
 * since still at or below `at`, now that the read has its snapshot?  The
 * since never goes back and compaction never passes it, so every
 * compaction the snapshot can see stopped at or below `at`, and those
 * committed later are invisible to it: the read is exact even if the lease
 * expires or is dropped from now on.  Otherwise the lease went before the
 * snapshot was taken, and the read is refused as a since violation.
 */
void
mzcoord_ctl_check_read(Oid relid, mzc_ts at)
{
	MzcTarget	t;
	int			bad;

	memset(&t, 0, sizeof(t));
	t.relid = relid;
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	bad = mzcoord_resolve_targets_locked(&t, 1, mzcoord_ctl->table_upper);
	LWLockRelease(mzcoord_ctl->lock);
	if (bad >= 0)
		mzcoord_report_not_registered(relid);
	if (!mzc_frontier_le_ts(t.since, at))
		mzcoord_report_targets_violation(&t, 1, at);
}
