/*
 * Unit tests of src/core/implications.c: consolidation and folding of a
 * catalog change (I1, I2), the order of the steps (I4-I6) with numeric ids
 * and dependency waves, and the errors (an item added or dropped twice, a
 * cycle of views, bad rows).
 *
 * A test row has two content tags standing in for the row's values: `full`
 * (every column) and `core` (every column but the relation).  Rows of one
 * item are equal when their tags are.
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

#include "implications.h"

#define MAXROWS 64

typedef struct batch
{
	mzc_impl_row rows[MAXROWS];
	int			full[MAXROWS];
	int			core[MAXROWS];
	int32_t		n;
	mzc_impl_read reads[MAXROWS];
	int32_t		nreads;

	/* results */
	int32_t		scratch[MAXROWS];
	mzc_impl	impls[MAXROWS];
	mzc_impl_fold_result fold;
	mzc_impl_step steps[MZC_IMPL_MAX_STEPS(MAXROWS)];
	int32_t		nsteps;
	int32_t		stuck[MAXROWS];
	int32_t		nstuck;
	mzc_error	err;
	char		text[1024];
} batch;

static batch b;

static int
setup(void **state)
{
	memset(&b, 0, sizeof(b));
	return 0;
}

static bool
same(void *ctx, int32_t x, int32_t y, bool except_relation)
{
	batch	   *bb = ctx;

	assert_true(bb->rows[x].id == bb->rows[y].id);
	if (except_relation)
		return bb->core[x] == bb->core[y];
	return bb->full[x] == bb->full[y];
}

/* A row of item u<id>; content tags full/core; relation filled in or not. */
static void
row(int64_t id, mzc_item_kind kind, int diff, int full, int core,
	bool relation_null)
{
	assert_true(b.n < MAXROWS);
	b.rows[b.n].id = id;
	b.rows[b.n].kind = kind;
	b.rows[b.n].diff = diff;
	b.rows[b.n].relation_null = relation_null;
	b.full[b.n] = full;
	b.core[b.n] = core;
	b.n++;
}

/* A row whose relation is filled in and whose content is just `tag`. */
static void
add(int64_t id, mzc_item_kind kind, int tag)
{
	row(id, kind, 1, tag, tag, false);
}

static void
del(int64_t id, mzc_item_kind kind, int tag)
{
	row(id, kind, -1, tag, tag, false);
}

static void
reads(int64_t reader, int64_t input)
{
	b.reads[b.nreads].reader = reader;
	b.reads[b.nreads].input = input;
	b.nreads++;
}

static mzc_status
fold(void)
{
	return mzc_impl_fold(b.rows, b.n, same, &b, b.scratch, b.impls, &b.fold,
						 &b.err);
}

/* The fold's implications as "+u1 -u2 ~u3" (added, dropped, altered). */
static const char *
impls_text(void)
{
	size_t		len = 0;
	int32_t		i;

	b.text[0] = '\0';
	for (i = 0; i < b.fold.nimpls; i++)
	{
		const mzc_impl *x = &b.impls[i];
		char		c = x->action == MZC_IMPL_ADDED ? '+' :
			x->action == MZC_IMPL_DROPPED ? '-' : '~';

		len += snprintf(b.text + len, sizeof(b.text) - len, "%s%cu%lld",
						i > 0 ? " " : "", c, (long long) x->id);
	}
	return b.text;
}

/* Fold and plan; the steps as "C:u1 P:u1 A:u2 D:u3". */
static const char *
plan(void)
{
	size_t		len = 0;
	int32_t		i;
	mzc_status	st;

	st = fold();
	if (st != MZC_OK)
		fail_msg("fold failed: %s", b.err.message);
	st = mzc_impl_plan(b.impls, b.fold.nimpls, b.reads, b.nreads, b.steps,
					   MZC_IMPL_MAX_STEPS(MAXROWS), &b.nsteps, b.stuck,
					   &b.nstuck, &b.err);
	if (st != MZC_OK)
		return NULL;
	b.text[0] = '\0';
	for (i = 0; i < b.nsteps; i++)
	{
		const char *k = b.steps[i].kind == MZC_STEP_CREATE ? "C" :
			b.steps[i].kind == MZC_STEP_INIT_POLICY ? "P" :
			b.steps[i].kind == MZC_STEP_ALTER ? "A" : "D";

		len += snprintf(b.text + len, sizeof(b.text) - len, "%s%s:u%lld",
						i > 0 ? " " : "", k,
						(long long) b.impls[b.steps[i].impl].id);
	}
	return b.text;
}

