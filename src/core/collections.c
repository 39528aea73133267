/*-------------------------------------------------------------------------
 *
 * collections.c
 *	  Storage-collection since accounting (reference 1.3 and 2.3).
 *
 * Every mutating operation has two phases.  prepare() checks the slot, the
 * arguments and the batch of capability changes it will make, and reserves
 * pool nodes for that batch and for the propagation it may trigger; nothing
 * is changed.  commit() then cannot fail: it applies the batch and runs the
 * propagation work list.
 *
 * IDENTIFICATION
 *	  src/core/collections.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "collections.h"

/* A prepared change of one slot's read capabilities. */
typedef struct coll_plan
{
	mzc_update	updates[2];
	int32_t		n;
	mzc_counted_effect effect;
} coll_plan;

void
mzc_colls_init(mzc_collections *set, mzc_collection *slots, int32_t capacity,
			   mzc_count_pool *pool)
{
	int32_t		i;

	if (capacity < 0)
		capacity = 0;
	memset(set, 0, sizeof(*set));
	set->slots = slots;
	set->capacity = capacity;
	set->pool = pool;
	set->dirty_head = MZC_NIL;
	set->dirty_tail = MZC_NIL;
	set->pending_head = MZC_NIL;
	set->free_head = MZC_NIL;
	set->high = 0;
	for (i = capacity - 1; i >= 0; i--)
	{
		memset(&slots[i], 0, sizeof(slots[i]));
		slots[i].state = MZC_COLL_FREE;
		mzc_counted_init(&slots[i].caps);
		slots[i].dirty_next = MZC_NIL;
		slots[i].pending_next = MZC_NIL;
		slots[i].visit_next = MZC_NIL;
		slots[i].free_next = set->free_head;
		set->free_head = i;
	}
	set->nfree = capacity;
}

static bool
slot_in_range(const mzc_collections *set, int32_t slot)
{
	return slot >= 0 && slot < set->capacity;
}

bool
mzc_coll_live(const mzc_collections *set, int32_t slot)
{
	return slot_in_range(set, slot) &&
		(set->slots[slot].state == MZC_COLL_ACTIVE ||
		 set->slots[slot].state == MZC_COLL_DROPPED);
}

const mzc_collection *
mzc_coll_get(const mzc_collections *set, int32_t slot)
{
	if (!slot_in_range(set, slot) || set->slots[slot].state == MZC_COLL_FREE)
		return NULL;
	return &set->slots[slot];
}

mzc_frontier
mzc_coll_since(const mzc_collections *set, int32_t slot)
{
	if (!slot_in_range(set, slot))
		return mzc_frontier_empty();
	return mzc_counted_frontier(set->pool, &set->slots[slot].caps);
}

static mzc_status
require_live(const mzc_collections *set, int32_t slot, mzc_error *err)
{
	if (!mzc_coll_live(set, slot))
		return mzc_fail(err, MZC_ERR_NOT_FOUND,
						"collection does not exist: %d", (int) slot);
	return MZC_OK;
}

static mzc_status
require_active(const mzc_collections *set, int32_t slot, mzc_error *err)
{
	mzc_status	st = require_live(set, slot, err);

	if (st != MZC_OK)
		return st;
	if (set->slots[slot].state != MZC_COLL_ACTIVE)
		return mzc_fail(err, MZC_ERR_STATE, "collection %d is dropped",
						(int) slot);
	return MZC_OK;
}

static mzc_status
check_frontier_arg(mzc_frontier f, const char *what, mzc_error *err)
{
	if (!f.empty && !mzc_ts_valid(f.ts))
		return mzc_fail(err, MZC_ERR_INVALID, "%s must not be negative: %lld",
						what, (long long) f.ts);
	return MZC_OK;
}

static void
mark_dirty(mzc_collections *set, int32_t slot)
{
	mzc_collection *c = &set->slots[slot];

	c->changed_seq = ++set->seq;
	if (c->dirty)
		return;
	c->dirty = true;
	c->dirty_next = MZC_NIL;
	if (set->dirty_tail == MZC_NIL)
		set->dirty_head = slot;
	else
		set->slots[set->dirty_tail].dirty_next = slot;
	set->dirty_tail = slot;
	set->ndirty++;
}

static void
mark_pending(mzc_collections *set, int32_t slot)
{
	mzc_collection *c = &set->slots[slot];

	if (c->pending)
		return;
	c->pending = true;
	c->pending_next = set->pending_head;
	set->pending_head = slot;
}

/*
 * Where c holds its dependencies (see mzc_coll_dep_frontier).  A collection
 * holding them at its upper never moves its hold back: join with the hold
 * it has.
 */
