/*-------------------------------------------------------------------------
 *
 * controller.c
 *	  The controller plane: every collection's since, upper, policy and
 *	  counted read capabilities in shared memory, the transaction holds of
 *	  every backend, commit-time publication of staged catalog changes, the
 *	  worker's tick and bootstrap, and the SQL functions built on them.
 *
 * The accounting itself (implied capabilities under P6, counted read
 * capabilities with the S7 checks, dependency holds and their propagation,
 * drops that wait for holds) is the pure core's mzc_collections, placed in
 * shared memory here.  This file adds what only PostgreSQL can provide:
 * identities (global ids, relations, backends), locking, persistence to the
 * catalog, and SQL.
 *
 * LOCKING CONTRACT
 *
 * The controller lock (MzcController.lock, first lock of the "mzcoord"
 * tranche) protects everything in MzcController and the arrays that follow
 * it: the core's collection slots and count pool, the glue's per-slot info,
 * the hold entries, both hash tables (global id -> slot, relation -> slot),
 * the reservation counters, the publication counter (read by a rebuild to
 * notice a publication during its catalog read) and the ready/epoch state.
 * Readers that only copy
 * values out take it shared; everything that changes state takes it
 * exclusive.  ready_cv is broadcast when the controller becomes ready.
 * One exception: the readiness fast path reads `ready` and `epoch` without
 * the lock (aligned words, written only under the exclusive lock); a stale
 * answer is caught by the caller's own locked section, which then finds no
 * collection and fails.
 *
 * Lock order: the controller lock, then the oracle's ceiling lock, then the
 * oracle lock (oracle.c); never the other way round.  The worker-status spinlock (shmem.c) is never held
 * together with either.
 *
 * No code raises an error while holding the controller lock after it changed
 * anything: every function validates its arguments, checks capacity (the
 * core reports it as a value, and operations are all-or-nothing) and
 * reserves backend-local memory before the critical section; errors found
 * inside are carried out and raised after LWLockRelease().  The COMMIT and
 * ABORT paths never raise at all: an unexpected core failure there is logged
 * and makes the next tick rebuild the controller from the catalog.
 *
 * Persistence: the tick writes, in one statement, the durable since and
 * upper of every collection whose values changed (the core's dirty list).
 * The durable since is meet(implied capability, the holds of dependent
 * collections): what the since will be after a restart, when transaction
 * holds are gone.  Each collection keeps one count at the since the catalog
 * has committed (its durable hold, ctl_info[].durable_hold), moved only
 * after the tick's transaction committed: the live since never passes the
 * durable one, so no since regresses across a restart and compaction never
 * passes a durable since.
 *
 * IDENTIFICATION
 *	  src/controller.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "asof.h"
#include "collections.h"
#include "controller.h"
#include "mzcoord.h"
#include "policy.h"
#include "tsselect.h"

StaticAssertDecl(MZC_MAX_INPUTS <= MZC_COLL_MAX_DEPS,
				 "inputs must fit the core's dependency list");

/* Glue-side facts about a core slot. */
typedef struct MzcSlotInfo
{
	int64		gid;
	Oid			relid;
	bool		relid_mapped;	/* rel_hash points at this slot */
	MzcKind		kind;
	char		item_id[MZC_ITEM_ID_LEN];
	int64		retain_ms;
	bool		persisted;		/* durable_* hold what the catalog has */
	mzc_frontier durable_since;
	mzc_frontier durable_upper;
	mzc_frontier durable_hold;	/* one count at the committed since ({}: none) */
	bool		recheck;		/* recompute the durable since next tick */
	TimestampTz created_at;
	TimestampTz persisted_at;	/* when durable_* were last written */
} MzcSlotInfo;

/* Introspection record of one transaction hold. */
typedef struct MzcHoldEntry
{
	bool		in_use;
	int32		slot;
	mzc_ts		time;
	int			pid;
	BackendId	backend;
	Oid			role;			/* charged to this role (holds_by_role) */
	LocalTransactionId lxid;
	TimestampTz acquired_at;
	int32		next_free;
} MzcHoldEntry;

/* Transaction holds charged to one role (mzcoord.max_holds_per_role). */
typedef struct MzcRoleEntry
{
	Oid			role;
	int32		nholds;
} MzcRoleEntry;

/* Why acquire_holds_locked() took no hold. */
typedef enum MzcHoldResult
{
	MZC_HOLD_OK,
	MZC_HOLD_NO_ENTRIES,		/* all mzcoord.max_holds entries in use */
	MZC_HOLD_NO_NODES,			/* the count pool is full */
	MZC_HOLD_BACKEND_LIMIT,		/* mzcoord.max_holds_per_backend */
	MZC_HOLD_ROLE_LIMIT			/* mzcoord.max_holds_per_role */
} MzcHoldResult;

/* What acquire_holds_locked() found, for the error raised after the lock. */
typedef struct MzcHoldFailure
{
	MzcHoldResult result;
	Oid			role;
	int32		held;			/* holds already charged */
	int32		limit;
} MzcHoldFailure;

typedef struct MzcController
{
	LWLock	   *lock;
	ConditionVariable ready_cv;
	bool		ready;			/* bootstrapped for ext_oid */
	Oid			ext_oid;
	Oid			database_oid;
	uint64		epoch;			/* incremented by every (re)bootstrap */
	bool		resync;			/* a persist failed: compare every slot */
	bool		rebootstrap;	/* publication failed: rebuild */
	int32		capacity;
	int32		nnodes;
	int32		max_holds;
	int32		reserved_slots;
	int32		reserved_nodes;
	int32		hold_free_head;
	int32		nholds_free;
	mzc_ts		table_upper;	/* timeline upper at the last tick */
	uint64		publications;	/* catalog changes published so far */
	int64		bootstraps;
	TimestampTz ready_at;
	int64		bootstrap_us;	/* duration of the last bootstrap */
	char		bootstrap_error[MZC_ERROR_LEN];
	mzc_count_pool pool;
	mzc_collections colls;
} MzcController;

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

static MzcController *ctl = NULL;
static mzc_collection *ctl_slots;
static MzcSlotInfo *ctl_info;
static mzc_count_node *ctl_nodes;
static MzcHoldEntry *ctl_holds;
static HTAB *gid_hash;
static HTAB *rel_hash;
static HTAB *role_hash;

PG_FUNCTION_INFO_V1(mzcoord_acquire_read_hold);
PG_FUNCTION_INFO_V1(mzcoord_controller_rebootstrap);
PG_FUNCTION_INFO_V1(mzcoord_select_timestamp);
PG_FUNCTION_INFO_V1(mzcoord_explain_timestamp);
PG_FUNCTION_INFO_V1(mzcoord_controller_collections);
PG_FUNCTION_INFO_V1(mzcoord_controller_holds);
PG_FUNCTION_INFO_V1(mzcoord_controller_status);
PG_FUNCTION_INFO_V1(mzcoord_controller_validate);

/* ----------------------------------------------------------------
 * Small helpers
 * ----------------------------------------------------------------
 */

static const char *const kind_names[] = {
	"table", "source", "materialized_view", "index", "sink"
};

const char *
mzcoord_kind_name(MzcKind kind)
{
	return kind_names[kind];
}

bool
mzcoord_kind_parse(const char *name, MzcKind *kind)
{
	for (int i = 0; i < lengthof(kind_names); i++)
		if (strcmp(name, kind_names[i]) == 0)
		{
			*kind = (MzcKind) i;
			return true;
		}
	return false;
}

