/*-------------------------------------------------------------------------
 *
 * controller.h
 *	  The controller's shared state: every collection's slot, its glue-side
 *	  facts, the transaction hold entries, the lookup tables, the controller
 *	  lock and readiness; and the data plane's read-only view of it.
 *
 * controller.c owns this memory: it sizes and attaches it, empties it, maps
 * global ids and relations to slots, and answers whether the controller is
 * ready.  The modules that change it each own one concern: readhold.c (all
 * read holds), acquire.c and selection.c (the SQL calls that take holds),
 * publish.c (staged catalog changes, the durable hold), bootstrap.c and
 * tick.c.  introspect.c (src/funcs) only copies it out for SQL.
 *
 * LOCKING CONTRACT
 *
 * There is one controller lock, MzcController.lock (the first lock of the
 * "mzcoord" tranche).  Unless a field says otherwise below, it protects
 * everything in MzcController and in the arrays and hash tables that follow
 * it: readers that only copy values out take it shared, everything that
 * changes state takes it exclusive.
 *
 * Lock-free reads: the readiness fast path (mzcoord_ctl_require_ready_fn)
 * reads `ready` and `epoch` without the lock.  Both are written only under
 * the exclusive lock; `ready` is an aligned word, `epoch` a pg_atomic_uint64
 * so that no platform can tear it.  A stale answer only matters while the
 * controller is being reset, and then the caller's own locked section finds
 * no collection and fails.  The compactor reads them the same way
 * (autocompact.c: wait while not ready, reload its memory when the epoch
 * changed).  `nnews` is read without the lock as a hint only
 * (mzcoord_tick_has_news: whether to take the lock and the list, whether to
 * wake the compactor); it is an aligned int32 written only under the
 * exclusive lock, and a stale answer is corrected at the next step.
 *
 * Lock order: the controller lock, then the oracle's ceiling lock, then the
 * oracle lock (oracle.c); never the other way round.  The worker-status
 * spinlock (shmem.c) is never held together with either.
 *
 * No code raises an error while holding the controller lock after it changed
 * anything: every function validates its arguments, checks capacity (the
 * core reports it as a value, and operations are all-or-nothing) and
 * reserves backend-local memory before the critical section; errors found
 * inside are carried out and raised after LWLockRelease().  The COMMIT and
 * ABORT paths never raise at all: an unexpected core failure there is logged
 * and makes the next tick rebuild the controller from the catalog.
 *
 * IDENTIFICATION
 *	  src/controller/controller.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_CONTROLLER_H
#define MZCOORD_CONTROLLER_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "storage/backendid.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "utils/hsearch.h"

#include "collections.h"
#include "frontier.h"
#include "ids.h"

/*
 * Glue-side facts about a core slot (mzcoord_ctl_info[slot]).  All fields:
 * the controller lock.  The durable_* fields and `persisted` are written by
 * the tick (tick.c) and by a bootstrap; `durable_hold` by publish.c.
 */
typedef struct MzcSlotInfo
{
	int64		gid;
	Oid			relid;
	bool		relid_mapped;	/* rel_hash points at this slot */
	MzcKind		kind;
	char		item_id[MZC_ITEM_ID_LEN];
	int64		retain_ms;
	bool		persisted;		/* durable_* hold what the catalog has */
	bool		held_back;		/* at the tick's last look, something (a
								 * lease, a dependent) held its since below
								 * its policy (tick.c) */
	bool		reconfigured;	/* a new policy, not yet published (set by
								 * publish.c, cleared by tick.c) */
	bool		clamped;		/* its last bound was held below the since
								 * proposed, by a requirement or lease only
								 * the catalog knows (tick.c) */
	mzc_frontier durable_since;
	mzc_frontier durable_upper;
	mzc_frontier durable_hold;	/* one count at the committed since, i.e.
								 * the compaction bound ({}: none) */
	bool		recheck;		/* on the recheck list: look at it next tick */
	int32		recheck_next;	/* next slot on the recheck list, or -1 */
	int32		tick_pos;		/* index in mzcoord_ctl_tick_slots, or -1 */
	TimestampTz created_at;
	TimestampTz persisted_at;	/* when durable_* were last written */
} MzcSlotInfo;

/*
 * What table writes tell the tick, so that it visits a table only when the
 * table has history to compact: per slot the latest commit timestamp of a
 * write (mzcoord_ctl_last_write[slot]), and one bit per slot, set when it
 * was written since the tick last looked (mzcoord_ctl_written_bits, 32
 * slots a word).  Both are atomics: a committing writer updates them
 * holding the controller lock only shared (mzcoord_ctl_note_written); the
 * tick reads and clears the bits holding it exclusively; a slot's creation
 * resets both under the exclusive lock.
 */
