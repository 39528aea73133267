/*
 * Unit tests of src/core/collections.c: the storage since scenarios S-a..S-i
 * of reference 3.3, the life cycle and dirty list, all-or-nothing failures,
 * and random operation sequences checked against a naive model that
 * recomputes every since from scratch.
 */
#include <string.h>

#include "testutil.h"

#include "collcheck.h"
#include "collections.h"

#define CAP 8
#define POOL 64

static mzc_collection slots[CAP];
static mzc_count_node nodes[POOL];
static mzc_count_pool pool;
static mzc_collections set;

static void
fresh(int32_t pool_capacity)
{
	mzc_count_pool_init(&pool, nodes, pool_capacity);
	mzc_colls_init(&set, slots, CAP, &pool);
}

static int
setup(void **state)
{
	fresh(POOL);
	return 0;
}

static int32_t
create(mzc_frontier shard_since, mzc_frontier requested, mzc_frontier upper,
	   const int32_t *deps, int32_t ndeps)
{
	mzc_coll_create_args a;
	int32_t		slot = -1;
	mzc_error	err;

	memset(&a, 0, sizeof(a));
	a.shard_since = shard_since;
	a.requested_since = requested;
	a.upper = upper;
	a.deps = deps;
	a.ndeps = ndeps;
	if (mzc_coll_create(&set, &a, &slot, &err) != MZC_OK)
		fail_msg("create failed: %s", err.message);
	return slot;
}

static mzc_policy
lag(int64_t l, int64_t g)
{
	mzc_policy	p;

	assert_int_equal(mzc_policy_lag(l, g, &p, NULL), MZC_OK);
	return p;
}

static void
valid(void)
{
	mzc_error	err;

	if (mzc_colls_validate(&set, &err) != MZC_OK)
		fail_msg("invalid state: %s", err.message);
}

/* S-a: a table whose shard since is {0} starts at its registration time. */
static void
test_sa_table_register_ts(void **state)
{
	mzc_coll_create_args a;
	int32_t		slot;
	const mzc_collection *c;

	memset(&a, 0, sizeof(a));
	a.shard_since = AT(0);
	a.requested_since = AT(0);
	a.upper = AT(0);
	a.is_table = true;
	a.register_ts = 5000;
	assert_int_equal(mzc_coll_create(&set, &a, &slot, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, slot), 5000);
	c = mzc_coll_get(&set, slot);
	assert_frontier_at(c->implied, 5000);
	/* S2: NO_POLICY(initial since) */
	assert_int_equal(c->policy.kind, MZC_POLICY_NO_POLICY);
	assert_frontier_at(c->policy.frontier, 5000);
	/* a table whose shard already advanced keeps its since */
	a.shard_since = AT(42);
	assert_int_equal(mzc_coll_create(&set, &a, &slot, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, slot), 42);
	valid();
}

/* S-b: the default policy on an upper advance. */
static void
test_sb_default_policy(void **state)
{
	int32_t		x = create(AT(1000), AT(0), AT(1000), NULL, 0);
	mzc_policy	p = lag(1000, 1000);
	mzc_coll_effect eff;

	assert_int_equal(mzc_coll_set_policy(&set, x, &p, &eff, NULL), MZC_OK);
	/* P6: lag at upper 1000 gives {0}: implied stays 1000 */
	assert_false(eff.since_changed);
	assert_frontier_at(mzc_coll_get(&set, x)->implied, 1000);
	assert_int_equal(mzc_coll_advance_upper(&set, x, AT(12345), &eff, NULL),
					 MZC_OK);
	assert_true(eff.since_changed);
	assert_frontier_at(eff.old_since, 1000);
	assert_frontier_at(eff.new_since, 11000);
	assert_frontier_at(mzc_coll_since(&set, x), 11000);
	/* S8: a regressing upper is ignored */
	assert_int_equal(mzc_coll_advance_upper(&set, x, AT(5000), &eff, NULL),
					 MZC_OK);
	assert_false(eff.since_changed);
	assert_frontier_at(mzc_coll_get(&set, x)->upper, 12345);
	/* P4/P6: a sealed upper keeps the since */
	assert_int_equal(mzc_coll_advance_upper(&set, x, EMPTY, &eff, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, x), 11000);
	assert_frontier_empty(mzc_coll_get(&set, x)->upper);
	valid();
}

/* S-c: a client hold keeps the since back; releasing it lets it go. */
static void
test_sc_client_hold(void **state)
{
	int32_t		x = create(AT(1000), AT(0), AT(1000), NULL, 0);
	mzc_policy	p = lag(1000, 1000);
	mzc_coll_effect eff;

	assert_int_equal(mzc_coll_set_policy(&set, x, &p, NULL, NULL), MZC_OK);
	assert_int_equal(mzc_coll_acquire(&set, x, 9000, &eff, NULL), MZC_OK);
	assert_false(eff.since_changed);
	assert_int_equal(mzc_coll_advance_upper(&set, x, AT(20000), &eff, NULL),
					 MZC_OK);
	assert_frontier_at(mzc_coll_get(&set, x)->implied, 19000);
	assert_frontier_at(mzc_coll_since(&set, x), 9000);
	assert_int_equal(mzc_coll_release(&set, x, 9000, &eff, NULL), MZC_OK);
	assert_frontier_at(eff.new_since, 19000);
	assert_frontier_at(mzc_coll_since(&set, x), 19000);
	valid();
}

/* S-d: a dependent's implied change is forwarded as a net change. */
static void
test_sd_dependency_forwarding(void **state)
{
	int32_t		d = create(AT(100), AT(0), AT(1000), NULL, 0);
	int32_t		x = create(AT(300), AT(0), AT(1000), &d, 1);
	mzc_policy	p = mzc_policy_valid_from(AT(400));
	mzc_coll_effect eff;

	/* S5: X holds D at its since */
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 100), 1);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 300), 1);
	assert_int_equal(slots[d].ndependents, 1);
	assert_int_equal(mzc_coll_set_policy(&set, x, &p, &eff, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, x), 400);
	/* D counts: (300,-1), (400,+1); D since = min(D.implied, 400) */
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 300), 0);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 400), 1);
	assert_frontier_at(mzc_coll_since(&set, d), 100);
	/* D's own policy moves past 400: its since stops at X's hold */
	p = mzc_policy_valid_from(AT(900));
	assert_int_equal(mzc_coll_set_policy(&set, d, &p, &eff, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, d), 400);
	valid();
}

