/*-------------------------------------------------------------------------
 *
 * controller.c
 *	  The controller's shared state: shared memory, readiness, the maps from
 *	  global ids and relations to slots, and the data plane's view.
 *
 * The accounting itself (implied capabilities under P6, counted read
 * capabilities with the S7 checks, dependency holds and their propagation,
 * drops that wait for holds) is the pure core's mzc_collections, placed in
 * shared memory here.  The glue adds what only PostgreSQL can provide:
 * identities (global ids, relations, backends), locking, persistence to the
 * catalog, and SQL; each of those concerns has a file of its own (see
 * controller.h, which also states the locking contract).
 *
 * IDENTIFICATION
 *	  src/controller/controller.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/fmgroids.h"
#include "utils/timestamp.h"

#include "asof.h"
#include "collections.h"
#include "controller.h"
#include "extension.h"
#include "ids.h"
#include "oracle.h"
#include "settings.h"
#include "shmem.h"
#include "counted.h"
#include "frontier.h"
#include "policy.h"
#include "tsselect.h"

StaticAssertDecl(MZC_MAX_INPUTS <= MZC_COLL_MAX_DEPS,
				 "inputs must fit the core's dependency list");

typedef struct MzcGidEntry
{
	int64		gid;
	int32		slot;
} MzcGidEntry;

typedef struct MzcRelEntry
{
	Oid			relid;
	int32		slot;
} MzcRelEntry;

MzcController *mzcoord_ctl = NULL;
mzc_collection *mzcoord_ctl_slots;
MzcSlotInfo *mzcoord_ctl_info;
MzcHoldEntry *mzcoord_ctl_holds;
HTAB	   *mzcoord_ctl_role_hash;
int32	   *mzcoord_ctl_tick_slots;
pg_atomic_uint64 *mzcoord_ctl_last_write;
pg_atomic_uint32 *mzcoord_ctl_written_bits;
int32	   *mzcoord_ctl_news;
bool	   *mzcoord_ctl_news_queued;

static mzc_count_node *ctl_nodes;
static HTAB *gid_hash;
static HTAB *rel_hash;

/* ----------------------------------------------------------------
 * Small helpers
 * ----------------------------------------------------------------
 */

Datum
mzcoord_frontier_datum(mzc_frontier f, bool *isnull)
{
	*isnull = f.empty;
	return Int64GetDatum(f.empty ? 0 : f.ts);
}

/*
 * The live upper of a slot: tables share the timeline's.  A table just
 * registered is complete at its registration time already (no write to it
 * can commit there: its writers commit after its registration), even while
 * other writers keep the shared upper a little behind.
 */
mzc_frontier
mzcoord_ctl_slot_upper(int32 slot, mzc_ts table_upper)
{
	if (mzcoord_ctl_info[slot].kind == MZC_KIND_TABLE &&
		mzcoord_ctl_slots[slot].state == MZC_COLL_ACTIVE)
		return mzc_frontier_join(mzc_frontier_at(table_upper),
								 mzcoord_ctl_slots[slot].upper);
	return mzcoord_ctl_slots[slot].upper;
}

/*
 * What the policy wants the since of slot to be now: its implied
 * capability, and for a table the policy applied to the timeline too (an
 * idle table's implied capability moves only when the tick visits it).
 * Caller holds the lock.
 */
mzc_frontier
mzcoord_ctl_slot_implied(int32 slot, mzc_ts table_upper)
{
	mzc_collection *c = &mzcoord_ctl_slots[slot];

	if (mzcoord_ctl_info[slot].kind != MZC_KIND_TABLE ||
		c->state != MZC_COLL_ACTIVE)
		return c->implied;
	return mzc_frontier_join(c->implied,
							 mzc_policy_frontier(&c->policy,
												 mzcoord_ctl_slot_upper(slot, table_upper)));
}

/* ----------------------------------------------------------------
 * Shared memory
 * ----------------------------------------------------------------
 */

