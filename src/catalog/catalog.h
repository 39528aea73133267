/*-------------------------------------------------------------------------
 *
 * catalog.h
 *	  The catalog plane: validation and analysis shared by the DDL
 *	  functions (ddl.c), the catalog implications and the SQL
 *	  helpers they call (catalog.c), and the statement batching of
 *	  changes to mzcoord.items (trigger.c).
 *
 * IDENTIFICATION
 *	  src/catalog/catalog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_CATALOG_H
#define MZCOORD_CATALOG_H

#include "postgres.h"

#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"
#include "utils/timestamp.h"

#include "ids.h"


/* Columns a sink adds to the columns of the item it exports. */
#define MZC_SINK_TIME_COLUMN "mz_timestamp"
#define MZC_SINK_DIFF_COLUMN "mz_diff"

/*
 * What the catalog knows about a relation: the item it belongs to and the
 * global id of the item's primary collection.  Strings are palloc'd.
 */
typedef struct MzcItemRef
{
	bool		found;
	char	   *id;				/* item id */
	char	   *kind;			/* item kind */
	char	   *global_id;		/* primary collection, NULL if none yet */
} MzcItemRef;

/*
 * Result of analysing a materialized view's query.
 */
typedef struct MzcQueryInfo
{
	Query	   *query;			/* analysed, before rewriting */
	char	   *columns;		/* column definitions of the storage table */
	List	   *input_gids;		/* global ids of the logical inputs (char *) */
	List	   *input_items;	/* their item ids, same order (char *) */
	List	   *input_relids;	/* their relations, same order (Oid) */
	List	   *ref_relids;		/* relations named by the query (Oid) */
	List	   *ref_funcids;	/* functions it calls by name (Oid) */
	List	   *ref_oprids;		/* operators it uses (Oid) */
} MzcQueryInfo;

/* catalog.c */
extern void mzcoord_catalog_lookup(Oid relid, MzcItemRef *ref);
extern int64 mzcoord_retain_history_ms(Interval *iv);
extern ArrayType *mzcoord_refresh_canonical(ArrayType *clauses);
extern char *mzcoord_source_columns(const char *columns, Oid check_user);
extern void mzcoord_analyze_query(const char *sql, Oid check_user,
								  MzcQueryInfo *info);
extern char *mzcoord_deparse_qualified(Query *query);
extern char *mzcoord_index_key_list(Oid relid, ArrayType *keys);
extern void mzcoord_check_registrable_table(Oid relid);
extern void mzcoord_check_new_relation(Oid nspid, const char *relname);
extern Oid	mzcoord_catalog_namespace(void);
extern List *mzcoord_query_relation_names(const char *sql);


#endif							/* MZCOORD_CATALOG_H */