static mzc_frontier
dep_frontier(const mzc_collections *set, const mzc_collection *c)
{
	if (!c->deps_at_upper)
		return mzc_counted_frontier(set->pool, &c->caps);
	if (c->state != MZC_COLL_ACTIVE || c->upper.empty)
		return mzc_frontier_empty();
	if (c->upper.ts == 0 || c->dep_hold.empty)
		return c->dep_hold;
	return mzc_frontier_join(c->dep_hold, mzc_frontier_at(c->upper.ts - 1));
}

mzc_frontier
mzc_coll_dep_frontier(const mzc_collections *set, int32_t slot)
{
	if (!slot_in_range(set, slot) || set->slots[slot].state == MZC_COLL_FREE)
		return mzc_frontier_empty();
	return dep_frontier(set, &set->slots[slot]);
}

/* A fresh traversal mark for the walks over the dependency graph. */
static uint32_t
next_visit_epoch(mzc_collections *set)
{
	uint32_t	epoch = ++set->visit_epoch;

	if (epoch == 0)
	{
		for (int32_t i = 0; i < set->capacity; i++)
			set->slots[i].visit_epoch = 0;
		epoch = set->visit_epoch = 1;
	}
	return epoch;
}

/*
 * Walks the dependency graph from slot, each collection once, and returns
 * the number of distinct dependency edges reachable (its own edges, its
 * dependencies' edges, and so on); sets *found if target (MZC_NIL: none)
 * is among the collections reached.  Propagating one since change needs at
 * most one new pool node per edge (reachable_edges), so this bounds what
 * to reserve.
 */
static int32_t
walk_deps(mzc_collections *set, int32_t slot, int32_t target, bool *found)
{
	uint32_t	epoch = next_visit_epoch(set);
	int32_t		head,
				edges = 0;

	set->slots[slot].visit_epoch = epoch;
	set->slots[slot].visit_next = MZC_NIL;
	head = slot;
	while (head != MZC_NIL)
	{
		mzc_collection *c = &set->slots[head];

		if (head == target)
			*found = true;
		head = c->visit_next;
		edges += c->ndeps;
		for (int32_t i = 0; i < c->ndeps; i++)
		{
			mzc_collection *d = &set->slots[c->deps[i]];

			if (d->visit_epoch == epoch)
				continue;
			d->visit_epoch = epoch;
			d->visit_next = head;
			head = c->deps[i];
		}
	}
	return edges;
}

static int32_t
reachable_edges(mzc_collections *set, int32_t slot)
{
	bool		found = false;

	return walk_deps(set, slot, MZC_NIL, &found);
}

int32_t
mzc_coll_reachable_edges(mzc_collections *set, int32_t slot)
{
	if (!slot_in_range(set, slot) || set->slots[slot].state == MZC_COLL_FREE)
		return 0;
	return reachable_edges(set, slot);
}

/*
 * Fails with MZC_ERR_NO_SPACE unless the pool has the nodes ceff needs net
 * of those it frees, plus one per edge reachable from slot when the change
 * propagates (a since that moves, or holds moved at the upper).
 */
static mzc_status
reserve_nodes(mzc_collections *set, int32_t slot,
			  const mzc_counted_effect *ceff, bool propagates, mzc_error *err)
{
	int32_t		reserve = ceff->nodes_needed - ceff->nodes_freed;

	if (reserve < 0)
		reserve = 0;
	if (propagates)
		reserve += reachable_edges(set, slot);
	if (reserve > set->pool->nfree)
		return mzc_fail(err, MZC_ERR_NO_SPACE,
						"count pool is full: %d free nodes, up to %d needed",
						(int) set->pool->nfree, (int) reserve);
	return MZC_OK;
}

/*
 * Checks a consolidated batch of updates against the slot's capabilities
 * (*ceff: what applying it would do) and that the pool has the nodes for
 * them and for the propagation they may cause.  Changes nothing that
 * matters (only the traversal marks used by reachable_edges).  Shared by
 * prepare() and mzc_coll_update, whose batch has any length.
 */
static mzc_status
check_batch(mzc_collections *set, int32_t slot, const mzc_update *updates,
			int32_t n, mzc_counted_effect *ceff, mzc_error *err)
{
	mzc_status	st;

	st = mzc_counted_check(set->pool, &set->slots[slot].caps, updates, n,
						   ceff, err);
	if (st != MZC_OK)
		return st;
	return reserve_nodes(set, slot, ceff, ceff->changed, err);
}

/*
 * Checks plan->updates (consolidated) against the slot and reserves pool
 * nodes for them and for the propagation they may cause (check_batch).
 */
static mzc_status
prepare(mzc_collections *set, int32_t slot, coll_plan *plan, mzc_error *err)
{
	return check_batch(set, slot, plan->updates, plan->n, &plan->effect, err);
}

