/*-------------------------------------------------------------------------
 *
 * model_holds.h
 *	  The ReadHold token model (reference 1.1, scenarios H1-H10).
 *
 * A read hold is a token (collection id, since) handed out by an issuer.
 * Every change of a token is reported to the issuer as a change batch of
 * (time, +1/-1) updates, which the issuer folds into its counted frontier
 * for that collection (R2).  Here the issuer is a small struct over
 * caller-provided counted frontiers, one per collection id; every operation
 * also returns the batch it emitted so callers and tests can see it.
 *
 *	 acquire	 +1 at the collection's current frontier (R3)
 *	 downgrade	 -1 at the old since, +1 at the new one; a new since below the
 *				 old one is MZC_ERR_SINCE_VIOLATION and changes nothing; the
 *				 same since emits nothing (R4)
 *	 release	 downgrade to {}: -1 at the old since; idempotent (R5, R6)
 *	 clone		 +1 at the since for the copy; MZC_ERR_ISSUER_GONE if the
 *				 issuer is gone (R7)
 *	 merge		 same collection only (MZC_ERR_INVALID otherwise, R8): the
 *				 first token takes the meet of both sinces, the second is
 *				 emptied; one batch (-1 a, -1 b, +1 meet)
 *
 * When the issuer is gone (issuer->gone), downgrade and release still
 * update the token and report no error; the batch is not delivered (R4,
 * H10).  Clone and merge need the issuer and fail.  Delivery is all-or-
 * nothing: if the issuer's counted frontier rejects a batch (e.g. its pool
 * is full) the token is left unchanged.
 *
 * A model for the unit tests only: the library keeps read holds as counts
 * in the core's collections (collections.c, taken by the controller's
 * readhold.c), so nothing of this ships in mzcoord.so.
 *
 * IDENTIFICATION
 *	  test/unit/model_holds.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_MODEL_HOLDS_H
#define MZC_MODEL_HOLDS_H

#include "counted.h"

typedef struct mzc_hold_issuer
{
	mzc_count_pool *pool;
	mzc_counted *counts;		/* caller array, one per collection id */
	int32_t		ncollections;
	bool		gone;			/* the issuer hung up */
} mzc_hold_issuer;

typedef struct mzc_read_hold
{
	mzc_hold_issuer *issuer;
	int32_t		id;				/* collection id: index into issuer->counts */
	mzc_frontier since;			/* {} once released */
} mzc_read_hold;

/* The change batch one operation emitted (not consolidated for merge). */
#define MZC_HOLD_BATCH_MAX 3
typedef struct mzc_hold_batch
{
	int32_t		id;
	int32_t		n;
	mzc_update	updates[MZC_HOLD_BATCH_MAX];
	bool		delivered;		/* applied to the issuer's accounting */
} mzc_hold_batch;

/*
 * An issuer over counts[0..n-1].  Each collection's counted frontier must
 * already be seeded (e.g. with its implied capability) to accept holds.
 */
extern void mzc_hold_issuer_init(mzc_hold_issuer *issuer, mzc_count_pool *pool,
								 mzc_counted *counts, int32_t n);

/* R3; R9 "collection does not exist" for a bad id or an empty frontier. */
extern mzc_status mzc_hold_acquire(mzc_hold_issuer *issuer, int32_t id,
								   mzc_read_hold *out, mzc_hold_batch *batch,
								   mzc_error *err);

/* R4. */
extern mzc_status mzc_hold_downgrade(mzc_read_hold *hold, mzc_frontier to,
									 mzc_hold_batch *batch, mzc_error *err);

/* R5/R6: release (and drop, which is the same). */
extern mzc_status mzc_hold_release(mzc_read_hold *hold, mzc_hold_batch *batch,
								   mzc_error *err);

/* R7. */
extern mzc_status mzc_hold_clone(const mzc_read_hold *hold, mzc_read_hold *out,
								 mzc_hold_batch *batch, mzc_error *err);

/* R8: a becomes meet(a, b); b is emptied. */
extern mzc_status mzc_hold_merge(mzc_read_hold *a, mzc_read_hold *b,
								 mzc_hold_batch *batch, mzc_error *err);

#endif							/* MZC_MODEL_HOLDS_H */
