/*-------------------------------------------------------------------------
 *
 * frontier.h
 *	  Timestamps and frontiers over a totally ordered time (F1-F7).
 *
 * Part of mzcoord's pure core: C99, no PostgreSQL headers, no allocation.
 * A timestamp is an integer in [0, 2^63-1] (milliseconds since the Unix
 * epoch in the default timeline).  A frontier over a total order is either
 * one timestamp {t} or the empty frontier {}, which is the top of the lattice:
 * {t} <= {} for every t.  No sentinel value stands for {}: the flag does.
 *
 * IDENTIFICATION
 *	  src/core/frontier.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_FRONTIER_H
#define MZC_FRONTIER_H

#include <stdbool.h>
#include <stdint.h>

typedef int64_t mzc_ts;

#define MZC_TS_MIN ((mzc_ts) 0)
#define MZC_TS_MAX ((mzc_ts) INT64_MAX)

typedef struct mzc_frontier
{
	bool		empty;			/* true: {} (sealed / nothing readable) */
	mzc_ts		ts;				/* the element when !empty; 0 otherwise */
} mzc_frontier;

static inline bool
mzc_ts_valid(int64_t t)
{
	return t >= MZC_TS_MIN;
}

static inline mzc_frontier
mzc_frontier_at(mzc_ts t)
{
	mzc_frontier f;

	f.empty = false;
	f.ts = t;
	return f;
}

static inline mzc_frontier
mzc_frontier_empty(void)
{
	mzc_frontier f;

	f.empty = true;
	f.ts = 0;
	return f;
}

/* F3: a <= b.  {t} <= {} always, {} <= {t} never. */
extern bool mzc_frontier_le(mzc_frontier a, mzc_frontier b);
extern bool mzc_frontier_eq(mzc_frontier a, mzc_frontier b);
extern bool mzc_frontier_lt(mzc_frontier a, mzc_frontier b);

/* a <= {t}: is time t beyond (or at) frontier a? */
extern bool mzc_frontier_le_ts(mzc_frontier a, mzc_ts t);

/* F4: meet (least; {} is the identity) and join (greatest; {} absorbs). */
extern mzc_frontier mzc_frontier_meet(mzc_frontier a, mzc_frontier b);
extern mzc_frontier mzc_frontier_join(mzc_frontier a, mzc_frontier b);

/* F7: {t} -> {t-1}, {0} -> {0}, {} -> {}. */
extern mzc_frontier mzc_frontier_step_back(mzc_frontier a);

/* F6: {u} -> u-1 (saturating at 0); {} -> MZC_TS_MAX. */
extern mzc_ts mzc_largest_not_in_advance_of_upper(mzc_frontier upper);

/* Saturating arithmetic on timestamps. */
extern mzc_ts mzc_ts_sub(mzc_ts t, int64_t d);
extern mzc_ts mzc_ts_add(mzc_ts t, int64_t d);

#endif							/* MZC_FRONTIER_H */
