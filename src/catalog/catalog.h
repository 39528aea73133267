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

#include "rec_items.h"

extern Oid	mzcoord_catalog_namespace(void);
extern Datum mzcoord_catalog_call(const char *signature, int nargs,
								  Datum *values, bool *nulls, bool *isnull);
extern void mzcoord_require_origin_role(void);
extern void mzcoord_check_registrable_table(Oid relid);
extern void mzcoord_check_new_relation(Oid nspid, const char *relname);
extern void mzcoord_sink_check_input(Oid input, Oid owner,
									 const char *sink_name);

#endif							/* MZCOORD_CATALOG_H */