bool
mzcoord_parse_gid(const char *text, int64 *gid)
{
	int64		v = 0;

	if (text[0] != 'u' || text[1] < '1' || text[1] > '9')
		return false;
	for (const char *p = text + 1; *p; p++)
	{
		if (*p < '0' || *p > '9')
			return false;
		if (v > (PG_INT64_MAX - (*p - '0')) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	*gid = v;
	return true;
}

static char *
gid_text(int64 gid)
{
	return psprintf("u" INT64_FORMAT, gid);
}

static Datum
frontier_datum(mzc_frontier f, bool *isnull)
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
static mzc_frontier
slot_upper(int32 slot, mzc_ts table_upper)
{
	if (ctl_info[slot].kind == MZC_KIND_TABLE &&
		ctl_slots[slot].state == MZC_COLL_ACTIVE)
		return mzc_frontier_join(mzc_frontier_at(table_upper),
								 ctl_slots[slot].upper);
	return ctl_slots[slot].upper;
}

static mzc_policy
retain_policy(int64 retain_ms)
{
	mzc_policy p;

	if (mzc_policy_lag(retain_ms, MZC_SINCE_GRANULARITY_MS, &p, NULL) != MZC_OK)
		p = mzc_policy_disabled();
	return p;
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
	size = add_size(size, hash_estimate_size(capacity, sizeof(MzcGidEntry)));
	size = add_size(size, hash_estimate_size(capacity, sizeof(MzcRelEntry)));
	size = add_size(size, hash_estimate_size(mzcoord_max_holds, sizeof(MzcRoleEntry)));
	return size;
}

/* Empty every structure; caller holds the lock exclusively (or is alone). */
static void
ctl_clear(void)
{
	HASH_SEQ_STATUS hs;
	MzcGidEntry *ge;
	MzcRelEntry *re;
	MzcRoleEntry *ro;

	mzc_count_pool_init(&ctl->pool, ctl_nodes, ctl->nnodes);
	mzc_colls_init(&ctl->colls, ctl_slots, ctl->capacity, &ctl->pool);
	memset(ctl_info, 0, sizeof(MzcSlotInfo) * ctl->capacity);

	for (int32 i = 0; i < ctl->max_holds; i++)
	{
		ctl_holds[i].in_use = false;
		ctl_holds[i].next_free = (i + 1 < ctl->max_holds) ? i + 1 : -1;
	}
	ctl->hold_free_head = ctl->max_holds > 0 ? 0 : -1;
	ctl->nholds_free = ctl->max_holds;
	ctl->reserved_slots = 0;
	ctl->reserved_nodes = 0;

	hash_seq_init(&hs, gid_hash);
	while ((ge = hash_seq_search(&hs)) != NULL)
		(void) hash_search(gid_hash, &ge->gid, HASH_REMOVE, NULL);
	hash_seq_init(&hs, rel_hash);
	while ((re = hash_seq_search(&hs)) != NULL)
		(void) hash_search(rel_hash, &re->relid, HASH_REMOVE, NULL);
	hash_seq_init(&hs, role_hash);
	while ((ro = hash_seq_search(&hs)) != NULL)
		(void) hash_search(role_hash, &ro->role, HASH_REMOVE, NULL);
}

void
mzcoord_controller_shmem_init(LWLock *lock, bool found_unused)
{
	bool		found;
	char	   *p;
	HASHCTL		info;
	int32		capacity = mzcoord_max_collections;

	ctl = ShmemInitStruct("mzcoord controller",
						  mzcoord_controller_shmem_size() -
						  hash_estimate_size(capacity, sizeof(MzcGidEntry)) -
						  hash_estimate_size(capacity, sizeof(MzcRelEntry)) -
						  hash_estimate_size(mzcoord_max_holds, sizeof(MzcRoleEntry)),
						  &found);
	p = (char *) ctl + MAXALIGN(sizeof(MzcController));
	ctl_slots = (mzc_collection *) p;
	p += MAXALIGN(sizeof(mzc_collection) * capacity);
	ctl_info = (MzcSlotInfo *) p;
	p += MAXALIGN(sizeof(MzcSlotInfo) * capacity);
	ctl_nodes = (mzc_count_node *) p;
	p += MAXALIGN(sizeof(mzc_count_node) * ctl_nodes_for(capacity, mzcoord_max_holds));
	ctl_holds = (MzcHoldEntry *) p;

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
	role_hash = ShmemInitHash("mzcoord holds by role",
							  mzcoord_max_holds, mzcoord_max_holds, &info,
							  HASH_ELEM | HASH_BLOBS);

	if (!found)
	{
		memset(ctl, 0, sizeof(MzcController));
		ctl->lock = lock;
		ConditionVariableInit(&ctl->ready_cv);
		ctl->capacity = capacity;
		ctl->nnodes = ctl_nodes_for(capacity, mzcoord_max_holds);
		ctl->max_holds = mzcoord_max_holds;
		ctl->ready = false;
		ctl_clear();
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
static bool
extension_created_here(Oid ext)
{
	static LocalTransactionId created_lxid = InvalidLocalTransactionId;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		here = false;

	if (!OidIsValid(ext))
		return false;
	if (created_lxid == MyProc->lxid)
		return true;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		here = TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup->t_data));
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (here)
		created_lxid = MyProc->lxid;
	return here;
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
	TimestampTz deadline = 0;
	bool		ok;
	uint64		epoch = 0;
	static Oid	served_db = InvalidOid;

	mzcoord_require_shmem();

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
		 * Read without the lock: both are aligned words written under the
		 * exclusive lock, and a stale answer only matters while the
		 * controller is being reset, when the caller's own locked section
		 * then finds no collection and fails anyway.
		 */
		pg_read_barrier();
		ok = ctl->ready && ctl->epoch == verified_epoch;
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
	 * The extension was created by this very transaction: the coordinator
	 * cannot load it before it commits.  Timestamps are valid all the same
	 * (the oracle is set up at server start), and the bootstrap after the
	 * commit loads what the transaction creates.
	 */
	if (extension_created_here(ext))
		return;
	for (;;)
	{

		char		error[MZC_ERROR_LEN];

		LWLockAcquire(ctl->lock, LW_SHARED);
		ok = ctl->ready && ctl->ext_oid == ext;
		epoch = ctl->epoch;
		strlcpy(error, ctl->bootstrap_error, sizeof(error));
		LWLockRelease(ctl->lock);
		if (ok)
			break;

		if (deadline == 0)
		{
			deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
												   mzcoord_ready_timeout);
			ConditionVariablePrepareToSleep(&ctl->ready_cv);
			continue;
		}
		/* A failed bootstrap will not succeed by waiting: say so now. */
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
		(void) ConditionVariableTimedSleep(&ctl->ready_cv, 100,
										   PG_WAIT_EXTENSION);
	}
	if (deadline != 0)
		ConditionVariableCancelSleep();

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

static int32
lookup_gid(int64 gid)
{
	MzcGidEntry *e = hash_search(gid_hash, &gid, HASH_FIND, NULL);

	return e ? e->slot : -1;
}

static int32
lookup_rel(Oid relid)
{
	MzcRelEntry *e = hash_search(rel_hash, &relid, HASH_FIND, NULL);

	return e ? e->slot : -1;
}

/* Map a slot's relation; drop mappings go through unmap_rel. */
static void
map_rel(int32 slot)
{
	MzcRelEntry *e;
	bool		found;

	if (!OidIsValid(ctl_info[slot].relid))
		return;
	e = hash_search(rel_hash, &ctl_info[slot].relid, HASH_ENTER_NULL, &found);
	if (e == NULL)
		return;					/* cannot happen: sized like the slots */
	if (found && e->slot != slot && e->slot >= 0)
		ctl_info[e->slot].relid_mapped = false;
	e->slot = slot;
	ctl_info[slot].relid_mapped = true;
}

static void
unmap_rel(int32 slot)
{
	if (ctl_info[slot].relid_mapped)
	{
		(void) hash_search(rel_hash, &ctl_info[slot].relid, HASH_REMOVE, NULL);
		ctl_info[slot].relid_mapped = false;
	}
}

static bool
map_gid(int32 slot)
{
	MzcGidEntry *e;
	bool		found;

	e = hash_search(gid_hash, &ctl_info[slot].gid, HASH_ENTER_NULL, &found);
	if (e == NULL)
		return false;
	e->slot = slot;
	return true;
}

/* ----------------------------------------------------------------
 * Holds
 * ----------------------------------------------------------------
 */

/*
 * The effective per-session and per-role limits: -1 means a quarter and a
 * half of the hold entries, so that neither one session nor one role can
 * ever take all of them.
 */
static int32
holds_per_backend_limit(void)
{
	if (mzcoord_max_holds_per_backend >= 0)
		return mzcoord_max_holds_per_backend;
	return Max(ctl->max_holds / 4, 1);
}

static int32
holds_per_role_limit(void)
{
	if (mzcoord_max_holds_per_role >= 0)
		return mzcoord_max_holds_per_role;
	return Max(ctl->max_holds / 2, 1);
}

/* Holds charged to role; caller holds the lock. */
static int32
role_holds_locked(Oid role)
{
	MzcRoleEntry *e = hash_search(role_hash, &role, HASH_FIND, NULL);

	return e ? e->nholds : 0;
}

/*
 * Charge (diff > 0) or credit (diff < 0) role; caller holds the lock
 * exclusively.  Entering cannot fail: each entry stands for at least one of
 * the max_holds hold entries, and the table has room for that many.
 */
static void
role_holds_add_locked(Oid role, int32 diff)
{
	MzcRoleEntry *e;
	bool		found;

	e = hash_search(role_hash, &role, diff > 0 ? HASH_ENTER_NULL : HASH_FIND,
					&found);
	if (e == NULL)
		return;
	if (diff > 0 && !found)
		e->nholds = 0;
	e->nholds += diff;
	if (e->nholds <= 0)
		(void) hash_search(role_hash, &role, HASH_REMOVE, NULL);
}

static int32
hold_entry_alloc(int32 slot, mzc_ts time, Oid role, TimestampTz now)
{
	int32		i = ctl->hold_free_head;
	MzcHoldEntry *h;

	Assert(i >= 0);
	h = &ctl_holds[i];
	ctl->hold_free_head = h->next_free;
	ctl->nholds_free--;
	h->in_use = true;
	h->slot = slot;
	h->time = time;
	h->pid = MyProcPid;
	h->backend = MyBackendId;
	h->role = role;
	role_holds_add_locked(role, 1);
	h->lxid = MyProc->lxid;
	h->acquired_at = now;
	return i;
}

static void
hold_entry_free(int32 i)
{
	if (i < 0 || i >= ctl->max_holds || !ctl_holds[i].in_use)
		return;
	ctl_holds[i].in_use = false;
	role_holds_add_locked(ctl_holds[i].role, -1);
	ctl_holds[i].next_free = ctl->hold_free_head;
	ctl->hold_free_head = i;
	ctl->nholds_free++;
}

/*
 * Release transaction holds (commit, abort, exit).  Never raises: holds of an
 * older controller incarnation are simply forgotten.
 */
static void
release_holds_locked(const MzcLocalHold *holds, int nholds)
{
	for (int i = 0; i < nholds; i++)
	{
		const MzcLocalHold *h = &holds[i];

		if (h->epoch != ctl->epoch)
			continue;
		if (mzc_coll_release(&ctl->colls, h->slot, h->time, NULL, NULL) != MZC_OK)
		{
			elog(WARNING, "mzcoord: could not release a read hold at " INT64_FORMAT,
				 (int64) h->time);
			ctl->rebootstrap = true;
		}
		hold_entry_free(h->entry);
	}
}

void
mzcoord_ctl_release_holds(const MzcLocalHold *holds, int nholds)
{
	if (ctl == NULL || nholds == 0)
		return;
	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	release_holds_locked(holds, nholds);
	LWLockRelease(ctl->lock);
}

/*
 * Acquire one transaction hold per slot at times[i].  The caller holds the
 * lock exclusively, checked every time against the sinces and reserved local
 * room.  The holds are charged to this session and to its current role
 * (the outer user: SET ROLE counts, a SECURITY DEFINER function does not, so
 * a wrapper cannot move a caller's holds to its owner).  Returns false, and
 * takes none, when a limit or shared capacity is lacking (f says which); if
 * the core fails midway, holds acquired before that are recorded and stay
 * until the transaction ends (holding longer is always safe, and the caller
 * raises an error anyway).
 */
static bool
acquire_holds_locked(const int32 *slots, const mzc_ts *times, int n,
					 TimestampTz now, MzcHoldFailure *f)
{
	Oid			role = GetOuterUserId();
	int32		backend_held = mzcoord_local_hold_count();
	int32		role_held;

	memset(f, 0, sizeof(*f));
	f->result = MZC_HOLD_OK;
	f->role = role;
	if (n == 0)
		return true;
	if (backend_held + n > holds_per_backend_limit())
	{
		f->result = MZC_HOLD_BACKEND_LIMIT;
		f->held = backend_held;
		f->limit = holds_per_backend_limit();
		return false;
	}
	role_held = role_holds_locked(role);
	if (role_held + n > holds_per_role_limit())
	{
		f->result = MZC_HOLD_ROLE_LIMIT;
		f->held = role_held;
		f->limit = holds_per_role_limit();
		return false;
	}
	if (ctl->nholds_free < n)
	{
		f->result = MZC_HOLD_NO_ENTRIES;
		return false;
	}
	if (ctl->pool.nfree - ctl->reserved_nodes < n)
	{
		f->result = MZC_HOLD_NO_NODES;
		return false;
	}
	for (int i = 0; i < n; i++)
	{
		MzcLocalHold lh;

		if (mzc_coll_acquire(&ctl->colls, slots[i], times[i], NULL, NULL) != MZC_OK)
		{
			f->result = MZC_HOLD_NO_NODES;
			return false;
		}
		lh.epoch = ctl->epoch;
		lh.slot = slots[i];
		lh.time = times[i];
		lh.entry = hold_entry_alloc(slots[i], times[i], role, now);
		mzcoord_record_local_hold(&lh);
	}
	return true;
}

/* Raise what acquire_holds_locked() found lacking (after the lock). */
static void
report_no_hold_space(const MzcHoldFailure *f)
{
	switch (f->result)
	{
		case MZC_HOLD_OK:
			break;
		case MZC_HOLD_BACKEND_LIMIT:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("too many mzcoord read holds in this session"),
					 errdetail_plural("The session holds %d read hold, and at most %d are allowed.",
									  "The session holds %d read holds, and at most %d are allowed.",
									  f->held, f->held, f->limit),
					 errhint("End the transaction to release its holds, or have a superuser raise mzcoord.max_holds_per_backend.")));
			break;
		case MZC_HOLD_ROLE_LIMIT:
			{
				const char *name = GetUserNameFromId(f->role, true);

				ereport(ERROR,
						(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
						 errmsg("too many mzcoord read holds for role \"%s\"",
								name ? name : "?"),
						 errdetail_plural("The sessions of the role hold %d read hold, and at most %d are allowed.",
										  "The sessions of the role hold %d read holds, and at most %d are allowed.",
										  f->held, f->held, f->limit),
						 errhint("End transactions of the role that hold, or have a superuser raise mzcoord.max_holds_per_role.")));
			}
			break;
		case MZC_HOLD_NO_ENTRIES:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("too many mzcoord read holds"),
					 errdetail("All %d hold entries of shared memory are in use.",
							   mzcoord_max_holds),
					 errhint("Raise mzcoord.max_holds, or end transactions that hold.")));
			break;
		case MZC_HOLD_NO_NODES:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("too many mzcoord read holds"),
					 errdetail("The shared count pool is full or reserved for catalog changes being committed."),
					 errhint("Raise mzcoord.max_collections or mzcoord.max_holds, which size the pool, or end transactions that hold.")));
			break;
	}
}