/* ---------------------------------------------------------------- */

static void
test_gid_parse(void **state)
{
	int64_t		v = -7;

	assert_true(mzc_gid_parse("u1", &v));
	assert_int_equal(v, 1);
	assert_true(mzc_gid_parse("u10", &v));
	assert_int_equal(v, 10);
	assert_true(mzc_gid_parse("u9223372036854775807", &v));
	assert_true(v == INT64_MAX);
	v = -7;
	assert_false(mzc_gid_parse("u9223372036854775808", &v));
	assert_false(mzc_gid_parse("u0", &v));
	assert_false(mzc_gid_parse("u01", &v));
	assert_false(mzc_gid_parse("u", &v));
	assert_false(mzc_gid_parse("", &v));
	assert_false(mzc_gid_parse("s1", &v));
	assert_false(mzc_gid_parse("u1x", &v));
	assert_false(mzc_gid_parse("u-1", &v));
	assert_false(mzc_gid_parse(NULL, &v));
	assert_true(v == -7);		/* untouched on failure */
}

static void
test_kind_parse(void **state)
{
	mzc_item_kind k;

	assert_true(mzc_item_kind_parse("materialized_view", &k));
	assert_int_equal(k, MZC_ITEM_MATERIALIZED_VIEW);
	assert_true(mzc_item_kind_parse("sink", &k));
	assert_int_equal(k, MZC_ITEM_SINK);
	assert_false(mzc_item_kind_parse("view", &k));
	assert_false(mzc_item_kind_parse("", &k));
}

/* An empty change implies nothing. */
static void
test_empty(void **state)
{
	assert_string_equal(plan(), "");
	assert_int_equal(b.fold.nimpls, 0);
	assert_false(b.fold.added_filled);
}

/* I1: an identical retraction and addition cancel out, whatever the order. */
static void
test_insert_delete_cancels(void **state)
{
	add(5, MZC_ITEM_TABLE, 1);
	del(5, MZC_ITEM_TABLE, 1);
	del(7, MZC_ITEM_SOURCE, 2);
	add(7, MZC_ITEM_SOURCE, 2);
	assert_int_equal(fold(), MZC_OK);
	assert_int_equal(b.fold.nimpls, 0);

	/* Twice added, once retracted: added once. */
	setup(NULL);
	add(5, MZC_ITEM_TABLE, 1);
	add(5, MZC_ITEM_TABLE, 1);
	del(5, MZC_ITEM_TABLE, 1);
	assert_int_equal(fold(), MZC_OK);
	assert_string_equal(impls_text(), "+u5");
	assert_int_equal(b.impls[0].new_row, 0);
}

/* I2: an update (retraction and addition of different rows) is altered. */
static void
test_update_is_altered(void **state)
{
	del(3, MZC_ITEM_TABLE, 1);
	add(3, MZC_ITEM_TABLE, 2);
	assert_string_equal(plan(), "A:u3");
	assert_int_equal(b.fold.naltered, 1);
	assert_int_equal(b.impls[0].old_row, 0);
	assert_int_equal(b.impls[0].new_row, 1);

	/* A delete and an insert of the same id are an alteration too. */
	setup(NULL);
	add(3, MZC_ITEM_SOURCE, 2);
	del(3, MZC_ITEM_TABLE, 1);
	assert_string_equal(plan(), "A:u3");
	assert_int_equal(b.impls[0].kind, MZC_ITEM_SOURCE); /* the new row's */
	assert_int_equal(b.impls[0].old_row, 1);
	assert_int_equal(b.impls[0].new_row, 0);

	/* Changing the id drops one item and adds another. */
	setup(NULL);
	del(3, MZC_ITEM_TABLE, 1);
	add(4, MZC_ITEM_TABLE, 1);
	assert_string_equal(plan(), "C:u4 P:u4 D:u3");
}

