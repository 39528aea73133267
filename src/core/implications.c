/*-------------------------------------------------------------------------
 *
 * implications.c
 *	  Catalog implications: fold one catalog change into per-item
 *	  implications and order them.
 *
 * The fold sorts row indexes by (item id, row index) in place (heapsort:
 * no extra memory, deterministic), then looks at one item's rows at a time.
 * An item has very few rows in a batch (one retraction and one addition for
 * an update), so consolidation compares each row with the item's other rows
 * directly.
 *
 * The plan walks the implications (sorted by id) once per kind and, for the
 * materialized views, once per wave; the views' reads are looked up by
 * binary search on the id.
 *
 * IDENTIFICATION
 *	  src/core/implications.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "heapsort.h"
#include "implications.h"

static const char *const item_kind_names[MZC_ITEM_NKINDS] = {
	"table", "source", "materialized_view", "index", "sink"
};

bool
mzc_item_kind_parse(const char *name, mzc_item_kind *kind)
{
	int			i;

	for (i = 0; i < MZC_ITEM_NKINDS; i++)
		if (strcmp(name, item_kind_names[i]) == 0)
		{
			*kind = (mzc_item_kind) i;
			return true;
		}
	return false;
}

bool
mzc_gid_parse(const char *text, int64_t *num)
{
	int64_t		v = 0;
	const char *p;

	if (text == NULL || text[0] != 'u' || text[1] < '1' || text[1] > '9')
		return false;
	for (p = text + 1; *p; p++)
	{
		int			d = *p - '0';

		if (d < 0 || d > 9)
			return false;
		if (v > (INT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*num = v;
	return true;
}

/* ----------------------------------------------------------------
 * The fold (I1, I2)
 * ----------------------------------------------------------------
 */

/* Does row index a sort before b: by item id, then by position? */
static bool
row_before(const mzc_impl_row *rows, int32_t a, int32_t b)
{
	if (rows[a].id != rows[b].id)
		return rows[a].id < rows[b].id;
	return a < b;
}

/* Sorting a permutation of the rows (mzc_heap_sort). */
typedef struct row_order
{
	const mzc_impl_row *rows;
	int32_t    *order;
} row_order;

static bool
order_before(void *ctx, int32_t a, int32_t b)
{
	row_order  *ro = ctx;

	return row_before(ro->rows, ro->order[a], ro->order[b]);
}

static void
order_swap(void *ctx, int32_t a, int32_t b)
{
	row_order  *ro = ctx;
	int32_t		tmp = ro->order[a];

	ro->order[a] = ro->order[b];
	ro->order[b] = tmp;
}

/* order[0..n-1] := 0..n-1 sorted by (id, index). */
static void
sort_rows(const mzc_impl_row *rows, int32_t n, int32_t *order)
{
	row_order	ro;
	int32_t		i;

	for (i = 0; i < n; i++)
		order[i] = i;
	ro.rows = rows;
	ro.order = order;
	mzc_heap_sort(n, order_before, order_swap, &ro);
}

/* Every row well formed: a positive id, a known kind, a diff of +-1. */
static mzc_status
check_rows(const mzc_impl_row *rows, int32_t nrows, mzc_error *err)
{
	for (int32_t i = 0; i < nrows; i++)
	{
		if (rows[i].id < 1)
			return mzc_fail(err, MZC_ERR_INVALID,
							"row %d: invalid item id %lld", (int) i,
							(long long) rows[i].id);
		if ((int) rows[i].kind < 0 || (int) rows[i].kind >= MZC_ITEM_NKINDS)
			return mzc_fail(err, MZC_ERR_INVALID,
							"row %d: unknown item kind %d", (int) i,
							(int) rows[i].kind);
		if (rows[i].diff != 1 && rows[i].diff != -1)
			return mzc_fail(err, MZC_ERR_INVALID,
							"row %d: diff must be 1 or -1, not %d", (int) i,
							(int) rows[i].diff);
	}
	return MZC_OK;
}

/* What the rows of one item consolidate to (I1). */
typedef struct item_net
{
	int32_t		additions;
	int32_t		retractions;
	int32_t		old_row;		/* first retracted row, or MZC_IMPL_NONE */
	int32_t		new_row;		/* first added row, or MZC_IMPL_NONE */
} item_net;

/*
 * I1: the net diff of each distinct row among order[start..end) (one
 * item's rows), counted at its first occurrence.
 */
