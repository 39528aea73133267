/*-------------------------------------------------------------------------
 *
 * collections.h
 *	  Storage-collection since accounting (reference 1.3 and 2.3).
 *
 * A set of collections lives in caller memory: an array of slots plus one
 * counted-frontier node pool shared by all of them.  Each live collection
 * has
 *	 - upper		its write frontier; only moves forward (S8)
 *	 - policy		its read policy (S2: NO_POLICY(initial since) at creation)
 *	 - implied		its implied capability, policy applied to upper under P6
 *	 - caps			its read capabilities, a counted frontier holding one
 *					count at `implied`, one per outstanding hold, and one per
 *					dependent collection (S1)
 *	 - since		= frontier of caps = meet(implied, every hold)
 *	 - deps			up to MZC_COLL_MAX_DEPS storage dependencies (S5), on each
 *					of which it holds one count at `dep_hold`: its since, or
 *					for a collection that holds them at its upper (a
 *					materialized view or sink: storage of its own, written by
 *					a dataflow, serves every read below its upper) where it
 *					reads them next, join(initial since, upper - 1), and
 *					nowhere once its upper is {} or it is dropped.
 *
 * Whenever a collection's since changes, the net change (old -> new) is
 * forwarded to its dependencies (S6), which may change their since in turn.
 * Propagation runs through a work list, dependents before their dependencies
 * (by creation order, which the graph respects because a dependency must
 * exist before its dependent), until nothing is pending; correctness does not
 * depend on slot numbers.
 *
 * States: FREE -> ACTIVE (create) -> DROPPED (drop, S10: policy
 * VALID_FROM({}), implied {}) -> GONE (since reached {}: every hold and every
 * dependent released; its own holds on its dependencies are then released)
 * -> FREE.  A GONE slot is kept until mzc_colls_clear_dirty() has reported it
 * once, so a persister always sees the removal before the slot is reused.
 *
 * All-or-nothing.  Each operation validates its arguments and reserves the
 * pool nodes it could need before it mutates anything: the nodes of its own
 * batch plus one per dependency edge reachable from the collection when its
 * since changes (a conservative bound for the propagation, which needs at
 * most one node per edge).  A failed operation returns an error and leaves
 * the set untouched.
 *
 * Persistence.  Every change of a slot's upper, implied capability, policy,
 * since or state gives it a new changed_seq (from a set-wide counter) and puts
 * it on the dirty list; the controller walks the dirty list, persists those
 * rows and calls mzc_colls_clear_dirty().  Work is proportional to changes.
 *
 * No globals, no allocation, deterministic.  Not thread-safe: the caller
 * serialises access (the controller's lock).  Slot numbers are the handles;
 * the caller maps its own ids to them.
 *
 * IDENTIFICATION
 *	  src/core/collections.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_COLLECTIONS_H
#define MZC_COLLECTIONS_H

#include "counted.h"
#include "policy.h"

#define MZC_COLL_MAX_DEPS 16

typedef enum mzc_coll_state
{
	MZC_COLL_FREE = 0,
	MZC_COLL_ACTIVE,
	MZC_COLL_DROPPED,			/* dropped, waiting for holds to go */
	MZC_COLL_GONE				/* since is {}; freed at the next clear_dirty */
} mzc_coll_state;

typedef struct mzc_collection
{
	mzc_coll_state state;
	bool		is_table;
	mzc_frontier upper;			/* write frontier */
	mzc_frontier implied;		/* implied capability ({} once dropped) */
	mzc_policy	policy;
	mzc_counted caps;			/* read capabilities; since = its frontier */
	mzc_frontier dep_hold;		/* where this collection holds each dep */
	bool		deps_at_upper;	/* dep_hold follows upper - 1, not since */
	int32_t		ndeps;
	int32_t		deps[MZC_COLL_MAX_DEPS];	/* slots of its dependencies */
	int32_t		ndependents;	/* live collections holding this one */
	uint64_t	birth;			/* creation order: deps are always older */
	uint64_t	changed_seq;	/* set->seq at the last change */
	bool		dirty;			/* on the dirty list */

	/* Internal links; callers must not touch these. */
	int32_t		dirty_next;
	bool		pending;
	int32_t		pending_next;
	uint32_t	visit_epoch;
	int32_t		visit_next;
	int32_t		free_next;
} mzc_collection;

