/*-------------------------------------------------------------------------
 *
 * coldefs.h
 *	  Column definitions in their canonical form: the columns of a source,
 *	  of an existing relation or a sink, and the key list of an index;
 *	  and the error context of text the user gave that is parsed on its
 *	  own (a column list, a query).
 *
 * IDENTIFICATION
 *	  src/catalog/coldefs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_COLDEFS_H
#define MZCOORD_COLDEFS_H

#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/array.h"

/*
 * Reports errors inside a column list or a query against that text, not
 * against the statement that called the DDL function.  Pushed onto
 * error_context_stack by mzcoord_parse_context_push, for as long as the
 * text is parsed and analysed.
 */
typedef struct MzcParseContext
{
	ErrorContextCallback callback;
	const char *what;			/* for the context line */
	const char *text;			/* what the user gave */
	int			offset;			/* length of our prefix in the parsed string */
} MzcParseContext;

extern void mzcoord_parse_context_push(MzcParseContext *ctx, const char *what,
									   const char *text, int offset);
extern void mzcoord_parse_context_pop(MzcParseContext *ctx);
extern void mzcoord_append_column(StringInfo buf, const char *name, Oid typid,
								  int32 typmod, Oid collid);
extern void mzcoord_check_column(const char *name, Oid typid, List **seen);
extern char *mzcoord_source_columns(const char *columns, Oid check_user);
extern char *mzcoord_index_key_list(Oid relid, ArrayType *keys);

#endif							/* MZCOORD_COLDEFS_H */