static item_net
consolidate_item(const mzc_impl_row *rows, const int32_t *order,
				 int32_t start, int32_t end, mzc_impl_same_fn same, void *ctx)
{
	item_net	net = {0, 0, MZC_IMPL_NONE, MZC_IMPL_NONE};

	for (int32_t j = start; j < end; j++)
	{
		int32_t		r = order[j];
		bool		first = true;
		int32_t		n = 0;

		for (int32_t k = start; k < j && first; k++)
			if (same(ctx, order[k], r, false))
				first = false;
		if (!first)
			continue;
		for (int32_t k = j; k < end; k++)
			if (k == j || same(ctx, order[k], r, false))
				n += rows[order[k]].diff;
		if (n > 0)
		{
			net.additions += n;
			if (net.new_row == MZC_IMPL_NONE)
				net.new_row = r;
		}
		else if (n < 0)
		{
			net.retractions -= n;
			if (net.old_row == MZC_IMPL_NONE)
				net.old_row = r;
		}
	}
	return net;
}

/* An item added or dropped twice: the state error, with its id. */
static mzc_status
fold_conflict(int64_t id, const item_net *net, mzc_impl_fold_result *result,
			  mzc_error *err)
{
	if (result != NULL)
	{
		memset(result, 0, sizeof(*result));
		result->conflict_id = id;
		result->conflict_added = net->additions > 1;
	}
	if (net->additions > 1)
		return mzc_fail(err, MZC_ERR_STATE,
						"cannot add an already added item: u%lld",
						(long long) id);
	return mzc_fail(err, MZC_ERR_STATE,
					"cannot drop an already dropped item: u%lld",
					(long long) id);
}

/*
 * I2: the implication of one item with at most one net addition and one
 * net retraction.  Returns false when there is none (nothing changed, or
 * only the relation of a new item was filled in).
 */
static bool
fold_item(const mzc_impl_row *rows, int64_t id, const item_net *net,
		  mzc_impl_same_fn same, void *ctx, mzc_impl *impl,
		  mzc_impl_fold_result *res)
{
	if (net->additions == 0 && net->retractions == 0)
		return false;
	memset(impl, 0, sizeof(*impl));
	impl->id = id;
	impl->old_row = net->old_row;
	impl->new_row = net->new_row;
	if (net->additions == 1 && net->retractions == 1)
	{
		/* Filling in the relation of a new item is not a change. */
		if (rows[net->old_row].relation_null &&
			same(ctx, net->old_row, net->new_row, true))
			return false;
		impl->action = MZC_IMPL_ALTERED;
		impl->kind = rows[net->new_row].kind;
		res->naltered++;
	}
	else if (net->additions == 1)
	{
		impl->action = MZC_IMPL_ADDED;
		impl->kind = rows[net->new_row].kind;
		res->nadded++;
	}
	else
	{
		impl->action = MZC_IMPL_DROPPED;
		impl->kind = rows[net->old_row].kind;
		res->ndropped++;
	}
	return true;
}

mzc_status
mzc_impl_fold(const mzc_impl_row *rows, int32_t nrows, mzc_impl_same_fn same,
			  void *ctx, int32_t *scratch, mzc_impl *impls,
			  mzc_impl_fold_result *result, mzc_error *err)
{
	mzc_impl_fold_result res;
	mzc_status	st;

	memset(&res, 0, sizeof(res));
	mzc_error_clear(err);
	if (nrows < 0 || (nrows > 0 && (rows == NULL || scratch == NULL ||
									impls == NULL || same == NULL)))
		return mzc_fail(err, MZC_ERR_INVALID, "invalid arguments");
	if ((st = check_rows(rows, nrows, err)) != MZC_OK)
		return st;

	sort_rows(rows, nrows, scratch);
	for (int32_t start = 0; start < nrows;)
	{
		int64_t		id = rows[scratch[start]].id;
		int32_t		end = start;
		item_net	net;

		while (end < nrows && rows[scratch[end]].id == id)
			end++;
		net = consolidate_item(rows, scratch, start, end, same, ctx);
		start = end;
		if (net.additions > 1 || net.retractions > 1)
			return fold_conflict(id, &net, result, err);
		if (fold_item(rows, id, &net, same, ctx, &impls[res.nimpls], &res))
			res.nimpls++;
	}

	res.added_filled = res.nadded > 0;
	for (int32_t i = 0; i < res.nimpls; i++)
		if (impls[i].action == MZC_IMPL_ADDED &&
			rows[impls[i].new_row].relation_null)
			res.added_filled = false;
	if (result != NULL)
		*result = res;
	return MZC_OK;
}