typedef struct mzc_collections
{
	mzc_collection *slots;		/* caller memory, capacity entries */
	int32_t		capacity;
	mzc_count_pool *pool;		/* shared by all collections */
	int32_t		free_head;
	int32_t		nfree;			/* FREE slots */
	int32_t		high;			/* one past the highest slot ever taken: every
								 * slot from here on is FREE, so a walk over
								 * all collections stops here */
	uint64_t	seq;			/* last changed_seq handed out */
	uint64_t	next_birth;
	int32_t		dirty_head;
	int32_t		dirty_tail;
	int32_t		ndirty;
	int32_t		pending_head;
	uint32_t	visit_epoch;
	int32_t		internal_errors;	/* must stay 0; see mzc_colls_validate (collcheck.h) */
} mzc_collections;

/* Arguments of mzc_coll_create (S2-S5).  Zero-initialise, then fill. */
typedef struct mzc_coll_create_args
{
	mzc_frontier shard_since;	/* durable since of the storage shard */
	mzc_frontier requested_since;	/* e.g. an MV's as-of; {0} if none */
	bool		is_table;		/* S4 */
	mzc_ts		register_ts;	/* S4: a table's registration time */
	mzc_frontier upper;			/* initial write frontier */
	const int32_t *deps;		/* slots of its storage dependencies */
	int32_t		ndeps;

	/*
	 * C1 instead of S3: a maintained (compute-style) collection starts at
	 * exactly its as-of and holds its inputs there; the since is not raised
	 * to the inputs' implied capabilities.  Every dependency's since must
	 * already be <= the initial since (the creator holds the inputs there),
	 * otherwise MZC_ERR_SINCE_VIOLATION.
	 */
	bool		hold_deps_at_since;

	/*
	 * With hold_deps_at_since: the collection holds its dependencies at its
	 * upper rather than its since (see deps above).  Its first dep hold is
	 * join(since, upper - 1), and every dependency's since must be at or
	 * below that instead (a restart finds the inputs released up to the
	 * object's progress, not its since).
	 */
	bool		deps_at_upper;
} mzc_coll_create_args;

/* What an operation did. */
typedef struct mzc_coll_effect
{
	mzc_frontier old_since;		/* of the slot operated on */
	mzc_frontier new_since;
	bool		since_changed;
	int32_t		nsince_changes; /* slots whose since changed, incl. deps */
	int32_t		ngone;			/* slots that became GONE */
} mzc_coll_effect;

/* Sets up an empty set over slots[0..capacity-1] and an initialised pool. */
extern void mzc_colls_init(mzc_collections *set, mzc_collection *slots,
						   int32_t capacity, mzc_count_pool *pool);

/*
 * S2-S5.  initial since = join(shard_since, requested_since); a table whose
 * since is still {0} starts at {register_ts} (S4); then joined with the
 * implied capability of every dependency (S3: a dependency's since is never
 * ahead of its dependents).  The new collection has caps {since: 1}, policy
 * NO_POLICY(since), and holds each dependency at its since (S5).
 * Dependencies must be ACTIVE and distinct.
 */
extern mzc_status mzc_coll_create(mzc_collections *set,
								  const mzc_coll_create_args *args,
								  int32_t *slot_out, mzc_error *err);

/*
 * S9/P6: installs the policy and re-evaluates it against the current upper;
 * the implied capability only moves forward.  A policy whose frontier is {}
 * is refused (that is what mzc_coll_drop does).  ACTIVE collections only.
 */
extern mzc_status mzc_coll_set_policy(mzc_collections *set, int32_t slot,
									  const mzc_policy *policy,
									  mzc_coll_effect *effect, mzc_error *err);

/*
 * S8: upper = join(upper, new_upper), then the policy is re-applied under
 * P6.  An upper that is not ahead of the current one changes nothing and is
 * not an error.  ACTIVE or DROPPED collections.
 */