/*
 * Applies a consolidated batch to the read capabilities of dependency d and
 * queues d for propagation if its since moved.  False if the core refused
 * it, which cannot happen (space was reserved, S7 holds by design).
 */
static bool
update_dep(mzc_collections *set, int32_t d, const mzc_update *u, int32_t n,
		   mzc_coll_effect *effect)
{
	mzc_counted_effect eff;

	if (mzc_counted_apply_consolidated(set->pool, &set->slots[d].caps, u, n,
									   &eff, NULL) != MZC_OK)
	{
		set->internal_errors++;
		return false;
	}
	if (eff.changed)
	{
		mark_dirty(set, d);
		mark_pending(set, d);
		if (effect != NULL)
			effect->nsince_changes++;
	}
	return true;
}

/*
 * Runs the propagation work list (S6).  The pending slot created last goes
 * first: every slot that can forward a change to it is younger, so each slot
 * is processed once, after all changes that reach it.
 */
static void
propagate(mzc_collections *set, mzc_coll_effect *effect)
{
	while (set->pending_head != MZC_NIL)
	{
		int32_t		best = set->pending_head,
					best_prev = MZC_NIL,
					prev = MZC_NIL,
					i;
		mzc_collection *y;
		mzc_frontier since;
		mzc_frontier f;

		for (i = set->pending_head; i != MZC_NIL; i = set->slots[i].pending_next)
		{
			if (set->slots[i].birth > set->slots[best].birth)
			{
				best = i;
				best_prev = prev;
			}
			prev = i;
		}
		y = &set->slots[best];
		if (best_prev == MZC_NIL)
			set->pending_head = y->pending_next;
		else
			set->slots[best_prev].pending_next = y->pending_next;
		y->pending = false;
		y->pending_next = MZC_NIL;

		since = mzc_counted_frontier(set->pool, &y->caps);
		f = dep_frontier(set, y);
		if (!mzc_frontier_eq(f, y->dep_hold))
		{
			mzc_update	u[2];
			int32_t		n = 0;

			/* A dep hold only grows, so dep_hold < f: this order is sorted. */
			if (!y->dep_hold.empty)
			{
				u[n].time = y->dep_hold.ts;
				u[n++].diff = -1;
			}
			if (!f.empty)
			{
				u[n].time = f.ts;
				u[n++].diff = 1;
			}
			for (i = 0; i < y->ndeps; i++)
			{
				int32_t		d = y->deps[i];

				if (update_dep(set, d, u, n, effect) && f.empty)
					set->slots[d].ndependents--;
			}
			y->dep_hold = f;
		}
		if (y->state == MZC_COLL_DROPPED && since.empty)
		{
			y->state = MZC_COLL_GONE;
			mark_dirty(set, best);
			if (effect != NULL)
				effect->ngone++;
		}
	}
}

static void
effect_start(mzc_coll_effect *effect, mzc_frontier since)
{
	if (effect == NULL)
		return;
	effect->old_since = since;
	effect->new_since = since;
	effect->since_changed = false;
	effect->nsince_changes = 0;
	effect->ngone = 0;
}

/*
 * Applies a batch that check_batch accepted (changed: whether it moves the
 * slot's since), runs the propagation and completes effect; cannot fail.
 * Shared by commit() and mzc_coll_update.
 */
static void
apply_batch(mzc_collections *set, int32_t slot, const mzc_update *updates,
			int32_t n, bool changed, mzc_coll_effect *effect)
{
	mzc_collection *c = &set->slots[slot];

	if (n > 0 &&
		mzc_counted_apply_consolidated(set->pool, &c->caps, updates, n,
									   NULL, NULL) != MZC_OK)
		set->internal_errors++;
	if (changed)
	{
		mark_dirty(set, slot);
		mark_pending(set, slot);
		if (effect != NULL)
			effect->nsince_changes++;
	}
	propagate(set, effect);
	if (effect != NULL)
	{
		effect->new_since = mzc_counted_frontier(set->pool, &c->caps);
		effect->since_changed = !mzc_frontier_eq(effect->old_since,
												 effect->new_since);
	}
}

/* Applies a prepared plan; cannot fail. */
static void
commit(mzc_collections *set, int32_t slot, coll_plan *plan,
	   mzc_coll_effect *effect)
{
	apply_batch(set, slot, plan->updates, plan->n, plan->effect.changed,
				effect);
}