/* ----------------------------------------------------------------
 * Resolving the relations of a SQL call
 * ----------------------------------------------------------------
 */

/* One relation of a call: its slot and its frontiers when it was resolved. */
typedef struct MzcTarget
{
	Oid			relid;
	int32		slot;
	mzc_frontier since;
	mzc_frontier upper;
	int64		gid;
} MzcTarget;

/*
 * regclass[] -> distinct relation OIDs, in the order given.  Errors before
 * anything is locked.
 */
static MzcTarget *
targets_from_array(ArrayType *arr, int *n)
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

static char *
qualified_relname(Oid relid)
{
	char	   *rel = get_rel_name(relid);
	char	   *nsp = get_namespace_name(get_rel_namespace(relid));

	if (rel == NULL)
		return psprintf("%u", relid);
	return quote_qualified_identifier(nsp, rel);
}

static void
report_not_registered(Oid relid)
{
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("relation \"%s\" is not an mzcoord collection",
					qualified_relname(relid)),
			 errhint("Register a table with mzcoord.create_table(), or create a source or materialized view with mzcoord.")));
}

/*
 * Fill slot, since and upper of every target; caller holds the lock.
 * Returns the index of the first relation that is not a live collection,
 * or -1.
 */
static int
resolve_targets_locked(MzcTarget *t, int n, mzc_ts table_upper)
{
	for (int i = 0; i < n; i++)
	{
		int32		slot = lookup_rel(t[i].relid);

		if (slot < 0 || ctl_slots[slot].state != MZC_COLL_ACTIVE)
			return i;
		t[i].slot = slot;
		t[i].gid = ctl_info[slot].gid;
		t[i].since = mzc_coll_since(&ctl->colls, slot);
		t[i].upper = slot_upper(slot, table_upper);
	}
	return -1;
}

/*
 * Are the targets resolved under an earlier (shared) lock still the same
 * live collections, with sinces not beyond ts?  Caller holds the lock.
 */
static bool
targets_still_valid_locked(const MzcTarget *t, int n, mzc_ts ts)
{
	for (int i = 0; i < n; i++)
	{
		int32		slot = lookup_rel(t[i].relid);

		if (slot != t[i].slot || ctl_slots[slot].state != MZC_COLL_ACTIVE ||
			ctl_info[slot].gid != t[i].gid ||
			!mzc_frontier_le_ts(mzc_coll_since(&ctl->colls, slot), ts))
			return false;
	}
	return true;
}

/* Raise the since violation for the targets whose since is beyond ts. */
static void
report_targets_violation(MzcTarget *t, int n, mzc_ts ts)
{
	const char **names = palloc(sizeof(char *) * n);
	mzc_frontier *sinces = palloc(sizeof(mzc_frontier) * n);
	int			k = 0;

	for (int i = 0; i < n; i++)
		if (!mzc_frontier_le_ts(t[i].since, ts))
		{
			names[k] = qualified_relname(t[i].relid);
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
	t = targets_from_array(PG_GETARG_ARRAYTYPE_P(0), &n);
	mzcoord_ctl_require_ready_fn(fcinfo->flinfo->fn_oid);
	mzcoord_reserve_local_holds(n);
	slots = palloc(sizeof(int32) * n);
	times = palloc(sizeof(mzc_ts) * n);
	table_upper = mzcoord_table_upper();
	now = GetCurrentTimestamp();

	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	bad = resolve_targets_locked(t, n, table_upper);
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
			nospace = !acquire_holds_locked(slots, times, n, now, &hf);
	}
	LWLockRelease(ctl->lock);

	if (bad >= 0)
		report_not_registered(t[bad].relid);
	if (violation)
		report_targets_violation(t, n, at);
	if (nospace)
		report_no_hold_space(&hf);
	PG_RETURN_INT64(at);
}

/* ----------------------------------------------------------------
 * Timestamp selection
 * ----------------------------------------------------------------
 */

typedef struct MzcTsCall
{
	MzcTarget  *targets;
	int			n;
	mzc_isolation isolation;
	mzc_when_kind when;
	mzc_ts		when_ts;
	/* results */
	mzc_ts_input *inputs;
	mzc_ts_constraint *lower;
	int32	   *blocking;
	mzc_ts_result res;
	mzc_status	status;
	mzc_error	err;
	mzc_ts		oracle_ts;
	mzc_ts		table_upper;	/* read after oracle_ts was closed */
	int			bad;
} MzcTsCall;

static void
ts_call_parse(FunctionCallInfo fcinfo, MzcTsCall *c)
{
	char	   *iso;

	memset(c, 0, sizeof(*c));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relations must not be null")));
	iso = PG_ARGISNULL(1) ? "strict serializable" :
		text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (pg_strcasecmp(iso, "serializable") == 0)
		c->isolation = MZC_ISO_SERIALIZABLE;
	else if (pg_strcasecmp(iso, "strict serializable") == 0)
		c->isolation = MZC_ISO_STRICT_SERIALIZABLE;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized isolation level: \"%s\"", iso),
				 errhint("Use \"serializable\" or \"strict serializable\".")));
	if (!PG_ARGISNULL(2) && !PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("as_of and as_of_at_least cannot both be given")));
	c->when = MZC_WHEN_IMMEDIATELY;
	if (!PG_ARGISNULL(2))
	{
		c->when = MZC_WHEN_AS_OF;
		c->when_ts = PG_GETARG_INT64(2);
	}
	else if (!PG_ARGISNULL(3))
	{
		c->when = MZC_WHEN_AS_OF_AT_LEAST;
		c->when_ts = PG_GETARG_INT64(3);
	}
	if (c->when != MZC_WHEN_IMMEDIATELY && !mzc_ts_valid(c->when_ts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timestamp must not be negative: " INT64_FORMAT,
						c->when_ts)));
	c->targets = targets_from_array(PG_GETARG_ARRAYTYPE_P(0), &c->n);
	c->inputs = palloc(sizeof(mzc_ts_input) * c->n);
	c->lower = palloc(sizeof(mzc_ts_constraint) * (c->n + MZC_TS_EXTRA_LOWER));
	c->blocking = palloc(sizeof(int32) * c->n);
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
 * Determine the timestamp; caller holds the lock (any mode) and observed
 * the oracle's read timestamp (c->oracle_ts) before taking it.
 */
static void
ts_call_determine_locked(MzcTsCall *c)
{
	mzc_ts_request req;

	c->bad = resolve_targets_locked(c->targets, c->n, c->table_upper);
	if (c->bad >= 0)
		return;
	for (int i = 0; i < c->n; i++)
	{
		c->inputs[i].since = c->targets[i].since;
		c->inputs[i].upper = c->targets[i].upper;
	}

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

/* Raise what went wrong in a determination (after the lock is released). */
static void
ts_call_report(MzcTsCall *c)
{
	if (c->bad >= 0)
		report_not_registered(c->targets[c->bad].relid);
	if (c->status == MZC_ERR_SINCE_VIOLATION)
		report_targets_violation(c->targets, c->n, c->res.candidate);
	if (c->status != MZC_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("timestamp selection failed: %s", c->err.message)));
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
	LWLockAcquire(ctl->lock, LW_SHARED);
	for (int i = 0; i < c->n && passed; i++)
	{
		int32		slot = c->targets[i].slot;

		if (!mzc_coll_live(&ctl->colls, slot) || ctl_info[slot].gid != c->targets[i].gid)
			continue;			/* dropped while we wait: nothing to wait for */
		if (ctl_info[slot].kind == MZC_KIND_TABLE)
		{
			*has_tables = true;
			continue;
		}
		passed = !mzc_frontier_le_ts(ctl_slots[slot].upper, ts);
	}
	LWLockRelease(ctl->lock);
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
 * mzcoord.select_timestamp(rels regclass[], isolation text,
 *		as_of bigint, as_of_at_least bigint) RETURNS bigint
 */
Datum
mzcoord_select_timestamp(PG_FUNCTION_ARGS)
{
	MzcTsCall	c;
	bool		nospace = false;
	MzcHoldFailure hf = {0};
	int32	   *slots;
	mzc_ts	   *times;
	mzc_ts		chosen;
	TimestampTz now;

	mzcoord_require_shmem();
	ts_call_parse(fcinfo, &c);
	mzcoord_ctl_require_ready_fn(fcinfo->flinfo->fn_oid);
	mzcoord_reserve_local_holds(c.n);
	slots = palloc(sizeof(int32) * c.n);
	times = palloc(sizeof(mzc_ts) * c.n);

	ts_call_oracle_ts(&c);
	now = GetCurrentTimestamp();

	/*
	 * Decide under the shared lock; take the holds under the exclusive one,
	 * after checking that no since moved past the chosen time meanwhile (if
	 * one did, decide again under the exclusive lock).  This keeps the
	 * exclusive section, which every reader's commit also needs, short.
	 */
	LWLockAcquire(ctl->lock, LW_SHARED);
	ts_call_determine_locked(&c);
	LWLockRelease(ctl->lock);
	if (c.bad < 0 && c.status == MZC_OK)
	{
		LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
		if (!targets_still_valid_locked(c.targets, c.n, c.res.timestamp))
			ts_call_determine_locked(&c);
		if (c.bad < 0 && c.status == MZC_OK)
		{
			for (int i = 0; i < c.n; i++)
			{
				slots[i] = c.targets[i].slot;
				times[i] = c.res.timestamp;
			}
			nospace = !acquire_holds_locked(slots, times, c.n, now, &hf);
		}
		LWLockRelease(ctl->lock);
	}

	ts_call_report(&c);
	if (nospace)
		report_no_hold_space(&hf);

	chosen = c.res.timestamp;
	if (!c.res.respond_immediately)
		wait_for_uppers(&c, chosen);
	PG_RETURN_INT64(chosen);
}

/* "1673618185152 (2023-01-13 13:56:25.152)" */
static void
append_ts(StringInfo buf, mzc_ts ts)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int64		secs = ts / 1000;
	Timestamp	t;

	appendStringInfo(buf, INT64_FORMAT, (int64) ts);
	/* Only render dates PostgreSQL can represent. */
	if (secs > (int64) 9000000000000LL / 1000)
		return;
	t = (Timestamp) (ts * 1000) -
		(Timestamp) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
	if (timestamp2tm(t, NULL, &tm, &fsec, NULL, NULL) != 0)
		return;
	appendStringInfo(buf, " (%04d-%02d-%02d %02d:%02d:%02d.%03d)",
					 tm.tm_year, tm.tm_mon, tm.tm_mday,
					 tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (fsec / 1000));
}

static void
append_frontier(StringInfo buf, mzc_frontier f)
{
	appendStringInfoChar(buf, '[');
	if (!f.empty)
		append_ts(buf, f.ts);
	appendStringInfoChar(buf, ']');
}

static void
append_label(StringInfo buf, const char *label)
{
	appendStringInfo(buf, "%31s:", label);
}

static const char *
iso_label(mzc_isolation iso)
{
	switch (iso)
	{
		case MZC_ISO_SERIALIZABLE:
			return "Serializable";
		case MZC_ISO_STRICT_SERIALIZABLE:
			return "StrictSerializable";
		case MZC_ISO_STRONG_SESSION_SERIALIZABLE:
			return "StrongSessionSerializable";
	}
	return "?";
}