static int32
ctl_nodes_for(int32 capacity, int32 max_holds)
{
	/*
	 * The implied capability, the durable hold and one count per dependency
	 * edge per slot, plus holds.
	 */
	return capacity * (2 + MZC_COLL_MAX_DEPS) + max_holds;
}

Size
mzcoord_controller_shmem_size(void)
{
	int32		capacity = mzcoord_max_collections;
	int32		nnodes = ctl_nodes_for(capacity, mzcoord_max_holds);
	Size		size = MAXALIGN(sizeof(MzcController));

	size = add_size(size, MAXALIGN(mul_size(capacity, sizeof(mzc_collection))));
	size = add_size(size, MAXALIGN(mul_size(capacity, sizeof(MzcSlotInfo))));
	size = add_size(size, MAXALIGN(mul_size(nnodes, sizeof(mzc_count_node))));
	size = add_size(size, MAXALIGN(mul_size(mzcoord_max_holds, sizeof(MzcHoldEntry))));
	size = add_size(size, MAXALIGN(mul_size(capacity, sizeof(int32))));
	size = add_size(size, MAXALIGN(mul_size(capacity, sizeof(pg_atomic_uint64))));
	size = add_size(size, MAXALIGN(mul_size(MZC_WRITTEN_WORDS(capacity),
											sizeof(pg_atomic_uint32))));
	size = add_size(size, MAXALIGN(mul_size(capacity, sizeof(int32))));
	size = add_size(size, MAXALIGN(mul_size(capacity, sizeof(bool))));
	size = add_size(size, hash_estimate_size(capacity, sizeof(MzcGidEntry)));
	size = add_size(size, hash_estimate_size(capacity, sizeof(MzcRelEntry)));
	size = add_size(size, hash_estimate_size(mzcoord_max_holds, sizeof(MzcRoleEntry)));
	return size;
}

/* Empty every structure; caller holds the lock exclusively (or is alone). */
void
mzcoord_ctl_clear(void)
{
	HASH_SEQ_STATUS hs;
	MzcGidEntry *ge;
	MzcRelEntry *re;
	MzcRoleEntry *ro;

	mzc_count_pool_init(&mzcoord_ctl->pool, ctl_nodes, mzcoord_ctl->nnodes);
	mzc_colls_init(&mzcoord_ctl->colls, mzcoord_ctl_slots,
				   mzcoord_ctl->capacity, &mzcoord_ctl->pool);
	memset(mzcoord_ctl_info, 0, sizeof(MzcSlotInfo) * mzcoord_ctl->capacity);

	for (int32 i = 0; i < mzcoord_ctl->max_holds; i++)
	{
		mzcoord_ctl_holds[i].in_use = false;
		mzcoord_ctl_holds[i].next_free =
			(i + 1 < mzcoord_ctl->max_holds) ? i + 1 : -1;
	}
	mzcoord_ctl->hold_free_head = mzcoord_ctl->max_holds > 0 ? 0 : -1;
	mzcoord_ctl->nholds_free = mzcoord_ctl->max_holds;
	mzcoord_ctl->reserved_slots = 0;
	mzcoord_ctl->reserved_nodes = 0;
	mzcoord_ctl->recheck_head = -1;
	mzcoord_ctl->ntick_slots = 0;
	mzcoord_ctl->nnews = 0;
	memset(mzcoord_ctl_news_queued, 0, sizeof(bool) * mzcoord_ctl->capacity);

	hash_seq_init(&hs, gid_hash);
	while ((ge = hash_seq_search(&hs)) != NULL)
		(void) hash_search(gid_hash, &ge->gid, HASH_REMOVE, NULL);
	hash_seq_init(&hs, rel_hash);
	while ((re = hash_seq_search(&hs)) != NULL)
		(void) hash_search(rel_hash, &re->relid, HASH_REMOVE, NULL);
	hash_seq_init(&hs, mzcoord_ctl_role_hash);
	while ((ro = hash_seq_search(&hs)) != NULL)
		(void) hash_search(mzcoord_ctl_role_hash, &ro->role, HASH_REMOVE, NULL);
}

