/*-------------------------------------------------------------------------
 *
 * ceiling.h
 *	  The oracle's durable ceiling: its WAL record and file (ceiling.c).
 *
 * IDENTIFICATION
 *	  src/timeline/ceiling.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_CEILING_H
#define MZCOORD_CEILING_H

#include "postgres.h"

#include "access/xlogdefs.h"

#include "frontier.h"

/* Called by recovery with the time of each record it replays. */
typedef void (*mzc_ceiling_replay_fn) (mzc_ts ts);

extern void mzcoord_ceiling_register(mzc_ceiling_replay_fn ceiling,
									 mzc_ceiling_replay_fn upper);
extern void mzcoord_ceiling_log_upper(mzc_ts upper);
extern mzc_ts mzcoord_ceiling_load(void);
extern XLogRecPtr mzcoord_ceiling_write(mzc_ts ceiling);
extern void mzcoord_ceiling_store(mzc_ts ceiling);
extern void mzcoord_ceiling_replicate(XLogRecPtr lsn);

#endif							/* MZCOORD_CEILING_H */
