/*-------------------------------------------------------------------------
 *
 * asof.c
 *	  As-of selection for maintained dataflows at bootstrap (reference 2.6).
 *
 * IDENTIFICATION
 *	  src/core/asof.c
 *
 *-------------------------------------------------------------------------
 */
#include "asof.h"

typedef enum bound_kind
{
	BOUND_LOWER,
	BOUND_UPPER
} bound_kind;

typedef enum constraint_kind
{
	HARD,
	SOFT
} constraint_kind;

typedef struct asof_ctx
{
	mzc_asof_request *req;
	mzc_asof_stats *stats;
} asof_ctx;

enum
{
	DFS_WHITE = 0,
	DFS_GREY,
	DFS_BLACK
};

static mzc_status
invalid(mzc_asof_stats *stats, int32_t dataflow, mzc_error *err,
		const char *what)
{
	stats->invalid_dataflow = dataflow;
	return mzc_fail(err, MZC_ERR_INVALID, "dataflow %d: %s", (int) dataflow,
					what);
}

static bool
frontier_ok(mzc_frontier f)
{
	return f.empty || mzc_ts_valid(f.ts);
}

static mzc_status
validate(mzc_asof_request *req, mzc_asof_stats *stats, mzc_error *err)
{
	int32_t		i,
				j;

	if (req->nstorage < 0 || req->ndataflows < 0 ||
		(req->nstorage > 0 && req->storage == NULL) ||
		(req->ndataflows > 0 && req->dataflows == NULL))
		return mzc_fail(err, MZC_ERR_INVALID, "invalid array arguments");
	if (!mzc_ts_valid(req->now))
		return mzc_fail(err, MZC_ERR_INVALID, "current time must not be negative");
	for (i = 0; i < req->nstorage; i++)
		if (!frontier_ok(req->storage[i].since) ||
			!frontier_ok(req->storage[i].upper))
			return mzc_fail(err, MZC_ERR_INVALID,
							"storage collection %d has a negative frontier",
							(int) i);
	for (i = 0; i < req->ndataflows; i++)
	{
		mzc_asof_dataflow *d = &req->dataflows[i];

		if (d->nstorage_inputs < 0 || d->ncompute_inputs < 0 ||
			(d->nstorage_inputs > 0 && d->storage_inputs == NULL) ||
			(d->ncompute_inputs > 0 && d->compute_inputs == NULL))
			return invalid(stats, i, err, "invalid input list");
		for (j = 0; j < d->nstorage_inputs; j++)
			if (d->storage_inputs[j] < 0 || d->storage_inputs[j] >= req->nstorage)
				return invalid(stats, i, err, "storage input out of range");
		for (j = 0; j < d->ncompute_inputs; j++)
			if (d->compute_inputs[j] < 0 ||
				d->compute_inputs[j] >= req->ndataflows)
				return invalid(stats, i, err, "dataflow input out of range");
		if (d->export_storage < -1 || d->export_storage >= req->nstorage)
			return invalid(stats, i, err, "exported storage out of range");
		if (d->has_policy && mzc_policy_validate(&d->policy, NULL) != MZC_OK)
			return invalid(stats, i, err, "invalid read policy");
		if (d->has_fixed_as_of && !frontier_ok(d->fixed_as_of))
			return invalid(stats, i, err, "negative fixed as-of");
	}
	return MZC_OK;
}

/*
 * Cycle check: iterative depth-first search over dataflow inputs, with the
 * stack kept in the dataflows' workspace (dfs_parent links).
 */
