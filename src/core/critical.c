/*-------------------------------------------------------------------------
 *
 * critical.c
 *	  Shard readers: the shard since and leased readers (1.4, 2.4).
 *
 * IDENTIFICATION
 *	  src/core/critical.c
 *
 *-------------------------------------------------------------------------
 */
#include "critical.h"

void
mzc_shard_init(mzc_shard *shard, mzc_shard_reader *readers, int32_t capacity,
			   mzc_frontier since)
{
	int32_t		i;

	shard->readers = readers;
	shard->capacity = capacity < 0 ? 0 : capacity;
	shard->since = since;
	shard->tombstoned = false;
	for (i = 0; i < shard->capacity; i++)
		memset(&readers[i], 0, sizeof(readers[i]));
}

mzc_status
mzc_shard_register_leased(mzc_shard *shard, int64_t reader_id, int64_t now_ms,
						  int64_t lease_ms, int32_t *index, mzc_error *err)
{
	mzc_status	st;

	if (lease_ms <= 0)
		return mzc_fail(err, MZC_ERR_INVALID, "lease must be positive: %lld",
						(long long) lease_ms);
	if ((st = mzc_shard_new_reader(shard, reader_id, index, err)) != MZC_OK)
		return st;
	shard->readers[*index].last_heartbeat_ms = now_ms;
	shard->readers[*index].lease_ms = lease_ms;
	return MZC_OK;
}

mzc_status
mzc_shard_leased_downgrade(mzc_shard *shard, int32_t index, mzc_frontier since,
						   int64_t now_ms, mzc_error *err)
{
	mzc_shard_reader *r;
	mzc_status	st;

	if (!since.empty && !mzc_ts_valid(since.ts))
		return mzc_fail(err, MZC_ERR_INVALID, "since must not be negative: %lld",
						(long long) since.ts);
	if ((st = mzc_shard_require_reader(shard, index, false, err)) != MZC_OK)
		return st;
	r = &shard->readers[index];
	if (now_ms > r->last_heartbeat_ms)
		r->last_heartbeat_ms = now_ms;
	if (mzc_frontier_lt(r->since, since))
	{
		r->since = since;
		mzc_shard_recompute_since(shard);
	}
	return MZC_OK;
}

mzc_status
mzc_shard_heartbeat(mzc_shard *shard, int32_t index, int64_t now_ms,
					mzc_error *err)
{
	mzc_status	st;

	if ((st = mzc_shard_require_reader(shard, index, false, err)) != MZC_OK)
		return st;
	if (now_ms > shard->readers[index].last_heartbeat_ms)
		shard->readers[index].last_heartbeat_ms = now_ms;
	return MZC_OK;
}

int32_t
mzc_shard_expire(mzc_shard *shard, int64_t now_ms)
{
	int32_t		i,
				n = 0;

	for (i = 0; i < shard->capacity; i++)
	{
		mzc_shard_reader *r = &shard->readers[i];

		if (!r->in_use || r->critical)
			continue;
		/* last_heartbeat + lease < now, without overflowing */
		if (r->last_heartbeat_ms < now_ms - r->lease_ms)
		{
			r->in_use = false;
			n++;
		}
	}
	return n;
}

