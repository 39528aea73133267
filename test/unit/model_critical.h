/*-------------------------------------------------------------------------
 *
 * model_critical.h
 *	  Critical readers of a shard (1.4, 2.4), a model for the unit tests.
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
 * The library has leased readers only (src/core/critical.h, the controller's
 * leases); the controller fences its epoch in the catalog instead
 * (authority.c).  This model shares the shard and its reader primitives with
 * critical.c and is linked into the unit tests only.
 *
 * IDENTIFICATION
 *	  test/unit/model_critical.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_MODEL_CRITICAL_H
#define MZC_MODEL_CRITICAL_H

#include "critical.h"

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

/*
 * Registers a critical reader at the shard's since with the given opaque;
 * registering an id that exists returns the existing reader unchanged.
 */
extern mzc_status mzc_shard_register_critical(mzc_shard *shard,
											  int64_t reader_id,
											  int64_t initial_opaque,
											  int32_t *index, mzc_error *err);

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

#endif							/* MZC_MODEL_CRITICAL_H */