#define MZC_WRITTEN_WORDS(capacity) (((capacity) + 31) / 32)

/*
 * Introspection record of one transaction hold (mzcoord_ctl_holds[i]),
 * allocated and freed by readhold.c.  All fields: the controller lock.
 */
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

/*
 * Transaction holds charged to one role (mzcoord.max_holds_per_role), an
 * entry of mzcoord_ctl_role_hash, kept by readhold.c.  Controller lock.
 */
typedef struct MzcRoleEntry
{
	Oid			role;
	int32		nholds;
} MzcRoleEntry;

/* The catalog tables the tick writes, for its traffic counters. */
#define MZC_CATALOG_TABLES 3
#define MZC_CATALOG_BOUNDS 0	/* mzcoord.compaction_bounds */
#define MZC_CATALOG_COLLECTIONS 1	/* mzcoord.collections */
#define MZC_CATALOG_EPOCH 2		/* mzcoord.coordinator_epoch */

typedef struct MzcController
{
	LWLock	   *lock;			/* the controller lock; set once at startup */
	ConditionVariable ready_cv; /* broadcast when the controller gets ready */

	/* Readiness; `ready` and `epoch` are also read lock-free. */
	bool		ready;			/* bootstrapped for ext_oid */
	Oid			ext_oid;
	Oid			database_oid;
	pg_atomic_uint64 epoch;		/* incremented by every (re)bootstrap */

	/*
	 * The durable epoch (mzcoord.coordinator_epoch) the coordinator took,
	 * for controller_status(); 0 when none holds one.  Written lock-free by
	 * the coordinator alone (authority.c) and cleared by a reset: the
	 * bootstrap counter above is a different number, private to this
	 * server's shared memory, and says nothing about the durable epoch.
	 */
	pg_atomic_uint64 coordinator_epoch;

	/*
	 * Set by the tick until its rows are durable, cleared by tick_committed
	 * (tick.c) and by a bootstrap.
	 */
	bool		resync;			/* a persist failed: compare every slot */

	/*
	 * Set by any backend whose COMMIT or ABORT path met a core failure, or
	 * by _controller_rebootstrap(); cleared by a bootstrap.
	 */
	bool		rebootstrap;	/* publication failed: rebuild */

	/* Sizes, fixed at startup. */
	int32		capacity;
	int32		nnodes;
	int32		max_holds;

	/* Capacity reserved at PRE_COMMIT for publication (publish.c). */
	int32		reserved_slots;
	int32		reserved_nodes;

	/* The free list of hold entries (readhold.c). */
	int32		hold_free_head;
	int32		nholds_free;

	mzc_ts		table_upper;	/* timeline upper at the last tick */

	/*
	 * What the tick visits (tick.c), so that its work follows what changed
	 * rather than the number of slots: the recheck list (slots whose
	 * durable since must be looked at again, linked through
	 * MzcSlotInfo.recheck_next) and the slots every tick must look at,
	 * collections with dependencies, materialized views and sinks
	 * (mzcoord_ctl_tick_slots).  Tables are visited only when written,
	 * read or changed (mzcoord_ctl_written, the core's dirty list, the
	 * recheck list): an idle table costs the tick nothing.
	 */
	int32		recheck_head;
	int32		ntick_slots;

	/*
	 * Catalog changes published so far (publish.c); a rebuild reads it
	 * before and after its catalog read to notice a publication between.
	 */
	uint64		publications;

	/*
	 * Collections whose compaction bound moved, for the compactor
	 * (tick.c): nnews slots in mzcoord_ctl_news, each at most once
	 * (mzcoord_ctl_news_queued[slot]), pushed by the tick's commit and
	 * taken by the compaction step, both under the exclusive lock.
	 */
	int32		nnews;

	/*
	 * Catalog traffic of the tick's publications since the server started
	 * (tick.c, the one writer; mzcoord.metrics reads them): rows and bytes
	 * written to compaction_bounds, collections and coordinator_epoch, and
	 * bounds that moved but were held back to coalesce with a later tick.
	 * Lock-free: each is an atomic counter.
	 */
	pg_atomic_uint64 catalog_rows[MZC_CATALOG_TABLES];
	pg_atomic_uint64 catalog_bytes[MZC_CATALOG_TABLES];
	pg_atomic_uint64 bounds_coalesced;

	/* Bootstrap statistics (bootstrap.c). */
	int64		bootstraps;
	TimestampTz ready_at;
	int64		bootstrap_us;	/* duration of the last bootstrap */
	char		bootstrap_error[MZC_ERROR_LEN];

	/*
	 * The pure core's accounting, placed here.  colls.high (one past the
	 * highest slot ever taken) only grows, under the exclusive lock; walks
	 * over every collection stop there instead of at capacity, so a fresh
	 * backend does not touch the shared memory of slots never used.  Read
	 * without the lock only to size a copy.
	 */
	mzc_count_pool pool;
	mzc_collections colls;
} MzcController;

