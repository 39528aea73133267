/*-------------------------------------------------------------------------
 *
 * maintain.h
 *	  The coordinator's maintenance pass (maintain.c).
 *
 * IDENTIFICATION
 *	  src/compute/maintain.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_MAINTAIN_H
#define MZCOORD_MAINTAIN_H

#include "postgres.h"

/* In the coordinator, after its tick, outside a transaction. */
extern void mzcoord_maintain_tick(void);

#endif							/* MZCOORD_MAINTAIN_H */