/* Filling in the relation of a new item is not a change; other changes are. */
static void
test_relation_filled_in(void **state)
{
	row(8, MZC_ITEM_SOURCE, -1, 1, 10, true);
	row(8, MZC_ITEM_SOURCE, 1, 2, 10, false);
	assert_string_equal(plan(), "");

	/* The relation and something else changed. */
	setup(NULL);
	row(8, MZC_ITEM_SOURCE, -1, 1, 10, true);
	row(8, MZC_ITEM_SOURCE, 1, 2, 11, false);
	assert_string_equal(plan(), "A:u8");

	/* A relation that was already there changed. */
	setup(NULL);
	row(8, MZC_ITEM_SOURCE, -1, 1, 10, false);
	row(8, MZC_ITEM_SOURCE, 1, 2, 10, false);
	assert_string_equal(plan(), "A:u8");
}

static void
test_added_filled(void **state)
{
	add(1, MZC_ITEM_TABLE, 1);
	add(2, MZC_ITEM_SOURCE, 2);
	assert_int_equal(fold(), MZC_OK);
	assert_true(b.fold.added_filled);

	row(3, MZC_ITEM_SOURCE, 1, 3, 3, true);
	assert_int_equal(fold(), MZC_OK);
	assert_false(b.fold.added_filled);

	/* Only drops: nothing added, so not a restore. */
	setup(NULL);
	del(2, MZC_ITEM_SOURCE, 2);
	assert_int_equal(fold(), MZC_OK);
	assert_false(b.fold.added_filled);
}

/* More than one net addition or retraction of an item: smallest id first. */
static void
test_twice(void **state)
{
	add(12, MZC_ITEM_TABLE, 1);
	add(12, MZC_ITEM_TABLE, 2);
	del(9, MZC_ITEM_TABLE, 3);
	del(9, MZC_ITEM_TABLE, 4);
	assert_int_equal(fold(), MZC_ERR_STATE);
	assert_true(b.fold.conflict_id == 9);
	assert_false(b.fold.conflict_added);
	assert_string_equal(b.err.message,
						"cannot drop an already dropped item: u9");

	setup(NULL);
	del(12, MZC_ITEM_TABLE, 1);
	add(12, MZC_ITEM_TABLE, 2);
	add(12, MZC_ITEM_TABLE, 3);
	assert_int_equal(fold(), MZC_ERR_STATE);
	assert_true(b.fold.conflict_id == 12);
	assert_true(b.fold.conflict_added);
	assert_string_equal(b.err.message,
						"cannot add an already added item: u12");

	/* The same row twice counts twice. */
	setup(NULL);
	del(4, MZC_ITEM_SINK, 1);
	del(4, MZC_ITEM_SINK, 1);
	assert_int_equal(fold(), MZC_ERR_STATE);
	assert_false(b.fold.conflict_added);
}

static void
test_bad_rows(void **state)
{
	row(0, MZC_ITEM_TABLE, 1, 1, 1, false);
	assert_int_equal(fold(), MZC_ERR_INVALID);

	setup(NULL);
	row(1, (mzc_item_kind) 7, 1, 1, 1, false);
	assert_int_equal(fold(), MZC_ERR_INVALID);
	assert_non_null(strstr(b.err.message, "unknown item kind"));

	setup(NULL);
	row(1, MZC_ITEM_TABLE, 2, 1, 1, false);
	assert_int_equal(fold(), MZC_ERR_INVALID);

	assert_int_equal(mzc_impl_fold(NULL, -1, same, &b, b.scratch, b.impls,
								   &b.fold, &b.err), MZC_ERR_INVALID);
}