void
mzcoord_controller_shmem_init(LWLock *lock, bool found_unused)
{
	bool		found;
	char	   *p;
	HASHCTL		info;
	int32		capacity = mzcoord_max_collections;

	mzcoord_ctl = ShmemInitStruct("mzcoord controller",
								  mzcoord_controller_shmem_size() -
								  hash_estimate_size(capacity, sizeof(MzcGidEntry)) -
								  hash_estimate_size(capacity, sizeof(MzcRelEntry)) -
								  hash_estimate_size(mzcoord_max_holds, sizeof(MzcRoleEntry)),
								  &found);
	p = (char *) mzcoord_ctl + MAXALIGN(sizeof(MzcController));
	mzcoord_ctl_slots = (mzc_collection *) p;
	p += MAXALIGN(sizeof(mzc_collection) * capacity);
	mzcoord_ctl_info = (MzcSlotInfo *) p;
	p += MAXALIGN(sizeof(MzcSlotInfo) * capacity);
	ctl_nodes = (mzc_count_node *) p;
	p += MAXALIGN(sizeof(mzc_count_node) * ctl_nodes_for(capacity, mzcoord_max_holds));
	mzcoord_ctl_holds = (MzcHoldEntry *) p;
	p += MAXALIGN(sizeof(MzcHoldEntry) * mzcoord_max_holds);
	mzcoord_ctl_tick_slots = (int32 *) p;
	p += MAXALIGN(sizeof(int32) * capacity);
	mzcoord_ctl_last_write = (pg_atomic_uint64 *) p;
	p += MAXALIGN(sizeof(pg_atomic_uint64) * capacity);
	mzcoord_ctl_written_bits = (pg_atomic_uint32 *) p;
	p += MAXALIGN(sizeof(pg_atomic_uint32) * MZC_WRITTEN_WORDS(capacity));
	mzcoord_ctl_news = (int32 *) p;
	p += MAXALIGN(sizeof(int32) * capacity);
	mzcoord_ctl_news_queued = (bool *) p;

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(int64);
	info.entrysize = sizeof(MzcGidEntry);
	gid_hash = ShmemInitHash("mzcoord collections by global id",
							 capacity, capacity, &info,
							 HASH_ELEM | HASH_BLOBS);
	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(MzcRelEntry);
	rel_hash = ShmemInitHash("mzcoord collections by relation",
							 capacity, capacity, &info,
							 HASH_ELEM | HASH_BLOBS);

	/*
	 * Every role entry counts at least one hold entry, so max_holds entries
	 * always suffice.
	 */
	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(MzcRoleEntry);
	mzcoord_ctl_role_hash = ShmemInitHash("mzcoord holds by role",
										  mzcoord_max_holds, mzcoord_max_holds,
										  &info, HASH_ELEM | HASH_BLOBS);

	if (!found)
	{
		memset(mzcoord_ctl, 0, sizeof(MzcController));
		mzcoord_ctl->lock = lock;
		pg_atomic_init_u64(&mzcoord_ctl->epoch, 0);
		pg_atomic_init_u64(&mzcoord_ctl->coordinator_epoch, 0);
		for (int i = 0; i < MZC_CATALOG_TABLES; i++)
		{
			pg_atomic_init_u64(&mzcoord_ctl->catalog_rows[i], 0);
			pg_atomic_init_u64(&mzcoord_ctl->catalog_bytes[i], 0);
		}
		pg_atomic_init_u64(&mzcoord_ctl->bounds_coalesced, 0);
		ConditionVariableInit(&mzcoord_ctl->ready_cv);
		mzcoord_ctl->capacity = capacity;
		mzcoord_ctl->nnodes = ctl_nodes_for(capacity, mzcoord_max_holds);
		mzcoord_ctl->max_holds = mzcoord_max_holds;
		mzcoord_ctl->ready = false;
		for (int32 i = 0; i < capacity; i++)
			pg_atomic_init_u64(&mzcoord_ctl_last_write[i], 0);
		for (int32 i = 0; i < MZC_WRITTEN_WORDS(capacity); i++)
			pg_atomic_init_u32(&mzcoord_ctl_written_bits[i], 0);
		mzcoord_ctl_clear();
	}
}

