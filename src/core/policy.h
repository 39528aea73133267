/*-------------------------------------------------------------------------
 *
 * policy.h
 *	  Read policies (P1-P4, P6).
 *
 * A read policy maps a collection's write frontier ("upper") to the since it
 * would like to have: its implied capability.
 *
 *	 NO_POLICY(s)		-> s, whatever the upper (a fresh collection, S2)
 *	 VALID_FROM(f)		-> f, whatever the upper; "disabled" is VALID_FROM({0})
 *						   and a dropped collection gets VALID_FROM({})
 *	 LAG(lag, g)		-> {} maps to {0}; lag 0 maps {u} to {u}; otherwise
 *						   t = max(u - lag, 0) rounded down to a multiple of
 *						   min(lag, g)   (P2, P4)
 *	 STEP_BACK			-> {} maps to {0}; {u} to {u-1} (0 stays 0) (P3)
 *	 MULTIPLE(p1..pn)	-> the meet (least) of the members' frontiers
 *
 * An mzc_policy is a self-contained value without pointers, so that it can
 * be copied into shared memory: a MULTIPLE policy keeps up to
 * MZC_POLICY_MAX_MEMBERS simple members inline.  The library builds no
 * MULTIPLE policy; the unit tests build them with mzc_policy_multiple()
 * (test/unit/model_policy.h), as they do retain-history windows (P5).
 *
 * P6, the implied-capability rule: a new policy frontier replaces the implied
 * capability only if it is not behind it.  mzc_implied_advance() applies it.
 *
 * IDENTIFICATION
 *	  src/core/policy.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_POLICY_H
#define MZC_POLICY_H

#include "frontier.h"
#include "status.h"

/* P5: since granularity and the default retain-history window, in ms. */
#define MZC_SINCE_GRANULARITY_MS 1000
#define MZC_DEFAULT_WINDOW_MS 1000

#define MZC_POLICY_MAX_MEMBERS 4

typedef enum mzc_policy_kind
{
	MZC_POLICY_NO_POLICY = 0,	/* constant: the initial since */
	MZC_POLICY_VALID_FROM,		/* constant frontier */
	MZC_POLICY_LAG,				/* lag_writes_by(lag_ms, granularity_ms) */
	MZC_POLICY_STEP_BACK,		/* upper - 1 */
	MZC_POLICY_MULTIPLE			/* meet of the members */
} mzc_policy_kind;

/* A simple (non-MULTIPLE) policy. */
typedef struct mzc_policy_term
{
	mzc_policy_kind kind;		/* never MZC_POLICY_MULTIPLE */
	mzc_frontier frontier;		/* NO_POLICY and VALID_FROM */
	int64_t		lag_ms;			/* LAG: >= 0 */
	int64_t		granularity_ms; /* LAG: >= 1 */
} mzc_policy_term;

typedef struct mzc_policy
{
	mzc_policy_kind kind;
	mzc_frontier frontier;		/* NO_POLICY and VALID_FROM */
	int64_t		lag_ms;			/* LAG */
	int64_t		granularity_ms; /* LAG */
	int32_t		nmembers;		/* MULTIPLE: 1 .. MZC_POLICY_MAX_MEMBERS */
	mzc_policy_term members[MZC_POLICY_MAX_MEMBERS];
} mzc_policy;

/* Constructors.  The infallible ones always produce a valid policy. */
extern mzc_policy mzc_policy_no_policy(mzc_frontier initial_since);
extern mzc_policy mzc_policy_valid_from(mzc_frontier f);
extern mzc_policy mzc_policy_disabled(void);	/* VALID_FROM({0}) */
extern mzc_policy mzc_policy_step_back(void);

/* LAG; fails unless lag_ms >= 0 and granularity_ms >= 1. */
extern mzc_status mzc_policy_lag(int64_t lag_ms, int64_t granularity_ms,
								 mzc_policy *out, mzc_error *err);

/* Checks a policy built by hand (e.g. read back from shared memory). */
extern mzc_status mzc_policy_validate(const mzc_policy *p, mzc_error *err);

/*
 * P1-P4: the policy's frontier for the given upper.  Defined for every
 * validated policy; on an invalid one it never crashes (a granularity < 1 is
 * treated as 1, a negative lag as 0).
 */
extern mzc_frontier mzc_policy_frontier(const mzc_policy *p, mzc_frontier upper);

/*
 * The least upper after upper.ts at which the policy's frontier may be
 * later than it is at upper: until the upper reaches it, the policy alone
 * cannot move a since.  MZC_TS_MAX when no upper moves it (no policy,
 * valid from, an empty upper).  Exact for one term; for a multiple policy
 * the earliest of its members' (never late).
 */
extern mzc_ts mzc_policy_next_change(const mzc_policy *p, mzc_frontier upper);

/* P2 on its own: lag_writes_by(lag_ms, granularity_ms) applied to upper. */
extern mzc_frontier mzc_lag_frontier(mzc_frontier upper, int64_t lag_ms,
									 int64_t granularity_ms);

/*
 * P6: replace *implied by proposed only if *implied <= proposed.  Returns
 * true if *implied changed.
 */
extern bool mzc_implied_advance(mzc_frontier *implied, mzc_frontier proposed);

#endif							/* MZC_POLICY_H */
