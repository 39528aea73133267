/*
 * libFuzzer target: counted frontiers against a naive model.
 *
 * The input is decoded into a pool size and a sequence of operations on
 * three counted frontiers sharing one pool: seed, apply a batch (times and
 * diffs from the input, possibly negative times), clear.  After every
 * operation the status, every count, each frontier, the effect report and
 * the pool's free count must match a model that keeps plain counts per
 * time; a rejected batch must change nothing.  Any mismatch aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counted.h"

#define NTIMES 64
#define NC 3
#define MAXPOOL 40

static void
check(int cond, const char *what)
{
	if (!cond)
	{
		fprintf(stderr, "fuzz_counted: %s\n", what);
		abort();
	}
}

typedef struct reader
{
	const uint8_t *p;
	size_t		left;
} reader;

static int
next_byte(reader *r)
{
	if (r->left == 0)
		return -1;
	r->left--;
	return *r->p++;
}

#define MODEL_TIMES NTIMES
#define MODEL_COUNTED NC
#include "../unit/model_counted.h"

static void
compare(const model *m, const mzc_count_pool *pool, const mzc_counted *cs)
{
	int			k,
				t;

	check(pool->nfree == m->nfree, "free nodes differ");
	check(mzc_count_pool_validate(pool, NULL) == MZC_OK, "pool invalid");
	for (k = 0; k < NC; k++)
	{
		int			f = model_frontier(m, k);
		mzc_frontier got = mzc_counted_frontier(pool, &cs[k]);
		int			distinct = 0;

		check(mzc_counted_validate(pool, &cs[k], NULL) == MZC_OK, "list invalid");
		check(f < 0 ? got.empty : (!got.empty && got.ts == f), "frontier differs");
		for (t = 0; t < NTIMES; t++)
		{
			check(mzc_counted_count_at(pool, &cs[k], t) == m->count[k][t],
				  "count differs");
			distinct += m->count[k][t] > 0;
		}
		check(cs[k].ndistinct == distinct, "distinct times differ");
	}
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static mzc_count_node nodes[MAXPOOL];
	mzc_count_pool pool;
	mzc_counted cs[NC];
	model		m;
	reader		r;
	int			b,
				k;

	r.p = data;
	r.left = size;
	b = next_byte(&r);
	if (b < 0)
		return 0;
	mzc_count_pool_init(&pool, nodes, b % MAXPOOL);
	memset(&m, 0, sizeof(m));
	m.nfree = b % MAXPOOL;
	for (k = 0; k < NC; k++)
		mzc_counted_init(&cs[k]);

	while ((b = next_byte(&r)) >= 0)
	{
		int			op = b & 3;

		k = (b >> 2) % NC;
		if (op == 0)
		{
			/* seed: only an empty one takes it */
			int			t = next_byte(&r);
			mzc_status	want,
						got;

			if (t < 0)
				break;
			t %= NTIMES;
			if (model_frontier(&m, k) >= 0)
				want = MZC_ERR_STATE;
			else if (m.nfree < 1)
				want = MZC_ERR_NO_SPACE;
			else
				want = MZC_OK;
			got = mzc_counted_seed(&pool, &cs[k], t, 1, NULL);
			check(got == want, "seed status differs");
			if (got == MZC_OK)
			{
				m.count[k][t] = 1;
				m.nfree--;
			}
		}
		else if (op == 3)
		{
			int			t;

			mzc_counted_clear(&pool, &cs[k]);
			for (t = 0; t < NTIMES; t++)
			{
				if (m.count[k][t] > 0)
					m.nfree++;
				m.count[k][t] = 0;
			}
		}
		else
		{
			/* a batch of up to 15 updates */
			mzc_update	u[16];
			int			n = (b >> 4) & 15,
						i;
			int			before = model_frontier(&m, k);
			mzc_status	want,
						got;
			mzc_counted_effect eff;

			for (i = 0; i < n; i++)
			{
				int			t = next_byte(&r),
							d = next_byte(&r);

				if (t < 0 || d < 0)
					return 0;
				/* times 0..63, and now and then a negative one */
				u[i].time = t == 255 ? -1 : t % NTIMES;
				u[i].diff = (int64_t) (d % 9) - 4;
			}
			want = model_apply(&m, k, u, n);
			got = mzc_counted_apply(&pool, &cs[k], u, n, &eff, NULL);
			check(got == want, "apply status differs");
			if (got == MZC_OK)
			{
				int			after = model_frontier(&m, k);

				check(eff.changed == (before != after), "effect.changed");
				check(before < 0 ? eff.old_frontier.empty :
					  eff.old_frontier.ts == before, "effect.old_frontier");
				check(after < 0 ? eff.new_frontier.empty :
					  eff.new_frontier.ts == after, "effect.new_frontier");
			}
		}
		compare(&m, &pool, cs);
	}
	return 0;
}
