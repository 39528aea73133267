/*-------------------------------------------------------------------------
 *
 * critical.h
 *	  Shard readers: critical since handles and leased readers (1.4, 2.4).
 *
 * A shard (a durable collection's storage) keeps a since that is the meet of
 * the sinces of its registered readers (K1); with no readers it stays where
 * it is.  It never regresses.
 *
 * Critical readers (K2) have a durable id and carry an opaque token; the
 * controller stores its epoch there.  They never expire.  They move their
 * since only by compare-and-downgrade (K3), which is linearised here by the
 * caller's lock:
 *	 (a) tombstoned shard			-> OK, since {}
 *	 (b) stored opaque != expected	-> MISMATCH with (actual opaque, since);
 *									   nothing changes
 *	 (c) current since <= new		-> since and opaque replaced, OK new
 *	 (d) otherwise					-> OK with the current since; the opaque is
 *									   not updated (no regression)
 * The rate-limited variant (K4) reports NOT_ATTEMPTED when called again
 * within `interval_ms` of the previous attempt.
 *
 * Epoch fencing (K5, 2.4): mzc_critical_open() makes the reader ours unless
 * a newer epoch already owns it (MZC_ERR_FENCED); mzc_critical_downgrade()
 * uses the unlimited CAS for {} and the rate-limited one otherwise, and any
 * mismatch means a newer process took over (MZC_ERR_FENCED).
 *
 * Leased readers (K6, K7) carry a heartbeat and a lease; a downgrade also
 * heartbeats and never regresses; mzc_shard_expire() removes readers whose
 * lease ran out (critical readers never) without recomputing the shard since
 * (as persist does: the since moves at the next downgrade of anyone).
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

#include "frontier.h"
#include "status.h"

typedef struct mzc_shard_reader
{
	bool		in_use;
	bool		critical;
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
	bool		tombstoned;
} mzc_shard;

typedef enum mzc_cas_outcome
{
	MZC_CAS_OK = 0,				/* result.since is the since now */
	MZC_CAS_MISMATCH,			/* result.opaque/since are the stored ones */
	MZC_CAS_NOT_ATTEMPTED		/* rate-limited (K4) */
} mzc_cas_outcome;

typedef struct mzc_cas_result
{
	mzc_cas_outcome outcome;
	mzc_frontier since;
	int64_t		opaque;
} mzc_cas_result;

extern void mzc_shard_init(mzc_shard *shard, mzc_shard_reader *readers,
						   int32_t capacity, mzc_frontier since);

/*
 * Registers a critical reader at the shard's since with the given opaque;
 * registering an id that exists returns the existing reader unchanged.
 */
extern mzc_status mzc_shard_register_critical(mzc_shard *shard,
											  int64_t reader_id,
											  int64_t initial_opaque,
											  int32_t *index, mzc_error *err);

/* Registers a leased reader at the shard's since, heartbeat now. */
extern mzc_status mzc_shard_register_leased(mzc_shard *shard,
											int64_t reader_id, int64_t now_ms,
											int64_t lease_ms, int32_t *index,
											mzc_error *err);

/* K3. */
extern mzc_status mzc_shard_cas(mzc_shard *shard, int32_t index,
								int64_t expected_opaque, int64_t new_opaque,
								mzc_frontier new_since, mzc_cas_result *result,
								mzc_error *err);

/* K4: as mzc_shard_cas, unless the last attempt was < interval_ms ago. */
extern mzc_status mzc_shard_maybe_cas(mzc_shard *shard, int32_t index,
									  int64_t now_ms, int64_t interval_ms,
									  int64_t expected_opaque,
									  int64_t new_opaque,
									  mzc_frontier new_since,
									  mzc_cas_result *result, mzc_error *err);

/* K6/K7: heartbeat = max(old, now); since replaced only if it grows. */
extern mzc_status mzc_shard_leased_downgrade(mzc_shard *shard, int32_t index,
											 mzc_frontier since, int64_t now_ms,
											 mzc_error *err);
extern mzc_status mzc_shard_heartbeat(mzc_shard *shard, int32_t index,
									  int64_t now_ms, mzc_error *err);

/* K6: removes leased readers with last_heartbeat + lease < now; count. */
extern int32_t mzc_shard_expire(mzc_shard *shard, int64_t now_ms);

/* Marks the shard finalized: every CAS then succeeds with {}. */
extern void mzc_shard_tombstone(mzc_shard *shard);

/* K5: take over the critical reader with my_epoch (2.4 open_critical). */
extern mzc_status mzc_critical_open(mzc_shard *shard, int32_t index,
									int64_t my_epoch,
									mzc_frontier requested_since,
									mzc_cas_result *result, mzc_error *err);

/* 2.4 downgrade: {} unlimited, otherwise rate-limited; FENCED on mismatch. */
extern mzc_status mzc_critical_downgrade(mzc_shard *shard, int32_t index,
										 int64_t my_epoch, mzc_frontier since,
										 int64_t now_ms, int64_t interval_ms,
										 mzc_cas_result *result,
										 mzc_error *err);

#endif							/* MZC_CRITICAL_H */
