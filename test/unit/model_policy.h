/*-------------------------------------------------------------------------
 *
 * model_policy.h
 *	  Multiple policies and retain-history windows (P5), for the unit tests.
 *
 * The library builds neither: an item's retain history is a number of
 * milliseconds (src/catalog/schedule.c) that becomes a LAG policy, and no
 * item has a MULTIPLE policy.  The core still evaluates and validates
 * MULTIPLE policies (src/core/policy.h); these constructors build them and
 * the windows of reference 3.2 for test_policy.c.
 *
 * IDENTIFICATION
 *	  test/unit/model_policy.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_MODEL_POLICY_H
#define MZC_MODEL_POLICY_H

#include "policy.h"

/*
 * MULTIPLE over members[0..n-1] (the caller's array is only read).  Nested
 * MULTIPLE members are flattened.  Fails if n < 1, a member is invalid, or
 * more than MZC_POLICY_MAX_MEMBERS simple members result.
 */
extern mzc_status mzc_policy_multiple(const mzc_policy *members, int32_t n,
									  mzc_policy *out, mzc_error *err);

/* P5: retain-history ("compaction window") values. */
typedef enum mzc_window_kind
{
	MZC_WINDOW_DEFAULT = 0,		/* RESET (RETAIN HISTORY) */
	MZC_WINDOW_DISABLED,		/* compaction disabled */
	MZC_WINDOW_DURATION			/* RETAIN HISTORY FOR <ms> */
} mzc_window_kind;

typedef struct mzc_window
{
	mzc_window_kind kind;
	int64_t		ms;				/* DURATION only, >= 0 */
} mzc_window;

/* Default -> lag 1000/1000, Duration(d) -> lag d/1000, Disabled -> {0}. */
extern mzc_status mzc_window_policy(mzc_window w, mzc_policy *out,
									mzc_error *err);

/* Default -> 1000, Disabled -> MZC_TS_MAX, Duration(d) -> d. */
extern mzc_ts mzc_window_comparable_ts(mzc_window w);

/* Default -> t-1000, Disabled -> 0, Duration(d) -> t-d (saturating). */
extern mzc_ts mzc_window_lag_from(mzc_window w, mzc_ts t);

#endif							/* MZC_MODEL_POLICY_H */
