/*-------------------------------------------------------------------------
 *
 * implications.h
 *	  Catalog implications: fold one catalog change into per-item
 *	  implications and order them (reference I1, I2, I5, I6).
 *
 * A catalog change (a batch) is everything one statement did to the item
 * rows: retracted rows (diff -1) and added rows (diff +1), as the statement
 * triggers saw them.  mzc_impl_fold() consolidates them and folds the rest
 * per item:
 *
 *	 I1  Rows of one item with equal contents cancel out (their diffs are
 *		 summed; what equal means is the caller's, through a callback).
 *	 I2  Per item, what is left is one addition (ADDED), one retraction
 *		 (DROPPED) or one of each (ALTERED).  A retraction and an addition
 *		 that differ only in the relation, which the retracted row did not
 *		 have yet, are the implications filling in a new item's relation:
 *		 no implication.  More than one net addition (or retraction) of an
 *		 item is an error (MZC_ERR_STATE); the smallest such id is reported.
 *
 * mzc_impl_plan() orders what the fold left into steps:
 *
 *	 I5  Creations first, by kind: sources, tables, materialized views,
 *		 indexes, sinks; each kind by id, except that a materialized view
 *		 comes after the views of the batch it reads (in waves: every view
 *		 whose inputs are all created, by id).  A view that reads itself or
 *		 a cycle of views is MZC_ERR_INVALID; `stuck` lists the views left.
 *		 Then the read policies of everything created, in creation order
 *		 (only once every creation is done).
 *	 I4  Alterations, by id.
 *	 I6  Drops last (create before drop), readers first: sinks, indexes,
 *		 materialized views (in waves: every view no other dropped view
 *		 reads, by id descending; if none is free, all the rest, so that the
 *		 caller's drop reports the dependents), tables, sources; each kind by
 *		 id descending.
 *
 * Item ids are the numbers of global ids ("u123" is 123), parsed once with
 * mzc_gid_parse(), so that u9 sorts before u10.
 *
 * No globals, no allocation: the caller provides every array (sized by the
 * number of rows).  Errors are values.  A failing call leaves its outputs
 * unspecified and changes nothing else.
 *
 * IDENTIFICATION
 *	  src/core/implications.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_IMPLICATIONS_H
#define MZC_IMPLICATIONS_H

#include "status.h"

typedef enum mzc_item_kind
{
	MZC_ITEM_TABLE = 0,
	MZC_ITEM_SOURCE,
	MZC_ITEM_MATERIALIZED_VIEW,
	MZC_ITEM_INDEX,
	MZC_ITEM_SINK
} mzc_item_kind;

#define MZC_ITEM_NKINDS 5

/* The kind named as in the catalog ("materialized_view"); false if none. */
extern bool mzc_item_kind_parse(const char *name, mzc_item_kind *kind);

/*
 * A global id "u<N>" (N in 1..INT64_MAX, no leading zero, no sign) to N.
 * False, and *num untouched, for anything else.
 */
extern bool mzc_gid_parse(const char *text, int64_t *num);

/* One row of a catalog change. */
typedef struct mzc_impl_row
{
	int64_t		id;				/* item id number, >= 1 */
	mzc_item_kind kind;
	int32_t		diff;			/* -1 retracted, +1 added */
	bool		relation_null;	/* the row's relation is not filled in */
} mzc_impl_row;

/*
 * Are rows a and b (indexes into the caller's rows, both of the same item)
 * equal?  With except_relation, the relation column is left out.  Called
 * only for rows of one item.
 */
typedef bool (*mzc_impl_same_fn) (void *ctx, int32_t a, int32_t b,
								  bool except_relation);

typedef enum mzc_impl_action
{
	MZC_IMPL_ADDED = 1,
	MZC_IMPL_DROPPED,
	MZC_IMPL_ALTERED
} mzc_impl_action;

/* The implication of one item. */
typedef struct mzc_impl
{
	mzc_impl_action action;
	int64_t		id;
	mzc_item_kind kind;			/* of the added row; dropped: the retracted */
	int32_t		old_row;		/* retracted row, MZC_IMPL_NONE if ADDED */
	int32_t		new_row;		/* added row, MZC_IMPL_NONE if DROPPED */

	/* Internal to mzc_impl_plan(); callers must not rely on these. */
	bool		pending;
	bool		blocked;
} mzc_impl;

#define MZC_IMPL_NONE (-1)

/* What mzc_impl_fold() found. */
typedef struct mzc_impl_fold_result
{
	int32_t		nimpls;			/* implications written, by id */
	int32_t		nadded;
	int32_t		ndropped;
	int32_t		naltered;
	bool		added_filled;	/* some ADDED, and every one has a relation */

	/* On MZC_ERR_STATE: the item, and whether it was added more than once. */
	int64_t		conflict_id;
	bool		conflict_added;
} mzc_impl_fold_result;

/*
 * I1 and I2 over rows[0..nrows-1].  impls must hold nrows entries and
 * scratch nrows ints.  Fails with MZC_ERR_INVALID for a bad row (id < 1,
 * unknown kind, diff not +-1) and MZC_ERR_STATE for an item added or
 * dropped more than once.
 */
extern mzc_status mzc_impl_fold(const mzc_impl_row *rows, int32_t nrows,
								mzc_impl_same_fn same, void *ctx,
								int32_t *scratch, mzc_impl *impls,
								mzc_impl_fold_result *result,
								mzc_error *err);

/* "reader reads input", both item ids. */
typedef struct mzc_impl_read
{
	int64_t		reader;
	int64_t		input;
} mzc_impl_read;

typedef enum mzc_impl_step_kind
{
	MZC_STEP_CREATE = 1,
	MZC_STEP_INIT_POLICY,
	MZC_STEP_ALTER,
	MZC_STEP_DROP
} mzc_impl_step_kind;

typedef struct mzc_impl_step
{
	mzc_impl_step_kind kind;
	int32_t		impl;			/* index into impls */
} mzc_impl_step;

/* Enough steps for any plan of nimpls implications. */
#define MZC_IMPL_MAX_STEPS(nimpls) (2 * (nimpls))

/*
 * I4-I6 over what mzc_impl_fold() wrote (impls sorted by id, nimpls of
 * them).  reads lists what the materialized views of the batch read:
 * between two ADDED views it orders their creation (a view reading itself
 * is a cycle), between two DROPPED views their drop (reading itself does
 * not count); every other pair is ignored.  steps must hold `capacity`
 * entries (MZC_IMPL_MAX_STEPS(nimpls) always do), stuck nimpls entries.
 * On MZC_ERR_INVALID (a cycle), stuck[0..*nstuck-1] are the indexes of the
 * views that could not be created, by id.
 */
extern mzc_status mzc_impl_plan(mzc_impl *impls, int32_t nimpls,
								const mzc_impl_read *reads, int32_t nreads,
								mzc_impl_step *steps, int32_t capacity,
								int32_t *nsteps, int32_t *stuck,
								int32_t *nstuck, mzc_error *err);

#endif							/* MZC_IMPLICATIONS_H */
