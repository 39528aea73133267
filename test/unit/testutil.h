/*
 * Helpers shared by the cmocka unit tests of src/core: frontier shorthands
 * and a small deterministic random number generator for property tests
 * (fixed seeds, so every run checks the same cases).
 */
#ifndef MZC_TESTUTIL_H
#define MZC_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "frontier.h"

#define AT(t) mzc_frontier_at(t)
#define EMPTY mzc_frontier_empty()

static inline void
assert_frontier_is(mzc_frontier f, mzc_frontier want)
{
	if (!mzc_frontier_eq(f, want))
		fail_msg("frontier %s%lld, expected %s%lld",
				 f.empty ? "{}" : "", f.empty ? 0LL : (long long) f.ts,
				 want.empty ? "{}" : "", want.empty ? 0LL : (long long) want.ts);
}

#define assert_frontier_at(f, t) assert_frontier_is((f), AT(t))
#define assert_frontier_empty(f) assert_frontier_is((f), EMPTY)

/* xorshift64*: deterministic, good enough for test case generation. */
typedef struct test_rng
{
	uint64_t	s;
} test_rng;

static inline void
rng_seed(test_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t
rng_next(test_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform-ish integer in [lo, hi]. */
static inline int64_t
rng_range(test_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t) (rng_next(r) % (uint64_t) (hi - lo + 1));
}

static inline int
rng_chance(test_rng *r, int percent)
{
	return (int) (rng_next(r) % 100) < percent;
}

#endif							/* MZC_TESTUTIL_H */