/* ----------------------------------------------------------------
 * Readiness
 * ----------------------------------------------------------------
 */

/*
 * Functions of the extension already verified against the controller's
 * incarnation (epoch).  A function can only be called while it exists, and
 * it exists only as long as the extension it belongs to, so once one of its
 * calls found the controller ready for the extension that exists, later
 * calls under the same epoch need not look the extension up again (that
 * catalog scan was a third of select_timestamp's cost).
 */
#define MZC_VERIFIED_FNS 16
static Oid	verified_fns[MZC_VERIFIED_FNS];
static int	nverified_fns = 0;
static uint64 verified_epoch = 0;

/*
 * The transaction in which a call last passed the check.  Internal checks
 * (fn_oid invalid) made later in the same transaction, under the same
 * epoch, come after the calling SQL function's own check and skip the
 * lookup too.
 */
static LocalTransactionId verified_lxid = InvalidLocalTransactionId;

/*
 * Was the extension (ext) created by the current transaction?  Remembered
 * per transaction once true.
 */
bool
mzcoord_ctl_extension_created_here(Oid ext)
{
	static LocalTransactionId created_lxid = InvalidLocalTransactionId;
	TransactionId xmin;
	bool		here = false;

	if (!OidIsValid(ext))
		return false;
	if (created_lxid == MyProc->lxid)
		return true;
	if (mzcoord_extension_lookup(ext, NULL, &xmin))
		here = TransactionIdIsCurrentTransactionId(xmin);
	if (here)
		created_lxid = MyProc->lxid;
	return here;
}

/*
 * Wait, up to mzcoord.ready_timeout, until the controller is ready for ext;
 * returns its epoch then.  Raises 57P03 on timeout, or at once when the
 * bootstrap failed (it will not succeed by waiting).
 */
static uint64
wait_until_ready(Oid ext)
{
	TimestampTz deadline = 0;
	uint64		epoch;

	for (;;)
	{
		char		error[MZC_ERROR_LEN];
		bool		ok;

		LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
		ok = mzcoord_ctl->ready && mzcoord_ctl->ext_oid == ext;
		epoch = pg_atomic_read_u64(&mzcoord_ctl->epoch);
		strlcpy(error, mzcoord_ctl->bootstrap_error, sizeof(error));
		LWLockRelease(mzcoord_ctl->lock);
		if (ok)
			break;

		if (deadline == 0)
		{
			deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
												   mzcoord_ready_timeout);
			ConditionVariablePrepareToSleep(&mzcoord_ctl->ready_cv);
			continue;
		}
		if (GetCurrentTimestamp() >= deadline || error[0] != '\0')
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_CANNOT_CONNECT_NOW),
					 errmsg("the mzcoord controller is starting up"),
					 error[0] ? errdetail("Bootstrap failed: %s", error) :
					 errdetail("The coordinator has not loaded the catalog yet."),
					 errhint("See mzcoord.worker_status(); retry once its state is \"running\".")));
		}
		mzcoord_extension_check_waiters();
		(void) ConditionVariableTimedSleep(&mzcoord_ctl->ready_cv, 100,
										   PG_WAIT_EXTENSION);
	}
	if (deadline != 0)
		ConditionVariableCancelSleep();
	return epoch;
}

/*
 * Functions that need the controller call this: the controller must serve
 * this database and have bootstrapped the extension that exists now.  Waits
 * up to mzcoord.ready_timeout, then raises 57P03.  fn_oid is the calling SQL
 * function (fcinfo->flinfo->fn_oid), or InvalidOid from elsewhere.
 */