/* A plan that moves one count from old_f to new_f (either may be {}). */
static void
plan_move(coll_plan *plan, mzc_frontier old_f, mzc_frontier new_f)
{
	plan->n = 0;
	if (mzc_frontier_eq(old_f, new_f))
		return;
	if (!old_f.empty)
	{
		plan->updates[plan->n].time = old_f.ts;
		plan->updates[plan->n++].diff = -1;
	}
	if (!new_f.empty)
	{
		plan->updates[plan->n].time = new_f.ts;
		plan->updates[plan->n++].diff = 1;
	}
	/* Keep the batch consolidated: sorted by time. */
	if (plan->n == 2 && plan->updates[0].time > plan->updates[1].time)
	{
		mzc_update	tmp = plan->updates[0];

		plan->updates[0] = plan->updates[1];
		plan->updates[1] = tmp;
	}
}

/*
 * Where a new collection at since first holds its dependencies: at since
 * (S5), or with deps_at_upper at join(since, upper - 1), nowhere if its
 * upper is {}.
 */
static mzc_frontier
initial_dep_hold(const mzc_coll_create_args *args, mzc_frontier since)
{
	if (!args->hold_deps_at_since || !args->deps_at_upper)
		return since;
	if (args->upper.empty)
		return mzc_frontier_empty();
	if (args->upper.ts == 0)
		return since;
	return mzc_frontier_join(since, mzc_frontier_at(args->upper.ts - 1));
}

/* One count at since: the hold a new collection takes on each dependency (S5). */
static mzc_update
dep_hold_update(mzc_frontier since)
{
	mzc_update	u;

	u.time = since.ts;
	u.diff = 1;
	return u;
}

/*
 * Checks the arguments of mzc_coll_create: the dependency list (live,
 * ACTIVE, distinct), the frontiers and the registration time, and that a
 * slot is free.
 */
static mzc_status
check_create_args(const mzc_collections *set, const mzc_coll_create_args *args,
				  mzc_error *err)
{
	int32_t		i,
				j;
	mzc_status	st;

	if (args->ndeps < 0 || args->ndeps > MZC_COLL_MAX_DEPS)
		return mzc_fail(err, MZC_ERR_INVALID,
						"a collection has 0 to %d dependencies, not %d",
						MZC_COLL_MAX_DEPS, (int) args->ndeps);
	if (args->ndeps > 0 && args->deps == NULL)
		return mzc_fail(err, MZC_ERR_INVALID, "dependency list is missing");
	if ((st = check_frontier_arg(args->shard_since, "shard since", err)) != MZC_OK ||
		(st = check_frontier_arg(args->requested_since, "requested since",
								 err)) != MZC_OK ||
		(st = check_frontier_arg(args->upper, "upper", err)) != MZC_OK)
		return st;
	if (args->is_table && !mzc_ts_valid(args->register_ts))
		return mzc_fail(err, MZC_ERR_INVALID,
						"register timestamp must not be negative: %lld",
						(long long) args->register_ts);
	for (i = 0; i < args->ndeps; i++)
	{
		int32_t		d = args->deps[i];

		if (!mzc_coll_live(set, d))
			return mzc_fail(err, MZC_ERR_NOT_FOUND,
							"dependency does not exist: %d", (int) d);
		if (set->slots[d].state != MZC_COLL_ACTIVE)
			return mzc_fail(err, MZC_ERR_STATE, "dependency %d is dropped",
							(int) d);
		for (j = 0; j < i; j++)
			if (args->deps[j] == d)
				return mzc_fail(err, MZC_ERR_INVALID,
								"dependency %d is listed twice", (int) d);
	}
	if (set->free_head == MZC_NIL)
		return mzc_fail(err, MZC_ERR_NO_SPACE,
						"no free collection slot (capacity %d)",
						(int) set->capacity);
	return MZC_OK;
}

/*
 * S3, S4: the initial since of a new collection; with hold_deps_at_since
 * (C1), checks instead that no dependency's since is beyond it.
 */
static mzc_status
initial_since(const mzc_collections *set, const mzc_coll_create_args *args,
			  mzc_frontier *since_out, mzc_error *err)
{
	mzc_frontier since;
	int32_t		i;

	since = mzc_frontier_join(args->shard_since, args->requested_since);
	if (args->is_table && mzc_frontier_eq(since, mzc_frontier_at(0)))
		since = mzc_frontier_at(args->register_ts);
	for (i = 0; i < args->ndeps; i++)
	{
		const mzc_collection *dep = &set->slots[args->deps[i]];

		if (!args->hold_deps_at_since)
			since = mzc_frontier_join(since, dep->implied);
	}
	if (since.empty)
		return mzc_fail(err, MZC_ERR_INVALID,
						"initial since is empty: nothing would be readable");
	if (args->hold_deps_at_since)
	{
		mzc_frontier hold = initial_dep_hold(args, since);

		for (i = 0; i < args->ndeps; i++)
			if (!mzc_frontier_le(mzc_counted_frontier(set->pool,
													  &set->slots[args->deps[i]].caps),
								 hold))
				return mzc_fail(err, MZC_ERR_SINCE_VIOLATION,
								"dependency %d has a since beyond where it would be held",
								(int) args->deps[i]);
	}
	*since_out = since;
	return MZC_OK;
}

