/*-------------------------------------------------------------------------
 *
 * heapsort.c
 *	  An in-place heap sort over caller-defined elements.
 *
 * The core sorts without allocating and without recursion, so that its
 * worst case is bounded whatever a request holds; the counted frontiers and
 * the fold of implications both sort this way.
 *
 * IDENTIFICATION
 *	  src/core/heapsort.c
 *
 *-------------------------------------------------------------------------
 */
#include "heapsort.h"

static void
sift_down(int32_t root, int32_t n, mzc_sort_before_fn before,
		  mzc_sort_swap_fn swap, void *ctx)
{
	for (;;)
	{
		int32_t		child = 2 * root + 1;

		if (child >= n)
			return;
		if (child + 1 < n && before(ctx, child, child + 1))
			child++;
		if (!before(ctx, root, child))
			return;
		swap(ctx, root, child);
		root = child;
	}
}

void
mzc_heap_sort(int32_t n, mzc_sort_before_fn before, mzc_sort_swap_fn swap,
			  void *ctx)
{
	int32_t		i;

	for (i = n / 2 - 1; i >= 0; i--)
		sift_down(i, n, before, swap, ctx);
	for (i = n - 1; i > 0; i--)
	{
		swap(ctx, 0, i);
		sift_down(0, i, before, swap, ctx);
	}
}