void
mzcoord_ctl_require_ready_fn(Oid fn_oid)
{
	Oid			ext;
	bool		ok;
	uint64		epoch;
	static Oid	served_db = InvalidOid;

	mzcoord_require_shmem();

	/*
	 * No coordinator runs during recovery.  A hot standby serves read_at
	 * from what it replayed (standby.c); everything else that needs
	 * the controller is refused as PostgreSQL refuses writes there.
	 */
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot use the mzcoord controller during recovery"),
				 errdetail("On a hot standby mzcoord serves read_at, changes, select_timestamp and explain_timestamp only."),
				 errhint("Run this on the primary.")));

	if (served_db != MyDatabaseId)
	{
		char	   *dbname = get_database_name(MyDatabaseId);

		if (dbname == NULL || strcmp(dbname, mzcoord_database) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("mzcoord does not serve database \"%s\"",
							dbname ? dbname : "?"),
					 errdetail("The mzcoord coordinator serves database \"%s\".",
							   mzcoord_database),
					 errhint("Set mzcoord.database and restart the server to serve another database.")));
		served_db = MyDatabaseId;
	}

	/* Not while the extension is being dropped (fails fast, 55000). */
	mzcoord_extension_guard();

	if (OidIsValid(fn_oid) || verified_lxid == MyProc->lxid)
	{
		/*
		 * Read without the lock (see the locking contract in controller.h):
		 * a stale answer only matters while the controller is being reset,
		 * when the caller's own locked section then finds no collection and
		 * fails anyway.
		 */
		pg_read_barrier();
		ok = mzcoord_ctl->ready &&
			pg_atomic_read_u64(&mzcoord_ctl->epoch) == verified_epoch;
		if (ok && !OidIsValid(fn_oid))
			return;
		if (ok)
			for (int i = 0; i < nverified_fns; i++)
				if (verified_fns[i] == fn_oid)
				{
					verified_lxid = MyProc->lxid;
					return;
				}
	}

	ext = get_extension_oid("mzcoord", true);

	/*
	 * A catalog of another version is never served (the coordinator waits
	 * for ALTER EXTENSION mzcoord UPDATE): fail now rather than time out.
	 */
	if (OidIsValid(ext))
		mzcoord_extension_require_current(ext);

	/*
	 * The extension was created by this very transaction: the coordinator
	 * cannot load it before it commits.  Timestamps are valid all the same
	 * (the oracle is set up at server start), and the bootstrap after the
	 * commit loads what the transaction creates.
	 */
	if (mzcoord_ctl_extension_created_here(ext))
		return;
	epoch = wait_until_ready(ext);

	/* Remember the function and transaction as verified for this incarnation. */
	if (verified_epoch != epoch)
	{
		verified_epoch = epoch;
		nverified_fns = 0;
	}
	if (OidIsValid(fn_oid) && nverified_fns < MZC_VERIFIED_FNS)
		verified_fns[nverified_fns++] = fn_oid;
	verified_lxid = MyProc->lxid;
}

/* ----------------------------------------------------------------
 * Lookups (caller holds the lock)
 * ----------------------------------------------------------------
 */

int32
mzcoord_ctl_slot_of_gid(int64 gid)
{
	MzcGidEntry *e = hash_search(gid_hash, &gid, HASH_FIND, NULL);

	return e ? e->slot : -1;
}

int32
mzcoord_ctl_slot_of_rel(Oid relid)
{
	MzcRelEntry *e = hash_search(rel_hash, &relid, HASH_FIND, NULL);

	return e ? e->slot : -1;
}

/* Map a slot's relation; drop mappings go through mzcoord_ctl_unmap_rel. */
void
mzcoord_ctl_map_rel(int32 slot)
{
	MzcRelEntry *e;
	bool		found;

	if (!OidIsValid(mzcoord_ctl_info[slot].relid))
		return;
	e = hash_search(rel_hash, &mzcoord_ctl_info[slot].relid, HASH_ENTER_NULL, &found);
	if (e == NULL)
		return;					/* cannot happen: sized like the slots */
	if (found && e->slot != slot && e->slot >= 0)
		mzcoord_ctl_info[e->slot].relid_mapped = false;
	e->slot = slot;
	mzcoord_ctl_info[slot].relid_mapped = true;
}