/* I5: by kind, then by id as a number (u9 before u10). */
static void
test_create_order(void **state)
{
	add(10, MZC_ITEM_SINK, 1);
	add(100, MZC_ITEM_TABLE, 2);
	add(9, MZC_ITEM_INDEX, 3);
	add(11, MZC_ITEM_MATERIALIZED_VIEW, 4);
	add(2, MZC_ITEM_SOURCE, 5);
	add(20, MZC_ITEM_TABLE, 6);
	add(10000000000LL, MZC_ITEM_SOURCE, 7);
	assert_string_equal(plan(),
						"C:u2 C:u10000000000 C:u20 C:u100 C:u11 C:u9 C:u10 "
						"P:u2 P:u10000000000 P:u20 P:u100 P:u11 P:u9 P:u10");
}

/* Materialized views after the views of the batch they read, in waves. */
static void
test_create_views_in_waves(void **state)
{
	add(9, MZC_ITEM_MATERIALIZED_VIEW, 1);
	add(10, MZC_ITEM_MATERIALIZED_VIEW, 2);
	add(11, MZC_ITEM_MATERIALIZED_VIEW, 3);
	add(12, MZC_ITEM_MATERIALIZED_VIEW, 4);
	reads(9, 10);				/* u9 reads u10 */
	reads(9, 11);
	reads(11, 12);
	reads(12, 100);				/* not in the batch: ignored */
	assert_string_equal(plan(),
						"C:u10 C:u12 C:u11 C:u9 P:u10 P:u12 P:u11 P:u9");
}

/* Reads between items that are not both added views are ignored. */
static void
test_create_ignores_other_reads(void **state)
{
	add(9, MZC_ITEM_MATERIALIZED_VIEW, 1);
	add(5, MZC_ITEM_SOURCE, 2);
	del(10, MZC_ITEM_MATERIALIZED_VIEW, 3);
	reads(9, 5);
	reads(9, 10);
	reads(10, 9);
	assert_string_equal(plan(), "C:u5 C:u9 P:u5 P:u9 D:u10");
}

/* A view reading itself, or views reading each other, cannot be created. */
static void
test_create_cycle(void **state)
{
	add(9, MZC_ITEM_MATERIALIZED_VIEW, 1);
	reads(9, 9);
	assert_null(plan());
	assert_int_equal(b.err.status, MZC_ERR_INVALID);
	assert_int_equal(b.nstuck, 1);
	assert_true(b.impls[b.stuck[0]].id == 9);

	setup(NULL);
	add(10, MZC_ITEM_MATERIALIZED_VIEW, 1);
	add(9, MZC_ITEM_MATERIALIZED_VIEW, 2);
	add(8, MZC_ITEM_MATERIALIZED_VIEW, 3);
	add(11, MZC_ITEM_MATERIALIZED_VIEW, 4);
	reads(9, 10);
	reads(10, 9);
	reads(11, 9);
	assert_null(plan());
	assert_int_equal(b.err.status, MZC_ERR_INVALID);
	/* u8 was created; u9, u10 and their reader u11 are left, by id */
	assert_int_equal(b.nstuck, 3);
	assert_true(b.impls[b.stuck[0]].id == 9);
	assert_true(b.impls[b.stuck[1]].id == 10);
	assert_true(b.impls[b.stuck[2]].id == 11);
}

/* I6: readers first: sinks, indexes, views, tables, sources; ids descending. */
static void
test_drop_order(void **state)
{
	del(2, MZC_ITEM_SOURCE, 1);
	del(3, MZC_ITEM_TABLE, 2);
	del(9, MZC_ITEM_MATERIALIZED_VIEW, 3);
	del(10, MZC_ITEM_INDEX, 4);
	del(11, MZC_ITEM_SINK, 5);
	del(100, MZC_ITEM_INDEX, 6);
	del(1, MZC_ITEM_SINK, 7);
	del(20, MZC_ITEM_SOURCE, 8);
	assert_string_equal(plan(),
						"D:u11 D:u1 D:u100 D:u10 D:u9 D:u3 D:u20 D:u2");
}

