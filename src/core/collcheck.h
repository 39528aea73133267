/*-------------------------------------------------------------------------
 *
 * collcheck.h
 *	  Checking every invariant of a collection set.
 *
 * IDENTIFICATION
 *	  src/core/collcheck.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_COLLCHECK_H
#define MZC_COLLCHECK_H

#include "collections.h"

/*
 * Checks every invariant: counted lists, the implied count, each dependent's
 * count on its dependencies, ndependents, pool accounting (assuming the pool
 * serves this set only), free list, and that no internal error occurred.
 * O(capacity + pool); up to 4096 slots it also counts every slot's dependents
 * exactly, which is quadratic, above that it compares totals.
 */
extern mzc_status mzc_colls_validate(const mzc_collections *set,
									 mzc_error *err);

#endif							/* MZC_COLLCHECK_H */
