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

#include "utils/relcache.h"

#include "history.h"

extern void mzcoord_record_upper(int64 gid, Oid owner, const char *what,
								 int64 upper);
extern void mzcoord_fed_advance(const MzcHistory *h, Relation rel,
								int64 current, int64 upper);

#endif							/* MZCOORD_SOURCE_H */
