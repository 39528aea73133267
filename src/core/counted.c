/*-------------------------------------------------------------------------
 *
 * counted.c
 *	  Counted frontiers over a caller-provided node pool (2.1, S7).
 *
 * IDENTIFICATION
 *	  src/core/counted.c
 *
 *-------------------------------------------------------------------------
 */
#include "counted.h"
#include "heapsort.h"

void
mzc_count_pool_init(mzc_count_pool *pool, mzc_count_node *nodes,
					int32_t capacity)
{
	int32_t		i;

	if (capacity < 0)
		capacity = 0;
	pool->nodes = nodes;
	pool->capacity = capacity;
	for (i = 0; i < capacity; i++)
	{
		nodes[i].time = 0;
		nodes[i].count = 0;
		nodes[i].next = (i + 1 < capacity) ? i + 1 : MZC_NIL;
	}
	pool->free_head = capacity > 0 ? 0 : MZC_NIL;
	pool->nfree = capacity;
}

mzc_status
mzc_count_pool_validate(const mzc_count_pool *pool, mzc_error *err)
{
	int32_t		i = pool->free_head;
	int32_t		n = 0;

	while (i != MZC_NIL)
	{
		if (i < 0 || i >= pool->capacity)
			return mzc_fail(err, MZC_ERR_STATE, "free list index %d out of range",
							(int) i);
		if (++n > pool->capacity)
			return mzc_fail(err, MZC_ERR_STATE, "free list has a cycle");
		i = pool->nodes[i].next;
	}
	if (n != pool->nfree)
		return mzc_fail(err, MZC_ERR_STATE,
						"free list has %d nodes, header says %d",
						(int) n, (int) pool->nfree);
	return MZC_OK;
}

void
mzc_counted_init(mzc_counted *c)
{
	c->head = MZC_NIL;
	c->ndistinct = 0;
}

mzc_frontier
mzc_counted_frontier(const mzc_count_pool *pool, const mzc_counted *c)
{
	if (c->head == MZC_NIL)
		return mzc_frontier_empty();
	return mzc_frontier_at(pool->nodes[c->head].time);
}

int64_t
mzc_counted_count_at(const mzc_count_pool *pool, const mzc_counted *c,
					 mzc_ts time)
{
	int32_t		i;

	for (i = c->head; i != MZC_NIL; i = pool->nodes[i].next)
	{
		if (pool->nodes[i].time == time)
			return pool->nodes[i].count;
		if (pool->nodes[i].time > time)
			break;
	}
	return 0;
}

static int32_t
node_take(mzc_count_pool *pool)
{
	int32_t		i = pool->free_head;

	pool->free_head = pool->nodes[i].next;
	pool->nfree--;
	return i;
}

static void
node_give(mzc_count_pool *pool, int32_t i)
{
	pool->nodes[i].count = 0;
	pool->nodes[i].next = pool->free_head;
	pool->free_head = i;
	pool->nfree++;
}

mzc_status
mzc_counted_seed(mzc_count_pool *pool, mzc_counted *c, mzc_ts time,
				 int64_t count, mzc_error *err)
{
	int32_t		i;

	if (!mzc_ts_valid(time))
		return mzc_fail(err, MZC_ERR_INVALID,
						"timestamp must not be negative: %lld", (long long) time);
	if (count <= 0)
		return mzc_fail(err, MZC_ERR_INVALID,
						"initial count must be positive: %lld", (long long) count);
	if (c->head != MZC_NIL)
		return mzc_fail(err, MZC_ERR_STATE,
						"counted frontier is not empty");
	if (pool->nfree < 1)
		return mzc_fail(err, MZC_ERR_NO_SPACE, "count pool is full");
	i = node_take(pool);
	pool->nodes[i].time = time;
	pool->nodes[i].count = count;
	pool->nodes[i].next = MZC_NIL;
	c->head = i;
	c->ndistinct = 1;
	return MZC_OK;
}

void
mzc_counted_clear(mzc_count_pool *pool, mzc_counted *c)
{
	int32_t		i = c->head;

	while (i != MZC_NIL)
	{
		int32_t		next = pool->nodes[i].next;

		node_give(pool, i);
		i = next;
	}
	mzc_counted_init(c);
}

/* Sorting updates by time (mzc_heap_sort): ctx is the mzc_update array. */
static bool
update_before(void *ctx, int32_t a, int32_t b)
{
	const mzc_update *u = ctx;

	return u[a].time < u[b].time;
}

