/*-------------------------------------------------------------------------
 *
 * schedule.h
 *	  Retain history windows and refresh schedules of catalog items:
 *	  their validation and canonical forms.
 *
 * IDENTIFICATION
 *	  src/catalog/schedule.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_SCHEDULE_H
#define MZCOORD_SCHEDULE_H

#include "postgres.h"

#include "utils/array.h"
#include "utils/timestamp.h"

extern int64 mzcoord_retain_history_ms(Interval *iv);
extern ArrayType *mzcoord_refresh_canonical(ArrayType *clauses);
extern bool mzcoord_refresh_next(ArrayType *schedule, int64 as_of,
								 int64 after, int64 *next);

#endif							/* MZCOORD_SCHEDULE_H */
