/*
 * Helpers shared by the JSON fuzz targets: a failed check aborts (which
 * libFuzzer reports with the input), and one growing buffer serves as the
 * core's arena from input to input.
 */
#ifndef MZC_FUZZ_UTIL_H
#define MZC_FUZZ_UTIL_H

#include <stdio.h>
#include <stdlib.h>

static const char *fuzz_target_name;
static char *arena_mem;
static size_t arena_cap;

static void
check(int cond, const char *what)
{
	if (!cond)
	{
		fprintf(stderr, "%s: %s\n", fuzz_target_name, what);
		abort();
	}
}

static char *
arena_of(size_t size)
{
	if (size > arena_cap)
	{
		free(arena_mem);
		arena_mem = malloc(size);
		check(arena_mem != NULL, "out of memory");
		arena_cap = size;
	}
	return arena_mem;
}

#endif							/* MZC_FUZZ_UTIL_H */
