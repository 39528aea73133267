/*-------------------------------------------------------------------------
 *
 * columns.h
 *	  Columns of histories: their types, following column changes of
 *	  registered relations, and reconciling a relation with its history.
 *
 * IDENTIFICATION
 *	  src/storage/columns.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_COLUMNS_H
#define MZCOORD_COLUMNS_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "rowimage.h"

extern char *mzcoord_history_type_sql(Form_pg_attribute att, Oid *typid,
									  int32 *typmod);
extern char *mzcoord_column_changes(Relation rel, Relation hrel,
									bool *rewrites, char **unsafe);

/*
 * Reconciling a relation with its history: a row set holding the relation's
 * contents, from which the history's contents are subtracted; what remains
 * is where the two differ.
 */
typedef struct MzcReconcile
{
	MzcRowSet  *set;
	TupleDesc	desc;
} MzcReconcile;

extern void mzcoord_reconcile_begin(MzcReconcile *st, Relation rel,
									TupleDesc desc, Snapshot snapshot);
extern void mzcoord_reconcile_subtract(void *arg, TupleTableSlot *row,
									   int64 n);

#endif							/* MZCOORD_COLUMNS_H */
