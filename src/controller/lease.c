/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  Leases: the hook through which client leases limit compaction bounds.
 *
 * A lease (reference D5, D8: a client read requirement) will protect a
 * collection at a time for a client, durably and across restarts, and so
 * limits the compaction bound the tick publishes for it (tick.c calls
 * mzcoord_lease_limit_locked for every collection it publishes).  Leases
 * arrive with the lease module (mzcoord.create_lease and friends); until
 * then no slot has a lease and the limit is the empty frontier, which limits
 * nothing.  Whoever changes a lease marks the slot with
 * mzcoord_ctl_mark_recheck (controller.h, under the exclusive lock) so that
 * the next tick computes its proposal again and publishes it if it moved.
 *
 * IDENTIFICATION
 *	  src/controller/lease.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "controller.h"
#include "lease.h"

mzc_frontier
mzcoord_lease_limit_locked(int32 slot)
{
	(void) slot;
	return mzc_frontier_empty();
}
