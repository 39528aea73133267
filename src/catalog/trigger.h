/*-------------------------------------------------------------------------
 *
 * trigger.h
 *	  The statement triggers on mzcoord.items that batch catalog changes
 *	  for the implications.
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