void
mzcoord_ctl_unmap_rel(int32 slot)
{
	if (mzcoord_ctl_info[slot].relid_mapped)
	{
		(void) hash_search(rel_hash, &mzcoord_ctl_info[slot].relid, HASH_REMOVE, NULL);
		mzcoord_ctl_info[slot].relid_mapped = false;
	}
}

bool
mzcoord_ctl_map_gid(int32 slot)
{
	MzcGidEntry *e;
	bool		found;

	e = hash_search(gid_hash, &mzcoord_ctl_info[slot].gid, HASH_ENTER_NULL, &found);
	if (e == NULL)
		return false;
	e->slot = slot;
	return true;
}

/* Forget a slot's global id (the slot is gone); caller holds the lock. */
void
mzcoord_ctl_unmap_gid(int32 slot)
{
	(void) hash_search(gid_hash, &mzcoord_ctl_info[slot].gid, HASH_REMOVE, NULL);
}

/* ----------------------------------------------------------------
 * What the tick visits (caller holds the lock exclusively)
 * ----------------------------------------------------------------
 */

/* Put slot on the recheck list (once). */
void
mzcoord_ctl_mark_recheck(int32 slot)
{
	MzcSlotInfo *info = &mzcoord_ctl_info[slot];

	if (info->recheck)
		return;
	info->recheck = true;
	info->recheck_next = mzcoord_ctl->recheck_head;
	mzcoord_ctl->recheck_head = slot;
}

/*
 * Empty the recheck list into out[] (room for capacity slots); returns the
 * number.  Slots marked from now on go on a new list, for the next tick.
 */
int
mzcoord_ctl_take_rechecks(int32 *out)
{
	int			n = 0;
	int32		s = mzcoord_ctl->recheck_head;

	while (s >= 0)
	{
		MzcSlotInfo *info = &mzcoord_ctl_info[s];

		out[n++] = s;
		s = info->recheck_next;
		info->recheck = false;
		info->recheck_next = -1;
	}
	mzcoord_ctl->recheck_head = -1;
	return n;
}

/*
 * Have every tick visit slot if it depends on others or is maintained (a
 * materialized view or sink: the coordinator's dispatch lists them from
 * here) (called once at its creation).  Tables are not visited by every
 * tick: only those on the dirty, recheck or written lists (tick.c).
 */
void
mzcoord_ctl_track_slot(int32 slot)
{
	MzcKind		kind = mzcoord_ctl_info[slot].kind;

	mzcoord_ctl_info[slot].tick_pos = -1;
	if (kind != MZC_KIND_MATERIALIZED_VIEW &&
		kind != MZC_KIND_SINK && mzcoord_ctl_slots[slot].ndeps == 0)
		return;
	mzcoord_ctl_info[slot].tick_pos = mzcoord_ctl->ntick_slots;
	mzcoord_ctl_tick_slots[mzcoord_ctl->ntick_slots++] = slot;
}

/* Stop visiting slot (it is gone); the last entry takes its place. */
void
mzcoord_ctl_untrack_slot(int32 slot)
{
	int32		pos = mzcoord_ctl_info[slot].tick_pos;
	int32		last;

	if (pos < 0)
		return;
	last = mzcoord_ctl_tick_slots[--mzcoord_ctl->ntick_slots];
	mzcoord_ctl_tick_slots[pos] = last;
	mzcoord_ctl_info[last].tick_pos = pos;
	mzcoord_ctl_info[slot].tick_pos = -1;
}

/*
 * The tables written since the tick last looked, into out[] (room for
 * capacity slots); clears their marks.  Returns the number.  A write that
 * commits while this runs is found now or at the next tick: its mark is
 * set after its timestamp, and the tick reads the timestamp after the mark.
 */