extern mzc_status mzc_coll_advance_upper(mzc_collections *set, int32_t slot,
										 mzc_frontier new_upper,
										 mzc_coll_effect *effect,
										 mzc_error *err);

/*
 * Holds (R3-R5).  acquire adds one count at t, which must not be below the
 * since (S7, MZC_ERR_BEFORE_FRONTIER); release removes one count at t
 * (MZC_ERR_NEGATIVE_COUNT if there is none); downgrade moves one count from
 * `from` to `to` (to < from is MZC_ERR_SINCE_VIOLATION; to == {} releases).
 * Callers must only release or downgrade counts they acquired.  ACTIVE or
 * DROPPED collections.
 */
extern mzc_status mzc_coll_acquire(mzc_collections *set, int32_t slot,
								   mzc_ts t, mzc_coll_effect *effect,
								   mzc_error *err);
extern mzc_status mzc_coll_release(mzc_collections *set, int32_t slot,
								   mzc_ts t, mzc_coll_effect *effect,
								   mzc_error *err);
extern mzc_status mzc_coll_downgrade(mzc_collections *set, int32_t slot,
									 mzc_ts from, mzc_frontier to,
									 mzc_coll_effect *effect, mzc_error *err);

/* A raw batch of hold changes (consolidated in place first). */
extern mzc_status mzc_coll_update(mzc_collections *set, int32_t slot,
								  mzc_update *updates, int32_t n,
								  mzc_coll_effect *effect, mzc_error *err);

/*
 * S10: policy VALID_FROM({}), implied {}.  The slot stays DROPPED while
 * holds or dependents keep its since; once the since is {} it becomes GONE
 * and releases its holds on its dependencies.  Dropping a DROPPED collection
 * again changes nothing.
 */
/*
 * Replace the dependencies of an ACTIVE collection (a materialized view
 * whose definition is replaced): it then holds each new dependency where it
 * held the old ones (dep_hold), which each new one's since must not pass
 * (MZC_ERR_SINCE_VIOLATION), and releases the old ones.  A new dependency
 * that is the collection or depends on it is refused (MZC_ERR_INVALID).
 * The collection and everything depending on it are born again, so that
 * dependencies stay older than their dependents.  All or nothing.
 */
extern mzc_status mzc_coll_set_deps(mzc_collections *set, int32_t slot,
									const int32_t *deps, int32_t ndeps,
									mzc_coll_effect *effect, mzc_error *err);
extern mzc_status mzc_coll_drop(mzc_collections *set, int32_t slot,
								mzc_coll_effect *effect, mzc_error *err);

/* Read access.  NULL / MZC_ERR_NOT_FOUND for FREE slots and bad numbers. */
extern const mzc_collection *mzc_coll_get(const mzc_collections *set,
										  int32_t slot);
extern mzc_frontier mzc_coll_since(const mzc_collections *set, int32_t slot);

/*
 * The number of distinct dependency edges reachable from slot (its own, its
 * dependencies', and so on): what an operation on slot that changes its
 * since reserves for the propagation, beyond the nodes of its own batch.
 * Only traversal marks change.  0 for FREE slots and bad numbers.
 */
extern int32_t mzc_coll_reachable_edges(mzc_collections *set, int32_t slot);

/*
 * Where slot holds its dependencies now (dep_hold): its since, or for a
 * collection created with deps_at_upper join(dep_hold, upper - 1) while it
 * is ACTIVE and its upper is not {}, and {} otherwise.  {} for FREE slots.
 */
extern mzc_frontier mzc_coll_dep_frontier(const mzc_collections *set,
										  int32_t slot);

/* Is slot ACTIVE or DROPPED (i.e. can it take holds)? */
extern bool mzc_coll_live(const mzc_collections *set, int32_t slot);

/* The dirty list: first slot (MZC_NIL if none) and the next one. */
extern int32_t mzc_colls_dirty_first(const mzc_collections *set);
extern int32_t mzc_colls_dirty_next(const mzc_collections *set, int32_t slot);

/* Empties the dirty list and frees the GONE slots on it. */
extern void mzc_colls_clear_dirty(mzc_collections *set);


#endif							/* MZC_COLLECTIONS_H */
