/*-------------------------------------------------------------------------
 *
 * lease.h
 *	  Leases: the hook through which client leases limit compaction bounds.
 *
 * IDENTIFICATION
 *	  src/controller/lease.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_LEASE_H
#define MZCOORD_LEASE_H

#include "postgres.h"

#include "frontier.h"

/*
 * The meet of the times of the active leases on a slot ({} when none); the
 * tick never proposes a compaction bound above it.  Caller holds the
 * controller lock.
 */
extern mzc_frontier mzcoord_lease_limit_locked(int32 slot);

#endif							/* MZCOORD_LEASE_H */
