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

/*
 * Refuse at once (22003, 22023) a read of relid at `at` that can never
 * become complete; call before taking holds.
 */
extern void mzcoord_ctl_check_reachable(Oid relid, mzc_ts at);

/* Wait, cancellably, until relid is complete at `at` (at < upper). */
extern void mzcoord_ctl_wait_complete(Oid relid, mzc_ts at);

#endif							/* MZCOORD_SELECTION_H */
