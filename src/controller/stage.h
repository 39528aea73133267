/*-------------------------------------------------------------------------
 *
 * stage.h
 *	  Staging of catalog changes for publication at commit, and the
 *	  transaction callbacks (stage.c).  The staged change itself is
 *	  publish.h's MzcStaged.
 *
 * IDENTIFICATION
 *	  src/controller/stage.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_STAGE_H
#define MZCOORD_STAGE_H

#include "postgres.h"

#include "frontier.h"

/* Register the transaction callbacks (from _PG_init). */
extern void mzcoord_stage_init(void);

/* Stage a source's upper advance, published at commit. */
extern void mzcoord_stage_upper(int64 gid, mzc_frontier upper);

#endif							/* MZCOORD_STAGE_H */
