/*-------------------------------------------------------------------------
 *
 * counted.h
 *	  Counted frontiers (reference 2.1, S7): a multiset of times with counts.
 *
 * A counted frontier holds, per time, how many read capabilities ("holds")
 * sit at that time.  Its frontier is the least time with a positive count,
 * or {} when there is none.  It is kept as a list sorted by time with only
 * positive counts, so the frontier is the head: O(1).
 *
 * Memory.  All nodes of all counted frontiers live in one pool that the
 * caller provides (typically in shared memory).  Nodes link to each other by
 * index, never by pointer, so the pool can be mapped anywhere; the pool
 * header itself holds a pointer to the node array, set by
 * mzc_count_pool_init() (in PostgreSQL, shared memory has the same address in
 * every backend).  Nothing here allocates, nothing keeps global state.
 *
 * Applying a batch of (time, diff) updates is all-or-nothing.  The batch is
 * first consolidated (sorted by time, diffs of equal times summed, zeros
 * dropped), then checked:
 *	 - a count may never become negative		  -> MZC_ERR_NEGATIVE_COUNT
 *	 - a time that gains a positive count where it had none must not be below
 *	   the current frontier, and nothing can be installed once the frontier
 *	   is {} (S7: no hold before the since)		  -> MZC_ERR_BEFORE_FRONTIER
 *	 - the pool must have enough free nodes		  -> MZC_ERR_NO_SPACE
 *	 - times must be valid, sums must not overflow -> MZC_ERR_INVALID
 * and only then applied.  On error nothing changed.  Decrements are applied
 * before insertions, so a batch that frees as many nodes as it needs always
 * fits, even in a full pool.
 *
 * A fresh counted frontier is empty ({}) and therefore closed to updates;
 * mzc_counted_seed() gives it its first count (collection creation).
 *
 * Not thread-safe: callers serialise access (the controller's lock).
 *
 * IDENTIFICATION
 *	  src/core/counted.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_COUNTED_H
#define MZC_COUNTED_H

#include "frontier.h"
#include "status.h"

#define MZC_NIL ((int32_t) -1)

typedef struct mzc_count_node
{
	mzc_ts		time;
	int64_t		count;			/* > 0 while linked into a counted frontier */
	int32_t		next;			/* index of the next node, or MZC_NIL */
} mzc_count_node;

typedef struct mzc_count_pool
{
	mzc_count_node *nodes;		/* caller memory, capacity entries */
	int32_t		capacity;
	int32_t		free_head;		/* free list through nodes[].next */
	int32_t		nfree;
} mzc_count_pool;

typedef struct mzc_counted
{
	int32_t		head;			/* least time, or MZC_NIL when empty */
	int32_t		ndistinct;		/* number of distinct times (= nodes) */
} mzc_counted;

/* One (time, diff) update of a batch. */
typedef struct mzc_update
{
	mzc_ts		time;
	int64_t		diff;
} mzc_update;

/* What applying (or checking) a batch does. */
typedef struct mzc_counted_effect
{
	mzc_frontier old_frontier;
	mzc_frontier new_frontier;
	bool		changed;		/* old_frontier != new_frontier */
	int32_t		nodes_needed;	/* times that gain a node */
	int32_t		nodes_freed;	/* times whose count drops to zero */
} mzc_counted_effect;

/* Puts every node of nodes[0..capacity-1] on the free list. */
extern void mzc_count_pool_init(mzc_count_pool *pool, mzc_count_node *nodes,
								int32_t capacity);

/* Checks the free list (O(capacity)); for tests and consistency checks. */
extern mzc_status mzc_count_pool_validate(const mzc_count_pool *pool,
										  mzc_error *err);

/* An empty counted frontier ({}). */
extern void mzc_counted_init(mzc_counted *c);

extern mzc_frontier mzc_counted_frontier(const mzc_count_pool *pool,
										 const mzc_counted *c);
extern int64_t mzc_counted_count_at(const mzc_count_pool *pool,
									const mzc_counted *c, mzc_ts time);

/*
 * Gives an empty counted frontier its first count (count > 0 at a valid
 * time).  Fails with MZC_ERR_STATE if c is not empty, MZC_ERR_NO_SPACE if the
 * pool is full.
 */
extern mzc_status mzc_counted_seed(mzc_count_pool *pool, mzc_counted *c,
								   mzc_ts time, int64_t count, mzc_error *err);

/* Returns every node of c to the pool; c becomes empty. */
extern void mzc_counted_clear(mzc_count_pool *pool, mzc_counted *c);

/*
 * Consolidates updates[0..*n-1] in place: sorted by time, one entry per time,
 * no zero diffs; *n is updated.  Fails (leaving the array permuted but with
 * the same multiset) on a negative time or a sum that overflows.
 */
extern mzc_status mzc_updates_consolidate(mzc_update *updates, int32_t *n,
										  mzc_error *err);

/*
 * Dry run: checks a consolidated batch against c and the pool and reports
 * its effect, without changing anything.
 */
extern mzc_status mzc_counted_check(const mzc_count_pool *pool,
									const mzc_counted *c,
									const mzc_update *updates, int32_t n,
									mzc_counted_effect *effect, mzc_error *err);

/* Checks, then applies, a consolidated batch.  effect may be NULL. */
extern mzc_status mzc_counted_apply_consolidated(mzc_count_pool *pool,
												 mzc_counted *c,
												 const mzc_update *updates,
												 int32_t n,
												 mzc_counted_effect *effect,
												 mzc_error *err);

/*
 * Consolidates updates in place (see above), then checks and applies them.
 * effect may be NULL.  Inline: the library applies consolidated batches
 * only, the unit tests, the fuzzer and the hold model raw ones.
 */
static inline mzc_status
mzc_counted_apply(mzc_count_pool *pool, mzc_counted *c, mzc_update *updates,
				  int32_t n, mzc_counted_effect *effect, mzc_error *err)
{
	mzc_status	st = mzc_updates_consolidate(updates, &n, err);

	if (st != MZC_OK)
		return st;
	return mzc_counted_apply_consolidated(pool, c, updates, n, effect, err);
}

/* Checks c's list: sorted, positive counts, ndistinct right. */
extern mzc_status mzc_counted_validate(const mzc_count_pool *pool,
									   const mzc_counted *c, mzc_error *err);

#endif							/* MZC_COUNTED_H */