/*
 * Adds to *needed the pool nodes that one more count at hold on each of
 * deps[0..n) takes; an error if such a count cannot be installed.
 */
static mzc_status
count_dep_nodes(const mzc_collections *set, const int32_t *deps, int32_t n,
				mzc_frontier hold, int32_t *needed, mzc_error *err)
{
	for (int32_t i = 0; i < n && !hold.empty; i++)
	{
		mzc_update	u = dep_hold_update(hold);
		mzc_counted_effect eff;
		mzc_status	st = mzc_counted_check(set->pool, &set->slots[deps[i]].caps,
										   &u, 1, &eff, err);

		if (st != MZC_OK)
			return st;
		*needed += eff.nodes_needed;
	}
	return MZC_OK;
}

/* MZC_ERR_NO_SPACE unless the pool has `needed` free nodes. */
static mzc_status
require_nodes(const mzc_collections *set, int32_t needed, mzc_error *err)
{
	if (needed > set->pool->nfree)
		return mzc_fail(err, MZC_ERR_NO_SPACE,
						"count pool is full: %d free nodes, up to %d needed",
						(int) set->pool->nfree, (int) needed);
	return MZC_OK;
}

/*
 * S5: the dependency holds at since must be installable, and the pool must
 * have the nodes for them and for the new collection's own capability.
 */
static mzc_status
check_dep_holds(const mzc_collections *set, const mzc_coll_create_args *args,
				mzc_frontier since, mzc_error *err)
{
	int32_t		needed = 1;
	mzc_status	st;

	st = count_dep_nodes(set, args->deps, args->ndeps,
						 initial_dep_hold(args, since), &needed, err);
	if (st != MZC_OK)
		return st;
	return require_nodes(set, needed, err);
}

/*
 * Takes the first free slot and makes it an ACTIVE collection at since,
 * holding its dependencies there; returns the slot.  Everything was
 * checked: cannot fail.
 */
static int32_t
install_collection(mzc_collections *set, const mzc_coll_create_args *args,
				   mzc_frontier since)
{
	int32_t		slot = set->free_head;
	mzc_collection *c = &set->slots[slot];
	int32_t		i;

	set->free_head = c->free_next;
	set->nfree--;
	if (slot >= set->high)
		set->high = slot + 1;

	c->state = MZC_COLL_ACTIVE;
	c->is_table = args->is_table;
	c->upper = args->upper;
	c->implied = since;
	c->policy = mzc_policy_no_policy(since);
	mzc_counted_init(&c->caps);
	if (mzc_counted_seed(set->pool, &c->caps, since.ts, 1, NULL) != MZC_OK)
		set->internal_errors++;
	c->deps_at_upper = args->hold_deps_at_since && args->deps_at_upper;
	c->dep_hold = c->deps_at_upper ? initial_dep_hold(args, since) : since;
	c->ndeps = args->ndeps;
	for (i = 0; i < args->ndeps; i++)
	{
		mzc_update	u = dep_hold_update(c->dep_hold);
		int32_t		d = args->deps[i];

		c->deps[i] = d;
		if (c->dep_hold.empty)
			continue;
		if (mzc_counted_apply_consolidated(set->pool, &set->slots[d].caps,
										   &u, 1, NULL, NULL) != MZC_OK)
			set->internal_errors++;
		set->slots[d].ndependents++;
	}
	for (; i < MZC_COLL_MAX_DEPS; i++)
		c->deps[i] = MZC_NIL;
	c->ndependents = 0;
	c->birth = ++set->next_birth;
	c->dirty = false;
	c->pending = false;
	c->pending_next = MZC_NIL;
	c->dirty_next = MZC_NIL;
	c->free_next = MZC_NIL;
	mark_dirty(set, slot);
	return slot;
}

mzc_status
mzc_coll_create(mzc_collections *set, const mzc_coll_create_args *args,
				int32_t *slot_out, mzc_error *err)
{
	mzc_frontier since;
	mzc_status	st;

	if ((st = check_create_args(set, args, err)) != MZC_OK ||
		(st = initial_since(set, args, &since, err)) != MZC_OK ||
		(st = check_dep_holds(set, args, since, err)) != MZC_OK)
		return st;
	/* Nothing can fail from here on. */
	*slot_out = install_collection(set, args, since);
	return MZC_OK;
}