static mzc_status
check_acyclic(mzc_asof_request *req, mzc_asof_stats *stats, mzc_error *err)
{
	int32_t		i;

	for (i = 0; i < req->ndataflows; i++)
	{
		req->dataflows[i].dfs_state = DFS_WHITE;
		req->dataflows[i].dfs_cursor = 0;
		req->dataflows[i].dfs_parent = -1;
	}
	for (i = 0; i < req->ndataflows; i++)
	{
		int32_t		cur;

		if (req->dataflows[i].dfs_state != DFS_WHITE)
			continue;
		cur = i;
		req->dataflows[cur].dfs_state = DFS_GREY;
		while (cur >= 0)
		{
			mzc_asof_dataflow *d = &req->dataflows[cur];

			if (d->dfs_cursor < d->ncompute_inputs)
			{
				int32_t		next = d->compute_inputs[d->dfs_cursor++];
				mzc_asof_dataflow *n = &req->dataflows[next];

				if (n->dfs_state == DFS_GREY)
					return invalid(stats, next, err,
								   "dataflow inputs form a cycle");
				if (n->dfs_state == DFS_WHITE)
				{
					n->dfs_state = DFS_GREY;
					n->dfs_parent = cur;
					cur = next;
				}
			}
			else
			{
				d->dfs_state = DFS_BLACK;
				cur = d->dfs_parent;
			}
		}
	}
	return MZC_OK;
}

/* Applies one constraint; returns whether the bounds changed. */
static bool
apply(asof_ctx *cx, mzc_asof_dataflow *d, bound_kind bound,
	  constraint_kind kind, mzc_frontier f)
{
	bool		changed = false;

	if (d->sealed)
		return false;
	if (bound == BOUND_LOWER)
	{
		if (mzc_frontier_lt(d->upper, f))
		{
			d->sealed = true;
			if (mzc_frontier_lt(d->lower, d->upper))
			{
				d->lower = d->upper;
				changed = true;
			}
		}
		else if (mzc_frontier_le(f, d->lower))
			return false;
		else
		{
			d->lower = f;
			return true;
		}
	}
	else
	{
		if (mzc_frontier_lt(f, d->lower))
		{
			d->sealed = true;
			if (mzc_frontier_lt(d->lower, d->upper))
			{
				d->upper = d->lower;
				changed = true;
			}
		}
		else if (mzc_frontier_le(d->upper, f))
			return false;
		else
		{
			d->upper = f;
			return true;
		}
	}
	/* The constraint failed. */
	if (kind == HARD)
		cx->stats->hard_failures++;
	else
		cx->stats->soft_failures++;
	return changed;
}

static mzc_frontier
bound_of(const mzc_asof_dataflow *d, bound_kind bound)
{
	return bound == BOUND_LOWER ? d->lower : d->upper;
}

/*
 * One pass over the edges input -> x between dataflows.  Downstream (in
 * array order): x's bound is constrained by its input's.  Upstream (in
 * reverse order): the input's bound is constrained by x's.
 */
static void
edge_pass(asof_ctx *cx, bound_kind bound, constraint_kind kind,
		  bool upstream, bool *changed)
{
	mzc_asof_request *req = cx->req;
	int32_t		k,
				j;

	cx->stats->passes++;
	for (k = 0; k < req->ndataflows; k++)
	{
		int32_t		i = upstream ? req->ndataflows - 1 - k : k;
		mzc_asof_dataflow *x = &req->dataflows[i];

		if (x->pruned)
			continue;
		for (j = 0; j < x->ncompute_inputs; j++)
		{
			mzc_asof_dataflow *y = &req->dataflows[x->compute_inputs[j]];
			bool		moved;

			if (upstream)
				moved = apply(cx, y, bound, kind, bound_of(x, bound));
			else
				moved = apply(cx, x, bound, kind, bound_of(y, bound));
			if (moved)
				*changed = true;
		}
	}
}

/*
 * Passes until nothing changes: restores invariant (1) after lower bounds
 * rose (downstream), or (2) after upper bounds fell (upstream).
 */
static void
propagate_to_fixpoint(asof_ctx *cx, bound_kind bound, bool upstream)
{
	bool		changed;

	do
	{
		changed = false;
		edge_pass(cx, bound, HARD, upstream, &changed);
	} while (changed);
}

