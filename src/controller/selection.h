/*-------------------------------------------------------------------------
 *
 * selection.h
 *	  Timestamp selection for reads (selection.c): the selection behind
 *	  mzcoord.select_timestamp() and mzcoord.explain_timestamp(), whose SQL
 *	  faces are in funcs/selectfuncs.c, and the data plane's reachability
 *	  check and completeness wait.
 *
 * IDENTIFICATION
 *	  src/controller/selection.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_SELECTION_H
#define MZCOORD_SELECTION_H

#include "postgres.h"

#include "acquire.h"
#include "frontier.h"
#include "ids.h"
#include "tsselect.h"

/* Why a wait for a time could never end (see target_reach_locked). */
typedef enum MzcTsReach
{
	MZC_TS_REACHABLE,
	MZC_TS_AT_MAX,
	MZC_TS_BEYOND_FUTURE
} MzcTsReach;

/*
 * One selection: what was asked (mzcoord_ts_call_init), then the core's
 * decision (mzcoord_ts_call_select or _explain).  Backend-local.
 */
typedef struct MzcTsCall
{
	MzcTarget  *targets;
	int			n;
	mzc_isolation isolation;
	mzc_when_kind when;
	mzc_ts		when_ts;
	Oid			fn_oid;			/* the asking SQL function, for readiness */
	/* results */
	mzc_ts_input *inputs;
	mzc_ts_constraint *lower;
	int32	   *blocking;
	mzc_ts_result res;
	mzc_status	status;
	mzc_error	err;
	mzc_ts		oracle_ts;
	mzc_ts		table_upper;	/* read after oracle_ts was closed */
	int			bad;
	/* select_timestamp: refuse a time no wait can reach */
	bool		check_reach;
	mzc_ts		table_limit;
	int			unreachable;	/* the target, or -1 */
	MzcTsReach	unreachable_why;
	/* on a hot standby: each target's kind */
	MzcKind    *kinds;
} MzcTsCall;

/* Start a selection over targets[0..n) (mzcoord_targets_from_array). */
extern void mzcoord_ts_call_init(MzcTsCall *c, MzcTarget *targets, int n,
								 mzc_isolation isolation, mzc_when_kind when,
								 mzc_ts when_ts, Oid fn_oid);

/*
 * Decide, take the read holds at the chosen time, wait until every input
 * is complete there; returns the time.  Raises what makes it impossible.
 */
extern mzc_ts mzcoord_ts_call_select(MzcTsCall *c);

/* Decide only (no hold, no wait), into c->res; raises as _select does. */
extern void mzcoord_ts_call_explain(MzcTsCall *c);

/*
 * Refuse at once (22003, 22023) a read of relid at `at` that can never
 * become complete; call before taking holds.
 */
extern void mzcoord_ctl_check_reachable(Oid relid, mzc_ts at);

/* Wait, cancellably, until relid is complete at `at` (at < upper). */
extern void mzcoord_ctl_wait_complete(Oid relid, mzc_ts at);

#endif							/* MZCOORD_SELECTION_H */