/* Dropped views: readers before their inputs, by id descending per wave. */
static void
test_drop_views_readers_first(void **state)
{
	del(9, MZC_ITEM_MATERIALIZED_VIEW, 1);
	del(10, MZC_ITEM_MATERIALIZED_VIEW, 2);
	del(11, MZC_ITEM_MATERIALIZED_VIEW, 3);
	del(12, MZC_ITEM_MATERIALIZED_VIEW, 4);
	reads(9, 10);				/* u9 reads u10: u9 goes first */
	reads(10, 12);
	reads(11, 11);				/* reading itself does not hold it back */
	assert_string_equal(plan(), "D:u11 D:u9 D:u10 D:u12");
}

/* Dropped views reading each other: all of them at once, ids descending. */
static void
test_drop_views_not_a_dag(void **state)
{
	del(9, MZC_ITEM_MATERIALIZED_VIEW, 1);
	del(10, MZC_ITEM_MATERIALIZED_VIEW, 2);
	del(11, MZC_ITEM_MATERIALIZED_VIEW, 3);
	del(12, MZC_ITEM_MATERIALIZED_VIEW, 4);
	reads(9, 10);
	reads(10, 9);
	reads(9, 11);
	reads(12, 9);
	/* u12 is free; then none is, and the rest go at once */
	assert_string_equal(plan(), "D:u12 D:u11 D:u10 D:u9");
}

/* Create before drop; policies after every creation; alterations between. */
static void
test_create_before_drop(void **state)
{
	del(1, MZC_ITEM_TABLE, 1);
	add(3, MZC_ITEM_MATERIALIZED_VIEW, 2);
	del(2, MZC_ITEM_MATERIALIZED_VIEW, 3);
	add(4, MZC_ITEM_SOURCE, 4);
	del(5, MZC_ITEM_TABLE, 5);
	add(5, MZC_ITEM_TABLE, 6);
	assert_string_equal(plan(), "C:u4 C:u3 P:u4 P:u3 A:u5 D:u2 D:u1");
	assert_int_equal(b.fold.nadded, 2);
	assert_int_equal(b.fold.ndropped, 2);
	assert_int_equal(b.fold.naltered, 1);
}

static void
test_plan_errors(void **state)
{
	mzc_impl_step steps[2];
	int32_t		n;
	int32_t		stuck[4];
	int32_t		nstuck;

	add(1, MZC_ITEM_TABLE, 1);
	add(2, MZC_ITEM_TABLE, 2);
	assert_int_equal(fold(), MZC_OK);
	/* Two creations and two policies do not fit in two steps. */
	assert_int_equal(mzc_impl_plan(b.impls, b.fold.nimpls, NULL, 0, steps, 2,
								   &n, stuck, &nstuck, &b.err),
					 MZC_ERR_NO_SPACE);
	assert_int_equal(n, 0);

	/* Not sorted by id. */
	b.impls[1].id = 1;
	assert_int_equal(mzc_impl_plan(b.impls, b.fold.nimpls, NULL, 0, b.steps,
								   8, &n, stuck, &nstuck, &b.err),
					 MZC_ERR_INVALID);
	b.impls[1].id = 2;
	b.impls[1].action = (mzc_impl_action) 0;
	assert_int_equal(mzc_impl_plan(b.impls, b.fold.nimpls, NULL, 0, b.steps,
								   8, &n, stuck, &nstuck, &b.err),
					 MZC_ERR_INVALID);
}

/*
 * Random batches: every item appears in the plan exactly as often as its
 * action says, creations come before their policies, alterations and drops,
 * and a created view comes after every created view it reads (the reads
 * here only point to smaller ids, so there is no cycle).
 */
