/*-------------------------------------------------------------------------
 *
 * support.h
 *	  Small helpers over the PostgreSQL API that several planes share:
 *	  SPI, transaction callbacks, backend-local hash tables and the checks
 *	  of SQL arguments that more than one SQL function makes.
 *
 * IDENTIFICATION
 *	  src/base/support.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_SUPPORT_H
#define MZCOORD_SUPPORT_H

#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/hsearch.h"

/* SPI_connect, raising "SPI_connect failed" if it does not connect. */
extern void mzcoord_spi_connect(void);

/* Run one internal statement; anything but the expected result is a bug. */
extern void mzcoord_spi_exec(const char *sql, int expected);

/*
 * Register a transaction callback and, unless NULL, a subtransaction
 * callback, once per process: *registered remembers that it was done.
 */
extern void mzcoord_register_xact_callbacks(bool *registered,
											XactCallback xact,
											SubXactCallback subxact);

/*
 * A backend-local hash table in cxt, keyed by the keysize bytes at the
 * start of each entrysize-byte entry (HASH_BLOBS).
 */
extern HTAB *mzcoord_local_hash(const char *name, long nelem, Size keysize,
								Size entrysize, MemoryContext cxt);

/*
 * The elements of a text[] argument; raises "<what> must be a
 * one-dimensional array" for a multidimensional one.  Nulls are left to the
 * caller.
 */
extern void mzcoord_text_array_elems(ArrayType *arr, const char *what,
									 Datum **elems, bool **nulls, int *n);

/*
 * Argument argno as a timestamp: raises "<what> must not be null" for NULL
 * and "timestamp must not be negative: N" below zero.
 */
extern int64 mzcoord_timestamp_arg(FunctionCallInfo fcinfo, int argno,
								   const char *what);
extern int64 mzcoord_timestamp_value(Datum d, bool isnull, const char *what);

#endif							/* MZCOORD_SUPPORT_H */
