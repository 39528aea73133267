/*-------------------------------------------------------------------------
 *
 * asof.h
 *	  As-of selection for maintained dataflows at bootstrap (reference 2.6,
 *	  the newest algorithm; scenarios 1-8 of 3.5).
 *
 * Every dataflow (an index, or a materialized view that writes a storage
 * collection) gets bounds [lower .. upper] for its as-of, initially
 * [{0} .. {}] (or [a .. a] when its as-of is already fixed), and a `sealed`
 * flag.  Constraints refine the bounds: a LOWER constraint raises lower, an
 * UPPER constraint lowers upper.  A constraint that cannot be met (it would
 * cross the other bound) moves the bound as far as it can, seals the bounds
 * (later constraints are no-ops) and is counted as a hard or soft failure;
 * selection never aborts (best effort).  Two invariants hold after every
 * step, for every edge input -> x between dataflows:
 *	 (1) lower(input) <= lower(x)		(2) upper(input) <= upper(x)
 * restored by propagating bounds downstream / upstream to a fixpoint.
 *
 * Steps, most important first:
 *	 1. prune dataflows that write a sealed storage collection (upper {});
 *		in read-only mode also those with a storage input whose since is {}
 *		(a dropped collection); then, transitively, every dataflow reading a
 *		pruned one.  Pruned dataflows get as-of {} (not installed).
 *	 2. HARD lower: each storage input's since; propagate downstream.
 *	 3. HARD upper: a dataflow writing storage (since s, upper u) must
 *		resume before u: u - 1, or s if the collection is empty (u <= s);
 *		propagate upstream.
 *	 4. SOFT upper, warmup: W(x) = meet of the uppers of x's storage inputs,
 *		closed over its dataflow inputs; upper <= W(x) - 1; propagate.
 *	 5. SOFT upper, index read policy: policy(W(x)), or policy({now}) if
 *		W(x) is {}; indexes only (a materialized view's policy is ignored);
 *		propagate.
 *	 6. SOFT upper, indexes: {now}; propagate.
 *	 7. as_of = upper (the latest time allowed: reconciliation friendly,
 *		least history to read).
 * Dataflows are visited in array order (downstream passes) and reverse
 * array order (upstream passes), as Materialize visits ids.
 *
 * Termination: bounds only move one way (lower up, upper down) and take
 * values from a finite set, so each fixpoint ends.
 *
 * Memory: the dataflow array carries the caller's inputs, the results and a
 * small workspace; nothing is allocated.
 *
 * IDENTIFICATION
 *	  src/core/asof.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_ASOF_H
#define MZC_ASOF_H

#include "policy.h"

typedef struct mzc_asof_storage
{
	mzc_frontier since;			/* read frontier (what a hold would get) */
	mzc_frontier upper;			/* write frontier */
} mzc_asof_storage;

typedef struct mzc_asof_dataflow
{
	/* Set by the caller. */
	const int32_t *storage_inputs;	/* indexes into the storage array */
	int32_t		nstorage_inputs;
	const int32_t *compute_inputs;	/* indexes into the dataflow array */
	int32_t		ncompute_inputs;
	int32_t		export_storage; /* storage written (an MV), -1: an index */
	bool		has_policy;		/* an index's read policy */
	mzc_policy	policy;
	bool		has_fixed_as_of;	/* bounds start at [a .. a] */
	mzc_frontier fixed_as_of;

	/* Results. */
	mzc_frontier as_of;			/* {} if pruned or sealed */
	bool		pruned;
	mzc_frontier lower;			/* final bounds */
	mzc_frontier upper;
	bool		sealed;

	/* Workspace; callers need not initialise it. */
	mzc_frontier warm;
	int32_t		dfs_state;
	int32_t		dfs_cursor;
	int32_t		dfs_parent;
} mzc_asof_dataflow;

typedef struct mzc_asof_request
{
	const mzc_asof_storage *storage;
	int32_t		nstorage;
	mzc_asof_dataflow *dataflows;
	int32_t		ndataflows;
	mzc_ts		now;			/* current time */
	bool		read_only;		/* 0dt read-only mode */
} mzc_asof_request;

typedef struct mzc_asof_stats
{
	int32_t		hard_failures;	/* hard constraints that could not be met */
	int32_t		soft_failures;
	int64_t		passes;			/* propagation passes over all dataflows */
	int32_t		invalid_dataflow;	/* on MZC_ERR_INVALID: which, or -1 */
} mzc_asof_stats;

/*
 * Selects as-ofs.  Fails only on a malformed request (MZC_ERR_INVALID: an
 * index out of range, a negative time, an invalid policy, a cycle between
 * dataflows; stats->invalid_dataflow names the dataflow), never because a
 * constraint cannot be met.  stats may be NULL.
 */
extern mzc_status mzc_select_as_ofs(mzc_asof_request *req,
									mzc_asof_stats *stats, mzc_error *err);

#endif							/* MZC_ASOF_H */
