/*-------------------------------------------------------------------------
 *
 * source.h
 *	  Sources: appends, upper advances and the guard of their relations.
 *
 * IDENTIFICATION
 *	  src/storage/source.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_SOURCE_H
#define MZCOORD_SOURCE_H

#include "postgres.h"


extern bool mzcoord_applying_source(Oid relid);

#endif							/* MZCOORD_SOURCE_H */