static void
append_constraint(StringInfo buf, MzcTsCall *c, const mzc_ts_constraint *k)
{
	appendStringInfoString(buf, "  (");
	switch (k->reason)
	{
		case MZC_REASON_STORAGE_INPUT:
			appendStringInfo(buf, "StorageInput([u" INT64_FORMAT "])",
							 c->targets[k->input].gid);
			break;
		case MZC_REASON_QUERY_AS_OF:
			appendStringInfoString(buf, "QueryAsOf");
			break;
		case MZC_REASON_ISOLATION_LEVEL:
			appendStringInfo(buf, "IsolationLevel(%s)", iso_label(k->isolation));
			break;
		case MZC_REASON_REAL_TIME_RECENCY:
			appendStringInfoString(buf, "RealTimeRecency");
			break;
	}
	appendStringInfoString(buf, "): ");
	append_frontier(buf, k->bound);
	appendStringInfoChar(buf, '\n');
}

/*
 * mzcoord.explain_timestamp(...) RETURNS text: the decision select_timestamp
 * would take now, in the layout of EXPLAIN TIMESTAMP.  Takes no holds.
 */
Datum
mzcoord_explain_timestamp(PG_FUNCTION_ARGS)
{
	MzcTsCall	c;
	StringInfoData buf;

	mzcoord_require_shmem();
	ts_call_parse(fcinfo, &c);
	mzcoord_ctl_require_ready_fn(fcinfo->flinfo->fn_oid);
	ts_call_oracle_ts(&c);

	LWLockAcquire(ctl->lock, LW_SHARED);
	ts_call_determine_locked(&c);
	LWLockRelease(ctl->lock);
	ts_call_report(&c);

	initStringInfo(&buf);
	append_label(&buf, "query timestamp");
	appendStringInfoChar(&buf, ' ');
	append_ts(&buf, c.res.timestamp);
	appendStringInfoChar(&buf, '\n');
	if (c.res.oracle_used)
	{
		append_label(&buf, "oracle read timestamp");
		appendStringInfoChar(&buf, ' ');
		append_ts(&buf, c.oracle_ts);
		appendStringInfoChar(&buf, '\n');
	}
	append_label(&buf, "largest not in advance of upper");
	appendStringInfoChar(&buf, ' ');
	append_ts(&buf, c.res.largest_not_in_advance_of_upper);
	appendStringInfoChar(&buf, '\n');
	append_label(&buf, "upper");
	append_frontier(&buf, c.res.upper);
	appendStringInfoChar(&buf, '\n');
	append_label(&buf, "since");
	append_frontier(&buf, c.res.since);
	appendStringInfoChar(&buf, '\n');
	append_label(&buf, "can respond immediately");
	appendStringInfo(&buf, " %s\n", c.res.respond_immediately ? "true" : "false");
	append_label(&buf, "timeline");
	appendStringInfoString(&buf, " Some(EpochMilliseconds)\n");
	append_label(&buf, "session wall time");
	appendStringInfoChar(&buf, ' ');
	append_ts(&buf, mzcoord_now_ms());
	appendStringInfoString(&buf, "\n");

	for (int i = 0; i < c.n; i++)
	{
		appendStringInfo(&buf, "\nsource %s (u" INT64_FORMAT ", storage):\n",
						 qualified_relname(c.targets[i].relid), c.targets[i].gid);
		append_label(&buf, "read frontier");
		append_frontier(&buf, c.targets[i].since);
		appendStringInfoChar(&buf, '\n');
		append_label(&buf, "write frontier");
		append_frontier(&buf, c.targets[i].upper);
		appendStringInfoChar(&buf, '\n');
	}

	appendStringInfoString(&buf, "\nbinding constraints:\nlower:\n");
	for (int i = 0; i < c.res.nlower; i++)
		append_constraint(&buf, &c, &c.res.lower[i]);
	if (c.res.nupper > 0)
	{
		appendStringInfoString(&buf, "upper:\n");
		for (int i = 0; i < c.res.nupper; i++)
			append_constraint(&buf, &c, &c.res.upper_constraints[i]);
	}

	PG_RETURN_TEXT_P(cstring_to_text(buf.data));
}

/* ----------------------------------------------------------------
 * Staging support: inputs, reservation, publication
 * ----------------------------------------------------------------
 */

/*
 * Check (at staging time) that the inputs are live collections.  Inputs
 * staged by the same transaction are filtered out by the caller.
 */
void
mzcoord_ctl_check_inputs(const int64 *gids, int n)
{
	int			bad = -1;

	if (n == 0)
		return;
	mzcoord_ctl_require_ready();
	LWLockAcquire(ctl->lock, LW_SHARED);
	for (int i = 0; i < n && bad < 0; i++)
	{
		int32		slot = lookup_gid(gids[i]);

		if (slot < 0 || ctl_slots[slot].state != MZC_COLL_ACTIVE)
			bad = i;
	}
	LWLockRelease(ctl->lock);
	if (bad >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("collection \"u" INT64_FORMAT "\" does not exist",
						gids[bad])));
}

/*
 * Transaction holds on each collection at its current since; returns the
 * least valid read (the join of the sinces), or {0} for no input.
 */
mzc_ts
mzcoord_ctl_hold_gids(const int64 *gids, int n)
{
	int32	   *slots = palloc(sizeof(int32) * Max(n, 1));
	mzc_ts	   *times = palloc(sizeof(mzc_ts) * Max(n, 1));
	mzc_frontier least = mzc_frontier_at(0);
	int			bad = -1;
	bool		nospace = false;
	MzcHoldFailure hf = {0};

	TimestampTz now = GetCurrentTimestamp();

	mzcoord_ctl_require_ready();
	mzcoord_reserve_local_holds(n);

	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n && bad < 0; i++)
	{
		int32		slot = lookup_gid(gids[i]);

		if (slot < 0 || ctl_slots[slot].state != MZC_COLL_ACTIVE)
		{
			bad = i;
			break;
		}
		slots[i] = slot;
		times[i] = mzc_coll_since(&ctl->colls, slot).ts;
		least = mzc_frontier_join(least, mzc_frontier_at(times[i]));
	}
	if (bad < 0)
		nospace = !acquire_holds_locked(slots, times, n, now, &hf);
	LWLockRelease(ctl->lock);

	if (bad >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("collection \"u" INT64_FORMAT "\" does not exist",
						gids[bad])));
	if (nospace)
		report_no_hold_space(&hf);
	return least.ts;
}

/*
 * Dependency edges reachable from the collection gid will be when the staged
 * change at position upto is published: a collection staged earlier in the
 * list has the edges computed for it (edges[]), a published one those of
 * the live graph.  Caller holds the lock exclusively (the traversal marks
 * of the core change).  A missing collection counts 0; it is reported.
 */
static int64
staged_gid_edges_locked(List *staged, int upto, const int64 *edges, int64 gid)
{
	int32		slot;

	for (int i = upto - 1; i >= 0; i--)
	{
		MzcStaged  *s = list_nth(staged, i);

		if (s->op == MZC_STAGE_CREATE && s->gid == gid)
			return edges[i];
	}
	slot = lookup_gid(gid);
	return slot >= 0 ? mzc_coll_reachable_edges(&ctl->colls, slot) : 0;
}

/*
 * Pool nodes that publishing the staged changes may need; caller holds the
 * lock exclusively.
 *
 * The core admits an operation only if the pool has a free node for each
 * node its own batch adds plus one per dependency edge reachable from the
 * collection (the propagation moves at most one count per edge), and an
 * admitted operation never uses more than it was admitted for.  COMMIT runs
 * the changes in list order, so reserving the sum of their admission bounds
 * guarantees that every one of them is admitted in turn: no change runs out
 * of nodes mid-publication.  Per change that is
 *
 *	CREATE			2 + inputs (the collection's own count, its durable hold
 *					at the same time, one count on each input);
 *	POLICY, UPPER	1 + E (the implied capability moves);
 *	DROP			2 * (1 + E) (the durable hold is released, then the
 *					implied capability; each may propagate).
 *
 * E is computed from the live graph, not assumed: the edges reachable from
 * a collection never change while it lives (its inputs are fixed at
 * creation and kept alive by its holds on them), so the bound computed at
 * PRE_COMMIT still holds at COMMIT.  For a collection the same transaction
 * creates, E is its inputs plus the edges reachable from each of them.  A
 * plain table has E = 0, so registering or dropping many tables needs a few
 * nodes each, not the worst case of a collection with the deepest graph.
 */
static int64
staged_nodes_locked(List *staged)
{
	int			n = list_length(staged);
	int64	   *edges = palloc0(sizeof(int64) * Max(n, 1));
	int64		max_edges = (int64) ctl->capacity * MZC_COLL_MAX_DEPS;
	int64		nodes = 0;

	for (int i = 0; i < n; i++)
	{
		MzcStaged  *s = list_nth(staged, i);
		int64		e;

		switch (s->op)
		{
			case MZC_STAGE_CREATE:
				e = s->ninputs;
				for (int k = 0; k < s->ninputs; k++)
					e += staged_gid_edges_locked(staged, i, edges, s->inputs[k]);
				edges[i] = Min(e, max_edges);
				nodes += 2 + s->ninputs;
				break;
			case MZC_STAGE_POLICY:
			case MZC_STAGE_UPPER:
				nodes += 1 + staged_gid_edges_locked(staged, i, edges, s->gid);
				break;
			case MZC_STAGE_DROP:
				nodes += 2 * (1 + staged_gid_edges_locked(staged, i, edges, s->gid));
				break;
		}
	}
	pfree(edges);
	return nodes;
}

/* Raise that the count pool cannot take the staged changes. */
static void
report_no_node_space(int64 needed, int32 available)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("too many mzcoord catalog changes in one transaction"),
			 errdetail("Publishing them needs up to " INT64_FORMAT " entries of the shared count pool, and %d are available.",
					   needed, available),
			 errhint("Raise mzcoord.max_collections, which sizes the pool, or make the changes in smaller transactions.")));
}

static bool
staged_creates_gid(List *staged, const MzcStaged *upto, int64 gid)
{
	ListCell   *lc;

	foreach(lc, staged)
	{
		MzcStaged  *s = lfirst(lc);

		if (s == upto)
			break;
		if (s->op == MZC_STAGE_CREATE && s->gid == gid)
			return true;
	}
	return false;
}

/*
 * PRE_COMMIT: check the staged changes against the controller and reserve
 * what publishing them needs.  May raise (the transaction then aborts).
 */
