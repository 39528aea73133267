/*-------------------------------------------------------------------------
 *
 * trigger.h
 *	  The statement triggers on mzcoord.items, which batch the changes of
 *	  one statement for the catalog implications.
 *
 * IDENTIFICATION
 *	  src/catalog/trigger.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_TRIGGER_H
#define MZCOORD_TRIGGER_H

#include "postgres.h"

extern bool mzcoord_catalog_in_copy(void);

#endif							/* MZCOORD_TRIGGER_H */
