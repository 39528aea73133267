/*-------------------------------------------------------------------------
 *
 * history.h
 *	  History relations of tables and sources: finding them, writing
 *	  updates into them, running internal SQL as their owner.
 *
 * Every table and source collection has a history relation
 * mzcoord.history_u<N> (N: its global id) holding its updates: one column
 * "c<k>" per live attribute k of the collection's relation (the attribute
 * number, so renames need nothing), then "ts" and "diff".  mzcoord.storage
 * records, per collection, its relation, its history and how far the
 * history has been compacted.
 *
 * Rows are identified by their binary image (datum_image_eq), not by the
 * equality operators of their types: two rows are the same row when every
 * column holds the same bytes.  This works for every type (json, point,
 * ...) and never merges values that print differently (1.0 and 1.00,
 * '1 day' and '24 hours').  rowimage.c implements it.
 *
 * IDENTIFICATION
 *	  src/storage/history.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_HISTORY_H
#define MZCOORD_HISTORY_H

#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/relcache.h"

#include "ids.h"

/* Names of the bookkeeping columns of a history relation. */
#define MZC_HISTORY_TS "ts"
#define MZC_HISTORY_DIFF "diff"

/*
 * What the data plane knows of one registered relation (history.c): its
 * collection, its history, and where each of its attributes is in the
 * history.  Entries live in a backend-local cache, invalidated with the
 * relcache of either relation; copy what you need before calling anything
 * that may accept invalidation messages.
 */
typedef struct MzcHistory
{
	Oid			relid;			/* the table or source relation */
	int64		gid;
	MzcKind		kind;			/* MZC_KIND_TABLE or MZC_KIND_SOURCE */
	Oid			histid;			/* its history relation */
	Oid			owner;			/* owner of the history (the extension owner) */
	int			natts;			/* attributes of relid (dropped ones too) */
	AttrNumber *hist_attno;		/* per attribute of relid: history attno, 0 if dropped */
	AttrNumber	ts_attno;
	AttrNumber	diff_attno;
	int			hist_natts;
	bool		valid;
} MzcHistory;

/* history.c */
extern MzcHistory *mzcoord_history_lookup(Oid relid, bool missing_ok);
extern MzcHistory *mzcoord_history_copy(const MzcHistory *h);
extern int	mzcoord_become_owner(Oid owner, Oid *save_user, int *save_sec);
extern int	mzcoord_become_definer(Oid owner, Oid *save_user, int *save_sec);
extern void mzcoord_restore_user(Oid save_user, int save_sec, int nest);
extern char *mzcoord_history_column_list(TupleDesc reldesc, const char *prefix);
extern char *mzcoord_relation_column_list(TupleDesc reldesc, const char *prefix);
extern AttrNumber mzcoord_desc_attnum(TupleDesc desc, const char *name);
extern void mzcoord_history_to_row(const MzcHistory *h, TupleTableSlot *hslot,
								   TupleTableSlot *row, int64 *ts, int64 *diff);
extern bool mzcoord_storage_row(Oid relid, int64 *gid, MzcKind *kind,
								Oid *histid);
extern void mzcoord_check_no_inheritance(Oid relid);


/*
 * Writing updates into a history relation, in batches (history.c).  Each
 * row gets one index entry: an insertion (diff > 0) in the history's index
 * of insertions, a retraction (diff < 0) in its index of retractions.
 */
typedef struct MzcHistoryWriter
{
	const MzcHistory *hist;
	Relation	rel;
	/* the two indexes install.c creates, entries written directly ... */
	Relation	insertions_index;
	Relation	retractions_index;
	/* ... or, for any other set of indexes, through the executor */
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot **slots;
	int64	   *ts;				/* per slot: its row's ts and diff */
	int64	   *diffs;
	int			nslots;
	int			maxslots;
	Size		batch_bytes;
	BulkInsertState bistate;
	CommandId	cid;
	int64		written;
} MzcHistoryWriter;

extern void mzcoord_history_writer_begin(MzcHistoryWriter *w,
										 const MzcHistory *h, bool bulk);
extern void mzcoord_history_writer_add(MzcHistoryWriter *w, TupleTableSlot *row,
									   int64 ts, int64 diff);
extern void mzcoord_history_writer_add_columns(MzcHistoryWriter *w,
											  Datum *values, bool *isnull,
											  int64 ts, int64 diff);
extern void mzcoord_history_writer_end(MzcHistoryWriter *w);

/*
 * Reading a history through its indexes (history.c): every read of a
 * history opens it here, so that only storage knows a history's indexes.
 * A history has two, both btrees on ts: one of its insertions (diff > 0),
 * one of its retractions (diff < 0).  mzcoord_history_open_read opens the
 * history for a read of every row ("ts": both indexes, their rows merged
 * in time order) or of its retractions only ("retractions");
 * mzcoord_history_time_scan starts (or restarts, one descent of each
 * index) a scan of the rows with from <= ts < upto in time order, and
 * mzcoord_history_at_scan one of the rows at exactly one time;
 * mzcoord_history_next returns them one at a time.
 */
typedef struct MzcHistoryReadPart
{
	Relation	idx;			/* AccessShareLock */
	IndexScanDesc scan;			/* NULL until a scan starts */
	TupleTableSlot *slot;
	bool		fetched;		/* slot holds this part's next row ... */
	bool		done;			/* ... or the part has no more */
	int64		ts;				/* the fetched row's ts and diff */
	int64		diff;
} MzcHistoryReadPart;

typedef struct MzcHistoryRead
{
	const MzcHistory *h;
	Relation	hrel;			/* the history, AccessShareLock */
	int			nparts;			/* 2 (insertions, retractions) or 1 */
	MzcHistoryReadPart parts[2];
	TupleTableSlot *hslot;		/* the history tuple last returned */
	Snapshot	snapshot;		/* the caller's, for every scan */
	int64		from;			/* the current scan's from <= ts */
	int64		upto;			/* ts < upto (-1: no end) */
} MzcHistoryRead;

extern bool mzcoord_history_index_serves(Relation hrel, Relation idx,
										 bool retractions);
extern void mzcoord_history_open_read(MzcHistoryRead *r, const MzcHistory *h,
									  const char *index, Snapshot snapshot);
extern void mzcoord_history_time_scan(MzcHistoryRead *r, int64 from,
									  int64 upto);
extern void mzcoord_history_at_scan(MzcHistoryRead *r, int64 at);
extern bool mzcoord_history_next(MzcHistoryRead *r, TupleTableSlot *row,
								 int64 *ts, int64 *diff);
extern void mzcoord_history_close_read(MzcHistoryRead *r);
extern char *mzcoord_history_indexed_condition(const char *cond);

#endif							/* MZCOORD_HISTORY_H */
