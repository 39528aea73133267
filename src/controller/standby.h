/*-------------------------------------------------------------------------
 *
 * standby.h
 *	  A collection's frontiers on a hot standby, from what recovery
 *	  replayed (standby.c).
 *
 * IDENTIFICATION
 *	  src/controller/standby.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_STANDBY_H
#define MZCOORD_STANDBY_H

#include "postgres.h"

#include "replication/walreceiver.h"
#include "storage/latch.h"
#include "utils/snapshot.h"

#include "frontier.h"
#include "ids.h"

extern bool mzcoord_standby_collection(Oid relid, int64 *gid, MzcKind *kind);
extern mzc_frontier mzcoord_standby_upper(Oid relid, int64 gid, MzcKind kind);
extern mzc_frontier mzcoord_standby_since(Oid relid, int64 gid,
										  Snapshot snapshot);
extern void mzcoord_standby_wait_complete(Oid relid, int64 gid, MzcKind kind,
										  int64 at);
extern void mzcoord_standby_check_read(Oid relid, int64 gid, int64 at,
									   Snapshot snapshot);
extern mzc_ts mzcoord_standby_primary_read_ts(const Oid *relids, int n);

/* The primary, for the lease keeper. */
extern WalReceiverConn *mzcoord_primary_connect(const char *appname,
												char **err);
extern bool mzcoord_primary_command(WalReceiverConn *conn, const char *sql,
									char **err);

/* Standby holds (see standby.c for their locking). */
extern Size mzcoord_standby_shmem_size(void);
extern void mzcoord_standby_shmem_init(void);
extern void mzcoord_standby_hold(const Oid *relids, int n, mzc_ts ts);
extern void mzcoord_standby_release(void);
extern mzc_ts mzcoord_standby_held(Oid *relids, int max, int *n,
								   Latch *latch);

#endif							/* MZCOORD_STANDBY_H */