/* S3: a dependent never starts before its dependency's implied capability. */
static void
test_s3_initial_since_from_dependency(void **state)
{
	int32_t		d = create(AT(500), AT(0), AT(1000), NULL, 0);
	int32_t		x = create(AT(0), AT(0), AT(0), &d, 1);

	assert_frontier_at(mzc_coll_since(&set, x), 500);
	assert_frontier_at(mzc_coll_get(&set, x)->dep_hold, 500);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 500), 2);
	valid();
}

/*
 * C1 creation (hold_deps_at_since): a maintained collection starts exactly
 * at its as-of and holds its inputs there, below their implied capability;
 * an input whose since is already beyond the as-of is a since violation.
 */
static void
test_hold_deps_at_since(void **state)
{
	int32_t		d = create(AT(100), AT(0), AT(1000), NULL, 0);
	mzc_policy	p = mzc_policy_valid_from(AT(500));
	mzc_coll_create_args a;
	int32_t		x,
				y;
	mzc_error	err;
	int32_t		before = pool.nfree;

	/* the creator holds d at 200, then d's policy moves on to 500 */
	assert_int_equal(mzc_coll_acquire(&set, d, 200, NULL, NULL), MZC_OK);
	assert_int_equal(mzc_coll_set_policy(&set, d, &p, NULL, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, d), 200);
	before = pool.nfree;

	memset(&a, 0, sizeof(a));
	a.shard_since = AT(0);
	a.requested_since = AT(150);
	a.upper = AT(0);
	a.deps = &d;
	a.ndeps = 1;
	a.hold_deps_at_since = true;
	assert_int_equal(mzc_coll_create(&set, &a, &y, &err),
					 MZC_ERR_SINCE_VIOLATION);
	assert_int_equal(pool.nfree, before);
	assert_int_equal(slots[d].ndependents, 0);

	a.requested_since = AT(200);
	assert_int_equal(mzc_coll_create(&set, &a, &x, NULL), MZC_OK);
	/* not raised to d's implied capability (500), as S3 would */
	assert_frontier_at(mzc_coll_since(&set, x), 200);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 200), 2);
	/* the creator's hold goes; x keeps d at 200 */
	assert_int_equal(mzc_coll_release(&set, d, 200, NULL, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, d), 200);
	/* x moves on: d follows up to its own implied capability */
	p = mzc_policy_valid_from(AT(700));
	assert_int_equal(mzc_coll_set_policy(&set, x, &p, NULL, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, d), 500);
	valid();
}

/*
 * deps_at_upper: a collection with storage of its own (a materialized view)
 * holds its input at its progress, upper - 1, not at its since: a reader
 * holding the view far back does not pin the input.  Sealing or dropping
 * it releases the input at once; a restart (creation with an upper beyond
 * the since) finds the input released up to upper - 1.
 */
static void
test_deps_at_upper(void **state)
{
	int32_t		d = create(AT(100), AT(0), AT(1000), NULL, 0);
	mzc_coll_create_args a;
	mzc_policy	p = mzc_policy_valid_from(AT(900));
	int32_t		x,
				y;
	mzc_error	err;

	memset(&a, 0, sizeof(a));
	a.shard_since = AT(200);
	a.requested_since = AT(0);
	a.upper = AT(200);
	a.deps = &d;
	a.ndeps = 1;
	a.hold_deps_at_since = true;
	a.deps_at_upper = true;
	assert_int_equal(mzc_coll_create(&set, &a, &x, NULL), MZC_OK);
	assert_frontier_at(slots[x].dep_hold, 200);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 200), 1);
	/* d's policy wants 900, x holds it at 200 */
	assert_int_equal(mzc_coll_set_policy(&set, d, &p, NULL, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, d), 200);

	/* a reader holds x at 250; x refreshes up to 600 */
	assert_int_equal(mzc_coll_acquire(&set, x, 250, NULL, NULL), MZC_OK);
	assert_int_equal(mzc_coll_advance_upper(&set, x, AT(600), NULL, NULL), MZC_OK);
	assert_frontier_at(slots[x].dep_hold, 599);
	assert_frontier_at(mzc_coll_dep_frontier(&set, x), 599);
	assert_frontier_at(mzc_coll_since(&set, x), 200);
	/* d is held at x's progress, not at x's since */
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 200), 0);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 599), 1);
	assert_frontier_at(mzc_coll_since(&set, d), 599);
	valid();

	/* a restart: x at since 200 with upper 800; d must be at or below 799 */
	memset(&a, 0, sizeof(a));
	a.shard_since = AT(200);
	a.requested_since = AT(0);
	a.upper = AT(800);
	a.deps = &d;
	a.ndeps = 1;
	a.hold_deps_at_since = true;
	a.deps_at_upper = true;
	assert_int_equal(mzc_coll_create(&set, &a, &y, &err), MZC_OK);
	assert_frontier_at(slots[y].dep_hold, 799);
	assert_frontier_at(mzc_coll_since(&set, y), 200);
	valid();

	/* sealing y releases d; dropping x releases it while its reader stays */
	assert_int_equal(mzc_coll_advance_upper(&set, y, mzc_frontier_empty(), NULL, NULL), MZC_OK);
	assert_frontier_empty(slots[y].dep_hold);
	assert_int_equal(mzc_coll_drop(&set, x, NULL, NULL), MZC_OK);
	assert_int_equal(slots[x].state, MZC_COLL_DROPPED);
	assert_frontier_empty(slots[x].dep_hold);
	assert_int_equal(slots[d].ndependents, 0);
	assert_frontier_at(mzc_coll_since(&set, d), 900);
	valid();
	/* without inputs, sealing keeps the record straight too */
	memset(&a, 0, sizeof(a));
	a.shard_since = AT(300);
	a.requested_since = AT(0);
	a.upper = AT(300);
	a.hold_deps_at_since = true;
	a.deps_at_upper = true;
	assert_int_equal(mzc_coll_create(&set, &a, &y, NULL), MZC_OK);
	assert_int_equal(mzc_coll_advance_upper(&set, y, AT(400), NULL, NULL), MZC_OK);
	valid();
	assert_int_equal(mzc_coll_advance_upper(&set, y, mzc_frontier_empty(), NULL, NULL), MZC_OK);
	assert_frontier_empty(slots[y].dep_hold);
	valid();
	/* the reader goes: x is gone */
	assert_int_equal(mzc_coll_release(&set, x, 250, NULL, NULL), MZC_OK);
	assert_int_equal(slots[x].state, MZC_COLL_GONE);
	valid();
}

