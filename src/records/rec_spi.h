/*-------------------------------------------------------------------------
 *
 * rec_spi.h
 *	  What the records modules share to run their statements.
 *
 * IDENTIFICATION
 *	  src/records/rec_spi.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_SPI_H
#define MZCOORD_REC_SPI_H

#include "postgres.h"

#include "storage/itemptr.h"
#include "utils/snapshot.h"

/*
 * The int8 column of the row of gid that query ($1: the global id) selects,
 * read with a fresh snapshot (SPI connected).  Returns false when there is
 * no row; *isnull for SQL NULL.  Raises an error naming what if the query
 * fails.
 */
extern bool mzcoord_rec_gid_int8(const char *query, const char *what,
								 int64 gid, int64 *value, bool *isnull);

/*
 * Run sql (one text parameter, the global id gidtext, or none if gidtext is
 * NULL) and read the first column of its one row: *found false if there is
 * no row, *isnull if it is NULL.  In snapshot if given, else in the
 * statement's own.  Returns the SPI result of the statement.
 */
extern int	mzcoord_rec_int8(const char *sql, const char *gidtext,
							 Snapshot snapshot, bool *found, int64 *value,
							 bool *isnull);

/*
 * After a SELECT that returned rc: the first column of its first row into
 * *value (*found false if there is no row or rc is not SPI_OK_SELECT,
 * *isnull if it is NULL).  Returns rc.
 */
extern int	mzcoord_rec_first_int8(int rc, bool *found, int64 *value,
								   bool *isnull);

/* A catalog row a lock statement locked: its global id and where it is. */
typedef struct MzcRecLocked
{
	char	   *global_id;
	bool		has_tid;
	ItemPointerData tid;
} MzcRecLocked;

/*
 * Run the lock statement sql over the n global ids gids ($1, a text[]) and
 * return the rows it locked (global id, and tid or NULL) in *rows (*nrows
 * of them).  Returns the SPI result of the statement.
 */
extern int	mzcoord_rec_lock(const char *sql, const int64 *gids, int n,
							 MzcRecLocked **rows, int *nrows);

/* The n global ids gids as a text[] Datum. */
extern Datum mzcoord_rec_gid_array(const int64 *gids, int n);

#endif							/* MZCOORD_REC_SPI_H */
