/*-------------------------------------------------------------------------
 *
 * collcheck.c
 *	  Checking every invariant of a collection set (mzc_colls_validate):
 *	  for tests, fuzzers and the controller's introspection.
 *
 * IDENTIFICATION
 *	  src/core/collcheck.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "collcheck.h"

/* Above this capacity, validate checks dependents by sums only. */
#define MZC_VALIDATE_EXACT_LIMIT 4096

static bool
slot_in_range(const mzc_collections *set, int32_t slot)
{
	return slot >= 0 && slot < set->capacity;
}

/* What mzc_colls_validate adds up over the slots. */
typedef struct validate_totals
{
	int32_t		nodes;			/* pool nodes in the slots' counted lists */
	int64_t		edges;			/* dependency edges of live slots */
	int64_t		dependents;		/* ndependents of live slots */
} validate_totals;

/* The free slot list: FREE slots only, no cycle, as long as nfree says. */
static mzc_status
validate_free_list(const mzc_collections *set, mzc_error *err)
{
	int32_t		i,
				nfree = 0;

	for (i = set->free_head; i != MZC_NIL; i = set->slots[i].free_next)
	{
		if (!slot_in_range(set, i) || set->slots[i].state != MZC_COLL_FREE)
			return mzc_fail(err, MZC_ERR_STATE, "bad free slot %d", (int) i);
		if (++nfree > set->capacity)
			return mzc_fail(err, MZC_ERR_STATE, "free slot list has a cycle");
	}
	if (nfree != set->nfree)
		return mzc_fail(err, MZC_ERR_STATE, "free slot count mismatch");
	return MZC_OK;
}

/*
 * A live slot's since against its state: a DROPPED slot has no implied
 * capability and a since; an ACTIVE one holds a count at its implied
 * capability, which its since is not ahead of.
 */
static mzc_status
validate_implied(const mzc_collections *set, int32_t i, mzc_frontier since,
				 mzc_error *err)
{
	const mzc_collection *c = &set->slots[i];

	if (c->state == MZC_COLL_DROPPED)
	{
		if (!c->implied.empty || since.empty)
			return mzc_fail(err, MZC_ERR_STATE,
							"dropped slot %d is inconsistent", (int) i);
		return MZC_OK;
	}
	if (c->implied.empty ||
		mzc_counted_count_at(set->pool, &c->caps, c->implied.ts) < 1)
		return mzc_fail(err, MZC_ERR_STATE,
						"slot %d lacks its implied capability", (int) i);
	if (!mzc_frontier_le(since, c->implied))
		return mzc_fail(err, MZC_ERR_STATE,
						"slot %d since is ahead of its implied capability",
						(int) i);
	return MZC_OK;
}

/*
 * Where slot c must hold its dependencies: at its since; or, held at its
 * upper, at upper - 1 or later while ACTIVE with an upper, and nowhere
 * otherwise.
 */
static bool
dep_hold_ok(const mzc_collection *c, mzc_frontier since)
{
	if (!c->deps_at_upper)
		return mzc_frontier_eq(since, c->dep_hold);
	if (c->state != MZC_COLL_ACTIVE || c->upper.empty)
		return c->dep_hold.empty;
	return !c->dep_hold.empty &&
		(c->upper.ts == 0 || c->dep_hold.ts >= c->upper.ts - 1);
}

/* Each dependency of slot i is live, older, and held by it at hold (if any). */
static mzc_status
validate_deps(const mzc_collections *set, int32_t i, mzc_frontier hold,
			  mzc_error *err)
{
	const mzc_collection *c = &set->slots[i];
	int32_t		j;

	for (j = 0; j < c->ndeps; j++)
	{
		const mzc_collection *d;

		if (!mzc_coll_live(set, c->deps[j]))
			return mzc_fail(err, MZC_ERR_STATE,
							"slot %d depends on a missing slot", (int) i);
		d = &set->slots[c->deps[j]];
		if (d->birth >= c->birth)
			return mzc_fail(err, MZC_ERR_STATE,
							"slot %d depends on a younger slot", (int) i);
		if (!hold.empty && mzc_counted_count_at(set->pool, &d->caps, hold.ts) < 1)
			return mzc_fail(err, MZC_ERR_STATE,
							"slot %d has no hold on dependency %d",
							(int) i, (int) c->deps[j]);
	}
	return MZC_OK;
}

