/*-------------------------------------------------------------------------
 *
 * evaluate.h
 *	  Evaluating a materialized view's query as of a time (evaluate.c).
 *
 * IDENTIFICATION
 *	  src/compute/evaluate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_EVALUATE_H
#define MZCOORD_EVALUATE_H

#include "postgres.h"

#include "rowimage.h"

extern int64 mzcoord_evaluate_as_of(const char *definition, int64 at,
									MzcRowSet *set, int64 sign,
									int *direct, int *via_history);

#endif							/* MZCOORD_EVALUATE_H */
