/*-------------------------------------------------------------------------
 *
 * lease.h
 *	  Leases: durable read protection for clients outside any one
 *	  transaction (lease.c; their SQL functions are leasefuncs.c).
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
 * `capacity` is fixed at startup.  The SQL functions (leasefuncs.c) see no
 * entry: they stage changes and copy rows out through the functions at the
 * end of this header, each of which takes the lock itself.
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
#include "readhold.h"

/* At most this many relations per lease. */
#define MZC_LEASE_MAX_RELS 32

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

/* The leases' clock: milliseconds since 2000-01-01. */
extern int64 mzcoord_lease_ms(TimestampTz t);
extern TimestampTz mzcoord_lease_time(int64 ms);
extern int32 mzcoord_lease_area_capacity(void);

/*
 * For the SQL functions (leasefuncs.c): each takes the lock itself.  A
 * change is staged (applied at COMMIT, undone at ABORT) once the call has
 * reserved room for it with mzcoord_lease_reserve_op(), before the lock;
 * what stood in its way comes back for the caller to raise after the lock
 * is released.
 */

/* What create_lease found under the lock, for the errors raised after it. */
typedef struct MzcLeaseCheck
{
	int			not_collection; /* index of a relation, or -1 */
	bool		not_storage;	/* ... which is not a table or source */
	bool		taken;
	bool		violation;
	bool		role_limit;
	bool		full;
	bool		no_nodes;
	bool		no_holds;
	MzcHoldFailure hf;
	int32		held;
	mzc_ts		at;
	mzc_ts		floor;			/* no lower, when the caller chose no time */
	mzc_frontier sinces[MZC_LEASE_MAX_RELS];
} MzcLeaseCheck;

/* What a change of an existing lease found under the lock. */
typedef struct MzcLeaseFound
{
	int32		entry;
	Oid			owner;
	bool		expired;
	mzc_ts		held_at;
	int64		ttl_ms;
	int64		expires_ms;		/* renew: the new expiry */
	bool		no_nodes;
	bool		no_holds;
	MzcHoldFailure hf;
} MzcLeaseFound;

/* One protected slot of an active lease, copied out under the lock. */
typedef struct MzcLeaseHoldCopy
{
	int64		gid;
	Oid			relid;
	char		name[NAMEDATALEN];
	mzc_ts		held_at;
	TimestampTz created_at;
	mzc_frontier implied;
	mzc_frontier since;
} MzcLeaseHoldCopy;

extern void mzcoord_lease_reserve_op(void);
extern int32 mzcoord_lease_stage_create(const char *name, Oid role,
										const Oid *rels, int n, bool have_at,
										int64 ttl_ms, TimestampTz now,
										MzcLeaseCheck *c, int64 *gids);
extern bool mzcoord_lease_stage_renew(const char *name, TimestampTz now,
									  MzcLeaseFound *f);
extern bool mzcoord_lease_stage_advance(const char *name, mzc_ts at,
										TimestampTz now, MzcLeaseFound *f);
extern bool mzcoord_lease_stage_drop(const char *name, TimestampTz now,
									 MzcLeaseFound *f);
extern bool mzcoord_lease_owner_rels(const char *name, Oid *owner,
									 Oid *relids, int *n);
extern int	mzcoord_lease_copy_holds(MzcLeaseHoldCopy *out);
extern int	mzcoord_lease_copy_validate(MzcLeaseHoldCopy *out, int *readerless);

#endif							/* MZCOORD_LEASE_H */
