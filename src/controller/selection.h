/*-------------------------------------------------------------------------
 *
 * selection.h
 *	  Timestamp selection for reads (selection.c); its SQL functions,
 *	  select_timestamp and explain_timestamp, have no C callers.
 *
 * IDENTIFICATION
 *	  src/controller/selection.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_SELECTION_H
#define MZCOORD_SELECTION_H

#include "postgres.h"

#include "frontier.h"

/* Wait, cancellably, until relid is complete at `at` (at < upper). */
extern void mzcoord_ctl_wait_complete(Oid relid, mzc_ts at);

#endif							/* MZCOORD_SELECTION_H */
