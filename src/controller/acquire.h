/*-------------------------------------------------------------------------
 *
 * acquire.h
 *	  Resolving the relations of a SQL call to collections, and taking read
 *	  holds on them (acquire.c).
 *
 * IDENTIFICATION
 *	  src/controller/acquire.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_ACQUIRE_H
#define MZCOORD_ACQUIRE_H

#include "postgres.h"

#include "utils/array.h"

#include "frontier.h"

/* One relation of a call: its slot and its frontiers when it was resolved. */
typedef struct MzcTarget
{
	Oid			relid;
	int32		slot;
	mzc_frontier since;
	mzc_frontier upper;
	int64		gid;
} MzcTarget;

/* Before the lock: parse and check a regclass[] argument. */
extern MzcTarget *mzcoord_targets_from_array(ArrayType *arr, int *n);

/* Under the controller lock (any mode). */
extern int	mzcoord_resolve_targets_locked(MzcTarget *t, int n,
										   mzc_ts table_upper);
extern bool mzcoord_targets_still_valid_locked(const MzcTarget *t, int n,
											   mzc_ts ts);

/* After the lock: raise what was found. */
extern char *mzcoord_qualified_relname(Oid relid);
extern void mzcoord_report_not_registered(Oid relid);
extern void mzcoord_report_targets_violation(MzcTarget *t, int n, mzc_ts ts);

/*
 * The data plane: hold relid at `at` for a read in this transaction
 * (returns true if an active lease of the caller holds it instead), and
 * check after taking the read's snapshot that the since is still at or
 * below `at`.
 */
extern bool mzcoord_ctl_hold_for_read(Oid relid, mzc_ts at);
extern void mzcoord_ctl_check_read(Oid relid, mzc_ts at);

#endif							/* MZCOORD_ACQUIRE_H */
