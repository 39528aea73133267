/*-------------------------------------------------------------------------
 *
 * model_critical.c
 *	  Critical readers of a shard (1.4, 2.4), a model for the unit tests.
 *
 * IDENTIFICATION
 *	  test/unit/model_critical.c
 *
 *-------------------------------------------------------------------------
 */
#include "model_critical.h"

/* K5 retries the open CAS while the stored epoch is not newer than ours. */
#define MZC_OPEN_ATTEMPTS 8

mzc_status
mzc_shard_register_critical(mzc_shard *shard, int64_t reader_id,
							int64_t initial_opaque, int32_t *index,
							mzc_error *err)
{
	int32_t		i = mzc_shard_find_reader(shard, reader_id);
	mzc_status	st;

	if (i >= 0)
	{
		if (!shard->readers[i].critical)
			return mzc_fail(err, MZC_ERR_INVALID,
							"reader %lld is a leased reader",
							(long long) reader_id);
		*index = i;
		return MZC_OK;
	}
	if ((st = mzc_shard_new_reader(shard, reader_id, index, err)) != MZC_OK)
		return st;
	shard->readers[*index].critical = true;
	shard->readers[*index].opaque = initial_opaque;
	return MZC_OK;
}

mzc_status
mzc_shard_cas(mzc_shard *shard, int32_t index, int64_t expected_opaque,
			  int64_t new_opaque, mzc_frontier new_since,
			  mzc_cas_result *result, mzc_error *err)
{
	mzc_shard_reader *r;
	mzc_status	st;

	if (!new_since.empty && !mzc_ts_valid(new_since.ts))
		return mzc_fail(err, MZC_ERR_INVALID,
						"since must not be negative: %lld",
						(long long) new_since.ts);
	if (shard->tombstoned)
	{
		result->outcome = MZC_CAS_OK;
		result->since = mzc_frontier_empty();
		result->opaque = expected_opaque;
		return MZC_OK;
	}
	if ((st = mzc_shard_require_reader(shard, index, true, err)) != MZC_OK)
		return st;
	r = &shard->readers[index];
	if (r->opaque != expected_opaque)
	{
		result->outcome = MZC_CAS_MISMATCH;
		result->since = r->since;
		result->opaque = r->opaque;
		return MZC_OK;
	}
	result->outcome = MZC_CAS_OK;
	result->opaque = r->opaque;
	if (mzc_frontier_le(r->since, new_since))
	{
		r->since = new_since;
		r->opaque = new_opaque;
		result->opaque = new_opaque;
		mzc_shard_recompute_since(shard);
	}
	result->since = r->since;
	return MZC_OK;
}

mzc_status
mzc_shard_maybe_cas(mzc_shard *shard, int32_t index, int64_t now_ms,
					int64_t interval_ms, int64_t expected_opaque,
					int64_t new_opaque, mzc_frontier new_since,
					mzc_cas_result *result, mzc_error *err)
{
	mzc_shard_reader *r;
	mzc_status	st;

	if (!shard->tombstoned)
	{
		if ((st = mzc_shard_require_reader(shard, index, true, err)) != MZC_OK)
			return st;
		r = &shard->readers[index];
		if (r->attempted && now_ms >= r->last_attempt_ms &&
			now_ms - r->last_attempt_ms < interval_ms)
		{
			result->outcome = MZC_CAS_NOT_ATTEMPTED;
			result->since = r->since;
			result->opaque = r->opaque;
			return MZC_OK;
		}
	}
	st = mzc_shard_cas(shard, index, expected_opaque, new_opaque, new_since,
					   result, err);
	if (st == MZC_OK && !shard->tombstoned)
	{
		shard->readers[index].attempted = true;
		shard->readers[index].last_attempt_ms = now_ms;
	}
	return st;
}

void
mzc_shard_tombstone(mzc_shard *shard)
{
	shard->tombstoned = true;
	shard->since = mzc_frontier_empty();
}

mzc_status
mzc_critical_open(mzc_shard *shard, int32_t index, int64_t my_epoch,
				  mzc_frontier requested_since, mzc_cas_result *result,
				  mzc_error *err)
{
	int			attempt;
	mzc_status	st;

	if (!shard->tombstoned &&
		(st = mzc_shard_require_reader(shard, index, true, err)) != MZC_OK)
		return st;
	for (attempt = 0; attempt < MZC_OPEN_ATTEMPTS; attempt++)
	{
		int64_t		stored;
		mzc_frontier target;

		if (shard->tombstoned)
			return mzc_shard_cas(shard, index, my_epoch, my_epoch,
								 mzc_frontier_empty(), result, err);
		stored = shard->readers[index].opaque;
		if (stored > my_epoch)
		{
			result->outcome = MZC_CAS_MISMATCH;
			result->since = shard->readers[index].since;
			result->opaque = stored;
			return mzc_fail(err, MZC_ERR_FENCED,
							"fenced: epoch %lld owns the critical reader, ours is %lld",
							(long long) stored, (long long) my_epoch);
		}
		target = mzc_frontier_join(shard->readers[index].since, requested_since);
		st = mzc_shard_cas(shard, index, stored, my_epoch, target, result, err);
		if (st != MZC_OK)
			return st;
		if (result->outcome == MZC_CAS_OK)
			return MZC_OK;
	}
	return mzc_fail(err, MZC_ERR_FENCED,
					"could not take over the critical reader");
}

mzc_status
mzc_critical_downgrade(mzc_shard *shard, int32_t index, int64_t my_epoch,
					   mzc_frontier since, int64_t now_ms, int64_t interval_ms,
					   mzc_cas_result *result, mzc_error *err)
{
	mzc_status	st;

	if (since.empty)
		st = mzc_shard_cas(shard, index, my_epoch, my_epoch, since, result, err);
	else
		st = mzc_shard_maybe_cas(shard, index, now_ms, interval_ms, my_epoch,
								 my_epoch, since, result, err);
	if (st != MZC_OK)
		return st;
	if (result->outcome == MZC_CAS_MISMATCH)
		return mzc_fail(err, MZC_ERR_FENCED,
						"fenced: epoch %lld owns the critical reader, ours is %lld",
						(long long) result->opaque, (long long) my_epoch);
	return MZC_OK;
}