void
mzcoord_ctl_reserve(List *staged, MzcReservation *r)
{
	ListCell   *lc;
	int32		slots = 0;
	int64		nodes = 0;
	int32		nodes_available = 0;
	int64		missing = -1;
	int64		duplicate = -1;
	bool		ready;
	bool		full_slots = false;
	bool		full_nodes = false;

	/*
	 * Created together with the extension: nothing to publish (the
	 * controller cannot serve an extension that is not committed yet); the
	 * coordinator's bootstrap loads it all from the catalog after the commit.
	 */
	if (extension_created_here(get_extension_oid("mzcoord", true)))
	{
		r->epoch = PG_UINT64_MAX;
		r->slots = 0;
		r->nodes = 0;
		return;
	}

	foreach(lc, staged)
	{
		MzcStaged  *s = lfirst(lc);

		slots += s->op == MZC_STAGE_CREATE ? 1 : 0;
	}

	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	ready = ctl->ready;
	if (ready)
	{
		foreach(lc, staged)
		{
			MzcStaged  *s = lfirst(lc);

			if (s->op == MZC_STAGE_CREATE)
			{
				if (lookup_gid(s->gid) >= 0 || staged_creates_gid(staged, s, s->gid))
					duplicate = s->gid;
				for (int i = 0; i < s->ninputs; i++)
				{
					int32		slot = lookup_gid(s->inputs[i]);

					if ((slot < 0 || !mzc_coll_live(&ctl->colls, slot)) &&
						!staged_creates_gid(staged, s, s->inputs[i]))
						missing = s->inputs[i];
				}
			}
			else if (lookup_gid(s->gid) < 0 && !staged_creates_gid(staged, s, s->gid))
				missing = s->gid;
		}
		nodes = staged_nodes_locked(staged);
		nodes_available = ctl->pool.nfree - ctl->reserved_nodes;
		full_slots = ctl->colls.nfree - ctl->reserved_slots < slots;
		full_nodes = nodes_available < nodes;
		if (missing < 0 && duplicate < 0 && !full_slots && !full_nodes)
		{
			ctl->reserved_slots += slots;
			ctl->reserved_nodes += (int32) nodes;
			r->epoch = ctl->epoch;
			r->slots = slots;
			r->nodes = (int32) nodes;
		}
	}
	LWLockRelease(ctl->lock);

	if (!ready)
		ereport(ERROR,
				(errcode(ERRCODE_CANNOT_CONNECT_NOW),
				 errmsg("the mzcoord controller is starting up"),
				 errdetail("Catalog changes cannot be published before the coordinator loaded the catalog.")));
	if (missing >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("collection \"u" INT64_FORMAT "\" does not exist", missing)));
	if (duplicate >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("collection \"u" INT64_FORMAT "\" already exists", duplicate)));
	if (full_slots)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many mzcoord collections"),
				 errdetail("All %d collection slots of shared memory are in use.",
						   mzcoord_max_collections),
				 errhint("Raise mzcoord.max_collections, or drop collections.")));
	if (full_nodes)
		report_no_node_space(nodes, nodes_available);
}

void
mzcoord_ctl_unreserve(const MzcReservation *r)
{
	if (ctl == NULL)
		return;
	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	if (r->epoch == ctl->epoch)
	{
		ctl->reserved_slots -= r->slots;
		ctl->reserved_nodes -= r->nodes;
	}
	LWLockRelease(ctl->lock);
}

static mzc_policy
policy_for(MzcKind kind, int64 retain_ms)
{
	/* A sink is write-only: it only needs its input up to its progress. */
	if (kind == MZC_KIND_SINK)
		return mzc_policy_step_back();
	return retain_policy(retain_ms);
}

/*
 * The durable hold: one count at the since the catalog has committed, so
 * that the live since never passes what a restart would bring back (no
 * since regresses across a crash, and compaction, which follows the live
 * since, never passes a durable one).  The tick moves it forward once it has
 * made a later since durable.  A new collection's since is committed with
 * its catalog row, in the transaction that publishes it.
 */
static bool
durable_hold_init_locked(int32 slot, mzc_error *err)
{
	mzc_frontier since = mzc_coll_since(&ctl->colls, slot);

	if (since.empty)
		return true;
	if (mzc_coll_acquire(&ctl->colls, slot, since.ts, NULL, err) != MZC_OK)
		return false;
	ctl_info[slot].durable_hold = since;
	return true;
}

/* Release the durable hold (the collection is dropped); caller holds the lock. */
static bool
durable_hold_release_locked(int32 slot, mzc_error *err)
{
	mzc_frontier hold = ctl_info[slot].durable_hold;

	if (hold.empty)
		return true;
	ctl_info[slot].durable_hold = mzc_frontier_empty();
	return mzc_coll_release(&ctl->colls, slot, hold.ts, NULL, err) == MZC_OK;
}

/*
 * Move the durable hold up to a since the catalog now has; caller holds the
 * lock.  Never back.  On a core failure (no pool node for the propagation)
 * the hold stays where it is, which is always safe; the next tick retries.
 */
static void
durable_hold_advance_locked(int32 slot, mzc_frontier since)
{
	mzc_frontier hold = ctl_info[slot].durable_hold;
	mzc_error	err;

	if (hold.empty || !mzc_frontier_lt(hold, since))
		return;
	if (mzc_coll_downgrade(&ctl->colls, slot, hold.ts, since, NULL, &err) == MZC_OK)
		ctl_info[slot].durable_hold = since;
	else
		ctl_info[slot].recheck = true;
}

/*
 * Create a collection in the core and map it; caller holds the lock.
 * Returns false on a core failure (reported in err).
 */
static bool
create_locked(int64 gid, const char *item_id, Oid relid, MzcKind kind,
			  mzc_frontier since, mzc_frontier upper,
			  const int32 *deps, int ndeps, int32 *slot_out, mzc_error *err)
{
	mzc_coll_create_args args;
	int32		slot;

	memset(&args, 0, sizeof(args));
	args.shard_since = since;
	args.requested_since = mzc_frontier_at(0);
	args.is_table = kind == MZC_KIND_TABLE;
	args.register_ts = since.empty ? 0 : since.ts;
	args.upper = kind == MZC_KIND_TABLE ? mzc_frontier_join(upper, since) : upper;
	args.deps = deps;
	args.ndeps = ndeps;
	args.hold_deps_at_since = true;
	if (mzc_coll_create(&ctl->colls, &args, &slot, err) != MZC_OK)
		return false;

	memset(&ctl_info[slot], 0, sizeof(MzcSlotInfo));
	ctl_info[slot].gid = gid;
	ctl_info[slot].relid = relid;
	ctl_info[slot].kind = kind;
	strlcpy(ctl_info[slot].item_id, item_id, MZC_ITEM_ID_LEN);
	ctl_info[slot].retain_ms = MZC_DEFAULT_RETAIN_MS;
	ctl_info[slot].created_at = GetCurrentTimestamp();
	ctl_info[slot].recheck = true;
	ctl_info[slot].durable_hold = mzc_frontier_empty();
	if (!durable_hold_init_locked(slot, err))
		return false;
	if (!map_gid(slot))
	{
		snprintf(err->message, sizeof(err->message), "global id table is full");
		return false;
	}
	map_rel(slot);
	*slot_out = slot;
	return true;
}

static bool
apply_staged_locked(const MzcStaged *s, mzc_error *err)
{
	int32		slot;

	switch (s->op)
	{
		case MZC_STAGE_CREATE:
			{
				int32		deps[MZC_MAX_INPUTS];

				for (int i = 0; i < s->ninputs; i++)
				{
					deps[i] = lookup_gid(s->inputs[i]);
					if (deps[i] < 0)
					{
						snprintf(err->message, sizeof(err->message),
								 "input u" INT64_FORMAT " is missing", s->inputs[i]);
						return false;
					}
				}
				return create_locked(s->gid, s->item_id, s->relid, s->kind,
									 s->since, s->upper, deps, s->ninputs,
									 &slot, err);
			}
		case MZC_STAGE_POLICY:
			{
				mzc_policy p;

				slot = lookup_gid(s->gid);
				if (slot < 0 || ctl_slots[slot].state != MZC_COLL_ACTIVE)
					return true;	/* dropped meanwhile: nothing to govern */
				ctl_info[slot].retain_ms = s->retain_ms;
				p = policy_for(ctl_info[slot].kind, s->retain_ms);
				return mzc_coll_set_policy(&ctl->colls, slot, &p, NULL, err) == MZC_OK;
			}
		case MZC_STAGE_DROP:
			slot = lookup_gid(s->gid);
			if (slot < 0)
				return true;
			unmap_rel(slot);
			if (!durable_hold_release_locked(slot, err))
				return false;
			return mzc_coll_drop(&ctl->colls, slot, NULL, err) == MZC_OK;
		case MZC_STAGE_UPPER:
			slot = lookup_gid(s->gid);
			if (slot < 0 || !mzc_coll_live(&ctl->colls, slot))
				return true;
			return mzc_coll_advance_upper(&ctl->colls, slot, s->upper,
										  NULL, err) == MZC_OK;
	}
	return true;
}

/*
 * COMMIT: publish the staged changes and release the transaction's holds in
 * one critical section (the handover).  Never raises.
 */
void
mzcoord_ctl_publish(List *staged, const MzcReservation *r,
					const MzcLocalHold *holds, int nholds)
{
	ListCell   *lc;

	if (ctl == NULL)
		return;
	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	if (r != NULL && r->epoch == ctl->epoch)
	{
		ctl->publications++;
		ctl->reserved_slots -= r->slots;
		ctl->reserved_nodes -= r->nodes;
		foreach(lc, staged)
		{
			mzc_error	err;

			err.message[0] = '\0';
			if (!apply_staged_locked(lfirst(lc), &err))
			{
				elog(WARNING, "mzcoord: could not publish a catalog change: %s; the controller will be rebuilt from the catalog",
					 err.message);
				ctl->rebootstrap = true;
			}
		}
	}
	release_holds_locked(holds, nholds);
	LWLockRelease(ctl->lock);

	/* Readers may wait for an upper that this commit advanced. */
	foreach(lc, staged)
		if (((MzcStaged *) lfirst(lc))->op == MZC_STAGE_UPPER)
		{
			mzcoord_upper_advanced();
			break;
		}
}

/* ----------------------------------------------------------------
 * The data plane's view
 * ----------------------------------------------------------------
 */

static void
fill_info_locked(int32 slot, MzcCollectionInfo *info)
{
	info->gid = ctl_info[slot].gid;
	info->kind = ctl_info[slot].kind;
	info->relid = ctl_info[slot].relid;
	info->since = mzc_coll_since(&ctl->colls, slot);
	info->upper = slot_upper(slot, mzcoord_table_upper());
}

/* Copy out the live collection in slot (from a lookup), if active. */
static bool
lookup_info(int32 (*lookup) (Oid, int64), Oid relid, int64 gid,
			MzcCollectionInfo *info)
{
	int32		slot;
	bool		found;

	mzcoord_ctl_require_ready();
	LWLockAcquire(ctl->lock, LW_SHARED);
	slot = lookup(relid, gid);
	found = slot >= 0 && ctl_slots[slot].state == MZC_COLL_ACTIVE;
	if (found)
		fill_info_locked(slot, info);
	LWLockRelease(ctl->lock);
	return found;
}

static int32
by_rel(Oid relid, int64 gid)
{
	return lookup_rel(relid);
}

