/*-------------------------------------------------------------------------
 *
 * ceiling.h
 *	  The oracle's durable ceiling file (ceiling.c).
 *
 * IDENTIFICATION
 *	  src/timeline/ceiling.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_CEILING_H
#define MZCOORD_CEILING_H

#include "postgres.h"

#include "frontier.h"

extern mzc_ts mzcoord_ceiling_load(void);
extern void mzcoord_ceiling_write(mzc_ts ceiling);

#endif							/* MZCOORD_CEILING_H */
