/*-------------------------------------------------------------------------
 *
 * catalog.h
 *	  Lookups in the catalog of items (mzcoord.items), the catalog's
 *	  namespace, and the checks of relations an item may be or create.
 *
 * IDENTIFICATION
 *	  src/catalog/catalog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_CATALOG_H
#define MZCOORD_CATALOG_H

#include "postgres.h"

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

extern Oid	mzcoord_catalog_namespace(void);
extern Datum mzcoord_catalog_call(const char *signature, int nargs,
								  Datum *values, bool *nulls, bool *isnull);
extern char **mzcoord_catalog_first_row(const char *what, const char *sql,
										Oid argtype, Datum arg);
extern void mzcoord_catalog_lookup(Oid relid, MzcItemRef *ref);
extern void mzcoord_require_origin_role(void);
extern void mzcoord_check_registrable_table(Oid relid);
extern void mzcoord_check_new_relation(Oid nspid, const char *relname);
extern void mzcoord_sink_check_input(Oid input, Oid owner,
									 const char *sink_name);

#endif							/* MZCOORD_CATALOG_H */
