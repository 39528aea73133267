/*-------------------------------------------------------------------------
 *
 * storage.h
 *	  The data plane of tables and sources: history relations, capture of
 *	  table writes, source appends, AS OF reads and physical compaction.
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
 *	  src/storage/storage.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_STORAGE_H
#define MZCOORD_STORAGE_H

#include "postgres.h"

#include "access/heapam.h"
#include "access/tupdesc.h"
#include "fmgr.h"
#include "utils/snapshot.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/relcache.h"

#include "frontier.h"
#include "ids.h"

/* Names of the bookkeeping columns of a history relation. */
#define MZC_HISTORY_TS "ts"
#define MZC_HISTORY_DIFF "diff"

/*
 * What the data plane knows of one registered relation (storage.c): its
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

/* storage.c */
extern MzcHistory *mzcoord_history_lookup(Oid relid, bool missing_ok);
extern MzcHistory *mzcoord_history_copy(const MzcHistory *h);
extern int	mzcoord_become_owner(Oid owner, Oid *save_user, int *save_sec);
extern void mzcoord_restore_user(Oid save_user, int save_sec, int nest);
extern char *mzcoord_history_column_list(TupleDesc reldesc, const char *prefix);
extern char *mzcoord_relation_column_list(TupleDesc reldesc, const char *prefix);


/* Writing updates into a history relation, in batches (storage.c). */
typedef struct MzcHistoryWriter
{
	const MzcHistory *hist;
	Relation	rel;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot **slots;
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
extern void mzcoord_history_writer_end(MzcHistoryWriter *w);

/*
 * Consolidation of rows by their binary image (rowimage.c).  A row set maps
 * each distinct row to an int64 count; rows are copied into the set's
 * memory context.
 */
typedef struct MzcRowEntry
{
	struct MzcRowEntry *next;	/* hash chain */
	struct MzcRowEntry *link;	/* insertion order */
	uint32		hash;
	int64		count;
	void	   *extra;			/* for the caller */
	Datum	   *values;
	bool	   *isnull;
} MzcRowEntry;

typedef struct MzcRowSet
{
	MemoryContext cxt;
	TupleDesc	desc;			/* the rows' descriptor (attributes compared) */
	MzcRowEntry **buckets;
	uint32		nbuckets;
	int64		nentries;
	MzcRowEntry *first;
	MzcRowEntry *last;
} MzcRowSet;

extern MzcRowSet *mzcoord_rowset_create(TupleDesc desc, MemoryContext parent);
extern uint32 mzcoord_row_hash(TupleDesc desc, Datum *values, bool *isnull);
extern bool mzcoord_row_equal(TupleDesc desc, Datum *v1, bool *n1,
							  Datum *v2, bool *n2);
extern MzcRowEntry *mzcoord_rowset_find(MzcRowSet *set, Datum *values,
										bool *isnull, uint32 hash);
extern MzcRowEntry *mzcoord_rowset_add(MzcRowSet *set, Datum *values,
									   bool *isnull, uint32 hash, int64 count);
extern void mzcoord_rowset_destroy(MzcRowSet *set);

/* read.c */
typedef void (*MzcHistoryRowCallback) (void *arg, TupleTableSlot *row,
									   int64 count);
extern Oid	mzcoord_history_index(const MzcHistory *h, const char *suffix);
extern void mzcoord_history_to_row(const MzcHistory *h, TupleTableSlot *hslot,
								   TupleTableSlot *row, int64 *ts, int64 *diff);
extern void mzcoord_history_contents(const MzcHistory *h, TupleDesc reldesc,
									 Snapshot snapshot, int64 upto,
									 MzcHistoryRowCallback emit, void *arg,
									 int64 *negative);
extern Oid	mzcoord_rowtype_relation(FunctionCallInfo fcinfo, int argno,
									 const char *func);

/* capture.c */
extern void mzcoord_prepare_write(const MzcHistory *h, bool truncating,
								  Oid fn_oid);
extern void mzcoord_note_history_written(const MzcHistory *h, mzc_ts ts);

/* source.c */
extern bool mzcoord_applying_source(Oid relid);

/* compact.c */
extern void mzcoord_storage_tick(void);

#endif							/* MZCOORD_STORAGE_H */