static void
update_swap(void *ctx, int32_t a, int32_t b)
{
	mzc_update *u = ctx;
	mzc_update	tmp = u[a];

	u[a] = u[b];
	u[b] = tmp;
}

static void
sort_updates(mzc_update *u, int32_t n)
{
	mzc_heap_sort(n, update_before, update_swap, u);
}

static bool
add_overflows(int64_t a, int64_t b)
{
	if (b > 0)
		return a > INT64_MAX - b;
	return a < INT64_MIN - b;
}

mzc_status
mzc_updates_consolidate(mzc_update *updates, int32_t *n, mzc_error *err)
{
	int32_t		i,
				out;

	if (*n < 0)
		return mzc_fail(err, MZC_ERR_INVALID, "negative batch length");
	for (i = 0; i < *n; i++)
		if (!mzc_ts_valid(updates[i].time))
			return mzc_fail(err, MZC_ERR_INVALID,
							"timestamp must not be negative: %lld",
							(long long) updates[i].time);
	sort_updates(updates, *n);

	/* First pass: check that no per-time sum overflows, changing nothing. */
	for (i = 0; i < *n;)
	{
		int64_t		sum = updates[i].diff;
		int32_t		j = i + 1;

		while (j < *n && updates[j].time == updates[i].time)
		{
			if (add_overflows(sum, updates[j].diff))
				return mzc_fail(err, MZC_ERR_INVALID,
								"diffs at time %lld overflow",
								(long long) updates[i].time);
			sum += updates[j].diff;
			j++;
		}
		i = j;
	}

	/* Second pass: merge equal times and drop zeros. */
	out = 0;
	for (i = 0; i < *n;)
	{
		mzc_update	acc = updates[i];
		int32_t		j = i + 1;

		while (j < *n && updates[j].time == acc.time)
			acc.diff += updates[j++].diff;
		if (acc.diff != 0)
			updates[out++] = acc;
		i = j;
	}
	*n = out;
	return MZC_OK;
}

mzc_status
mzc_counted_check(const mzc_count_pool *pool, const mzc_counted *c,
				  const mzc_update *updates, int32_t n,
				  mzc_counted_effect *effect, mzc_error *err)
{
	mzc_frontier old = mzc_counted_frontier(pool, c);
	bool		have_new = false;
	mzc_ts		new_ts = 0;
	int32_t		needed = 0,
				freed = 0;
	int32_t		p = c->head;
	int32_t		k;

	if (n < 0)
		return mzc_fail(err, MZC_ERR_INVALID, "negative batch length");

	for (k = 0; k < n; k++)
	{
		mzc_ts		t = updates[k].time;
		int64_t		d = updates[k].diff;
		int64_t		before = 0;
		int64_t		after;

		if (!mzc_ts_valid(t))
			return mzc_fail(err, MZC_ERR_INVALID,
							"timestamp must not be negative: %lld", (long long) t);
		if (d == 0 || (k > 0 && updates[k - 1].time >= t))
			return mzc_fail(err, MZC_ERR_INVALID, "batch is not consolidated");

		/* Nodes before t are untouched: the first of them is the minimum. */
		while (p != MZC_NIL && pool->nodes[p].time < t)
		{
			if (!have_new)
			{
				have_new = true;
				new_ts = pool->nodes[p].time;
			}
			p = pool->nodes[p].next;
		}
		if (p != MZC_NIL && pool->nodes[p].time == t)
		{
			before = pool->nodes[p].count;
			p = pool->nodes[p].next;
		}
		if (add_overflows(before, d))
			return mzc_fail(err, MZC_ERR_INVALID,
							"count at time %lld would overflow", (long long) t);
		after = before + d;
		if (after < 0)
			return mzc_fail(err, MZC_ERR_NEGATIVE_COUNT,
							"count at time %lld would become negative (%lld)",
							(long long) t, (long long) after);
		if (after > 0 && before == 0)
		{
			if (!mzc_frontier_le_ts(old, t))
			{
				if (old.empty)
					return mzc_fail(err, MZC_ERR_BEFORE_FRONTIER,
									"cannot install time %lld: the frontier is empty",
									(long long) t);
				return mzc_fail(err, MZC_ERR_BEFORE_FRONTIER,
								"cannot install time %lld before the frontier %lld",
								(long long) t, (long long) old.ts);
			}
			needed++;
		}
		if (after == 0 && before > 0)
			freed++;
		if (after > 0 && !have_new)
		{
			have_new = true;
			new_ts = t;
		}
	}
	if (!have_new && p != MZC_NIL)
	{
		have_new = true;
		new_ts = pool->nodes[p].time;
	}

	if (needed - freed > pool->nfree)
		return mzc_fail(err, MZC_ERR_NO_SPACE,
						"count pool is full: %d free nodes, %d needed",
						(int) pool->nfree, (int) (needed - freed));

	if (effect != NULL)
	{
		effect->old_frontier = old;
		effect->new_frontier = have_new ? mzc_frontier_at(new_ts)
			: mzc_frontier_empty();
		effect->changed = !mzc_frontier_eq(effect->old_frontier,
										   effect->new_frontier);
		effect->nodes_needed = needed;
		effect->nodes_freed = freed;
	}
	return MZC_OK;
}