/* Restores invariant (1) after lower bounds rose. */
static void
propagate_lower_downstream(asof_ctx *cx)
{
	propagate_to_fixpoint(cx, BOUND_LOWER, false);
}

/* Restores invariant (2) after upper bounds fell. */
static void
propagate_upper_upstream(asof_ctx *cx)
{
	propagate_to_fixpoint(cx, BOUND_UPPER, true);
}

static void
prune(mzc_asof_request *req)
{
	bool		changed;
	int32_t		i,
				j;

	for (i = 0; i < req->ndataflows; i++)
	{
		mzc_asof_dataflow *d = &req->dataflows[i];

		/* Writes into a sealed storage collection: nothing left to do. */
		if (d->export_storage >= 0 && req->storage[d->export_storage].upper.empty)
			d->pruned = true;
		/* Read-only: a storage input was dropped by the leader. */
		if (req->read_only)
			for (j = 0; j < d->nstorage_inputs; j++)
				if (req->storage[d->storage_inputs[j]].since.empty)
					d->pruned = true;
	}
	do
	{
		changed = false;
		for (i = 0; i < req->ndataflows; i++)
		{
			mzc_asof_dataflow *d = &req->dataflows[i];

			if (d->pruned)
				continue;
			for (j = 0; j < d->ncompute_inputs; j++)
				if (req->dataflows[d->compute_inputs[j]].pruned)
				{
					d->pruned = true;
					changed = true;
					break;
				}
		}
	} while (changed);
}

/* W(x): meet of the uppers of x's transitive storage inputs. */
static void
compute_warmup_frontiers(asof_ctx *cx)
{
	mzc_asof_request *req = cx->req;
	bool		changed;
	int32_t		i,
				j;

	for (i = 0; i < req->ndataflows; i++)
	{
		mzc_asof_dataflow *d = &req->dataflows[i];

		d->warm = mzc_frontier_empty();
		for (j = 0; j < d->nstorage_inputs; j++)
			d->warm = mzc_frontier_meet(d->warm,
										req->storage[d->storage_inputs[j]].upper);
	}
	do
	{
		changed = false;
		cx->stats->passes++;
		for (i = 0; i < req->ndataflows; i++)
		{
			mzc_asof_dataflow *d = &req->dataflows[i];

			if (d->pruned)
				continue;
			for (j = 0; j < d->ncompute_inputs; j++)
			{
				mzc_frontier m = mzc_frontier_meet(d->warm,
												   req->dataflows[d->compute_inputs[j]].warm);

				if (!mzc_frontier_eq(m, d->warm))
				{
					d->warm = m;
					changed = true;
				}
			}
		}
	} while (changed);
}

/* The starting bounds: [a .. a] for a fixed as-of a, else [{0} .. {}]. */
static void
init_bounds(mzc_asof_request *req)
{
	int32_t		i;

	for (i = 0; i < req->ndataflows; i++)
	{
		mzc_asof_dataflow *d = &req->dataflows[i];

		d->pruned = false;
		d->sealed = false;
		if (d->has_fixed_as_of)
			d->lower = d->upper = d->fixed_as_of;
		else
		{
			d->lower = mzc_frontier_at(0);
			d->upper = mzc_frontier_empty();
		}
	}
}

/* Step 2, HARD lower bounds: each storage input's since. */
static void
constrain_by_input_sinces(asof_ctx *cx)
{
	mzc_asof_request *req = cx->req;
	int32_t		i,
				j;

	for (i = 0; i < req->ndataflows; i++)
	{
		mzc_asof_dataflow *d = &req->dataflows[i];

		if (d->pruned)
			continue;
		for (j = 0; j < d->nstorage_inputs; j++)
			(void) apply(cx, d, BOUND_LOWER, HARD,
						 req->storage[d->storage_inputs[j]].since);
	}
}

/*
 * What one step asks of a dataflow's upper bound: false if nothing (the
 * dataflow is not pruned).
 */
