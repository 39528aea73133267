/*-------------------------------------------------------------------------
 *
 * keeper.h
 *	  The standby's lease keeper (keeper.c).
 *
 * IDENTIFICATION
 *	  src/worker/keeper.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_KEEPER_H
#define MZCOORD_KEEPER_H

#include "postgres.h"

#include "fmgr.h"

extern PGDLLEXPORT void mzcoord_keeper_main(Datum main_arg);
extern void mzcoord_register_keeper(void);

#endif							/* MZCOORD_KEEPER_H */
