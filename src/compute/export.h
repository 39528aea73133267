/*-------------------------------------------------------------------------
 *
 * export.h
 *	  Exporting the updates of a sink's input into its relation (export.c).
 *
 * IDENTIFICATION
 *	  src/compute/export.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_EXPORT_H
#define MZCOORD_EXPORT_H

#include "postgres.h"

/* What one export did. */
typedef struct MzcExportResult
{
	int64		from_upper;		/* the sink's upper before */
	int64		new_upper;		/* after (-1: the empty frontier) */
	int			times;			/* distinct times exported */
	int64		rows_exported;	/* rows written to the sink's relation */
} MzcExportResult;

extern bool mzcoord_export_sink(int64 gid, MzcExportResult *res);

#endif							/* MZCOORD_EXPORT_H */
