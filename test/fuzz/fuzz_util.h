/*
 * Helpers shared by the struct-API fuzz targets: a failed check aborts
 * (which libFuzzer reports with the input), and a reader decodes the input
 * bytes into the values of a request.
 *
 * Decoding never fails: past the end of the input every byte reads as 0, so
 * a short input is a small request, and every input is some request.
 *
 * A timestamp is one byte b:
 *	 0x00..0xf7  the value b (small times, so that bounds collide often)
 *	 0xf8		 MZC_TS_MAX			0xf9  MZC_TS_MAX - 1
 *	 0xfa		 -1					0xfb  INT64_MIN
 *	 0xfc..0xff  the next 8 bytes, big-endian (any int64)
 * A frontier is a byte f followed, when f is even, by a timestamp: odd f is
 * the empty frontier {}.  test/fuzz/make_seeds.py writes seeds in this form.
 */
#ifndef MZC_FUZZ_UTIL_H
#define MZC_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "frontier.h"

static const char *fuzz_target_name;

static void
check(int cond, const char *what)
{
	if (!cond)
	{
		fprintf(stderr, "%s: %s\n", fuzz_target_name, what);
		abort();
	}
}

typedef struct fuzz_reader
{
	const uint8_t *p;
	size_t		left;
} fuzz_reader;

static uint8_t
fz_byte(fuzz_reader *r)
{
	if (r->left == 0)
		return 0;
	r->left--;
	return *r->p++;
}

/* A value in [0, n), n >= 1. */
static int32_t
fz_below(fuzz_reader *r, int32_t n)
{
	return (int32_t) (fz_byte(r) % (uint32_t) n);
}

static mzc_ts
fz_ts(fuzz_reader *r)
{
	uint8_t		b = fz_byte(r);
	uint64_t	u = 0;
	int			i;

	if (b < 0xf8)
		return b;
	switch (b)
	{
		case 0xf8:
			return MZC_TS_MAX;
		case 0xf9:
			return MZC_TS_MAX - 1;
		case 0xfa:
			return -1;
		case 0xfb:
			return INT64_MIN;
		default:
			for (i = 0; i < 8; i++)
				u = (u << 8) | fz_byte(r);
			return (mzc_ts) u;
	}
}

static mzc_frontier
fz_frontier(fuzz_reader *r)
{
	if (fz_byte(r) & 1)
		return mzc_frontier_empty();
	return mzc_frontier_at(fz_ts(r));
}

static int
frontier_negative(mzc_frontier f)
{
	return !f.empty && f.ts < 0;
}

#endif							/* MZC_FUZZ_UTIL_H */
