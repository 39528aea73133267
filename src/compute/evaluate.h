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

#include "nodes/parsenodes.h"
#include "tcop/dest.h"
#include "utils/snapshot.h"

#include "rowimage.h"

/* How mzcoord_evaluate_reads reads one relation entry of a query. */
typedef struct MzcEntryRead
{
	int64		at;				/* the time */
	int			delta;			/* 0: contents as of at; +1 / -1: the
								 * insertions / retractions at exactly at */
} MzcEntryRead;

extern Query *mzcoord_analyze_definition(const char *definition);
extern void mzcoord_count_result_row(MzcRowSet *set, TupleTableSlot *slot,
									 int64 sign);
extern int64 mzcoord_evaluate_as_of(const char *definition, int64 at,
									MzcRowSet *set, int64 sign,
									int *direct, int *via_history);
extern void mzcoord_evaluate_reads(Query *query, const char *text,
								   const MzcEntryRead *reads,
								   DestReceiver *dest, int *direct,
								   int *via_history);
extern int	mzcoord_read_history_rows(RangeTblEntry *rte, int64 lo, int64 hi,
									  bool base);
extern int	mzcoord_read_values(RangeTblEntry *rte, List *values_lists);
extern bool mzcoord_shows_contents_at(Oid relid, int64 at, Snapshot snapshot);
extern void mzcoord_evaluate_query(Query *query, const char *text,
								   Snapshot snapshot, DestReceiver *dest);

#endif							/* MZCOORD_EVALUATE_H */