int
mzcoord_ctl_take_written_locked(int32 *out)
{
	int			n = 0;

	for (int32 w = 0; w < MZC_WRITTEN_WORDS(mzcoord_ctl->capacity); w++)
	{
		uint32		bits;

		if (pg_atomic_read_u32(&mzcoord_ctl_written_bits[w]) == 0)
			continue;
		bits = pg_atomic_exchange_u32(&mzcoord_ctl_written_bits[w], 0);
		for (int b = 0; b < 32; b++)
			if (bits & ((uint32) 1 << b))
				out[n++] = w * 32 + b;
	}
	return n;
}

/* Mark slot as written for the tick. */
static void
mark_written(int32 slot)
{
	(void) pg_atomic_fetch_or_u32(&mzcoord_ctl_written_bits[slot / 32],
								  (uint32) 1 << (slot % 32));
}

/* The latest commit timestamp of a write to the table in slot. */
mzc_ts
mzcoord_ctl_last_write_locked(int32 slot)
{
	return (mzc_ts) pg_atomic_read_u64(&mzcoord_ctl_last_write[slot]);
}

/*
 * A new slot (a creation, a bootstrap): it may have history up to ts, and
 * the tick looks at it at once.
 */
void
mzcoord_ctl_reset_written_locked(int32 slot, mzc_ts ts)
{
	pg_atomic_write_u64(&mzcoord_ctl_last_write[slot], ts);
	mark_written(slot);
}

/*
 * A transaction that wrote the table relid commits at timestamp ts (called
 * at its pre-commit, after the oracle sealed ts).  Raises the slot's latest
 * write, then marks it for the tick (a full barrier each, so the tick that
 * clears the mark sees the timestamp).  Holds the controller lock shared,
 * so the slot cannot be reused meanwhile; never raises.
 */
void
mzcoord_ctl_note_written(Oid relid, mzc_ts ts)
{
	int32		slot;

	if (mzcoord_ctl == NULL)
		return;
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	slot = mzcoord_ctl->ready ? mzcoord_ctl_slot_of_rel(relid) : -1;
	if (slot >= 0 && mzcoord_ctl_info[slot].kind == MZC_KIND_TABLE)
	{
		pg_atomic_uint64 *last = &mzcoord_ctl_last_write[slot];
		uint64		cur = pg_atomic_read_u64(last);

		while (cur < (uint64) ts &&
			   !pg_atomic_compare_exchange_u64(last, &cur, (uint64) ts))
			;
		mark_written(slot);
	}
	LWLockRelease(mzcoord_ctl->lock);
}

/* ----------------------------------------------------------------
 * The data plane's view
 * ----------------------------------------------------------------
 */

static void
fill_info_locked(int32 slot, MzcCollectionInfo *info)
{
	info->gid = mzcoord_ctl_info[slot].gid;
	info->kind = mzcoord_ctl_info[slot].kind;
	info->relid = mzcoord_ctl_info[slot].relid;
	info->since = mzc_coll_since(&mzcoord_ctl->colls, slot);
	info->upper = mzcoord_ctl_slot_upper(slot, mzcoord_table_upper());
}

/* Copy out the live collection in slot (from a lookup), if active. */
static bool
lookup_info(int32 (*lookup) (Oid, int64), Oid relid, int64 gid,
			MzcCollectionInfo *info)
{
	int32		slot;
	bool		found;

	mzcoord_ctl_require_ready();
	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	slot = lookup(relid, gid);
	found = slot >= 0 && mzcoord_ctl_slots[slot].state == MZC_COLL_ACTIVE;
	if (found)
		fill_info_locked(slot, info);
	LWLockRelease(mzcoord_ctl->lock);
	return found;
}

static int32
by_rel(Oid relid, int64 gid)
{
	return mzcoord_ctl_slot_of_rel(relid);
}

static int32
by_gid(Oid relid, int64 gid)
{
	return mzcoord_ctl_slot_of_gid(gid);
}

