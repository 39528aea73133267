/*-------------------------------------------------------------------------
 *
 * capture.h
 *	  Capturing the writes of registered tables into their histories.
 *
 * IDENTIFICATION
 *	  src/storage/capture.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_CAPTURE_H
#define MZCOORD_CAPTURE_H

#include "postgres.h"

#include "frontier.h"
#include "history.h"

extern void mzcoord_prepare_write(const MzcHistory *h, bool truncating,
								  Oid fn_oid);
extern void mzcoord_note_history_written(const MzcHistory *h, mzc_ts ts);
extern void mzcoord_capture_flush(Oid histid);

#endif							/* MZCOORD_CAPTURE_H */
