/*-------------------------------------------------------------------------
 *
 * critical.h
 *	  Shard readers: the shard since and leased readers (1.4, 2.4).
 *
 * A shard (a durable collection's storage) keeps a since that is the meet of
 * the sinces of its registered readers (K1); with no readers it stays where
 * it is.  It never regresses.
 *
 * Leased readers (K6, K7) carry a heartbeat and a lease; a downgrade also
 * heartbeats and never regresses; mzc_shard_expire() removes readers whose
 * lease ran out (critical readers never) without recomputing the shard since
 * (as persist does: the since moves at the next downgrade of anyone).  The
 * controller's leases (lease.c) are leased readers.
 *
 * Critical readers (K2-K5: a durable id, an opaque token, compare-and-
 * downgrade, epoch fencing) have no caller in the library: they are modelled
 * for the unit tests in test/unit/model_critical.h, over the same shard and
 * the inline helpers below.
 *
 * Readers live in a caller-provided array; no allocation, no globals.
 *
 * IDENTIFICATION
 *	  src/core/critical.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_CRITICAL_H
#define MZC_CRITICAL_H

#include <string.h>

#include "frontier.h"
#include "status.h"

typedef struct mzc_shard_reader
{
	bool		in_use;
	bool		critical;		/* and the critical fields: the model's */
	int64_t		reader_id;
	mzc_frontier since;
	int64_t		opaque;			/* critical: e.g. the owner's epoch */
	bool		attempted;		/* critical: a CAS was attempted ... */
	int64_t		last_attempt_ms;	/* ... at this time (K4) */
	int64_t		last_heartbeat_ms;	/* leased */
	int64_t		lease_ms;		/* leased */
} mzc_shard_reader;

typedef struct mzc_shard
{
	mzc_shard_reader *readers;	/* caller memory, capacity entries */
	int32_t		capacity;
	mzc_frontier since;
	bool		tombstoned;		/* the model's (K3 a) */
} mzc_shard;

extern void mzc_shard_init(mzc_shard *shard, mzc_shard_reader *readers,
						   int32_t capacity, mzc_frontier since);

/* Registers a leased reader at the shard's since, heartbeat now. */
extern mzc_status mzc_shard_register_leased(mzc_shard *shard,
											int64_t reader_id, int64_t now_ms,
											int64_t lease_ms, int32_t *index,
											mzc_error *err);

/* K6/K7: heartbeat = max(old, now); since replaced only if it grows. */
extern mzc_status mzc_shard_leased_downgrade(mzc_shard *shard, int32_t index,
											 mzc_frontier since, int64_t now_ms,
											 mzc_error *err);
extern mzc_status mzc_shard_heartbeat(mzc_shard *shard, int32_t index,
									  int64_t now_ms, mzc_error *err);

/* K6: removes leased readers with last_heartbeat + lease < now; count. */
extern int32_t mzc_shard_expire(mzc_shard *shard, int64_t now_ms);

/*
 * The reader primitives of both kinds, inline so that the model of critical
 * readers (test/unit/model_critical.c) shares them without the library
 * exporting them.
 */

/* K1: the meet of every reader's since; unchanged without readers. */
static inline void
mzc_shard_recompute_since(mzc_shard *shard)
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

/* The index of the reader registered as reader_id, or -1. */
static inline int32_t
mzc_shard_find_reader(const mzc_shard *shard, int64_t reader_id)
{
	int32_t		i;

	for (i = 0; i < shard->capacity; i++)
		if (shard->readers[i].in_use && shard->readers[i].reader_id == reader_id)
			return i;
	return -1;
}

/* Registers a new reader (of either kind) at the shard's since. */
static inline mzc_status
mzc_shard_new_reader(mzc_shard *shard, int64_t reader_id, int32_t *index,
					 mzc_error *err)
{
	int32_t		i;

	if (mzc_shard_find_reader(shard, reader_id) >= 0)
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

/* Is index a registered reader of the given kind? */
static inline mzc_status
mzc_shard_require_reader(const mzc_shard *shard, int32_t index,
						 bool critical, mzc_error *err)
{
	if (index < 0 || index >= shard->capacity || !shard->readers[index].in_use)
		return mzc_fail(err, MZC_ERR_NOT_FOUND, "reader %d does not exist",
						(int) index);
	if (shard->readers[index].critical != critical)
		return mzc_fail(err, MZC_ERR_INVALID, "reader %d is not a %s reader",
						(int) index, critical ? "critical" : "leased");
	return MZC_OK;
}

#endif							/* MZC_CRITICAL_H */