/* S-e: a dropped collection waits for its holds, then releases its deps. */
static void
test_se_drop_with_holds(void **state)
{
	int32_t		d = create(AT(100), AT(0), AT(1000), NULL, 0);
	int32_t		x = create(AT(300), AT(0), AT(1000), &d, 1);
	mzc_coll_effect eff;
	mzc_error	err;
	mzc_policy	p = lag(10, 1);
	int32_t		i,
				n;

	assert_int_equal(mzc_coll_acquire(&set, x, 350, NULL, NULL), MZC_OK);
	mzc_colls_clear_dirty(&set);
	assert_int_equal(mzc_coll_drop(&set, x, &eff, NULL), MZC_OK);
	assert_int_equal(slots[x].state, MZC_COLL_DROPPED);
	assert_frontier_empty(slots[x].implied);
	assert_int_equal(slots[x].policy.kind, MZC_POLICY_VALID_FROM);
	assert_frontier_empty(slots[x].policy.frontier);
	/* the hold at 350 now defines X's since, forwarded to D */
	assert_frontier_at(mzc_coll_since(&set, x), 350);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 350), 1);
	/* a dropped collection takes no policy; dropping again is a no-op */
	assert_int_equal(mzc_coll_set_policy(&set, x, &p, NULL, &err), MZC_ERR_STATE);
	assert_int_equal(mzc_coll_drop(&set, x, &eff, NULL), MZC_OK);
	/* it cannot be a new dependency either */
	{
		mzc_coll_create_args a;
		int32_t		slot;

		memset(&a, 0, sizeof(a));
		a.deps = &x;
		a.ndeps = 1;
		assert_int_equal(mzc_coll_create(&set, &a, &slot, &err), MZC_ERR_STATE);
	}
	valid();

	/* releasing the hold: X is gone and its hold on D is released */
	assert_int_equal(mzc_coll_release(&set, x, 350, &eff, NULL), MZC_OK);
	assert_int_equal(eff.ngone, 1);
	assert_frontier_empty(eff.new_since);
	assert_int_equal(slots[x].state, MZC_COLL_GONE);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[d].caps, 350), 0);
	assert_int_equal(slots[d].ndependents, 0);
	assert_null(mzc_coll_get(&set, x) == NULL ? NULL : (void *) 0);
	assert_int_equal(mzc_coll_acquire(&set, x, 400, NULL, &err),
					 MZC_ERR_NOT_FOUND);
	valid();

	/* the persister sees the removal, then the slot is free */
	n = 0;
	for (i = mzc_colls_dirty_first(&set); i != MZC_NIL;
		 i = mzc_colls_dirty_next(&set, i))
	{
		if (i == x)
			assert_int_equal(slots[i].state, MZC_COLL_GONE);
		n++;
	}
	assert_true(n >= 1);
	mzc_colls_clear_dirty(&set);
	assert_int_equal(slots[x].state, MZC_COLL_FREE);
	assert_null(mzc_coll_get(&set, x));
	valid();
}

/* Dropping a dependency first: it stays until its dependent lets go. */
static void
test_drop_dependency_first(void **state)
{
	int32_t		d = create(AT(100), AT(0), AT(1000), NULL, 0);
	int32_t		x = create(AT(300), AT(0), AT(1000), &d, 1);
	mzc_coll_effect eff;

	assert_int_equal(mzc_coll_drop(&set, d, &eff, NULL), MZC_OK);
	assert_int_equal(slots[d].state, MZC_COLL_DROPPED);
	assert_frontier_at(mzc_coll_since(&set, d), 300);
	assert_int_equal(mzc_coll_drop(&set, x, &eff, NULL), MZC_OK);
	/* X's since goes to {}, which releases D, which then goes too */
	assert_int_equal(eff.ngone, 2);
	assert_int_equal(slots[x].state, MZC_COLL_GONE);
	assert_int_equal(slots[d].state, MZC_COLL_GONE);
	valid();
	mzc_colls_clear_dirty(&set);
	assert_int_equal(set.nfree, CAP);
	assert_int_equal(pool.nfree, POOL);
	valid();
}

/* S-f: holds on a collection that does not exist. */
static void
test_sf_missing_collection(void **state)
{
	mzc_error	err;

	assert_int_equal(mzc_coll_acquire(&set, 3, 10, NULL, &err),
					 MZC_ERR_NOT_FOUND);
	assert_string_equal(err.message, "collection does not exist: 3");
	assert_int_equal(mzc_coll_acquire(&set, -1, 10, NULL, &err),
					 MZC_ERR_NOT_FOUND);
	assert_int_equal(mzc_coll_acquire(&set, CAP, 10, NULL, &err),
					 MZC_ERR_NOT_FOUND);
}