/*
 * A collection holding its dependencies at its upper moves those holds when
 * its upper advances: one node per dependency edge, and the propagation
 * their since changes may cause.  prepare() reserved that already if the
 * plan moves the since; otherwise reserve it here.
 */
static mzc_status
reserve_dep_move(mzc_collections *set, int32_t slot, const coll_plan *plan,
				 mzc_error *err)
{
	if (!set->slots[slot].deps_at_upper || set->slots[slot].ndeps == 0 ||
		plan->effect.changed)
		return MZC_OK;
	return reserve_nodes(set, slot, &plan->effect, true, err);
}

/* Re-evaluates the policy at upper and prepares the implied change (P6). */
static mzc_frontier
next_implied(const mzc_collection *c, const mzc_policy *policy,
			 mzc_frontier upper)
{
	mzc_frontier implied = c->implied;

	(void) mzc_implied_advance(&implied, mzc_policy_frontier(policy, upper));
	return implied;
}

mzc_status
mzc_coll_set_policy(mzc_collections *set, int32_t slot,
					const mzc_policy *policy, mzc_coll_effect *effect,
					mzc_error *err)
{
	mzc_collection *c;
	mzc_frontier implied;
	coll_plan	plan;
	mzc_status	st;

	if ((st = require_active(set, slot, err)) != MZC_OK)
		return st;
	if ((st = mzc_policy_validate(policy, err)) != MZC_OK)
		return st;
	c = &set->slots[slot];
	if (mzc_policy_frontier(policy, c->upper).empty)
		return mzc_fail(err, MZC_ERR_INVALID,
						"a policy with an empty frontier drops the collection");
	implied = next_implied(c, policy, c->upper);
	plan_move(&plan, c->implied, implied);
	if ((st = prepare(set, slot, &plan, err)) != MZC_OK)
		return st;

	effect_start(effect, mzc_coll_since(set, slot));
	c->policy = *policy;
	c->implied = implied;
	mark_dirty(set, slot);
	commit(set, slot, &plan, effect);
	return MZC_OK;
}

mzc_status
mzc_coll_advance_upper(mzc_collections *set, int32_t slot,
					   mzc_frontier new_upper, mzc_coll_effect *effect,
					   mzc_error *err)
{
	mzc_collection *c;
	mzc_frontier implied;
	coll_plan	plan;
	mzc_status	st;

	if ((st = require_live(set, slot, err)) != MZC_OK)
		return st;
	if ((st = check_frontier_arg(new_upper, "upper", err)) != MZC_OK)
		return st;
	c = &set->slots[slot];
	effect_start(effect, mzc_coll_since(set, slot));
	if (!mzc_frontier_lt(c->upper, new_upper))
		return MZC_OK;			/* S8: only forward; a regression is ignored */
	implied = next_implied(c, &c->policy, new_upper);
	plan_move(&plan, c->implied, implied);
	if ((st = prepare(set, slot, &plan, err)) != MZC_OK ||
		(st = reserve_dep_move(set, slot, &plan, err)) != MZC_OK)
		return st;

	c->upper = new_upper;
	c->implied = implied;
	mark_dirty(set, slot);
	/* Its dependencies are held at its upper: they move with it. */
	if (c->deps_at_upper)
		mark_pending(set, slot);
	commit(set, slot, &plan, effect);
	return MZC_OK;
}

static mzc_status
apply_holds(mzc_collections *set, int32_t slot, coll_plan *plan,
			mzc_coll_effect *effect, mzc_error *err)
{
	mzc_status	st;

	if ((st = prepare(set, slot, plan, err)) != MZC_OK)
		return st;
	effect_start(effect, mzc_coll_since(set, slot));
	commit(set, slot, plan, effect);
	return MZC_OK;
}

/* One count more (+1) or less (-1) at t: the heart of acquire and release. */
static mzc_status
single_hold(mzc_collections *set, int32_t slot, mzc_ts t, int64_t diff,
			mzc_coll_effect *effect, mzc_error *err)
{
	coll_plan	plan;
	mzc_status	st;

	if ((st = require_live(set, slot, err)) != MZC_OK)
		return st;
	if (!mzc_ts_valid(t))
		return mzc_fail(err, MZC_ERR_INVALID,
						"hold time must not be negative: %lld", (long long) t);
	plan.updates[0].time = t;
	plan.updates[0].diff = diff;
	plan.n = 1;
	return apply_holds(set, slot, &plan, effect, err);
}

mzc_status
mzc_coll_acquire(mzc_collections *set, int32_t slot, mzc_ts t,
				 mzc_coll_effect *effect, mzc_error *err)
{
	return single_hold(set, slot, t, 1, effect, err);
}