static void
test_random_plans(void **state)
{
	test_rng	r;
	int			round;

	rng_seed(&r, 13);
	for (round = 0; round < 2000; round++)
	{
		int			nitems = (int) rng_range(&r, 0, 20);
		int			i;
		int32_t		s;
		int			pos[64];

		setup(NULL);
		for (i = 0; i < nitems; i++)
		{
			int64_t		id = rng_range(&r, 1, 30);
			mzc_item_kind k = (mzc_item_kind) rng_range(&r, 0, 4);
			int			tag = (int) rng_range(&r, 1, 3);

			if (b.n > 0 && b.rows[b.n - 1].id == id)
				continue;
			/* at most one addition and one retraction per id */
			if (rng_chance(&r, 50))
				add(id, k, tag);
			else
				del(id, k, tag);
			if (rng_chance(&r, 30))
				reads(id, rng_range(&r, 1, id));
		}
		for (i = 0; i < b.n; i++)
		{
			int			j;

			for (j = i + 1; j < b.n; j++)
				if (b.rows[j].id == b.rows[i].id &&
					b.rows[j].diff == b.rows[i].diff)
					break;
			if (j < b.n)
				break;
		}
		if (i < b.n)
			continue;			/* a twice-added item: covered elsewhere */
		for (i = 0; i < b.nreads; i++)
			if (b.reads[i].reader == b.reads[i].input)
				b.reads[i].reader = b.reads[i].input + 1000;

		if (plan() == NULL)
			fail_msg("round %d: %s", round, b.err.message);
		memset(pos, -1, sizeof(pos));
		for (s = 0; s < b.nsteps; s++)
		{
			const mzc_impl *x = &b.impls[b.steps[s].impl];

			switch (b.steps[s].kind)
			{
				case MZC_STEP_CREATE:
					assert_int_equal(x->action, MZC_IMPL_ADDED);
					assert_int_equal(pos[x->id], -1);
					pos[x->id] = s;
					break;
				case MZC_STEP_INIT_POLICY:
					assert_true(pos[x->id] >= 0 && pos[x->id] < s);
					break;
				case MZC_STEP_ALTER:
					assert_int_equal(x->action, MZC_IMPL_ALTERED);
					break;
				case MZC_STEP_DROP:
					assert_int_equal(x->action, MZC_IMPL_DROPPED);
					break;
			}
		}
		assert_int_equal(b.nsteps,
						 2 * b.fold.nadded + b.fold.naltered + b.fold.ndropped);
		for (i = 0; i < b.nreads; i++)
		{
			int64_t		rd = b.reads[i].reader;
			int64_t		in = b.reads[i].input;
			int32_t		k;
			bool		both = rd < 64 && pos[rd] >= 0 && pos[in] >= 0;

			for (k = 0; both && k < b.fold.nimpls; k++)
				if ((b.impls[k].id == rd || b.impls[k].id == in) &&
					b.impls[k].kind != MZC_ITEM_MATERIALIZED_VIEW)
					both = false;
			if (both)
				assert_true(pos[in] < pos[rd]);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gid_parse),
		cmocka_unit_test(test_kind_parse),
		cmocka_unit_test_setup(test_empty, setup),
		cmocka_unit_test_setup(test_insert_delete_cancels, setup),
		cmocka_unit_test_setup(test_update_is_altered, setup),
		cmocka_unit_test_setup(test_relation_filled_in, setup),
		cmocka_unit_test_setup(test_added_filled, setup),
		cmocka_unit_test_setup(test_twice, setup),
		cmocka_unit_test_setup(test_bad_rows, setup),
		cmocka_unit_test_setup(test_create_order, setup),
		cmocka_unit_test_setup(test_create_views_in_waves, setup),
		cmocka_unit_test_setup(test_create_ignores_other_reads, setup),
		cmocka_unit_test_setup(test_create_cycle, setup),
		cmocka_unit_test_setup(test_drop_order, setup),
		cmocka_unit_test_setup(test_drop_views_readers_first, setup),
		cmocka_unit_test_setup(test_drop_views_not_a_dag, setup),
		cmocka_unit_test_setup(test_create_before_drop, setup),
		cmocka_unit_test_setup(test_plan_errors, setup),
		cmocka_unit_test(test_random_plans),
	};

	return cmocka_run_group_tests_name("implications", tests, NULL, NULL);
}