/* S-g, S-h: the S7 sanity rules, with nothing changed on rejection. */
static void
test_sg_sh_sanity(void **state)
{
	int32_t		x = create(AT(5), AT(0), AT(10), NULL, 0);
	mzc_update	u[2];
	mzc_error	err;

	u[0].time = 6;
	u[0].diff = -1;
	assert_int_equal(mzc_coll_update(&set, x, u, 1, NULL, &err),
					 MZC_ERR_NEGATIVE_COUNT);
	u[0].time = 3;
	u[0].diff = 1;
	assert_int_equal(mzc_coll_update(&set, x, u, 1, NULL, &err),
					 MZC_ERR_BEFORE_FRONTIER);
	assert_int_equal(mzc_coll_acquire(&set, x, 3, NULL, &err),
					 MZC_ERR_BEFORE_FRONTIER);
	assert_int_equal(mzc_coll_release(&set, x, 6, NULL, &err),
					 MZC_ERR_NEGATIVE_COUNT);
	/* a downgrade backwards is a since violation */
	assert_int_equal(mzc_coll_acquire(&set, x, 8, NULL, NULL), MZC_OK);
	assert_int_equal(mzc_coll_downgrade(&set, x, 8, AT(7), NULL, &err),
					 MZC_ERR_SINCE_VIOLATION);
	assert_int_equal(mzc_coll_downgrade(&set, x, 8, AT(9), NULL, NULL), MZC_OK);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[x].caps, 9), 1);
	assert_int_equal(mzc_coll_downgrade(&set, x, 9, EMPTY, NULL, NULL), MZC_OK);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[x].caps, 9), 0);
	/* a mixed batch: +1 at 7 and -1 at 5 moves the since */
	u[0].time = 7;
	u[0].diff = 1;
	u[1].time = 5;
	u[1].diff = -1;
	assert_int_equal(mzc_coll_update(&set, x, u, 2, NULL, &err), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, x), 7);
	/* the implied count at 5 is gone: that is what the caller asked for */
	assert_false(mzc_colls_validate(&set, NULL) == MZC_OK);
}

/* S-i: an MV created with as-of 777 on a new shard. */
static void
test_si_requested_since(void **state)
{
	int32_t		x = create(AT(0), AT(777), AT(0), NULL, 0);

	assert_frontier_at(mzc_coll_since(&set, x), 777);
	/* a shard since already past the request wins */
	x = create(AT(900), AT(777), AT(0), NULL, 0);
	assert_frontier_at(mzc_coll_since(&set, x), 900);
	valid();
}

static void
test_create_validation(void **state)
{
	mzc_coll_create_args a;
	int32_t		slot,
				d,
				deps[MZC_COLL_MAX_DEPS + 1];
	mzc_error	err;
	int			i;

	d = create(AT(10), AT(0), AT(20), NULL, 0);
	memset(&a, 0, sizeof(a));
	a.shard_since = AT(-1);
	assert_int_equal(mzc_coll_create(&set, &a, &slot, &err), MZC_ERR_INVALID);
	a.shard_since = EMPTY;
	assert_int_equal(mzc_coll_create(&set, &a, &slot, &err), MZC_ERR_INVALID);
	assert_string_equal(err.message,
						"initial since is empty: nothing would be readable");
	a.shard_since = AT(0);
	deps[0] = d;
	deps[1] = d;
	a.deps = deps;
	a.ndeps = 2;
	assert_int_equal(mzc_coll_create(&set, &a, &slot, &err), MZC_ERR_INVALID);
	a.ndeps = MZC_COLL_MAX_DEPS + 1;
	for (i = 0; i < MZC_COLL_MAX_DEPS + 1; i++)
		deps[i] = d;
	assert_int_equal(mzc_coll_create(&set, &a, &slot, &err), MZC_ERR_INVALID);
	deps[0] = 6;
	a.ndeps = 1;
	assert_int_equal(mzc_coll_create(&set, &a, &slot, &err), MZC_ERR_NOT_FOUND);
	a.ndeps = 0;
	a.is_table = true;
	a.register_ts = -5;
	assert_int_equal(mzc_coll_create(&set, &a, &slot, &err), MZC_ERR_INVALID);
	/* nothing was created by the failures */
	assert_int_equal(set.nfree, CAP - 1);
	valid();
	/* policies */
	{
		mzc_policy	p = mzc_policy_valid_from(EMPTY);

		assert_int_equal(mzc_coll_set_policy(&set, d, &p, NULL, &err),
						 MZC_ERR_INVALID);
		p = lag(5, 1);
		p.granularity_ms = 0;
		assert_int_equal(mzc_coll_set_policy(&set, d, &p, NULL, &err),
						 MZC_ERR_INVALID);
	}
}

/* Capacity: slots and pool nodes, all-or-nothing. */
static void
test_capacity(void **state)
{
	int32_t		a,
				b,
				i;
	mzc_coll_create_args args;
	mzc_error	err;
	mzc_policy	p;

	fresh(3);
	a = create(AT(10), AT(0), AT(100), NULL, 0);
	b = create(AT(20), AT(0), AT(100), &a, 1);
	/* a: {10,20}, b: {20}: the pool is full */
	assert_int_equal(pool.nfree, 0);
	memset(&args, 0, sizeof(args));
	assert_int_equal(mzc_coll_create(&set, &args, &i, &err), MZC_ERR_NO_SPACE);
	assert_int_equal(mzc_coll_acquire(&set, b, 30, NULL, &err), MZC_ERR_NO_SPACE);
	/* a hold at an existing time needs no node */
	assert_int_equal(mzc_coll_acquire(&set, b, 20, NULL, NULL), MZC_OK);
	assert_int_equal(mzc_coll_release(&set, b, 20, NULL, NULL), MZC_OK);
	/*
	 * b's implied moving 20 -> 25 frees one node and needs one, but the
	 * forwarded change to a may need one more: refused (conservative).
	 */
	p = mzc_policy_valid_from(AT(25));
	assert_int_equal(mzc_coll_set_policy(&set, b, &p, NULL, &err),
					 MZC_ERR_NO_SPACE);
	assert_int_equal(slots[b].policy.kind, MZC_POLICY_NO_POLICY);
	assert_frontier_at(mzc_coll_since(&set, b), 20);
	valid();
	/* a's own implied move needs no node beyond the one it frees */
	p = mzc_policy_valid_from(AT(15));
	assert_int_equal(mzc_coll_set_policy(&set, a, &p, NULL, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, a), 15);
	valid();

	/* slots */
	fresh(POOL);
	for (i = 0; i < CAP; i++)
		(void) create(AT(1), AT(0), AT(2), NULL, 0);
	memset(&args, 0, sizeof(args));
	assert_int_equal(mzc_coll_create(&set, &args, &a, &err), MZC_ERR_NO_SPACE);
	valid();
}