mzc_status
mzc_coll_release(mzc_collections *set, int32_t slot, mzc_ts t,
				 mzc_coll_effect *effect, mzc_error *err)
{
	return single_hold(set, slot, t, -1, effect, err);
}

mzc_status
mzc_coll_downgrade(mzc_collections *set, int32_t slot, mzc_ts from,
				   mzc_frontier to, mzc_coll_effect *effect, mzc_error *err)
{
	coll_plan	plan;
	mzc_status	st;

	if ((st = require_live(set, slot, err)) != MZC_OK)
		return st;
	if (!mzc_ts_valid(from))
		return mzc_fail(err, MZC_ERR_INVALID,
						"hold time must not be negative: %lld",
						(long long) from);
	if ((st = check_frontier_arg(to, "hold time", err)) != MZC_OK)
		return st;
	if (!mzc_frontier_le(mzc_frontier_at(from), to))
		return mzc_fail(err, MZC_ERR_SINCE_VIOLATION,
						"cannot downgrade a hold of collection %d from %lld back to %lld",
						(int) slot, (long long) from, (long long) to.ts);
	plan_move(&plan, mzc_frontier_at(from), to);
	return apply_holds(set, slot, &plan, effect, err);
}

mzc_status
mzc_coll_update(mzc_collections *set, int32_t slot, mzc_update *updates,
				int32_t n, mzc_coll_effect *effect, mzc_error *err)
{
	mzc_status	st;
	mzc_counted_effect ceff;

	if ((st = require_live(set, slot, err)) != MZC_OK)
		return st;
	if ((st = mzc_updates_consolidate(updates, &n, err)) != MZC_OK)
		return st;
	if ((st = check_batch(set, slot, updates, n, &ceff, err)) != MZC_OK)
		return st;
	effect_start(effect, mzc_coll_since(set, slot));
	apply_batch(set, slot, updates, n, ceff.changed, effect);
	return MZC_OK;
}


/* Does from depend on target, directly or through other collections? */
static bool
depends_on(mzc_collections *set, int32_t from, int32_t target)
{
	bool		found = false;

	(void) walk_deps(set, from, target, &found);
	return found;
}

/*
 * Checks the new dependency list of slot for mzc_coll_set_deps: ACTIVE,
 * distinct, no cycle, their since at or below where slot holds them, and
 * room in the pool for the new holds and the propagation.
 */
static mzc_status
check_new_deps(mzc_collections *set, int32_t slot, const int32_t *deps,
			   int32_t ndeps, mzc_error *err)
{
	mzc_collection *c = &set->slots[slot];
	int32_t		needed = reachable_edges(set, slot);
	mzc_status	st;

	if (ndeps < 0 || ndeps > MZC_COLL_MAX_DEPS || (ndeps > 0 && deps == NULL))
		return mzc_fail(err, MZC_ERR_INVALID,
						"a collection has 0 to %d dependencies, not %d",
						MZC_COLL_MAX_DEPS, (int) ndeps);
	for (int32_t i = 0; i < ndeps; i++)
	{
		if ((st = require_active(set, deps[i], err)) != MZC_OK)
			return st;
		for (int32_t j = 0; j < i; j++)
			if (deps[j] == deps[i])
				return mzc_fail(err, MZC_ERR_INVALID,
								"dependency %d is given twice", (int) deps[i]);
		if (deps[i] == slot || depends_on(set, deps[i], slot))
			return mzc_fail(err, MZC_ERR_INVALID,
							"slot %d cannot depend on %d, which depends on it",
							(int) slot, (int) deps[i]);
		if (!c->dep_hold.empty &&
			!mzc_frontier_le(mzc_coll_since(set, deps[i]), c->dep_hold))
			return mzc_fail(err, MZC_ERR_SINCE_VIOLATION,
							"dependency %d is not readable where slot %d holds its dependencies",
							(int) deps[i], (int) slot);
	}
	st = count_dep_nodes(set, deps, ndeps, c->dep_hold, &needed, err);
	if (st != MZC_OK)
		return st;
	return require_nodes(set, needed, err);
}

/*
 * Dependencies are older than their dependents (propagate() relies on
 * it).  After slot took new dependencies, slot and everything that
 * depends on it, directly or not, are born again in their old order.
 * Rare (a view's definition replaced), so a walk over the slots per
 * member is fine.
 */
