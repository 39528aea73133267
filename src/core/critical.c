/*-------------------------------------------------------------------------
 *
 * critical.c
 *	  Shard readers: critical since handles and leased readers (1.4, 2.4).
 *
 * IDENTIFICATION
 *	  src/core/critical.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "critical.h"

/* K5 retries the open CAS while the stored epoch is not newer than ours. */
#define MZC_OPEN_ATTEMPTS 8

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

/* K1: the meet of every reader's since; unchanged without readers. */
static void
recompute_since(mzc_shard *shard)
{
	mzc_frontier meet = mzc_frontier_empty();
	bool		any = false;
	int32_t		i;

	for (i = 0; i < shard->capacity; i++)
	{
		if (!shard->readers[i].in_use)
			continue;
		any = true;
		meet = mzc_frontier_meet(meet, shard->readers[i].since);
	}
	if (any)
		shard->since = mzc_frontier_join(shard->since, meet);
}

static int32_t
find_reader(const mzc_shard *shard, int64_t reader_id)
{
	int32_t		i;

	for (i = 0; i < shard->capacity; i++)
		if (shard->readers[i].in_use && shard->readers[i].reader_id == reader_id)
			return i;
	return -1;
}

static mzc_status
new_reader(mzc_shard *shard, int64_t reader_id, int32_t *index,
		   mzc_error *err)
{
	int32_t		i;

	if (find_reader(shard, reader_id) >= 0)
		return mzc_fail(err, MZC_ERR_INVALID,
						"reader %lld is already registered",
						(long long) reader_id);
	for (i = 0; i < shard->capacity; i++)
	{
		if (shard->readers[i].in_use)
			continue;
		memset(&shard->readers[i], 0, sizeof(shard->readers[i]));
		shard->readers[i].in_use = true;
		shard->readers[i].reader_id = reader_id;
		shard->readers[i].since = shard->since;
		*index = i;
		return MZC_OK;
	}
	return mzc_fail(err, MZC_ERR_NO_SPACE, "no free reader slot (capacity %d)",
					(int) shard->capacity);
}

mzc_status
mzc_shard_register_critical(mzc_shard *shard, int64_t reader_id,
							int64_t initial_opaque, int32_t *index,
							mzc_error *err)
{
	int32_t		i = find_reader(shard, reader_id);
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
	if ((st = new_reader(shard, reader_id, index, err)) != MZC_OK)
		return st;
	shard->readers[*index].critical = true;
	shard->readers[*index].opaque = initial_opaque;
	return MZC_OK;
}

mzc_status
mzc_shard_register_leased(mzc_shard *shard, int64_t reader_id, int64_t now_ms,
						  int64_t lease_ms, int32_t *index, mzc_error *err)
{
	mzc_status	st;

	if (lease_ms <= 0)
		return mzc_fail(err, MZC_ERR_INVALID, "lease must be positive: %lld",
						(long long) lease_ms);
	if ((st = new_reader(shard, reader_id, index, err)) != MZC_OK)
		return st;
	shard->readers[*index].last_heartbeat_ms = now_ms;
	shard->readers[*index].lease_ms = lease_ms;
	return MZC_OK;
}

static mzc_status
require_reader(const mzc_shard *shard, int32_t index, bool critical,
			   mzc_error *err)
{
	if (index < 0 || index >= shard->capacity || !shard->readers[index].in_use)
		return mzc_fail(err, MZC_ERR_NOT_FOUND, "reader %d does not exist",
						(int) index);
	if (shard->readers[index].critical != critical)
		return mzc_fail(err, MZC_ERR_INVALID, "reader %d is not a %s reader",
						(int) index, critical ? "critical" : "leased");
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
	if ((st = require_reader(shard, index, true, err)) != MZC_OK)
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
		recompute_since(shard);
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
		if ((st = require_reader(shard, index, true, err)) != MZC_OK)
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

mzc_status
mzc_shard_leased_downgrade(mzc_shard *shard, int32_t index, mzc_frontier since,
						   int64_t now_ms, mzc_error *err)
{
	mzc_shard_reader *r;
	mzc_status	st;

	if (!since.empty && !mzc_ts_valid(since.ts))
		return mzc_fail(err, MZC_ERR_INVALID, "since must not be negative: %lld",
						(long long) since.ts);
	if ((st = require_reader(shard, index, false, err)) != MZC_OK)
		return st;
	r = &shard->readers[index];
	if (now_ms > r->last_heartbeat_ms)
		r->last_heartbeat_ms = now_ms;
	if (mzc_frontier_lt(r->since, since))
	{
		r->since = since;
		recompute_since(shard);
	}
	return MZC_OK;
}

mzc_status
mzc_shard_heartbeat(mzc_shard *shard, int32_t index, int64_t now_ms,
					mzc_error *err)
{
	mzc_status	st;

	if ((st = require_reader(shard, index, false, err)) != MZC_OK)
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
		(st = require_reader(shard, index, true, err)) != MZC_OK)
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
