/*-------------------------------------------------------------------------
 *
 * rec_leases.h
 *	  The statements in C on mzcoord.lease_records, the durable record of
 *	  every lease.
 *
 * Writers of mzcoord.lease_records (one per column): the lease SQL
 * functions (src/funcs/leasefuncs.c), through mzcoord._lease_write of
 * src/sql/36_leases.sql (insert, renew, advance, delete), in the
 * transaction that creates, renews, advances or drops the lease.  C code only reads it:
 * the bootstrap (src/controller/lease.c) and the tick's publication
 * (rec_bounds.c), which clamps a bound at the active leases.
 *
 * Every function expects SPI connected by the caller.
 *
 * IDENTIFICATION
 *	  src/records/rec_leases.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_LEASES_H
#define MZCOORD_REC_LEASES_H

#include "postgres.h"

#include "datatype/timestamp.h"

/*
 * One lease record: its name, owner, the collections it holds (global ids
 * that parse; at most max_gids), its time, its time to live and when it
 * expires and was created.
 */
typedef struct MzcRecLease
{
	char		name[NAMEDATALEN];
	Oid			owner;
	int64	   *gids;
	int			ngids;
	int64		held_at;
	int64		ttl_ms;
	TimestampTz expires_at;
	TimestampTz created_at;
} MzcRecLease;

/*
 * Every lease record, in the caller's snapshot, into *rows (*nrows of
 * them, palloc'd), each with at most max_gids collections.
 */
extern void mzcoord_rec_read_leases(int max_gids, MzcRecLease **rows,
									int *nrows);

#endif							/* MZCOORD_REC_LEASES_H */
