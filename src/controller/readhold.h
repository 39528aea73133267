/*-------------------------------------------------------------------------
 *
 * readhold.h
 *	  Read holds: the shared hold pool with its per-backend and per-role
 *	  limits, and this backend's own transaction holds (readhold.c).
 *
 * Functions ending in _locked expect the controller lock held exclusively
 * (controller.h); the others take it themselves.
 *
 * IDENTIFICATION
 *	  src/controller/readhold.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_READHOLD_H
#define MZCOORD_READHOLD_H

#include "postgres.h"

#include "datatype/timestamp.h"

#include "frontier.h"

/* Why mzcoord_acquire_holds_locked() took no hold. */
typedef enum MzcHoldResult
{
	MZC_HOLD_OK,
	MZC_HOLD_NO_ENTRIES,		/* all mzcoord.max_holds entries in use */
	MZC_HOLD_NO_NODES,			/* the count pool is full */
	MZC_HOLD_BACKEND_LIMIT,		/* mzcoord.max_holds_per_backend */
	MZC_HOLD_ROLE_LIMIT			/* mzcoord.max_holds_per_role */
} MzcHoldResult;

/* What mzcoord_acquire_holds_locked() found, for the error raised later. */
typedef struct MzcHoldFailure
{
	MzcHoldResult result;
	Oid			role;
	int32		held;			/* holds already charged */
	int32		limit;
} MzcHoldFailure;

/* This backend's transaction holds */
extern void mzcoord_reserve_local_holds(int n);
extern int	mzcoord_local_hold_count(void);
extern bool mzcoord_local_holds_cover(uint64 epoch, int32 slot, mzc_ts at);
extern void mzcoord_release_local_holds(void);
extern void mzcoord_release_local_holds_locked(void);

/* Taking holds */
extern bool mzcoord_acquire_holds_locked(const int32 *slots, const mzc_ts *times,
										 int n, TimestampTz now,
										 MzcHoldFailure *f);
extern void mzcoord_report_no_hold_space(const MzcHoldFailure *f);
extern mzc_ts mzcoord_ctl_hold_gids(const int64 *gids, int n);

/* Validation */
extern int64 mzcoord_holds_charged_locked(void);

#endif							/* MZCOORD_READHOLD_H */
