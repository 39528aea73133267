/*-------------------------------------------------------------------------
 *
 * failpoint.h
 *	  Test-only crash points.
 *
 * IDENTIFICATION
 *	  src/base/failpoint.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_FAILPOINT_H
#define MZCOORD_FAILPOINT_H

#include "postgres.h"

/*
 * Raises PANIC (a crash restart of the server) when mzcoord.failpoint names
 * this point; otherwise does nothing.
 */
extern void mzcoord_failpoint_check(const char *point);

#endif							/* MZCOORD_FAILPOINT_H */
