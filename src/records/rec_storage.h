/*-------------------------------------------------------------------------
 *
 * rec_storage.h
 *	  The statements on mzcoord.storage, the row of each collection's
 *	  history.
 *
 * Writers of mzcoord.storage (one per column):
 *	- the row (global_id, relation, kind, history, and the compaction
 *	  columns' first values): creating a history (src/storage/install.c,
 *	  mzcoord_rec_storage_insert); the row goes with its relation (a
 *	  trigger of src/sql/40_storage.sql);
 *	- compacted, compacted_rows, compacted_at, compactions: compaction
 *	  (src/storage/compact.c, mzcoord_rec_storage_compacted_to).
 *
 * Every function expects SPI connected by the caller; text results are
 * allocated in the SPI procedure's memory, unless said otherwise.
 *
 * IDENTIFICATION
 *	  src/records/rec_storage.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_STORAGE_H
#define MZCOORD_REC_STORAGE_H

#include "postgres.h"

#include "datatype/timestamp.h"

/* A row of mzcoord.storage, as far as a statement reads it. */
typedef struct MzcRecStorage
{
	char	   *global_id;
	char	   *kind;
	Oid			relid;
	Oid			histid;
	int64		compacted;
	int64		compacted_rows;
	TimestampTz compacted_at;
} MzcRecStorage;

/*
 * The row of relation relid, with a fresh snapshot (the latest committed
 * state and this transaction's own changes).  Returns false if the
 * statement failed; *found whether there is a row.  No relid is filled in.
 */
extern bool mzcoord_rec_storage_of_relation(Oid relid, MzcRecStorage *row,
											bool *found);

/*
 * The row of collection gidtext (the statement's snapshot).  Returns false
 * if the statement failed; *found whether there is a row.  No global_id is
 * filled in.
 */
extern bool mzcoord_rec_storage_of_gid(const char *gidtext, MzcRecStorage *row,
									   bool *found);

/*
 * Insert the row of a new history: collection gidtext of relation relid
 * (kindname), history histid, compacted at since with nrows rows.  Returns
 * false if the statement failed.
 */
extern bool mzcoord_rec_storage_insert(const char *gidtext, Oid relid,
									   const char *kindname, Oid histid,
									   int64 since, int64 nrows);

/*
 * The compacted frontier of gid's history, with a fresh snapshot.  Returns
 * false when there is no row; *isnull for SQL NULL.
 */
extern bool mzcoord_rec_storage_compacted(int64 gid, int64 *compacted,
										  bool *isnull);

/*
 * Lock gid's row for its compaction (FOR NO KEY UPDATE), unless another
 * transaction holds it: then, or if there is no row, return false without
 * waiting (SKIP LOCKED).
 */
extern bool mzcoord_rec_storage_lock_unless_held(int64 gid);

/*
 * Record that gid's history is compacted to since, with rows_left rows at
 * or below it (negative: compacted_rows stays as it is).  Returns false if
 * the statement failed.
 */
extern bool mzcoord_rec_storage_compacted_to(int64 gid, int64 since,
											 int64 rows_left);

/*
 * The rows of the n collections gids (those that have one), with their
 * compaction columns, in *rows (*nrows of them; no kind).  Returns false if
 * the statement failed.
 */
extern bool mzcoord_rec_storage_compactions(const int64 *gids, int n,
											MzcRecStorage **rows, int *nrows);

/*
 * The global ids of the histories compacted below their collection's
 * compaction bound, in *gids (*n of them).  Returns false if the statement
 * failed.
 */
extern bool mzcoord_rec_storage_behind_bounds(char ***gids, int *n);

/*
 * The row of relation relid as recovery replayed it, on a hot standby (the
 * statement's snapshot; only global_id and kind).  Returns false if the
 * statement failed; *found whether there is a row.
 */
extern bool mzcoord_rec_storage_replayed(Oid relid, MzcRecStorage *row,
										 bool *found);

/*
 * Every row, in global id order, allocated in cxt (with compacted; no
 * compacted_rows or compacted_at); *nrows gets their number.
 */
extern MzcRecStorage *mzcoord_rec_storage_all(MemoryContext cxt, int *nrows);

/*
 * The global ids of the histories whose collection is gone, in order, in
 * *gids (*n of them).
 */
extern void mzcoord_rec_storage_orphans(char ***gids, int *n);

/*
 * The relations with a history that the DDL command being run (in an event
 * trigger) touched, itself or through inheritance, in oid order, in
 * *relids (*n of them).
 */
extern void mzcoord_rec_storage_ddl_targets(Oid **relids, int *n);

#endif							/* MZCOORD_REC_STORAGE_H */