typedef bool (*upper_constraint) (const mzc_asof_request *req,
								  const mzc_asof_dataflow *d,
								  mzc_frontier *f);

/* Applies one step's upper constraint to every dataflow not pruned. */
static void
constrain_uppers(asof_ctx *cx, constraint_kind kind, upper_constraint fn)
{
	mzc_asof_request *req = cx->req;
	int32_t		i;

	for (i = 0; i < req->ndataflows; i++)
	{
		mzc_asof_dataflow *d = &req->dataflows[i];
		mzc_frontier f;

		if (!d->pruned && fn(req, d, &f))
			(void) apply(cx, d, BOUND_UPPER, kind, f);
	}
}

/*
 * Step 3, HARD: a dataflow writing storage resumes before the collection's
 * upper, or at its since if it is empty.
 */
static bool
export_upper(const mzc_asof_request *req, const mzc_asof_dataflow *d,
			 mzc_frontier *f)
{
	const mzc_asof_storage *s;

	if (d->export_storage < 0)
		return false;
	s = &req->storage[d->export_storage];
	if (mzc_frontier_le(s->upper, s->since))
		*f = s->since;			/* empty collection: may start at its since */
	else
		*f = mzc_frontier_step_back(s->upper);
	return true;
}

/*
 * Step 4, SOFT: start where every transitive storage input is readable
 * (after compute_warmup_frontiers).
 */
static bool
warmup_upper(const mzc_asof_request *req, const mzc_asof_dataflow *d,
			 mzc_frontier *f)
{
	(void) req;
	*f = mzc_frontier_step_back(d->warm);
	return true;
}

/* Step 5, SOFT: indexes keep the history their read policy asks for. */
static bool
policy_upper(const mzc_asof_request *req, const mzc_asof_dataflow *d,
			 mzc_frontier *f)
{
	mzc_frontier w;

	if (d->export_storage >= 0 || !d->has_policy)
		return false;
	w = d->warm.empty ? mzc_frontier_at(req->now) : d->warm;
	*f = mzc_policy_frontier(&d->policy, w);
	return true;
}

/* Step 6, SOFT: indexes are readable at the current time. */
static bool
now_upper(const mzc_asof_request *req, const mzc_asof_dataflow *d,
		  mzc_frontier *f)
{
	if (d->export_storage >= 0)
		return false;
	*f = mzc_frontier_at(req->now);
	return true;
}

mzc_status
mzc_select_as_ofs(mzc_asof_request *req, mzc_asof_stats *stats,
				  mzc_error *err)
{
	mzc_asof_stats local;
	asof_ctx	cx;
	int32_t		i;
	mzc_status	st;

	if (stats == NULL)
		stats = &local;
	stats->hard_failures = 0;
	stats->soft_failures = 0;
	stats->passes = 0;
	stats->invalid_dataflow = -1;
	if ((st = validate(req, stats, err)) != MZC_OK)
		return st;
	if ((st = check_acyclic(req, stats, err)) != MZC_OK)
		return st;
	cx.req = req;
	cx.stats = stats;

	init_bounds(req);
	prune(req);
	constrain_by_input_sinces(&cx);
	propagate_lower_downstream(&cx);
	constrain_uppers(&cx, HARD, export_upper);
	propagate_upper_upstream(&cx);
	compute_warmup_frontiers(&cx);
	constrain_uppers(&cx, SOFT, warmup_upper);
	propagate_upper_upstream(&cx);
	constrain_uppers(&cx, SOFT, policy_upper);
	propagate_upper_upstream(&cx);
	constrain_uppers(&cx, SOFT, now_upper);
	propagate_upper_upstream(&cx);

	/* Step 7: as_of = upper, {} if pruned. */
	for (i = 0; i < req->ndataflows; i++)
	{
		mzc_asof_dataflow *d = &req->dataflows[i];

		d->as_of = d->pruned ? mzc_frontier_empty() : d->upper;
	}
	return MZC_OK;
}