/*
 * The high-water mark: one past the highest slot ever taken, never lowered;
 * a freed slot is taken again before a new one, and every slot from the
 * mark on is free (walks over all collections stop there).
 */
static void
test_high_water_mark(void **state)
{
	int32_t		a,
				b,
				c;
	mzc_coll_effect eff;

	assert_int_equal(set.high, 0);
	a = create(AT(1), AT(0), AT(2), NULL, 0);
	b = create(AT(1), AT(0), AT(2), NULL, 0);
	assert_int_equal(set.high, (a > b ? a : b) + 1);
	assert_int_equal(mzc_coll_drop(&set, a, &eff, NULL), MZC_OK);
	mzc_colls_clear_dirty(&set);
	assert_int_equal(set.high, (a > b ? a : b) + 1);
	c = create(AT(1), AT(0), AT(2), NULL, 0);
	assert_int_equal(c, a);
	assert_int_equal(set.high, (a > b ? a : b) + 1);
	for (int32_t i = set.high; i < CAP; i++)
		assert_int_equal(slots[i].state, MZC_COLL_FREE);
	valid();
	/* A slot in use beyond the mark is an internal inconsistency. */
	set.high = 0;
	{
		mzc_error	err;

		assert_int_equal(mzc_colls_validate(&set, &err), MZC_ERR_STATE);
	}
	set.high = (b > c ? b : c) + 1;
}

/* Dirty tracking: every change gets a new sequence and one list entry. */
static void
test_dirty_list(void **state)
{
	int32_t		a = create(AT(10), AT(0), AT(100), NULL, 0);
	int32_t		b = create(AT(10), AT(0), AT(100), &a, 1);
	uint64_t	seq_a,
				seq_b;
	mzc_policy	p;
	int32_t		i,
				n;

	assert_int_equal(set.ndirty, 2);
	assert_true(slots[b].changed_seq > slots[a].changed_seq);
	mzc_colls_clear_dirty(&set);
	assert_int_equal(set.ndirty, 0);
	assert_int_equal(mzc_colls_dirty_first(&set), MZC_NIL);
	seq_a = slots[a].changed_seq;
	seq_b = slots[b].changed_seq;

	/* a hold that changes no since dirties nothing */
	assert_int_equal(mzc_coll_acquire(&set, b, 50, NULL, NULL), MZC_OK);
	assert_int_equal(set.ndirty, 0);
	assert_int_equal(slots[b].changed_seq, seq_b);

	/* a policy change dirties a even though b's hold keeps its since */
	p = mzc_policy_valid_from(AT(30));
	assert_int_equal(mzc_coll_set_policy(&set, a, &p, NULL, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, a), 10);
	assert_int_equal(set.ndirty, 1);
	assert_true(slots[a].changed_seq > seq_a);

	/* b's since moves to its hold, forwarded to a: still one entry each */
	p = lag(5, 1);
	assert_int_equal(mzc_coll_set_policy(&set, b, &p, NULL, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, b), 50);
	assert_frontier_at(mzc_coll_since(&set, a), 30);
	n = 0;
	for (i = mzc_colls_dirty_first(&set); i != MZC_NIL;
		 i = mzc_colls_dirty_next(&set, i))
		n++;
	assert_int_equal(n, 2);
	assert_int_equal(set.ndirty, 2);
	assert_true(slots[b].changed_seq > seq_b);
	/* the propagation to a happened after b's change */
	assert_true(slots[a].changed_seq > slots[b].changed_seq);
	valid();
}

/* ---- random operations against a naive model ---- */

#define MH 12					/* max client holds per collection */

typedef struct mcoll
{
	int			state;			/* mzc_coll_state */
	mzc_frontier upper;
	mzc_frontier implied;
	mzc_policy	policy;
	int32_t		ndeps;
	int32_t		deps[MZC_COLL_MAX_DEPS];
	mzc_ts		holds[MH];
	int			nholds;
	uint64_t	birth;
	mzc_frontier since;			/* computed */
	mzc_frontier prev_since;	/* for the no-regression check */
} mcoll;

typedef struct model
{
	mcoll		c[CAP];
	uint64_t	births;
	int32_t		pool_capacity;
} model;

static bool
m_live(const model *m, int i)
{
	return m->c[i].state == MZC_COLL_ACTIVE || m->c[i].state == MZC_COLL_DROPPED;
}

/* Recomputes every since from scratch: youngest first. */
static void
m_recompute(model *m)
{
	bool		done[CAP];
	int			k,
				i,
				j,
				q;

	memset(done, 0, sizeof(done));
	for (k = 0; k < CAP; k++)
	{
		int			best = -1;

		for (i = 0; i < CAP; i++)
			if (!done[i] && (best < 0 || m->c[i].birth > m->c[best].birth))
				best = i;
		done[best] = true;
		if (!m_live(m, best))
		{
			m->c[best].since = EMPTY;
			continue;
		}
		{
			mcoll	   *x = &m->c[best];
			mzc_frontier s = x->implied;

			for (j = 0; j < x->nholds; j++)
				s = mzc_frontier_meet(s, AT(x->holds[j]));
			for (i = 0; i < CAP; i++)
			{
				if (!m_live(m, i))
					continue;
				for (q = 0; q < m->c[i].ndeps; q++)
					if (m->c[i].deps[q] == best)
						s = mzc_frontier_meet(s, m->c[i].since);
			}
			x->since = s;
			if (x->state == MZC_COLL_DROPPED && s.empty)
				x->state = MZC_COLL_GONE;
		}
	}
}

