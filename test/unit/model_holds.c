/*-------------------------------------------------------------------------
 *
 * model_holds.c
 *	  The ReadHold token model (reference 1.1).
 *
 * IDENTIFICATION
 *	  test/unit/model_holds.c
 *
 *-------------------------------------------------------------------------
 */
#include "model_holds.h"

void
mzc_hold_issuer_init(mzc_hold_issuer *issuer, mzc_count_pool *pool,
					 mzc_counted *counts, int32_t n)
{
	issuer->pool = pool;
	issuer->counts = counts;
	issuer->ncollections = n < 0 ? 0 : n;
	issuer->gone = false;
}

static void
batch_start(mzc_hold_batch *batch, int32_t id)
{
	batch->id = id;
	batch->n = 0;
	batch->delivered = false;
}

static void
batch_add(mzc_hold_batch *batch, mzc_frontier f, int64_t diff)
{
	if (f.empty || batch->n >= MZC_HOLD_BATCH_MAX)
		return;
	batch->updates[batch->n].time = f.ts;
	batch->updates[batch->n].diff = diff;
	batch->n++;
}

/*
 * Folds the batch into the issuer's counted frontier for its id (a copy is
 * consolidated, the emitted batch is left as emitted).
 */
static mzc_status
deliver(mzc_hold_issuer *issuer, mzc_hold_batch *batch, mzc_error *err)
{
	mzc_update	copy[MZC_HOLD_BATCH_MAX];
	int32_t		i;
	mzc_status	st;

	for (i = 0; i < batch->n; i++)
		copy[i] = batch->updates[i];
	st = mzc_counted_apply(issuer->pool, &issuer->counts[batch->id], copy,
						   batch->n, NULL, err);
	if (st == MZC_OK)
		batch->delivered = true;
	return st;
}

mzc_status
mzc_hold_acquire(mzc_hold_issuer *issuer, int32_t id, mzc_read_hold *out,
				 mzc_hold_batch *batch, mzc_error *err)
{
	mzc_frontier since;
	mzc_status	st;

	batch_start(batch, id);
	if (issuer->gone)
		return mzc_fail(err, MZC_ERR_ISSUER_GONE, "the hold issuer is gone");
	if (id < 0 || id >= issuer->ncollections)
		return mzc_fail(err, MZC_ERR_NOT_FOUND,
						"collection does not exist: %d", (int) id);
	since = mzc_counted_frontier(issuer->pool, &issuer->counts[id]);
	if (since.empty)
		return mzc_fail(err, MZC_ERR_NOT_FOUND,
						"collection does not exist: %d", (int) id);
	batch_add(batch, since, 1);
	if ((st = deliver(issuer, batch, err)) != MZC_OK)
	{
		batch->n = 0;
		return st;
	}
	out->issuer = issuer;
	out->id = id;
	out->since = since;
	return MZC_OK;
}

mzc_status
mzc_hold_downgrade(mzc_read_hold *hold, mzc_frontier to,
				   mzc_hold_batch *batch, mzc_error *err)
{
	mzc_status	st;

	batch_start(batch, hold->id);
	if (!to.empty && !mzc_ts_valid(to.ts))
		return mzc_fail(err, MZC_ERR_INVALID,
						"hold time must not be negative: %lld", (long long) to.ts);
	if (!mzc_frontier_le(hold->since, to))
		return mzc_fail(err, MZC_ERR_SINCE_VIOLATION,
						"desired read hold frontier is not beyond the since of collection: %d",
						(int) hold->id);
	if (mzc_frontier_eq(hold->since, to))
		return MZC_OK;			/* consolidates to nothing */
	batch_add(batch, hold->since, -1);
	batch_add(batch, to, 1);
	if (!hold->issuer->gone)
	{
		if ((st = deliver(hold->issuer, batch, err)) != MZC_OK)
		{
			batch->n = 0;
			return st;
		}
	}
	hold->since = to;
	return MZC_OK;
}

mzc_status
mzc_hold_release(mzc_read_hold *hold, mzc_hold_batch *batch, mzc_error *err)
{
	return mzc_hold_downgrade(hold, mzc_frontier_empty(), batch, err);
}

mzc_status
mzc_hold_clone(const mzc_read_hold *hold, mzc_read_hold *out,
			   mzc_hold_batch *batch, mzc_error *err)
{
	mzc_status	st;

	batch_start(batch, hold->id);
	if (hold->issuer->gone)
		return mzc_fail(err, MZC_ERR_ISSUER_GONE,
						"cannot clone a read hold whose issuer is gone");
	batch_add(batch, hold->since, 1);
	if (batch->n > 0 && (st = deliver(hold->issuer, batch, err)) != MZC_OK)
	{
		batch->n = 0;
		return st;
	}
	*out = *hold;
	return MZC_OK;
}

mzc_status
mzc_hold_merge(mzc_read_hold *a, mzc_read_hold *b, mzc_hold_batch *batch,
			   mzc_error *err)
{
	mzc_frontier meet;
	mzc_status	st;

	batch_start(batch, a->id);
	if (a == b)
		return mzc_fail(err, MZC_ERR_INVALID,
						"cannot merge a read hold with itself");
	if (a->id != b->id)
		return mzc_fail(err, MZC_ERR_INVALID,
						"cannot merge read holds of different collections: %d and %d",
						(int) a->id, (int) b->id);
	if (a->issuer != b->issuer)
		return mzc_fail(err, MZC_ERR_INVALID,
						"cannot merge read holds of different issuers");
	if (a->issuer->gone)
		return mzc_fail(err, MZC_ERR_ISSUER_GONE,
						"cannot merge read holds whose issuer is gone");
	meet = mzc_frontier_meet(a->since, b->since);
	batch_add(batch, a->since, -1);
	batch_add(batch, b->since, -1);
	batch_add(batch, meet, 1);
	if (batch->n > 0 && (st = deliver(a->issuer, batch, err)) != MZC_OK)
	{
		batch->n = 0;
		return st;
	}
	a->since = meet;
	b->since = mzc_frontier_empty();
	return MZC_OK;
}
