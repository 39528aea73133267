/*-------------------------------------------------------------------------
 *
 * heapsort.h
 *	  An in-place heap sort over caller-defined elements.
 *
 * Part of mzcoord's pure core: C99, no PostgreSQL headers, no allocation.
 * The caller names elements by index and says how they compare and how two
 * are swapped, so one algorithm serves arrays of any element type and
 * permutations of another array alike.
 *
 * IDENTIFICATION
 *	  src/core/heapsort.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_HEAPSORT_H
#define MZC_HEAPSORT_H

#include <stdbool.h>
#include <stdint.h>

/* Does element a sort strictly before element b? */
typedef bool (*mzc_sort_before_fn) (void *ctx, int32_t a, int32_t b);

/* Exchange elements a and b. */
typedef void (*mzc_sort_swap_fn) (void *ctx, int32_t a, int32_t b);

/*
 * Sorts elements 0..n-1 into ascending order: in place, no recursion,
 * O(n log n) whatever the input.  Not stable.
 */
extern void mzc_heap_sort(int32_t n, mzc_sort_before_fn before,
						  mzc_sort_swap_fn swap, void *ctx);

#endif							/* MZC_HEAPSORT_H */