/* The count at t in collection i's read capabilities. */
static int64_t
m_count(const model *m, int idx, mzc_ts t)
{
	const mcoll *x = &m->c[idx];
	int64_t		n = 0;
	int			i,
				q;

	if (!m_live(m, idx))
		return 0;
	if (!x->implied.empty && x->implied.ts == t)
		n++;
	for (i = 0; i < x->nholds; i++)
		n += x->holds[i] == t;
	for (i = 0; i < CAP; i++)
	{
		if (!m_live(m, i) || m->c[i].since.empty)
			continue;
		for (q = 0; q < m->c[i].ndeps; q++)
			if (m->c[i].deps[q] == idx && m->c[i].since.ts == t)
				n++;
	}
	return n;
}

/* Distinct times with a positive count, over everything. */
static int32_t
m_nodes_used(const model *m)
{
	int32_t		n = 0;
	int			i,
				t;

	for (i = 0; i < CAP; i++)
		for (t = 0; t < 300; t++)
			if (m_count(m, i, t) > 0)
				n++;
	return n;
}

static int32_t
m_reach_edges(const model *m, int start)
{
	bool		seen[CAP];
	int			stack[CAP],
				top = 0,
				edges = 0,
				i;

	memset(seen, 0, sizeof(seen));
	seen[start] = true;
	stack[top++] = start;
	while (top > 0)
	{
		const mcoll *x = &m->c[stack[--top]];

		edges += x->ndeps;
		for (i = 0; i < x->ndeps; i++)
			if (!seen[x->deps[i]])
			{
				seen[x->deps[i]] = true;
				stack[top++] = x->deps[i];
			}
	}
	return edges;
}

/*
 * Predicts the status of applying a batch (times in [0, 300)) to
 * collection idx, with the S7 checks and the reservation rule.
 */
static mzc_status
m_predict(const model *m, int idx, const mzc_update *u, int n)
{
	int64_t		sum[300];
	mzc_frontier f = m->c[idx].since;
	mzc_frontier after = EMPTY;
	int32_t		needed = 0,
				freed = 0,
				reserve;
	int			t,
				i;

	memset(sum, 0, sizeof(sum));
	for (i = 0; i < n; i++)
		sum[u[i].time] += u[i].diff;
	for (t = 0; t < 300; t++)
	{
		int64_t		before = m_count(m, idx, t);
		int64_t		a = before + sum[t];

		if (sum[t] != 0)
		{
			if (a < 0)
				return MZC_ERR_NEGATIVE_COUNT;
			if (a > 0 && before == 0)
			{
				if (!mzc_frontier_le_ts(f, t))
					return MZC_ERR_BEFORE_FRONTIER;
				needed++;
			}
			if (a == 0 && before > 0)
				freed++;
		}
		if (a > 0 && after.empty)
			after = AT(t);
	}
	reserve = needed - freed;
	if (reserve < 0)
		reserve = 0;
	if (!mzc_frontier_eq(after, f))
		reserve += m_reach_edges(m, idx);
	if (reserve > m->pool_capacity - m_nodes_used(m))
		return MZC_ERR_NO_SPACE;
	return MZC_OK;
}

static void
m_compare(const model *m)
{
	int			i;

	valid();
	assert_int_equal(pool.nfree, m->pool_capacity - m_nodes_used(m));
	for (i = 0; i < CAP; i++)
	{
		const mcoll *x = &m->c[i];
		int			h;

		assert_int_equal(slots[i].state, x->state);
		if (x->state == MZC_COLL_FREE)
			continue;
		assert_frontier_is(mzc_coll_since(&set, i), x->since);
		if (x->state == MZC_COLL_GONE)
			continue;
		assert_frontier_is(slots[i].upper, x->upper);
		assert_frontier_is(slots[i].implied, x->implied);
		/* since <= every hold, and never regresses */
		for (h = 0; h < x->nholds; h++)
			assert_true(mzc_frontier_le_ts(x->since, x->holds[h]));
		assert_true(mzc_frontier_le(x->prev_since, x->since));
	}
}

static void
m_note_sinces(model *m)
{
	int			i;

	for (i = 0; i < CAP; i++)
		m->c[i].prev_since = m->c[i].since;
}

static mzc_policy
random_policy(test_rng *r)
{
	mzc_policy	p;

	switch (rng_range(r, 0, 2))
	{
		case 0:
			assert_int_equal(mzc_policy_lag(rng_range(r, 0, 40),
											rng_range(r, 1, 10), &p, NULL),
							 MZC_OK);
			return p;
		case 1:
			return mzc_policy_valid_from(AT(rng_range(r, 0, 200)));
		default:
			return mzc_policy_disabled();
	}
}

