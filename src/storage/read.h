/*-------------------------------------------------------------------------
 *
 * read.h
 *	  Reading histories: contents as of a time, and read_at.
 *
 * IDENTIFICATION
 *	  src/storage/read.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_READ_H
#define MZCOORD_READ_H

#include "postgres.h"

#include "fmgr.h"
#include "executor/tuptable.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "history.h"

typedef void (*MzcHistoryRowCallback) (void *arg, TupleTableSlot *row,
									   int64 count);
extern void mzcoord_history_contents(const MzcHistory *h, TupleDesc reldesc,
									 Snapshot snapshot, int64 upto,
									 MzcHistoryRowCallback emit, void *arg,
									 int64 *negative);
extern bool mzcoord_history_quiet_after(const MzcHistory *h,
										Snapshot snapshot, int64 after);
extern void mzcoord_check_history_readable(Relation rel, bool detail);
extern Oid	mzcoord_rowtype_relation(FunctionCallInfo fcinfo, int argno,
									 const char *func);
extern Oid	mzcoord_rowtype_relation_of(Oid typid, const char *func);

/* How read_at names its timestamp argument in errors. */
#define MZC_READ_AT_WHAT "the timestamp to read at"

/* A read at a time whose rows are taken one at a time (readscan.c). */
typedef struct MzcReadStream MzcReadStream;

extern MzcReadStream *mzcoord_read_stream_begin(Oid relid, int64 at,
												Oid fn_oid);
extern bool mzcoord_read_stream_next(MzcReadStream *rs, TupleTableSlot *out);
extern void mzcoord_read_stream_end(MzcReadStream *rs);

#endif							/* MZCOORD_READ_H */