/* ----------------------------------------------------------------
 * The plan (I4-I6)
 * ----------------------------------------------------------------
 */

/* Index of the implication of item id, or MZC_IMPL_NONE. */
static int32_t
find_impl(const mzc_impl *impls, int32_t n, int64_t id)
{
	int32_t		lo = 0;
	int32_t		hi = n - 1;

	while (lo <= hi)
	{
		int32_t		mid = lo + (hi - lo) / 2;

		if (impls[mid].id == id)
			return mid;
		if (impls[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return MZC_IMPL_NONE;
}

typedef struct plan_state
{
	mzc_impl   *impls;
	int32_t		nimpls;
	const mzc_impl_read *reads;
	int32_t		nreads;
	mzc_impl_step *steps;
	int32_t		nsteps;
} plan_state;

static void
emit(plan_state *ps, mzc_impl_step_kind kind, int32_t impl)
{
	ps->steps[ps->nsteps].kind = kind;
	ps->steps[ps->nsteps].impl = impl;
	ps->nsteps++;
}

/* One step per implication of this action and kind, by id (or descending). */
static void
emit_kind(plan_state *ps, mzc_impl_step_kind step, mzc_impl_action action,
		  mzc_item_kind kind, bool descending)
{
	int32_t		i;

	for (i = 0; i < ps->nimpls; i++)
	{
		int32_t		x = descending ? ps->nimpls - 1 - i : i;

		if (ps->impls[x].action == action && ps->impls[x].kind == kind)
			emit(ps, step, x);
	}
}

/*
 * The materialized views of one action in waves.  Creation: a view waits
 * while a pending view it reads (itself included) is not created; a wave
 * without a ready view is a cycle.  Drop: a view waits while another
 * pending view reads it; a wave without a ready view takes all the rest.
 */
static mzc_status
emit_views(plan_state *ps, mzc_impl_step_kind step, mzc_impl_action action,
		   bool descending, int32_t *stuck, int32_t *nstuck, mzc_error *err)
{
	int32_t		npending = 0;
	int32_t		i;

	for (i = 0; i < ps->nimpls; i++)
	{
		mzc_impl   *x = &ps->impls[i];

		x->pending = x->action == action &&
			x->kind == MZC_ITEM_MATERIALIZED_VIEW;
		if (x->pending)
			npending++;
	}

	while (npending > 0)
	{
		int32_t		nready = 0;
		bool		take_all;

		for (i = 0; i < ps->nimpls; i++)
			ps->impls[i].blocked = false;
		for (i = 0; i < ps->nreads; i++)
		{
			int32_t		r = find_impl(ps->impls, ps->nimpls,
									  ps->reads[i].reader);
			int32_t		in = find_impl(ps->impls, ps->nimpls,
									   ps->reads[i].input);

			if (r == MZC_IMPL_NONE || in == MZC_IMPL_NONE ||
				!ps->impls[r].pending || !ps->impls[in].pending)
				continue;
			if (action == MZC_IMPL_ADDED)
				ps->impls[r].blocked = true;	/* its input comes first */
			else if (r != in)
				ps->impls[in].blocked = true;	/* its reader goes first */
		}
		for (i = 0; i < ps->nimpls; i++)
			if (ps->impls[i].pending && !ps->impls[i].blocked)
				nready++;

		take_all = false;
		if (nready == 0)
		{
			if (action == MZC_IMPL_ADDED)
			{
				*nstuck = 0;
				for (i = 0; i < ps->nimpls; i++)
					if (ps->impls[i].pending)
						stuck[(*nstuck)++] = i;
				return mzc_fail(err, MZC_ERR_INVALID,
								"%d materialized views read each other or themselves",
								(int) *nstuck);
			}
			/* Not a DAG: the caller's drop reports the dependents. */
			take_all = true;
		}

		/* Decide the wave first, then take it out of the pending set. */
		for (i = 0; i < ps->nimpls; i++)
		{
			int32_t		x = descending ? ps->nimpls - 1 - i : i;

			if (ps->impls[x].pending && (take_all || !ps->impls[x].blocked))
				emit(ps, step, x);
		}
		for (i = 0; i < ps->nimpls; i++)
			if (ps->impls[i].pending && (take_all || !ps->impls[i].blocked))
			{
				ps->impls[i].pending = false;
				npending--;
			}
	}
	return MZC_OK;
}

/* I5: kinds in creation order, inputs before their readers; I6 reverses it. */
static const mzc_item_kind creation_order[] = {
	MZC_ITEM_SOURCE, MZC_ITEM_TABLE, MZC_ITEM_MATERIALIZED_VIEW,
	MZC_ITEM_INDEX, MZC_ITEM_SINK
};

/*
 * The steps of one action for every kind, in creation order (or, with
 * descending, in drop order): views in waves, the other kinds by id.
 */
static mzc_status
emit_all_kinds(plan_state *ps, mzc_impl_step_kind step, mzc_impl_action action,
			   bool descending, int32_t *stuck, int32_t *nstuck,
			   mzc_error *err)
{
	int32_t		n = (int32_t) (sizeof(creation_order) / sizeof(creation_order[0]));
	int32_t		k;

	for (k = 0; k < n; k++)
	{
		mzc_item_kind kind = creation_order[descending ? n - 1 - k : k];

		if (kind == MZC_ITEM_MATERIALIZED_VIEW)
		{
			mzc_status	st = emit_views(ps, step, action, descending, stuck,
										nstuck, err);

			if (st != MZC_OK)
				return st;
		}
		else
			emit_kind(ps, step, action, kind, descending);
	}
	return MZC_OK;
}

mzc_status
mzc_impl_plan(mzc_impl *impls, int32_t nimpls, const mzc_impl_read *reads,
			  int32_t nreads, mzc_impl_step *steps, int32_t capacity,
			  int32_t *nsteps, int32_t *stuck, int32_t *nstuck,
			  mzc_error *err)
{
	plan_state	ps;
	int32_t		needed = 0;
	int32_t		ncreated;
	int32_t		i;
	mzc_status	st;

	mzc_error_clear(err);
	*nsteps = 0;
	if (nstuck != NULL)
		*nstuck = 0;
	if (nimpls < 0 || nreads < 0 || capacity < 0 ||
		(nimpls > 0 && (impls == NULL || steps == NULL || stuck == NULL ||
						nstuck == NULL)) ||
		(nreads > 0 && reads == NULL))
		return mzc_fail(err, MZC_ERR_INVALID, "invalid arguments");
	for (i = 0; i < nimpls; i++)
	{
		if (i > 0 && impls[i - 1].id >= impls[i].id)
			return mzc_fail(err, MZC_ERR_INVALID,
							"implications are not sorted by id at %d",
							(int) i);
		if ((int) impls[i].kind < 0 || (int) impls[i].kind >= MZC_ITEM_NKINDS)
			return mzc_fail(err, MZC_ERR_INVALID,
							"implication %d: unknown item kind %d", (int) i,
							(int) impls[i].kind);
		switch (impls[i].action)
		{
			case MZC_IMPL_ADDED:
				needed += 2;	/* created, then its policy */
				break;
			case MZC_IMPL_DROPPED:
			case MZC_IMPL_ALTERED:
				needed++;
				break;
			default:
				return mzc_fail(err, MZC_ERR_INVALID,
								"implication %d: unknown action %d", (int) i,
								(int) impls[i].action);
		}
	}
	if (needed > capacity)
		return mzc_fail(err, MZC_ERR_NO_SPACE,
						"%d steps needed, room for %d", (int) needed,
						(int) capacity);

	ps.impls = impls;
	ps.nimpls = nimpls;
	ps.reads = reads;
	ps.nreads = nreads;
	ps.steps = steps;
	ps.nsteps = 0;

	/* I5: creations, inputs before their readers. */
	st = emit_all_kinds(&ps, MZC_STEP_CREATE, MZC_IMPL_ADDED, false, stuck,
						nstuck, err);
	if (st != MZC_OK)
		return st;

	/* I5: read policies only once everything is created. */
	ncreated = ps.nsteps;
	for (i = 0; i < ncreated; i++)
		emit(&ps, MZC_STEP_INIT_POLICY, steps[i].impl);

	/* I4: alterations. */
	for (i = 0; i < nimpls; i++)
		if (impls[i].action == MZC_IMPL_ALTERED)
			emit(&ps, MZC_STEP_ALTER, i);

	/* I6: drops last, readers before what they read. */
	st = emit_all_kinds(&ps, MZC_STEP_DROP, MZC_IMPL_DROPPED, true, stuck,
						nstuck, err);
	if (st != MZC_OK)
		return st;

	*nsteps = ps.nsteps;
	return MZC_OK;
}
