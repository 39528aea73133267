/*-------------------------------------------------------------------------
 *
 * incremental.h
 *	  Refreshing a continual materialized view from its inputs' updates
 *	  (incremental.c).
 *
 * IDENTIFICATION
 *	  src/compute/incremental.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_INCREMENTAL_H
#define MZCOORD_INCREMENTAL_H

#include "postgres.h"

#include "access/tupdesc.h"

#include "history.h"
#include "rowimage.h"

/* A view's query prepared for the incremental path (opaque). */
typedef struct MzcIncremental MzcIncremental;

extern MzcIncremental *mzcoord_incremental_prepare(const char *definition,
												   TupleDesc desc);
extern int	mzcoord_incremental_relations(const MzcIncremental *inc);
extern bool mzcoord_incremental_needs_contents(const MzcIncremental *inc);
extern bool mzcoord_incremental_step(MzcIncremental *inc,
									 const MzcHistory *h, MzcRowSet *prev,
									 int64 t, int64 *changed);
extern int64 mzcoord_incremental_interval(MzcIncremental *inc,
											 const MzcHistory *h,
											 MzcRowSet *prev, int64 lo,
											 int64 hi, int64 *changed,
											 int *ntimes);
extern void mzcoord_incremental_forget(MzcIncremental *inc);

#endif							/* MZCOORD_INCREMENTAL_H */