static int32
by_gid(Oid relid, int64 gid)
{
	return lookup_gid(gid);
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
 * Make sure this transaction holds relid at a time <= at, taking a hold at
 * `at` if it has none; raises the since violation if at is below the since,
 * 42809 if relid is not a collection.
 */
void
mzcoord_ctl_hold_for_read(Oid relid, mzc_ts at)
{
	MzcTarget	t;
	int			bad;
	bool		covered = false;
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

	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	bad = resolve_targets_locked(&t, 1, table_upper);
	if (bad < 0)
	{
		/* An existing hold of this transaction at or below `at` protects it. */
		covered = mzcoord_local_holds_cover(ctl->epoch, t.slot, at);
		violation = !covered && !mzc_frontier_le_ts(t.since, at);
		if (!covered && !violation)
			nospace = !acquire_holds_locked(&t.slot, &at, 1, now, &hf);
	}
	LWLockRelease(ctl->lock);

	if (bad >= 0)
		report_not_registered(relid);
	if (violation)
		report_targets_violation(&t, 1, at);
	if (nospace)
		report_no_hold_space(&hf);
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
	LWLockAcquire(ctl->lock, LW_SHARED);
	c.bad = resolve_targets_locked(c.targets, 1, c.oracle_ts + 1);
	LWLockRelease(ctl->lock);
	if (c.bad >= 0)
		report_not_registered(relid);
	wait_for_uppers(&c, at);
}

/* Every active collection with its live frontiers (for compaction). */
int
mzcoord_ctl_list_collections(MzcCollectionInfo **out)
{
	MzcCollectionInfo *infos = palloc(sizeof(MzcCollectionInfo) * ctl->capacity);
	int			n = 0;

	LWLockAcquire(ctl->lock, LW_SHARED);
	if (ctl->ready)
		for (int32 s = 0; s < ctl->capacity; s++)
			if (ctl_slots[s].state == MZC_COLL_ACTIVE)
				fill_info_locked(s, &infos[n++]);
	LWLockRelease(ctl->lock);
	*out = infos;
	return n;
}

/* ----------------------------------------------------------------
 * Bootstrap
 * ----------------------------------------------------------------
 */

/* One collection as the catalog describes it. */
typedef struct MzcBootRow
{
	int64		gid;
	char		item_id[MZC_ITEM_ID_LEN];
	MzcKind		kind;
	Oid			relid;
	bool		is_primary;
	mzc_frontier since;
	mzc_frontier upper;
	int64		retain_ms;
	int			ninputs;
	int64		inputs[MZC_MAX_INPUTS];
	int32		slot;			/* once created */
	int32		dataflow;		/* index into the as-of dataflows, or -1 */
} MzcBootRow;

/*
 * Every name is qualified even though the coordinator pins search_path: the
 * query runs as superuser (see mzc_pin_search_path in worker.c).
 */
static const char *const boot_query =
"SELECT c.global_id, c.item_id, i.kind, i.relation::pg_catalog.oid,"
"       c.primary_id IS NULL,"
"       coalesce(c.since, c.as_of), c.upper,"
"       (pg_catalog.extract('epoch', i.retain_history)"
"        OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8,"
"       (SELECT pg_catalog.array_agg(ii.input_global_id ORDER BY ii.input_global_id)"
"          FROM mzcoord.item_inputs ii"
"         WHERE ii.item_id OPERATOR(pg_catalog.=) c.item_id)"
"  FROM mzcoord.collections c JOIN mzcoord.items i"
"    ON i.id OPERATOR(pg_catalog.=) c.item_id"
" ORDER BY pg_catalog.length(c.global_id), c.global_id";

static mzc_frontier
spi_frontier(HeapTuple tup, TupleDesc desc, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, desc, col, &isnull);

	return isnull ? mzc_frontier_empty() : mzc_frontier_at(DatumGetInt64(d));
}

/* Read the catalog (inside the worker's transaction, SPI connected). */
static MzcBootRow *
boot_read_catalog(int *nrows)
{
	MzcBootRow *rows;
	uint64		n;

	if (SPI_execute(boot_query, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "mzcoord: could not read the catalog");
	n = SPI_processed;
	rows = palloc0(sizeof(MzcBootRow) * Max(n, 1));
	for (uint64 r = 0; r < n; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MzcBootRow *row = &rows[r];
		bool		isnull;
		char	   *s;
		Datum		d;

		s = SPI_getvalue(tup, desc, 1);
		if (!mzcoord_parse_gid(s, &row->gid))
			elog(ERROR, "mzcoord: invalid global id in the catalog: %s", s);
		strlcpy(row->item_id, SPI_getvalue(tup, desc, 2), MZC_ITEM_ID_LEN);
		s = SPI_getvalue(tup, desc, 3);
		if (!mzcoord_kind_parse(s, &row->kind))
			elog(ERROR, "mzcoord: invalid item kind in the catalog: %s", s);
		d = SPI_getbinval(tup, desc, 4, &isnull);
		row->relid = isnull ? InvalidOid : DatumGetObjectId(d);
		row->is_primary = DatumGetBool(SPI_getbinval(tup, desc, 5, &isnull));
		row->since = spi_frontier(tup, desc, 6);
		row->upper = spi_frontier(tup, desc, 7);
		d = SPI_getbinval(tup, desc, 8, &isnull);
		row->retain_ms = isnull ? MZC_DEFAULT_RETAIN_MS : DatumGetInt64(d);
		d = SPI_getbinval(tup, desc, 9, &isnull);
		if (!isnull && row->is_primary)
		{
			ArrayType  *arr = DatumGetArrayTypeP(d);
			Datum	   *elems;
			bool	   *nulls;
			int			ne;

			deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT,
							  &elems, &nulls, &ne);
			if (ne > MZC_MAX_INPUTS)
				elog(ERROR, "mzcoord: collection %s has more than %d inputs",
					 SPI_getvalue(tup, desc, 1), MZC_MAX_INPUTS);
			for (int i = 0; i < ne; i++)
				if (!mzcoord_parse_gid(TextDatumGetCString(elems[i]),
									   &row->inputs[i]))
					elog(ERROR, "mzcoord: invalid input id in the catalog");
			row->ninputs = ne;
		}
		row->slot = -1;
		row->dataflow = -1;
	}
	*nrows = (int) n;
	return rows;
}

static int
boot_find(MzcBootRow *rows, int n, int64 gid)
{
	for (int i = 0; i < n; i++)
		if (rows[i].gid == gid)
			return i;
	return -1;
}

/*
 * As-of selection (reference 2.6) for every maintained object: the durable
 * frontiers of the storage collections are the hard constraints.  Sets the
 * since each maintained collection starts at.
 */
static void
boot_select_as_ofs(MzcBootRow *rows, int n)
{
	mzc_asof_storage *storage = palloc0(sizeof(mzc_asof_storage) * Max(n, 1));
	mzc_asof_dataflow *dfs = palloc0(sizeof(mzc_asof_dataflow) * Max(n, 1));
	int32	   *inputs = palloc0(sizeof(int32) * Max(n, 1) * MZC_MAX_INPUTS);
	int			ndf = 0;
	mzc_asof_request req;
	mzc_error	err;

	for (int i = 0; i < n; i++)
	{
		storage[i].since = rows[i].since;
		storage[i].upper = rows[i].upper;
	}
	for (int i = 0; i < n; i++)
	{
		mzc_asof_dataflow *df;
		int32	   *in = &inputs[ndf * MZC_MAX_INPUTS];
		int			k = 0;

		if (rows[i].kind == MZC_KIND_TABLE || rows[i].kind == MZC_KIND_SOURCE ||
			!rows[i].is_primary)
			continue;
		for (int j = 0; j < rows[i].ninputs; j++)
		{
			int			idx = boot_find(rows, n, rows[i].inputs[j]);

			if (idx >= 0)
				in[k++] = idx;
		}
		df = &dfs[ndf];
		df->storage_inputs = in;
		df->nstorage_inputs = k;
		df->export_storage = rows[i].kind == MZC_KIND_INDEX ? -1 : i;
		if (rows[i].kind == MZC_KIND_INDEX)
		{
			df->has_policy = true;
			df->policy = retain_policy(rows[i].retain_ms);
		}
		rows[i].dataflow = ndf++;
	}
	if (ndf == 0)
		return;

	memset(&req, 0, sizeof(req));
	req.storage = storage;
	req.nstorage = n;
	req.dataflows = dfs;
	req.ndataflows = ndf;
	req.now = mzcoord_now_ms();
	if (mzc_select_as_ofs(&req, NULL, &err) != MZC_OK)
		elog(ERROR, "mzcoord: as-of selection failed: %s", err.message);

	for (int i = 0; i < n; i++)
		if (rows[i].dataflow >= 0 && !dfs[rows[i].dataflow].as_of.empty)
			rows[i].since = mzc_frontier_join(rows[i].since,
											  dfs[rows[i].dataflow].as_of);
}

/*
 * Build the controller from the catalog rows; caller holds the lock
 * exclusively.  On failure the controller is left empty and not ready.
 */
static bool
boot_build_locked(MzcBootRow *rows, int n, mzc_ts table_upper, Oid ext,
				  mzc_error *err)
{
	bool		progress = true;
	int			done = 0;

	ctl_clear();
	ctl->epoch++;
	ctl->table_upper = table_upper;

	/* Create in dependency layers: a collection after its inputs. */
	while (done < n && progress)
	{
		progress = false;
		for (int i = 0; i < n; i++)
		{
			int32		deps[MZC_MAX_INPUTS];
			bool		ready = true;
			mzc_frontier upper;

			if (rows[i].slot >= 0 || rows[i].since.empty)
				continue;
			for (int j = 0; j < rows[i].ninputs && ready; j++)
			{
				int			idx = boot_find(rows, n, rows[i].inputs[j]);

				if (idx < 0 || rows[idx].since.empty)
					deps[j] = -1;	/* input gone: nothing to hold */
				else if (rows[idx].slot < 0)
					ready = false;
				else
					deps[j] = rows[idx].slot;
			}
			if (!ready)
				continue;
			{
				int			k = 0;

				for (int j = 0; j < rows[i].ninputs; j++)
					if (deps[j] >= 0)
						deps[k++] = deps[j];
				upper = rows[i].kind == MZC_KIND_TABLE ?
					mzc_frontier_at(table_upper) : rows[i].upper;
				if (!create_locked(rows[i].gid, rows[i].item_id,
								   rows[i].is_primary ? rows[i].relid : InvalidOid,
								   rows[i].kind, rows[i].since, upper,
								   deps, k, &rows[i].slot, err))
					return false;
			}
			ctl_info[rows[i].slot].persisted = true;
			ctl_info[rows[i].slot].persisted_at = GetCurrentTimestamp();
			ctl_info[rows[i].slot].durable_since = rows[i].since;
			ctl_info[rows[i].slot].durable_upper = rows[i].upper;
			progress = true;
			done++;
		}
	}

	/* Policies only once every collection and its holds exist (I5). */
	for (int i = 0; i < n; i++)
	{
		mzc_policy p;

		if (rows[i].slot < 0)
			continue;
		ctl_info[rows[i].slot].retain_ms = rows[i].retain_ms;
		p = policy_for(rows[i].kind, rows[i].retain_ms);
		if (mzc_coll_set_policy(&ctl->colls, rows[i].slot, &p, NULL, err) != MZC_OK)
			return false;
	}

	ctl->ready = true;
	ctl->ext_oid = ext;
	ctl->database_oid = MyDatabaseId;
	ctl->rebootstrap = false;
	ctl->resync = false;
	ctl->bootstraps++;
	ctl->ready_at = GetCurrentTimestamp();
	ctl->bootstrap_error[0] = '\0';
	return true;
}

/*
 * SQL: mzcoord._controller_rebootstrap() RETURNS bigint
 *
 * Ask the coordinator to build the controller from the catalog again at its
 * next tick (after a restore from a dump wrote the catalog behind the
 * implications' back).  Returns the number of bootstraps so far: the
 * rebuild has happened once controller_status() shows more.
 */
Datum
mzcoord_controller_rebootstrap(PG_FUNCTION_ARGS)
{
	int64		bootstraps;

	if (ctl == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("mzcoord is not loaded at server start"),
				 errhint("Add mzcoord to shared_preload_libraries.")));
	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	ctl->rebootstrap = true;
	bootstraps = ctl->bootstraps;
	LWLockRelease(ctl->lock);
	PG_RETURN_INT64(bootstraps);
}