/* The live slots that hold slot i as a dependency (quadratic overall). */
static int32_t
count_dependents(const mzc_collections *set, int32_t i)
{
	int32_t		dependents = 0,
				j,
				k;

	for (j = 0; j < set->capacity; j++)
	{
		const mzc_collection *o = &set->slots[j];

		if (!mzc_coll_live(set, j) || o->dep_hold.empty)
			continue;
		for (k = 0; k < o->ndeps; k++)
			if (o->deps[k] == i)
				dependents++;
	}
	return dependents;
}

/*
 * Checks slot i (see mzc_colls_validate) and adds it to the totals: its
 * counted list, its since against its state and dependency holds, and in
 * small sets its exact number of dependents.
 */
static mzc_status
validate_slot(const mzc_collections *set, int32_t i, validate_totals *tot,
			  mzc_error *err)
{
	const mzc_collection *c = &set->slots[i];
	mzc_frontier since;
	int32_t		dependents;
	mzc_status	st;

	if ((st = mzc_counted_validate(set->pool, &c->caps, err)) != MZC_OK)
		return st;
	tot->nodes += c->caps.ndistinct;
	if (c->state == MZC_COLL_FREE)
	{
		if (c->caps.ndistinct != 0)
			return mzc_fail(err, MZC_ERR_STATE,
							"free slot %d has capabilities", (int) i);
		return MZC_OK;
	}
	since = mzc_counted_frontier(set->pool, &c->caps);
	if (!dep_hold_ok(c, since))
		return mzc_fail(err, MZC_ERR_STATE,
						"slot %d holds its dependencies at a stale frontier",
						(int) i);
	if (c->state == MZC_COLL_GONE)
	{
		if (!since.empty)
			return mzc_fail(err, MZC_ERR_STATE,
							"gone slot %d still has capabilities", (int) i);
		return MZC_OK;
	}
	if ((st = validate_implied(set, i, since, err)) != MZC_OK ||
		(st = validate_deps(set, i, c->dep_hold, err)) != MZC_OK)
		return st;
	if (mzc_coll_live(set, i) && !c->dep_hold.empty)
	{
		tot->edges += c->ndeps;
		tot->dependents += c->ndependents;
	}
	if (set->capacity > MZC_VALIDATE_EXACT_LIMIT)
		return MZC_OK;
	dependents = count_dependents(set, i);
	if (dependents != c->ndependents)
		return mzc_fail(err, MZC_ERR_STATE,
						"slot %d has %d dependents, header says %d",
						(int) i, (int) dependents, (int) c->ndependents);
	return MZC_OK;
}

mzc_status
mzc_colls_validate(const mzc_collections *set, mzc_error *err)
{
	validate_totals tot = {0, 0, 0};
	int32_t		i;
	mzc_status	st;

	if (set->internal_errors != 0)
		return mzc_fail(err, MZC_ERR_STATE, "%d internal errors occurred",
						(int) set->internal_errors);
	if (set->pending_head != MZC_NIL)
		return mzc_fail(err, MZC_ERR_STATE, "propagation left work pending");
	if ((st = validate_free_list(set, err)) != MZC_OK)
		return st;
	for (i = 0; i < set->capacity; i++)
	{
		if (i >= set->high && set->slots[i].state != MZC_COLL_FREE)
			return mzc_fail(err, MZC_ERR_STATE,
							"slot %d is in use beyond the high-water mark %d",
							(int) i, (int) set->high);
		if ((st = validate_slot(set, i, &tot, err)) != MZC_OK)
			return st;
	}
	if (tot.edges != tot.dependents)
		return mzc_fail(err, MZC_ERR_STATE,
						"%lld dependency edges but %lld dependents recorded",
						(long long) tot.edges, (long long) tot.dependents);
	if (tot.nodes != set->pool->capacity - set->pool->nfree)
		return mzc_fail(err, MZC_ERR_STATE,
						"pool accounting: %d nodes in use, %d in lists",
						(int) (set->pool->capacity - set->pool->nfree),
						(int) tot.nodes);
	return mzc_count_pool_validate(set->pool, err);
}
