/*-------------------------------------------------------------------------
 *
 * maintain.h
 *	  Maintenance: the coordinator's dispatch and a maintenance worker's
 *	  step (maintain.c).
 *
 * IDENTIFICATION
 *	  src/compute/maintain.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_MAINTAIN_H
#define MZCOORD_MAINTAIN_H

#include "postgres.h"

/* In the coordinator, outside a transaction. */
extern void mzcoord_maintain_dispatch(void);

/* In a maintenance worker, outside a transaction. */
extern void mzcoord_maintain_worker_init(void);
extern bool mzcoord_maintain_worker_step(int slot);

#endif							/* MZCOORD_MAINTAIN_H */