/* Mark the controller not ready and empty it (the extension is gone). */
void
mzcoord_controller_reset(void)
{
	if (ctl == NULL)
		return;
	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	if (ctl->ready)
	{
		ctl_clear();
		ctl->epoch++;
		ctl->ready = false;
		ctl->ext_oid = InvalidOid;
	}
	LWLockRelease(ctl->lock);
}

static void
bootstrap(Oid ext)
{
	TimestampTz start = GetCurrentTimestamp();
	MzcBootRow *rows;
	int			n;
	mzc_ts		max_upper = 0;
	mzc_ts		table_upper;
	mzc_error	err;
	bool		ok;

	/*
	 * A rebuild while the controller serves (a failed publication, a
	 * restore) must not lose a catalog change published between reading the
	 * catalog and building: read it with a fresh snapshot taken after noting
	 * the publication count, and read again if a publication came between.
	 */
	for (int attempt = 0;; attempt++)
	{
		uint64		seq;

		LWLockAcquire(ctl->lock, LW_SHARED);
		seq = ctl->publications;
		LWLockRelease(ctl->lock);
		PushActiveSnapshot(GetLatestSnapshot());
		rows = boot_read_catalog(&n);
		PopActiveSnapshot();

		/*
		 * Time never goes back: the oracle resumes above its durable
		 * ceiling and every durable table upper.  Sources keep their own
		 * times.
		 */
		for (int i = 0; i < n; i++)
			if (rows[i].kind == MZC_KIND_TABLE && !rows[i].upper.empty &&
				rows[i].upper.ts > max_upper)
				max_upper = rows[i].upper.ts;
		mzcoord_oracle_bootstrap(max_upper);
		table_upper = mzcoord_oracle_tick();

		boot_select_as_ofs(rows, n);

		LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
		if (ctl->publications == seq || attempt >= 100)
			break;
		LWLockRelease(ctl->lock);
		pfree(rows);
	}

	memset(&err, 0, sizeof(err));
	ok = boot_build_locked(rows, n, table_upper, ext, &err);
	if (ok)
		ctl->bootstrap_us = GetCurrentTimestamp() - start;
	if (!ok)
	{
		ctl_clear();
		ctl->ready = false;
		ctl->ext_oid = InvalidOid;
		strlcpy(ctl->bootstrap_error, err.message, MZC_ERROR_LEN);
	}
	LWLockRelease(ctl->lock);

	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("mzcoord could not load the catalog into shared memory: %s",
						err.message),
				 errhint("Raise mzcoord.max_collections or mzcoord.max_holds and restart the server.")));
	ConditionVariableBroadcast(&ctl->ready_cv);
	ereport(LOG,
			(errmsg("mzcoord controller ready: %d collections loaded", n)));
}

/* ----------------------------------------------------------------
 * The tick
 * ----------------------------------------------------------------
 */

typedef struct MzcPersistRow
{
	int32		slot;
	int64		gid;
	mzc_frontier since;
	mzc_frontier upper;
	bool		written;		/* set by persist_rows */
} MzcPersistRow;

/* Rows the current tick persists (worker only; in the tick's context). */
static MzcPersistRow *pending_rows = NULL;
static int	npending_rows = 0;

/*
 * Durable since of a slot: meet of its implied capability and the holds
 * its dependents keep on it.  min_dep_hold may be NULL (no dependents).
 */
static mzc_frontier
durable_since(int32 slot, const mzc_frontier *min_dep_hold)
{
	mzc_frontier f = ctl_slots[slot].implied;

	if (min_dep_hold != NULL)
		f = mzc_frontier_meet(f, min_dep_hold[slot]);
	return f;
}

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * Write the rows' frontiers to mzcoord.collections in one statement.  Rows
 * that another transaction has locked (a source's upper advance still in
 * progress, DDL) are skipped rather than waited for: the coordinator must
 * not stall behind a user's open transaction.  Sets rows[i].written for the
 * rows written; the others are tried again at the next tick.
 */