mzc_status
mzc_counted_apply_consolidated(mzc_count_pool *pool, mzc_counted *c,
							   const mzc_update *updates, int32_t n,
							   mzc_counted_effect *effect, mzc_error *err)
{
	mzc_counted_effect eff;
	mzc_status	st;
	int32_t		prev,
				p,
				k;

	st = mzc_counted_check(pool, c, updates, n, &eff, err);
	if (st != MZC_OK)
		return st;

	/* Pass 1: update existing times, unlinking those that reach zero. */
	prev = MZC_NIL;
	p = c->head;
	for (k = 0; k < n && p != MZC_NIL; k++)
	{
		mzc_ts		t = updates[k].time;

		while (p != MZC_NIL && pool->nodes[p].time < t)
		{
			prev = p;
			p = pool->nodes[p].next;
		}
		if (p == MZC_NIL || pool->nodes[p].time != t)
			continue;
		pool->nodes[p].count += updates[k].diff;
		if (pool->nodes[p].count == 0)
		{
			int32_t		next = pool->nodes[p].next;

			if (prev == MZC_NIL)
				c->head = next;
			else
				pool->nodes[prev].next = next;
			node_give(pool, p);
			c->ndistinct--;
			p = next;
		}
		else
		{
			prev = p;
			p = pool->nodes[p].next;
		}
	}

	/*
	 * Pass 2: insert the times that had no count.  Those are exactly the
	 * positive updates whose time has no node now: a node freed in pass 1
	 * belonged to a negative update.
	 */
	prev = MZC_NIL;
	p = c->head;
	for (k = 0; k < n; k++)
	{
		mzc_ts		t = updates[k].time;
		int32_t		fresh;

		while (p != MZC_NIL && pool->nodes[p].time < t)
		{
			prev = p;
			p = pool->nodes[p].next;
		}
		if (updates[k].diff < 0 || (p != MZC_NIL && pool->nodes[p].time == t))
			continue;
		fresh = node_take(pool);
		pool->nodes[fresh].time = t;
		pool->nodes[fresh].count = updates[k].diff;
		pool->nodes[fresh].next = p;
		if (prev == MZC_NIL)
			c->head = fresh;
		else
			pool->nodes[prev].next = fresh;
		c->ndistinct++;
		prev = fresh;
	}

	if (effect != NULL)
		*effect = eff;
	return MZC_OK;
}

mzc_status
mzc_counted_validate(const mzc_count_pool *pool, const mzc_counted *c,
					 mzc_error *err)
{
	int32_t		i = c->head;
	int32_t		n = 0;
	bool		first = true;
	mzc_ts		last = 0;

	while (i != MZC_NIL)
	{
		const mzc_count_node *node;

		if (i < 0 || i >= pool->capacity)
			return mzc_fail(err, MZC_ERR_STATE, "node index %d out of range",
							(int) i);
		if (++n > pool->capacity)
			return mzc_fail(err, MZC_ERR_STATE, "counted list has a cycle");
		node = &pool->nodes[i];
		if (node->count <= 0)
			return mzc_fail(err, MZC_ERR_STATE,
							"non-positive count %lld at time %lld",
							(long long) node->count, (long long) node->time);
		if (!first && node->time <= last)
			return mzc_fail(err, MZC_ERR_STATE, "counted list is not sorted");
		first = false;
		last = node->time;
		i = node->next;
	}
	if (n != c->ndistinct)
		return mzc_fail(err, MZC_ERR_STATE,
						"counted list has %d nodes, header says %d",
						(int) n, (int) c->ndistinct);
	return MZC_OK;
}