static void
test_random_vs_model(void **state)
{
	test_rng	r;
	int			round,
				counts[16];

	memset(counts, 0, sizeof(counts));
	rng_seed(&r, 31337);
	for (round = 0; round < 300; round++)
	{
		model		m;
		int			step;

		memset(&m, 0, sizeof(m));
		m.pool_capacity = (int32_t) rng_range(&r, 2, 30);
		fresh(m.pool_capacity);
		for (step = 0; step < 150; step++)
		{
			int			op = (int) rng_range(&r, 0, 9);
			int			x = (int) rng_range(&r, 0, CAP - 1);
			mcoll	   *c = &m.c[x];
			mzc_status	want,
						got;

			m_note_sinces(&m);
			if (op <= 1)
			{
				/* create */
				mzc_coll_create_args a;
				int32_t		deps[MZC_COLL_MAX_DEPS],
							nd = 0,
							slot = -1,
							i,
							free_slot = -1;
				mzc_frontier since;
				int32_t		needed = 1;

				memset(&a, 0, sizeof(a));
				a.shard_since = AT(rng_range(&r, 0, 100));
				a.requested_since = AT(rng_chance(&r, 30) ? rng_range(&r, 0, 120) : 0);
				a.is_table = rng_chance(&r, 20);
				a.register_ts = rng_range(&r, 0, 100);
				a.upper = AT(rng_range(&r, 0, 150));
				for (i = 0; i < CAP && nd < 2; i++)
					if (m.c[i].state == MZC_COLL_ACTIVE && rng_chance(&r, 25))
						deps[nd++] = i;
				a.deps = deps;
				a.ndeps = nd;
				for (i = 0; i < CAP; i++)
					if (m.c[i].state == MZC_COLL_FREE)
						free_slot = i;
				since = mzc_frontier_join(a.shard_since, a.requested_since);
				if (a.is_table && since.ts == 0)
					since = AT(a.register_ts);
				for (i = 0; i < nd; i++)
					since = mzc_frontier_join(since, m.c[deps[i]].implied);
				for (i = 0; i < nd; i++)
					needed += m_count(&m, deps[i], since.ts) == 0;
				if (free_slot < 0)
					want = MZC_ERR_NO_SPACE;
				else if (needed > m.pool_capacity - m_nodes_used(&m))
					want = MZC_ERR_NO_SPACE;
				else
					want = MZC_OK;
				got = mzc_coll_create(&set, &a, &slot, NULL);
				assert_int_equal(got, want);
				if (got == MZC_OK)
				{
					mcoll	   *n = &m.c[slot];

					assert_int_equal(n->state, MZC_COLL_FREE);
					memset(n, 0, sizeof(*n));
					n->state = MZC_COLL_ACTIVE;
					n->upper = a.upper;
					n->implied = since;
					n->policy = mzc_policy_no_policy(since);
					n->ndeps = nd;
					for (i = 0; i < nd; i++)
						n->deps[i] = deps[i];
					n->birth = ++m.births;
					n->since = since;
					n->prev_since = since;
				}
			}
			else if (op == 2 || op == 3)
			{
				/* set a policy, or advance the upper */
				mzc_policy	p = random_policy(&r);
				mzc_frontier nu = rng_chance(&r, 5) ? EMPTY :
				AT(rng_range(&r, 0, 250));
				mzc_frontier upper = c->upper;
				mzc_frontier implied = c->implied;
				mzc_update	u[2];
				int			n = 0;

				if (op == 3 && mzc_frontier_lt(upper, nu))
					upper = nu;
				if (m_live(&m, x))
				{
					const mzc_policy *pp = op == 2 ? &p : &c->policy;

					(void) mzc_implied_advance(&implied,
											   mzc_policy_frontier(pp, upper));
				}
				if (!mzc_frontier_eq(implied, c->implied))
				{
					u[n].time = c->implied.ts;
					u[n++].diff = -1;
					if (!implied.empty)
					{
						u[n].time = implied.ts;
						u[n++].diff = 1;
					}
				}
				if (!m_live(&m, x))
					want = MZC_ERR_NOT_FOUND;
				else if (op == 2 && c->state == MZC_COLL_DROPPED)
					want = MZC_ERR_STATE;
				else if (op == 3 && !mzc_frontier_lt(c->upper, nu))
					want = MZC_OK;
				else
					want = m_predict(&m, x, u, n);
				if (op == 2)
					got = mzc_coll_set_policy(&set, x, &p, NULL, NULL);
				else
					got = mzc_coll_advance_upper(&set, x, nu, NULL, NULL);
				assert_int_equal(got, want);
				if (got == MZC_OK)
				{
					if (op == 2)
						c->policy = p;
					c->upper = upper;
					c->implied = implied;
				}
			}
			else if (op == 4 || op == 5)
			{
				/* acquire at a random time (maybe below the since) */
				mzc_ts		t = rng_range(&r, 0, 250);
				mzc_update	u;

				u.time = t;
				u.diff = 1;
				if (!m_live(&m, x))
					want = MZC_ERR_NOT_FOUND;
				else if (c->nholds == MH)
					continue;
				else
					want = m_predict(&m, x, &u, 1);
				got = mzc_coll_acquire(&set, x, t, NULL, NULL);
				assert_int_equal(got, want);
				if (got == MZC_OK)
					c->holds[c->nholds++] = t;
			}
			else if (op == 6 || op == 7)
			{
				/* release or downgrade one of our holds */
				int			h;
				mzc_ts		from;
				mzc_frontier to;
				mzc_update	u[2];
				int			n = 0;

				if (!m_live(&m, x) || c->nholds == 0)
					continue;
				h = (int) rng_range(&r, 0, c->nholds - 1);
				from = c->holds[h];
				to = op == 6 ? EMPTY : AT(from + rng_range(&r, -2, 30));
				if (!to.empty && to.ts > 299)
					to.ts = 299;
				u[n].time = from;
				u[n++].diff = -1;
				if (!to.empty)
				{
					u[n].time = to.ts;
					u[n++].diff = 1;
				}
				if (!to.empty && to.ts < from)
					want = MZC_ERR_SINCE_VIOLATION;
				else if (!to.empty && to.ts == from)
					want = MZC_OK;
				else
					want = m_predict(&m, x, u, n);
				got = mzc_coll_downgrade(&set, x, from, to, NULL, NULL);
				assert_int_equal(got, want);
				if (got == MZC_OK)
				{
					if (to.empty)
						c->holds[h] = c->holds[--c->nholds];
					else
						c->holds[h] = to.ts;
				}
			}
			else if (op == 8)
			{
				/* drop */
				mzc_update	u;

				u.time = c->implied.ts;
				u.diff = -1;
				if (!m_live(&m, x))
					want = MZC_ERR_NOT_FOUND;
				else if (c->state == MZC_COLL_DROPPED)
					want = MZC_OK;
				else
					want = m_predict(&m, x, &u, 1);
				got = mzc_coll_drop(&set, x, NULL, NULL);
				assert_int_equal(got, want);
				if (got == MZC_OK && c->state == MZC_COLL_ACTIVE)
				{
					c->state = MZC_COLL_DROPPED;
					c->implied = EMPTY;
					c->policy = mzc_policy_valid_from(EMPTY);
				}
			}
			else
			{
				/* persist: GONE slots become FREE */
				int			i;

				mzc_colls_clear_dirty(&set);
				for (i = 0; i < CAP; i++)
					if (m.c[i].state == MZC_COLL_GONE)
					{
						memset(&m.c[i], 0, sizeof(m.c[i]));
						m.c[i].state = MZC_COLL_FREE;
						m.c[i].since = EMPTY;
						m.c[i].prev_since = EMPTY;
					}
				m_note_sinces(&m);
				got = MZC_OK;
			}
			counts[got]++;
			m_recompute(&m);
			m_compare(&m);
		}
	}
	assert_true(counts[MZC_OK] > 10000);
	assert_true(counts[MZC_ERR_NO_SPACE] > 200);
	assert_true(counts[MZC_ERR_BEFORE_FRONTIER] > 200);
	assert_true(counts[MZC_ERR_NOT_FOUND] > 200);
	assert_true(counts[MZC_ERR_SINCE_VIOLATION] > 50);
	assert_true(counts[MZC_ERR_STATE] > 20);
}