static void
persist_rows(MzcPersistRow *rows, int n)
{
	Datum	   *gids = palloc(sizeof(Datum) * n);
	Datum	   *sinces = palloc(sizeof(Datum) * n);
	Datum	   *uppers = palloc(sizeof(Datum) * n);
	bool	   *since_nulls = palloc(sizeof(bool) * n);
	bool	   *upper_nulls = palloc(sizeof(bool) * n);
	int			dims[1] = {n};
	int			lbs[1] = {1};
	Oid			argtypes[3] = {TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID};
	Datum		values[3];
	int			rc;
	int64	   *written;
	uint64		nwritten;

	for (int i = 0; i < n; i++)
	{
		gids[i] = CStringGetTextDatum(gid_text(rows[i].gid));
		sinces[i] = frontier_datum(rows[i].since, &since_nulls[i]);
		uppers[i] = frontier_datum(rows[i].upper, &upper_nulls[i]);
		rows[i].written = false;
	}
	values[0] = PointerGetDatum(construct_md_array(gids, NULL, 1, dims, lbs,
												   TEXTOID, -1, false, TYPALIGN_INT));
	values[1] = PointerGetDatum(construct_md_array(sinces, since_nulls, 1, dims, lbs,
												   INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[2] = PointerGetDatum(construct_md_array(uppers, upper_nulls, 1, dims, lbs,
												   INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));

	/*
	 * A source's advance writes its upper itself, in its own transaction;
	 * a value the controller read before that commit must never lower it.
	 *
	 * Runs as superuser: every operator is qualified.  (The multi-argument
	 * unnest in FROM cannot be: the parser expands it only unqualified, into
	 * calls of pg_catalog.unnest.)
	 */
	rc = SPI_execute_with_args(
							   "WITH free AS ("
							   "  SELECT l.global_id FROM mzcoord.collections l"
							   "   WHERE l.global_id OPERATOR(pg_catalog.=) ANY ($1)"
							   "     FOR NO KEY UPDATE SKIP LOCKED)"
							   "UPDATE mzcoord.collections c"
							   "   SET since = v.since,"
							   "       upper = CASE WHEN c.upper IS NULL"
							   "                      OR v.upper OPERATOR(pg_catalog.<) c.upper"
							   "                    THEN c.upper ELSE v.upper END"
							   "  FROM unnest($1, $2, $3) AS v(global_id, since, upper),"
							   "       free f"
							   " WHERE c.global_id OPERATOR(pg_catalog.=) v.global_id"
							   "   AND f.global_id OPERATOR(pg_catalog.=) c.global_id"
							   " RETURNING c.global_id",
							   3, argtypes, values, NULL, false, 0);
	if (rc != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "mzcoord: could not persist frontiers: %s",
			 SPI_result_code_string(rc));

	nwritten = SPI_processed;
	written = palloc(sizeof(int64) * Max(nwritten, 1));
	for (uint64 r = 0; r < nwritten; r++)
	{
		char	   *g = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1);

		if (!mzcoord_parse_gid(g, &written[r]))
			written[r] = -1;
	}
	qsort(written, nwritten, sizeof(int64), cmp_int64);
	for (int i = 0; i < n; i++)
		rows[i].written = bsearch(&rows[i].gid, written, nwritten,
								  sizeof(int64), cmp_int64) != NULL;
}

/*
 * The coordinator's tick (inside its transaction, extension present and
 * locked): bootstrap if needed, advance the table timeline and the implied
 * capabilities, persist the frontiers that changed.
 */
void
mzcoord_controller_tick(void)
{
	Oid			ext = get_extension_oid("mzcoord", true);
	bool		need_boot;
	mzc_ts		table_upper;
	MzcPersistRow *rows;
	int			nrows = 0;
	mzc_frontier *min_dep_hold = NULL;
	bool		any_deps = false;
	bool		resync;
	MemoryContext cxt = CurrentMemoryContext;
	TimestampTz now = GetCurrentTimestamp();

	LWLockAcquire(ctl->lock, LW_SHARED);
	need_boot = !ctl->ready || ctl->ext_oid != ext || ctl->rebootstrap;
	LWLockRelease(ctl->lock);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "mzcoord: SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());

	if (need_boot)
	{
		bootstrap(ext);
		PopActiveSnapshot();
		SPI_finish();
		return;
	}

	table_upper = mzcoord_oracle_tick();
	rows = MemoryContextAlloc(cxt, sizeof(MzcPersistRow) * ctl->capacity);
	min_dep_hold = MemoryContextAlloc(cxt, sizeof(mzc_frontier) * ctl->capacity);

	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	ctl->table_upper = table_upper;
	resync = ctl->resync;

	/* Tables share the timeline: advance those whose implied would move. */
	for (int32 s = 0; s < ctl->capacity; s++)
	{
		mzc_collection *c = &ctl_slots[s];

		if (c->state == MZC_COLL_FREE)
			continue;
		any_deps |= c->ndeps > 0;
		if (c->state == MZC_COLL_ACTIVE && ctl_info[s].kind == MZC_KIND_TABLE)
		{
			mzc_frontier want = mzc_policy_frontier(&c->policy,
													mzc_frontier_at(table_upper));

			if (mzc_frontier_lt(c->implied, want))
				(void) mzc_coll_advance_upper(&ctl->colls, s,
											  mzc_frontier_at(table_upper),
											  NULL, NULL);
		}
	}

	/* Where dependents hold each collection (only if anyone depends). */
	if (any_deps)
	{
		for (int32 s = 0; s < ctl->capacity; s++)
			min_dep_hold[s] = mzc_frontier_empty();
		for (int32 s = 0; s < ctl->capacity; s++)
		{
			mzc_collection *c = &ctl_slots[s];

			if (c->state == MZC_COLL_FREE || c->state == MZC_COLL_GONE)
				continue;
			for (int d = 0; d < c->ndeps; d++)
			{
				min_dep_hold[c->deps[d]] = mzc_frontier_meet(min_dep_hold[c->deps[d]],
															 c->dep_hold);
				if (c->dirty)
					ctl_info[c->deps[d]].recheck = true;
			}
		}
	}

	/* Collect what changed: the dirty list, rechecks, or everything. */
	for (int32 s = 0; s < ctl->capacity; s++)
	{
		mzc_collection *c = &ctl_slots[s];
		MzcSlotInfo *info = &ctl_info[s];
		mzc_frontier since;
		mzc_frontier upper;

		if (c->state == MZC_COLL_FREE)
			continue;
		if (!(c->dirty || info->recheck || resync))
			continue;
		info->recheck = false;
		if (c->state == MZC_COLL_GONE)
		{
			(void) hash_search(gid_hash, &info->gid, HASH_REMOVE, NULL);
			unmap_rel(s);
			continue;
		}
		if (c->state != MZC_COLL_ACTIVE)
			continue;			/* dropped: its catalog row is gone */
		since = durable_since(s, any_deps ? min_dep_hold : NULL);
		upper = slot_upper(s, table_upper);
		if (info->persisted && mzc_frontier_eq(since, info->durable_since) &&
			(info->kind == MZC_KIND_TABLE ||
			 mzc_frontier_eq(upper, info->durable_upper)))
			continue;

		/*
		 * Rate-limit since-only changes that merely follow the policy (as
		 * Materialize rate-limits since downgrades, K4): after a restart
		 * such a since is re-derived from the policy and the upper, which
		 * never regress, so a late write loses nothing.  A since that P6
		 * froze above its policy, or that dependents hold, or a changed
		 * upper of a non-table, is written at once.
		 */
		if (info->persisted && mzcoord_since_persist_interval > 0 &&
			c->ndependents == 0 &&
			(info->kind == MZC_KIND_TABLE ||
			 mzc_frontier_eq(upper, info->durable_upper)) &&
			mzc_frontier_eq(c->implied, mzc_policy_frontier(&c->policy, c->upper)) &&
			!TimestampDifferenceExceeds(info->persisted_at, now,
										mzcoord_since_persist_interval))
		{
			info->recheck = true;	/* look again next tick */
			continue;
		}
		rows[nrows].slot = s;
		rows[nrows].gid = info->gid;
		rows[nrows].since = since;
		rows[nrows].upper = upper;
		nrows++;
	}
	mzc_colls_clear_dirty(&ctl->colls);
	if (nrows > 0)
		ctl->resync = true;		/* until the rows below are durable */
	LWLockRelease(ctl->lock);

	if (nrows > 0)
		persist_rows(rows, nrows);

	PopActiveSnapshot();
	SPI_finish();

	/* Remember what the tick's commit makes durable; see tick_committed. */
	pending_rows = rows;
	npending_rows = nrows;
}

/*
 * After the tick's transaction committed: its rows are durable now.  If the
 * commit failed instead, the process exits with resync still set, and the
 * next coordinator compares every collection with the catalog.
 */
void
mzcoord_controller_tick_committed(void)
{
	if (pending_rows == NULL)
		return;
	if (npending_rows > 0)
	{
		LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
		for (int i = 0; i < npending_rows; i++)
		{
			MzcSlotInfo *info = &ctl_info[pending_rows[i].slot];

			if (info->gid != pending_rows[i].gid)
				continue;
			if (!pending_rows[i].written)
			{
				info->recheck = true;	/* locked by someone: next tick */
				continue;
			}
			info->persisted = true;
			info->durable_since = pending_rows[i].since;
			info->durable_upper = pending_rows[i].upper;
			info->persisted_at = GetCurrentTimestamp();
			if (ctl_slots[pending_rows[i].slot].state == MZC_COLL_ACTIVE)
				durable_hold_advance_locked(pending_rows[i].slot,
											pending_rows[i].since);
		}
		ctl->resync = false;
		LWLockRelease(ctl->lock);
	}
	pending_rows = NULL;
	npending_rows = 0;
}

/* ----------------------------------------------------------------
 * Introspection
 * ----------------------------------------------------------------
 */

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
	MzcCollCopy *out = palloc(sizeof(MzcCollCopy) * ctl->capacity);
	int			k = 0;
	mzc_ts		table_upper;

	/*
	 * Looking at the frontiers is a read: it closes the table timeline at
	 * the writes committed so far, so that a user sees the upper pass a write
	 * that committed before the look.
	 */
	(void) mzcoord_oracle_read_ts();
	LWLockAcquire(ctl->lock, LW_SHARED);
	table_upper = mzcoord_table_upper();
	for (int32 s = 0; s < ctl->capacity; s++)
	{
		if (ctl_slots[s].state == MZC_COLL_FREE || ctl_slots[s].state == MZC_COLL_GONE)
			continue;
		out[k].slot = s;
		out[k].c = ctl_slots[s];
		out[k].info = ctl_info[s];
		out[k].since = mzc_coll_since(&ctl->colls, s);
		out[k].upper = slot_upper(s, table_upper);
		k++;
	}
	LWLockRelease(ctl->lock);
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
		v[0] = CStringGetTextDatum(gid_text(x->info.gid));
		v[1] = CStringGetTextDatum(x->info.item_id);
		v[2] = ObjectIdGetDatum(x->info.relid);
		nl[2] = !OidIsValid(x->info.relid);
		v[3] = CStringGetTextDatum(mzcoord_kind_name(x->info.kind));
		v[4] = CStringGetTextDatum(state_name(x->c.state));
		v[5] = frontier_datum(x->since, &nl[5]);
		v[6] = frontier_datum(x->upper, &nl[6]);
		v[7] = frontier_datum(x->c.implied, &nl[7]);
		v[8] = frontier_datum(x->info.durable_since, &nl[8]);
		nl[8] |= !x->info.persisted;
		v[9] = frontier_datum(x->info.durable_upper, &nl[9]);
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
	cap = ctl->max_holds + ctl->capacity * MZC_COLL_MAX_DEPS;
	hs = palloc(sizeof(MzcHoldCopy) * cap);

	LWLockAcquire(ctl->lock, LW_SHARED);
	for (int32 i = 0; i < ctl->max_holds; i++)
	{
		MzcHoldEntry *h = &ctl_holds[i];

		if (!h->in_use)
			continue;
		hs[n].gid = ctl_info[h->slot].gid;
		hs[n].relid = ctl_info[h->slot].relid;
		hs[n].kind = "transaction";
		hs[n].pid = h->pid;
		hs[n].backend = h->backend;
		hs[n].lxid = h->lxid;
		hs[n].item_id[0] = '\0';
		hs[n].time = h->time;
		hs[n].since = h->acquired_at;
		hs[n].implied = ctl_slots[h->slot].implied;
		n++;
	}
	for (int32 s = 0; s < ctl->capacity; s++)
	{
		mzc_collection *c = &ctl_slots[s];

		if (c->state == MZC_COLL_FREE || c->state == MZC_COLL_GONE)
			continue;
		for (int d = 0; d < c->ndeps; d++)
		{
			int32		dep = c->deps[d];

			hs[n].gid = ctl_info[dep].gid;
			hs[n].relid = ctl_info[dep].relid;
			hs[n].kind = "maintained";
			hs[n].pid = 0;
			strlcpy(hs[n].item_id, ctl_info[s].item_id, MZC_ITEM_ID_LEN);
			hs[n].time = c->dep_hold.empty ? MZC_TS_MAX : c->dep_hold.ts;
			hs[n].since = ctl_info[s].created_at;
			hs[n].implied = ctl_slots[dep].implied;
			n++;
		}
	}
	LWLockRelease(ctl->lock);

	for (int i = 0; i < n; i++)
	{
		Datum		v[9];
		bool		nl[9];
		MzcHoldCopy *h = &hs[i];

		memset(nl, 0, sizeof(nl));
		v[0] = CStringGetTextDatum(gid_text(h->gid));
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

	mzcoord_require_shmem();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	LWLockAcquire(ctl->lock, LW_SHARED);
	memcpy(&copy, ctl, sizeof(copy));
	LWLockRelease(ctl->lock);

	memset(nl, 0, sizeof(nl));
	v[0] = BoolGetDatum(copy.ready);
	v[1] = Int64GetDatum((int64) copy.epoch);
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
 * mzcoord._controller_validate(): the controller's own invariants, one row
 * per violation: the core's accounting, since <= upper, since <= every
 * transaction hold, the maps, and the holds charged to roles.
 */
Datum
mzcoord_controller_validate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *problems = NIL;
	mzc_error	err;
	ListCell   *lc;
	MemoryContext cxt = CurrentMemoryContext;

	mzcoord_require_shmem();
	InitMaterializedSRF(fcinfo, 0);

	/*
	 * Building messages allocates; do it into a list whose cells we reserve
	 * by formatting into fixed buffers first.
	 */
	{
		char	  (*msgs)[3][MZC_ERRMSG_LEN];
		int			nmsgs = 0;
		int			max = 64;
		mzc_ts		table_upper;

		msgs = MemoryContextAlloc(cxt, sizeof(*msgs) * max);
		LWLockAcquire(ctl->lock, LW_SHARED);
		table_upper = mzcoord_table_upper();
		if (ctl->ready)
		{
			if (mzc_colls_validate(&ctl->colls, &err) != MZC_OK && nmsgs < max)
			{
				snprintf(msgs[nmsgs][0], MZC_ERRMSG_LEN, "controller accounting");
				snprintf(msgs[nmsgs][1], MZC_ERRMSG_LEN, "shared memory");
				strlcpy(msgs[nmsgs][2], err.message, MZC_ERRMSG_LEN);
				nmsgs++;
			}
			for (int32 s = 0; s < ctl->capacity && nmsgs < max; s++)
			{
				mzc_frontier since;
				mzc_frontier upper;

				if (ctl_slots[s].state != MZC_COLL_ACTIVE)
					continue;
				since = mzc_coll_since(&ctl->colls, s);
				upper = slot_upper(s, table_upper);
				if (!upper.empty && !mzc_frontier_le(since, upper))
				{
					snprintf(msgs[nmsgs][0], MZC_ERRMSG_LEN, "since <= upper");
					snprintf(msgs[nmsgs][1], MZC_ERRMSG_LEN, "u" INT64_FORMAT, ctl_info[s].gid);
					snprintf(msgs[nmsgs][2], MZC_ERRMSG_LEN, "since " INT64_FORMAT " is beyond upper " INT64_FORMAT,
							 since.ts, upper.ts);
					nmsgs++;
				}
				if (lookup_gid(ctl_info[s].gid) != s && nmsgs < max)
				{
					snprintf(msgs[nmsgs][0], MZC_ERRMSG_LEN, "global id map");
					snprintf(msgs[nmsgs][1], MZC_ERRMSG_LEN, "u" INT64_FORMAT, ctl_info[s].gid);
					snprintf(msgs[nmsgs][2], MZC_ERRMSG_LEN, "the global id does not map to its slot");
					nmsgs++;
				}
			}
			for (int32 i = 0; i < ctl->max_holds && nmsgs < max; i++)
			{
				MzcHoldEntry *h = &ctl_holds[i];

				if (!h->in_use)
					continue;
				if (!mzc_frontier_le_ts(mzc_coll_since(&ctl->colls, h->slot), h->time))
				{
					snprintf(msgs[nmsgs][0], MZC_ERRMSG_LEN, "since <= hold");
					snprintf(msgs[nmsgs][1], MZC_ERRMSG_LEN, "u" INT64_FORMAT, ctl_info[h->slot].gid);
					snprintf(msgs[nmsgs][2], MZC_ERRMSG_LEN, "hold at " INT64_FORMAT " of pid %d is below the since",
							 h->time, h->pid);
					nmsgs++;
				}
			}
			/* Every hold in use is charged to exactly one role. */
			{
				HASH_SEQ_STATUS hs;
				MzcRoleEntry *re;
				int64		charged = 0;
				int64		in_use = ctl->max_holds - ctl->nholds_free;

				hash_seq_init(&hs, role_hash);
				while ((re = hash_seq_search(&hs)) != NULL)
					charged += re->nholds;
				if (charged != in_use && nmsgs < max)
				{
					snprintf(msgs[nmsgs][0], MZC_ERRMSG_LEN, "holds per role");
					snprintf(msgs[nmsgs][1], MZC_ERRMSG_LEN, "shared memory");
					snprintf(msgs[nmsgs][2], MZC_ERRMSG_LEN, INT64_FORMAT " holds are charged to roles, " INT64_FORMAT " are in use",
							 charged, in_use);
					nmsgs++;
				}
			}
		}
		LWLockRelease(ctl->lock);

		for (int i = 0; i < nmsgs; i++)
			problems = lappend(problems, msgs[i]);
	}

	foreach(lc, problems)
	{
		char		(*m)[MZC_ERRMSG_LEN] = lfirst(lc);
		Datum		v[3];
		bool		nl[3] = {false, false, false};

		v[0] = CStringGetTextDatum(m[0]);
		v[1] = CStringGetTextDatum(m[1]);
		v[2] = CStringGetTextDatum(m[2]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nl);
	}
	return (Datum) 0;
}
