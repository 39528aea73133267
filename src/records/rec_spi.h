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

/*
 * The int8 column of the row of gid that query ($1: the global id) selects,
 * read with a fresh snapshot (SPI connected).  Returns false when there is
 * no row; *isnull for SQL NULL.  Raises an error naming what if the query
 * fails.
 */
extern bool mzcoord_rec_gid_int8(const char *query, const char *what,
								 int64 gid, int64 *value, bool *isnull);

#endif							/* MZCOORD_REC_SPI_H */