static void
rebirth(mzc_collections *set, int32_t slot)
{
	uint32_t	epoch = next_visit_epoch(set);
	uint64_t	old_top = set->next_birth;
	bool		grew = true;

	set->slots[slot].visit_epoch = epoch;
	while (grew)
	{
		grew = false;
		for (int32_t i = 0; i < set->high; i++)
		{
			mzc_collection *c = &set->slots[i];

			if (c->state == MZC_COLL_FREE || c->visit_epoch == epoch)
				continue;
			for (int32_t j = 0; j < c->ndeps; j++)
				if (set->slots[c->deps[j]].visit_epoch == epoch)
				{
					c->visit_epoch = epoch;
					grew = true;
					break;
				}
		}
	}
	for (;;)
	{
		int32_t		next = MZC_NIL;

		for (int32_t i = 0; i < set->high; i++)
			if (set->slots[i].visit_epoch == epoch &&
				set->slots[i].state != MZC_COLL_FREE &&
				set->slots[i].birth <= old_top &&
				(next == MZC_NIL || set->slots[i].birth < set->slots[next].birth))
				next = i;
		if (next == MZC_NIL)
			break;
		set->slots[next].birth = ++set->next_birth;
	}
}

mzc_status
mzc_coll_set_deps(mzc_collections *set, int32_t slot, const int32_t *deps,
				  int32_t ndeps, mzc_coll_effect *effect, mzc_error *err)
{
	mzc_collection *c;
	mzc_status	st;
	mzc_update	add;
	mzc_update	sub;

	if ((st = require_active(set, slot, err)) != MZC_OK ||
		(st = check_new_deps(set, slot, deps, ndeps, err)) != MZC_OK)
		return st;
	/* Nothing can fail from here on. */
	c = &set->slots[slot];
	effect_start(effect, mzc_coll_since(set, slot));
	add = dep_hold_update(c->dep_hold);
	sub = add;
	sub.diff = -1;
	/* The new holds first: a dependency kept would otherwise move on. */
	for (int32_t i = 0; i < ndeps && !c->dep_hold.empty; i++)
	{
		if (mzc_counted_apply_consolidated(set->pool, &set->slots[deps[i]].caps,
										   &add, 1, NULL, NULL) != MZC_OK)
			set->internal_errors++;
		set->slots[deps[i]].ndependents++;
	}
	for (int32_t i = 0; i < c->ndeps && !c->dep_hold.empty; i++)
	{
		(void) update_dep(set, c->deps[i], &sub, 1, effect);
		set->slots[c->deps[i]].ndependents--;
	}
	c->ndeps = ndeps;
	for (int32_t i = 0; i < MZC_COLL_MAX_DEPS; i++)
		c->deps[i] = i < ndeps ? deps[i] : MZC_NIL;
	rebirth(set, slot);
	mark_dirty(set, slot);
	propagate(set, effect);
	if (effect != NULL)
		effect->new_since = mzc_coll_since(set, slot);
	return MZC_OK;
}
mzc_status
mzc_coll_drop(mzc_collections *set, int32_t slot, mzc_coll_effect *effect,
			  mzc_error *err)
{
	mzc_collection *c;
	coll_plan	plan;
	mzc_status	st;

	if ((st = require_live(set, slot, err)) != MZC_OK)
		return st;
	c = &set->slots[slot];
	if (c->state == MZC_COLL_DROPPED)
	{
		effect_start(effect, mzc_coll_since(set, slot));
		return MZC_OK;
	}
	plan_move(&plan, c->implied, mzc_frontier_empty());
	if ((st = prepare(set, slot, &plan, err)) != MZC_OK)
		return st;

	effect_start(effect, mzc_coll_since(set, slot));
	c->state = MZC_COLL_DROPPED;
	c->policy = mzc_policy_valid_from(mzc_frontier_empty());
	c->implied = mzc_frontier_empty();
	mark_dirty(set, slot);
	/* Held at its upper, its dependencies are released now (no nodes needed). */
	if (c->deps_at_upper)
		mark_pending(set, slot);
	commit(set, slot, &plan, effect);
	return MZC_OK;
}

int32_t
mzc_colls_dirty_first(const mzc_collections *set)
{
	return set->dirty_head;
}

int32_t
mzc_colls_dirty_next(const mzc_collections *set, int32_t slot)
{
	if (!slot_in_range(set, slot))
		return MZC_NIL;
	return set->slots[slot].dirty_next;
}

void
mzc_colls_clear_dirty(mzc_collections *set)
{
	int32_t		i = set->dirty_head;

	while (i != MZC_NIL)
	{
		mzc_collection *c = &set->slots[i];
		int32_t		next = c->dirty_next;

		c->dirty = false;
		c->dirty_next = MZC_NIL;
		if (c->state == MZC_COLL_GONE)
		{
			mzc_counted_clear(set->pool, &c->caps);
			c->state = MZC_COLL_FREE;
			c->ndeps = 0;
			c->free_next = set->free_head;
			set->free_head = i;
			set->nfree++;
		}
		i = next;
	}
	set->dirty_head = MZC_NIL;
	set->dirty_tail = MZC_NIL;
	set->ndirty = 0;
}
