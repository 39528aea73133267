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
 * The collections whose compaction bound moved since the last call, at
 * most room (the compactor's step, autocompact.c), and whether there are
 * any (a hint, read without the lock).
 */
extern int	mzcoord_tick_take_published(int64 *out, int room);
extern bool mzcoord_tick_has_news(void);

/* A woken coordinator between ticks, outside a transaction (tick.c). */
extern void mzcoord_controller_advance_timeline(void);

#endif							/* MZCOORD_TICK_H */
