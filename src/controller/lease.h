/*-------------------------------------------------------------------------
 *
 * lease.h
 *	  Leases: durable read protection for clients outside any one
 *	  transaction (lease.c).
 *
 * A lease holds a set of tables, sources, materialized views and indexes
 * at one time (held_at) until it is dropped or its expiry passes.  Its durable record is a row of
 * mzcoord.lease_records; its protection in memory is one count per
 * relation at held_at in the collection's counted frontier (the mechanism
 * of transaction holds and the durable hold), so the live since, and
 * therefore physical compaction, cannot pass an active lease.
 *
 * LOCKING CONTRACT
 *
 * lease.c owns the shared area MzcLeaseArea and the entries that follow it.
 * The controller lock (controller.h) protects all of it: every field of
 * MzcLeaseArea, of every MzcLease and the leased readers of the shard.
 * Readers that only copy values out take it shared, everything that changes
 * state takes it exclusive.  Functions ending in _locked expect the caller
 * to hold it (exclusively if they change anything); the others take it.
 * `capacity` is fixed at startup.
 *
 * A lease changes in shared memory only when the transaction that changed
 * its record commits (mzcoord_lease_commit_locked, called by publish.c in
 * the critical section that releases the transaction's holds), or when the
 * tick finds it expired (mzcoord_lease_tick_locked), or when a bootstrap
 * rebuilds the area from mzcoord.lease_records.  A transaction that changes
 * a lease holds the lock of its row until it ends, so the committed record
 * and the entry never disagree for longer than a COMMIT.
 *
 * IDENTIFICATION
 *	  src/controller/lease.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_LEASE_H
#define MZCOORD_LEASE_H

#include "postgres.h"

#include "datatype/timestamp.h"

#include "frontier.h"

/* Shared memory (registered by _PG_init). */
extern Size mzcoord_lease_shmem_size(void);
extern void mzcoord_lease_shmem_init(void);

/* The transaction: does it change leases, and its end. */
extern bool mzcoord_lease_pending(void);
extern void mzcoord_lease_commit_locked(void);
extern void mzcoord_lease_abort(void);
extern void mzcoord_lease_subxact(int level, bool commit);

/* Where the active leases hold the slots, for one tick. */
typedef struct MzcLeaseLimit
{
	int32		slot;
	mzc_ts		at;				/* the least held_at of its leases */
} MzcLeaseLimit;

typedef struct MzcLeaseLimits
{
	MzcLeaseLimit *entries;		/* sorted by slot, one per leased slot */
	int			n;
} MzcLeaseLimits;

/* The tick, compaction bounds and read_at; caller holds the lock. */
extern int	mzcoord_lease_tick_locked(TimestampTz now);
extern int	mzcoord_lease_limits_room(void);
extern MzcLeaseLimits mzcoord_lease_limits_locked(MzcLeaseLimit *room);
extern mzc_frontier mzcoord_lease_limit_of(const MzcLeaseLimits *lim,
										   int32 slot);
extern bool mzcoord_lease_covers_locked(int32 slot, mzc_ts at, Oid role,
										TimestampTz now);

/* Bootstrap: read the records (SPI connected), then install them. */
extern void mzcoord_lease_boot_read(TimestampTz now);
extern mzc_frontier mzcoord_lease_boot_since(int64 gid, mzc_frontier since);
extern void mzcoord_lease_boot_install_locked(void);

#endif							/* MZCOORD_LEASE_H */
