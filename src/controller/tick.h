/*-------------------------------------------------------------------------
 *
 * tick.h
 *	  The coordinator's tick (tick.c).
 *
 * IDENTIFICATION
 *	  src/controller/tick.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_TICK_H
#define MZCOORD_TICK_H

#include "postgres.h"

#include "ids.h"

/* Inside the coordinator's transaction; takes the controller lock. */
extern void mzcoord_controller_tick(void);

/* After that transaction committed. */
extern void mzcoord_controller_tick_committed(void);

/*
 * The collections whose compaction bound moved since the last call (the
 * coordinator's compaction step); *out is palloc'd.
 */
extern int	mzcoord_tick_take_published(int64 **out);

/* A woken coordinator between ticks, outside a transaction (tick.c). */
extern void mzcoord_controller_advance_timeline(void);

#endif							/* MZCOORD_TICK_H */
