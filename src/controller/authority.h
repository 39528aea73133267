/*-------------------------------------------------------------------------
 *
 * authority.h
 *	  The coordinator's durable epoch and the fence of every publication.
 *
 * IDENTIFICATION
 *	  src/controller/authority.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_AUTHORITY_H
#define MZCOORD_AUTHORITY_H

#include "postgres.h"

/*
 * In the coordinator's tick transaction (SPI connected): take a new epoch
 * if this process has none yet for extension ext.
 */
extern void mzcoord_authority_begin(Oid ext);

/*
 * Before a publication: lock the epoch table and row and compare the
 * epoch.  Returns false (publish nothing this tick) when a consistency
 * check holds the table; exits the process (FATAL) when another
 * coordinator took a newer epoch.
 */
extern bool mzcoord_authority_fence(void);

/* The epoch this coordinator publishes under (0: none yet). */
extern int64 mzcoord_authority_epoch(void);

/*
 * The tick's publication clamps bounds to requirements and leases in its
 * own statement: while on, the bound guard checks only monotonicity.
 */
extern void mzcoord_authority_set_clamping(bool on);

#endif							/* MZCOORD_AUTHORITY_H */
