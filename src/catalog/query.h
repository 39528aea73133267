/*-------------------------------------------------------------------------
 *
 * query.h
 *	  The queries of materialized views: their analysis (output columns,
 *	  dependencies, logical inputs), the definition that is stored, and
 *	  the relation names they give.
 *
 * IDENTIFICATION
 *	  src/catalog/query.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_QUERY_H
#define MZCOORD_QUERY_H

#include "postgres.h"

#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"

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

extern void mzcoord_analyze_query(const char *sql, Oid check_user,
								  MzcQueryInfo *info);
extern char *mzcoord_deparse_qualified(Query *query);
extern List *mzcoord_query_relation_names(const char *sql);

#endif							/* MZCOORD_QUERY_H */