/*
 * set_deps: a materialized view whose definition is replaced holds its new
 * inputs where it held the old ones and releases those; it and its
 * dependents are born again after a younger new input; a cycle, a new
 * input whose since is past the hold, or a duplicate change nothing.
 */
static void
test_set_deps(void **state)
{
	int32_t		t1 = create(AT(100), AT(0), AT(1000), NULL, 0);
	int32_t		t2 = create(AT(100), AT(0), AT(1000), NULL, 0);
	mzc_coll_create_args a;
	mzc_policy	p = mzc_policy_valid_from(AT(900));
	int32_t		x,
				w,
				t3,
				t4;
	int32_t		deps[2];
	mzc_error	err;
	uint64_t	before;

	memset(&a, 0, sizeof(a));
	a.shard_since = AT(200);
	a.requested_since = AT(0);
	a.upper = AT(200);
	a.deps = &t1;
	a.ndeps = 1;
	a.hold_deps_at_since = true;
	a.deps_at_upper = true;
	assert_int_equal(mzc_coll_create(&set, &a, &x, NULL), MZC_OK);
	assert_int_equal(mzc_coll_advance_upper(&set, x, AT(600), NULL, NULL), MZC_OK);
	w = create(AT(200), AT(0), AT(600), &x, 1);
	t3 = create(AT(100), AT(0), AT(1000), NULL, 0);
	assert_int_equal(mzc_coll_set_policy(&set, t1, &p, NULL, NULL), MZC_OK);
	assert_frontier_at(mzc_coll_since(&set, t1), 599);

	/* a cycle: x cannot read w, which reads x, nor itself */
	deps[0] = w;
	assert_int_equal(mzc_coll_set_deps(&set, x, deps, 1, NULL, &err), MZC_ERR_INVALID);
	deps[0] = x;
	assert_int_equal(mzc_coll_set_deps(&set, x, deps, 1, NULL, &err), MZC_ERR_INVALID);
	/* a duplicate */
	deps[0] = t2;
	deps[1] = t2;
	assert_int_equal(mzc_coll_set_deps(&set, x, deps, 2, NULL, &err), MZC_ERR_INVALID);
	/* an input already past where x holds its inputs (599) */
	t4 = create(AT(100), AT(0), AT(1000), NULL, 0);
	assert_int_equal(mzc_coll_set_policy(&set, t4, &p, NULL, NULL), MZC_OK);
	deps[0] = t4;
	assert_int_equal(mzc_coll_set_deps(&set, x, deps, 1, NULL, &err),
					 MZC_ERR_SINCE_VIOLATION);
	/* nothing changed */
	assert_int_equal(slots[x].ndeps, 1);
	assert_int_equal(slots[x].deps[0], t1);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[t1].caps, 599), 1);
	valid();

	/* the replacement: t2 and the younger t3 instead of t1 */
	before = slots[t3].birth;
	deps[0] = t2;
	deps[1] = t3;
	assert_int_equal(mzc_coll_set_deps(&set, x, deps, 2, NULL, &err), MZC_OK);
	assert_int_equal(slots[x].ndeps, 2);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[t2].caps, 599), 1);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[t3].caps, 599), 1);
	assert_int_equal(slots[t2].ndependents, 1);
	assert_int_equal(slots[t3].ndependents, 1);
	/* t1 is free to follow its policy */
	assert_int_equal(slots[t1].ndependents, 0);
	assert_frontier_at(mzc_coll_since(&set, t1), 900);
	/* x, then w, are now younger than t3 */
	assert_true(slots[x].birth > before);
	assert_true(slots[w].birth > slots[x].birth);
	valid();

	/* x moves on and holds the new inputs at its progress */
	assert_int_equal(mzc_coll_advance_upper(&set, x, AT(700), NULL, NULL), MZC_OK);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[t3].caps, 699), 1);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[t3].caps, 599), 0);
	/* keeping one input and dropping the other */
	deps[0] = t3;
	assert_int_equal(mzc_coll_set_deps(&set, x, deps, 1, NULL, &err), MZC_OK);
	assert_int_equal(mzc_counted_count_at(&pool, &slots[t3].caps, 699), 1);
	assert_int_equal(slots[t2].ndependents, 0);
	valid();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_sa_table_register_ts, setup),
		cmocka_unit_test_setup(test_high_water_mark, setup),
		cmocka_unit_test_setup(test_sb_default_policy, setup),
		cmocka_unit_test_setup(test_sc_client_hold, setup),
		cmocka_unit_test_setup(test_sd_dependency_forwarding, setup),
		cmocka_unit_test_setup(test_s3_initial_since_from_dependency, setup),
		cmocka_unit_test_setup(test_hold_deps_at_since, setup),
		cmocka_unit_test_setup(test_deps_at_upper, setup),
		cmocka_unit_test_setup(test_set_deps, setup),
		cmocka_unit_test_setup(test_se_drop_with_holds, setup),
		cmocka_unit_test_setup(test_drop_dependency_first, setup),
		cmocka_unit_test_setup(test_sf_missing_collection, setup),
		cmocka_unit_test_setup(test_sg_sh_sanity, setup),
		cmocka_unit_test_setup(test_si_requested_since, setup),
		cmocka_unit_test_setup(test_create_validation, setup),
		cmocka_unit_test_setup(test_capacity, setup),
		cmocka_unit_test_setup(test_dirty_list, setup),
		cmocka_unit_test_setup(test_random_vs_model, setup),
	};

	return cmocka_run_group_tests_name("collections", tests, NULL, NULL);
}