/* The live collection a relation is registered as; false if none. */
bool
mzcoord_ctl_lookup_rel(Oid relid, MzcCollectionInfo *info)
{
	return lookup_info(by_rel, relid, 0, info);
}

/* The live collection with this global id; false if none. */
bool
mzcoord_ctl_lookup_gid(int64 gid, MzcCollectionInfo *info)
{
	return lookup_info(by_gid, InvalidOid, gid, info);
}

/*
 * As mzcoord_ctl_lookup_gid, but never waits for readiness: false while the
 * controller is not ready (for the coordinator's own steps).
 */
bool
mzcoord_ctl_peek_gid(int64 gid, MzcCollectionInfo *info)
{
	int32		slot;
	bool		found;

	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	slot = mzcoord_ctl->ready ? mzcoord_ctl_slot_of_gid(gid) : -1;
	found = slot >= 0 && mzcoord_ctl_slots[slot].state == MZC_COLL_ACTIVE;
	if (found)
		fill_info_locked(slot, info);
	LWLockRelease(mzcoord_ctl->lock);
	return found;
}

/* The relation of live collection gid if it is of kind; else InvalidOid. */
Oid
mzcoord_ctl_relation_of(int64 gid, MzcKind kind)
{
	MzcCollectionInfo info;

	if (!mzcoord_ctl_lookup_gid(gid, &info) || info.kind != kind)
		return InvalidOid;
	return info.relid;
}

/*
 * The materialized views and sinks whose upper is not the empty frontier,
 * each with the least upper of its inputs (what it can be brought up to):
 * the work list of the coordinator's dispatch, in one shared-locked visit
 * of the tracked slots (every collection with inputs is tracked).  Returns
 * how many; *out is palloc'd.
 */
int
mzcoord_ctl_list_maintained(MzcMaintainedInfo **out)
{
	/* Allocated before the lock: nothing may fail while it is held. */
	MzcMaintainedInfo *list = palloc(sizeof(MzcMaintainedInfo) *
									 Max(mzcoord_ctl->capacity, 1));
	int			n = 0;

	LWLockAcquire(mzcoord_ctl->lock, LW_SHARED);
	if (mzcoord_ctl->ready)
		for (int32 i = 0; i < mzcoord_ctl->ntick_slots; i++)
		{
			int32		s = mzcoord_ctl_tick_slots[i];
			mzc_collection *c = &mzcoord_ctl_slots[s];
			MzcKind		kind = mzcoord_ctl_info[s].kind;
			mzc_frontier least = mzc_frontier_empty();

			if (c->state != MZC_COLL_ACTIVE || c->upper.empty ||
				(kind != MZC_KIND_MATERIALIZED_VIEW && kind != MZC_KIND_SINK))
				continue;
			for (int d = 0; d < c->ndeps; d++)
				least = mzc_frontier_meet(least,
										  mzcoord_ctl_slot_upper(c->deps[d],
																 mzcoord_ctl->table_upper));
			list[n].gid = mzcoord_ctl_info[s].gid;
			list[n].kind = kind;
			list[n].upper = c->upper;
			list[n].inputs_upper = least;
			n++;
		}
	LWLockRelease(mzcoord_ctl->lock);
	*out = list;
	return n;
}

/* Mark the controller not ready and empty it (the extension is gone). */
void
mzcoord_controller_reset(void)
{
	if (mzcoord_ctl == NULL)
		return;
	LWLockAcquire(mzcoord_ctl->lock, LW_EXCLUSIVE);
	if (mzcoord_ctl->ready)
	{
		mzcoord_ctl_clear();
		(void) pg_atomic_fetch_add_u64(&mzcoord_ctl->epoch, 1);
		pg_atomic_write_u64(&mzcoord_ctl->coordinator_epoch, 0);
		mzcoord_ctl->ready = false;
		mzcoord_ctl->ext_oid = InvalidOid;
	}
	LWLockRelease(mzcoord_ctl->lock);
}