/*
 * A collection as the data plane sees it: what a relation is registered
 * as, with its live frontiers.
 */
typedef struct MzcCollectionInfo
{
	int64		gid;
	MzcKind		kind;
	Oid			relid;
	mzc_frontier since;
	mzc_frontier upper;
} MzcCollectionInfo;

/*
 * Process-local pointers into shared memory, set by
 * mzcoord_controller_shmem_init; everything they point at is protected by
 * the controller lock.  NULL (mzcoord_ctl) without shared memory.
 */
extern MzcController *mzcoord_ctl;
extern mzc_collection *mzcoord_ctl_slots;	/* [capacity], the core's slots */
extern MzcSlotInfo *mzcoord_ctl_info;	/* [capacity] */
extern MzcHoldEntry *mzcoord_ctl_holds;	/* [max_holds] */
extern HTAB *mzcoord_ctl_role_hash;	/* Oid -> MzcRoleEntry */
extern int32 *mzcoord_ctl_tick_slots;	/* [capacity], ntick_slots used */
extern pg_atomic_uint64 *mzcoord_ctl_last_write;	/* [capacity] */
extern pg_atomic_uint32 *mzcoord_ctl_written_bits; /* [MZC_WRITTEN_WORDS] */
extern int32 *mzcoord_ctl_news;	/* [capacity], nnews used */
extern bool *mzcoord_ctl_news_queued;	/* [capacity] */

/* Shared memory */
extern Size mzcoord_controller_shmem_size(void);
extern void mzcoord_controller_shmem_init(LWLock *lock, bool found);
extern void mzcoord_ctl_clear(void);
extern void mzcoord_controller_reset(void);

/* Readiness */
extern void mzcoord_ctl_require_ready_fn(Oid fn_oid);
#define mzcoord_ctl_require_ready() mzcoord_ctl_require_ready_fn(InvalidOid)
extern bool mzcoord_ctl_extension_created_here(Oid ext);

/* Lookups and maps; caller holds the lock (exclusively to change a map). */
extern int32 mzcoord_ctl_slot_of_gid(int64 gid);
extern int32 mzcoord_ctl_slot_of_rel(Oid relid);
extern bool mzcoord_ctl_map_gid(int32 slot);
extern void mzcoord_ctl_unmap_gid(int32 slot);
extern void mzcoord_ctl_map_rel(int32 slot);
extern void mzcoord_ctl_unmap_rel(int32 slot);
extern mzc_frontier mzcoord_ctl_slot_upper(int32 slot, mzc_ts table_upper);
extern mzc_frontier mzcoord_ctl_slot_implied(int32 slot, mzc_ts table_upper);

/* What the tick visits; caller holds the lock exclusively. */
extern void mzcoord_ctl_mark_recheck(int32 slot);
extern int	mzcoord_ctl_take_rechecks(int32 *out);
extern void mzcoord_ctl_track_slot(int32 slot);
extern void mzcoord_ctl_untrack_slot(int32 slot);
extern int	mzcoord_ctl_take_written_locked(int32 *out);
extern mzc_ts mzcoord_ctl_last_write_locked(int32 slot);
extern void mzcoord_ctl_reset_written_locked(int32 slot, mzc_ts ts);

/* A committing write to a table (takes the lock shared). */
extern void mzcoord_ctl_note_written(Oid relid, mzc_ts ts);
extern Datum mzcoord_frontier_datum(mzc_frontier f, bool *isnull);

/* The data plane's view; each takes the lock shared. */
extern bool mzcoord_ctl_lookup_rel(Oid relid, MzcCollectionInfo *info);
extern bool mzcoord_ctl_lookup_gid(int64 gid, MzcCollectionInfo *info);
extern bool mzcoord_ctl_peek_gid(int64 gid, MzcCollectionInfo *info);
extern Oid	mzcoord_ctl_relation_of(int64 gid, MzcKind kind);

/* A materialized view or sink, and the least upper of its inputs. */
typedef struct MzcMaintainedInfo
{
	int64		gid;
	MzcKind		kind;
	mzc_frontier upper;
	mzc_frontier inputs_upper;	/* {} without inputs, or all sealed */
} MzcMaintainedInfo;

extern int	mzcoord_ctl_list_maintained(MzcMaintainedInfo **out);

#endif							/* MZCOORD_CONTROLLER_H */
