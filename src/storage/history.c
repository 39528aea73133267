/*-------------------------------------------------------------------------
 *
 * history.c
 *	  Finding the history relation of a table, source or materialized view,
 *	  writing updates into it, and running internal SQL as the histories'
 *	  owner.
 *
 * A history is a relation mzcoord.history_u<N> owned by the extension
 * owner, readable and writable by nobody else (install.c creates it).
 * Updates are written straight into the heap with table_multi_insert, as
 * COPY does, and into its two indexes with index_insert (one entry per
 * row: insertions in one, retractions in the other): no executor, no plan,
 * no permission check on the history (the caller checked the user's right
 * to write the relation itself).
 *
 * IDENTIFICATION
 *	  src/storage/history.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_am.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_coerce.h"
#include "parser/parse_func.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "history.h"
#include "ids.h"
#include "rec_storage.h"
#include "settings.h"
#include "support.h"

/* A history write buffers at most this many rows or bytes before flushing. */
#define MZC_WRITE_BATCH_ROWS 1000
#define MZC_WRITE_BATCH_BYTES (256 * 1024)

/* ----------------------------------------------------------------
 * Running SQL as the extension owner
 * ----------------------------------------------------------------
 */

/*
 * Switch to the owner of the histories (the extension owner) for internal
 * statements on mzcoord's relations: mzcoord_become_owner as a restricted
 * operation, mzcoord_become_definer (below) as a SECURITY DEFINER function.
 *
 * The statements run with the owner's rights, so nothing in them may be
 * resolved through the caller's search_path (or the database's or role's
 * default for it): a function or operator the caller put in a schema
 * searched before pg_catalog would run as the owner, often a superuser.  As
 * PostgreSQL does for a SECURITY DEFINER function with a SET clause
 * (fmgr_security_definer), search_path is pinned to pg_catalog, pg_temp in a
 * GUC nest level of its own for the whole section; pg_temp last, so that
 * not even a temporary function can shadow a built-in.
 *
 * Returns the GUC nest level, which the caller hands to
 * mzcoord_restore_user on success.  Errors restore both the user and the
 * setting through (sub)transaction abort, which unwinds every GUC nest level
 * above the (sub)transaction's own.
 */
static int
become(Oid owner, int flags, Oid *save_user, int *save_sec)
{
	int			nest;

	GetUserIdAndSecContext(save_user, save_sec);
	SetUserIdAndSecContext(owner, *save_sec | flags);
	nest = NewGUCNestLevel();
	(void) set_config_option("search_path", MZC_SAFE_SEARCH_PATH,
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return nest;
}

int
mzcoord_become_owner(Oid owner, Oid *save_user, int *save_sec)
{
	return become(owner, SECURITY_LOCAL_USERID_CHANGE |
				  SECURITY_RESTRICTED_OPERATION, save_user, save_sec);
}

/*
 * The same, but not as a restricted operation: as a SECURITY DEFINER
 * function of the extension runs its body.  Only for statements on
 * mzcoord's own catalog tables, some of whose constraints are deferred,
 * which a restricted operation may not queue.
 */
int
mzcoord_become_definer(Oid owner, Oid *save_user, int *save_sec)
{
	return become(owner, SECURITY_LOCAL_USERID_CHANGE, save_user, save_sec);
}

void
mzcoord_restore_user(Oid save_user, int save_sec, int nest)
{
	AtEOXact_GUC(true, nest);
	SetUserIdAndSecContext(save_user, save_sec);
}

/* ----------------------------------------------------------------
 * Finding the history of a relation
 * ----------------------------------------------------------------
 */

typedef struct MzcHistoryCacheEntry
{
	Oid			relid;			/* hash key */
	MzcHistory *hist;			/* NULL or invalid: look it up again */
} MzcHistoryCacheEntry;

/*
 * Per history, what a writer found its indexes to be (see "Writing
 * updates" below): known until a relcache invalidation of the history or
 * of one of the two indexes.
 */
typedef struct MzcIndexShape
{
	Oid			histid;			/* hash key */
	bool		known;			/* false: inspect the indexes again */
	Oid			insertions_index;	/* both valid: write entries directly */
	Oid			retractions_index;
} MzcIndexShape;

static HTAB *history_cache = NULL;
static HTAB *shape_cache = NULL;
static MemoryContext history_cxt = NULL;

/*
 * Relcache invalidation of a relation or its history drops the entry; of a
 * history or one of its indexes, what a writer knows of its indexes.
 */
static void
history_cache_inval(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	MzcHistoryCacheEntry *e;
	MzcIndexShape *s;

	if (history_cache == NULL)
		return;
	hash_seq_init(&status, history_cache);
	while ((e = hash_seq_search(&status)) != NULL)
		if (e->hist != NULL &&
			(!OidIsValid(relid) || e->relid == relid || e->hist->histid == relid))
			e->hist->valid = false;
	hash_seq_init(&status, shape_cache);
	while ((s = hash_seq_search(&status)) != NULL)
		if (!OidIsValid(relid) || s->histid == relid ||
			s->insertions_index == relid || s->retractions_index == relid)
			s->known = false;
}

static void
history_cache_init(void)
{
	if (history_cache != NULL)
		return;
	history_cxt = AllocSetContextCreate(CacheMemoryContext,
										"mzcoord history cache",
										ALLOCSET_SMALL_SIZES);
	history_cache = mzcoord_local_hash("mzcoord history cache", 64,
									   sizeof(Oid),
									   sizeof(MzcHistoryCacheEntry),
									   history_cxt);
	shape_cache = mzcoord_local_hash("mzcoord history index shapes", 64,
									 sizeof(Oid), sizeof(MzcIndexShape),
									 history_cxt);
	CacheRegisterRelcacheCallback(history_cache_inval, (Datum) 0);
}

/* Attribute number of column "name" in rel's descriptor, 0 if none. */
AttrNumber
mzcoord_desc_attnum(TupleDesc desc, const char *name)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return att->attnum;
	}
	return 0;
}

/* The storage row of relid: global id, kind and history; false if none. */
bool
mzcoord_storage_row(Oid relid, int64 *gid, MzcKind *kind, Oid *histid)
{
	MzcRecStorage row;
	bool		found;

	mzcoord_spi_connect();
	if (!mzcoord_rec_storage_of_relation(relid, &row, &found))
		elog(ERROR, "could not look up the history of relation %u", relid);
	if (found)
	{
		if (!mzcoord_parse_gid(row.global_id, gid) ||
			!mzcoord_kind_parse(row.kind, kind))
			elog(ERROR, "invalid row in mzcoord.storage for relation %u", relid);
		*histid = row.histid;
	}
	SPI_finish();
	return found;
}

/*
 * Read mzcoord.storage for relid (latest committed state plus this
 * transaction's own changes, whatever the isolation level) and build the
 * mapping of its attributes.  Returns NULL if relid has no history.
 */
static MzcHistory *
history_build(Oid relid)
{
	MzcHistory *h = NULL;
	int64		gid = 0;
	MzcKind		kind = MZC_KIND_TABLE;
	Oid			histid = InvalidOid;

	if (!mzcoord_storage_row(relid, &gid, &kind, &histid))
		return NULL;

	{
		Relation	rel = relation_open(relid, AccessShareLock);
		Relation	hrel = try_relation_open(histid, AccessShareLock);
		TupleDesc	desc = RelationGetDescr(rel);
		MemoryContext old;

		if (hrel == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("history of relation \"%s\" is missing",
							RelationGetRelationName(rel))));

		old = MemoryContextSwitchTo(history_cxt);
		h = palloc0(sizeof(MzcHistory));
		h->relid = relid;
		h->gid = gid;
		h->kind = kind;
		h->histid = histid;
		h->owner = hrel->rd_rel->relowner;
		h->natts = desc->natts;
		h->hist_attno = palloc0(sizeof(AttrNumber) * Max(desc->natts, 1));
		h->hist_natts = RelationGetDescr(hrel)->natts;
		MemoryContextSwitchTo(old);

		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);
			char		name[NAMEDATALEN];

			if (att->attisdropped)
				continue;
			snprintf(name, sizeof(name), "c%d", att->attnum);
			h->hist_attno[i] = mzcoord_desc_attnum(RelationGetDescr(hrel), name);
			if (h->hist_attno[i] == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("history of relation \"%s\" has no column for column \"%s\"",
								RelationGetRelationName(rel), NameStr(att->attname))));
		}
		h->ts_attno = mzcoord_desc_attnum(RelationGetDescr(hrel), MZC_HISTORY_TS);
		h->diff_attno = mzcoord_desc_attnum(RelationGetDescr(hrel), MZC_HISTORY_DIFF);
		if (h->ts_attno == 0 || h->diff_attno == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("history \"%s\" has no columns ts and diff",
							RelationGetRelationName(hrel))));
		relation_close(hrel, AccessShareLock);
		relation_close(rel, AccessShareLock);
	}
	h->valid = true;
	return h;
}

/* A copy of h in the current memory context. */
MzcHistory *
mzcoord_history_copy(const MzcHistory *h)
{
	MzcHistory *c = palloc(sizeof(MzcHistory));

	*c = *h;
	c->hist_attno = palloc(sizeof(AttrNumber) * Max(h->natts, 1));
	memcpy(c->hist_attno, h->hist_attno, sizeof(AttrNumber) * Max(h->natts, 1));
	return c;
}

/*
 * The history of relid, as a copy in the current memory context (it stays
 * valid whatever invalidations arrive later).  NULL if relid has none and
 * missing_ok; otherwise 42809.
 */
MzcHistory *
mzcoord_history_lookup(Oid relid, bool missing_ok)
{
	MzcHistoryCacheEntry *e;
	bool		found;

	history_cache_init();
	e = hash_search(history_cache, &relid, HASH_ENTER, &found);
	if (!found)
		e->hist = NULL;
	if (e->hist == NULL || !e->hist->valid)
	{
		MzcHistory *h;

		if (e->hist != NULL)
		{
			pfree(e->hist->hist_attno);
			pfree(e->hist);
			e->hist = NULL;
		}
		h = history_build(relid);
		/* The lookup may have accepted invalidations: find the entry again. */
		e = hash_search(history_cache, &relid, HASH_ENTER, &found);
		if (found && e->hist != NULL && e->hist != h)
		{
			pfree(e->hist->hist_attno);
			pfree(e->hist);
		}
		e->hist = h;
	}
	if (e->hist == NULL)
	{
		(void) hash_search(history_cache, &relid, HASH_REMOVE, NULL);
		if (missing_ok)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("relation \"%s\" is not an mzcoord table, source or materialized view",
						get_rel_name(relid) ? get_rel_name(relid) : "?"),
				 errhint("Register a table with mzcoord.create_table(), or create a source with mzcoord.create_source().")));
	}
	return mzcoord_history_copy(e->hist);
}

/*
 * A comma-separated list with one entry per live attribute of reldesc, in
 * attribute order: the history column ("c<attnum>") or the quoted column
 * name, each after prefix.
 */
static char *
column_list(TupleDesc reldesc, const char *prefix, bool history)
{
	StringInfoData buf;
	bool		first = true;

	initStringInfo(&buf);
	for (int i = 0; i < reldesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(reldesc, i);

		if (att->attisdropped)
			continue;
		appendStringInfo(&buf, "%s%s", first ? "" : ", ", prefix);
		if (history)
			appendStringInfo(&buf, "c%d", att->attnum);
		else
			appendStringInfoString(&buf, quote_identifier(NameStr(att->attname)));
		first = false;
	}
	return buf.data;
}

/* "c1, c2, ...": the history columns that hold reldesc's live attributes. */
char *
mzcoord_history_column_list(TupleDesc reldesc, const char *prefix)
{
	return column_list(reldesc, prefix, true);
}

/* "a, b, ...": reldesc's live attributes, quoted. */
char *
mzcoord_relation_column_list(TupleDesc reldesc, const char *prefix)
{
	return column_list(reldesc, prefix, false);
}

/* ----------------------------------------------------------------
 * Writing updates
 * ----------------------------------------------------------------
 */

/*
 * A history's indexes are the two install.c creates: a btree on ts of the
 * rows with diff > 0 (its insertions) and one on ts of the rows with diff
 * < 0 (its retractions).  Each row has one entry, in one of them: a read of
 * every row in time order merges the two (see "Reading a history").  A
 * writer that finds exactly these inserts the entries itself: the key is
 * the row's ts, and the index is chosen by the sign of its diff.  The
 * executor's way (ExecOpenIndices, ExecInsertIndexTuples) builds each
 * index's description and compiles the partial indexes' predicates for
 * every writer, and evaluates them for every row: for the commit of a small
 * transaction (a few rows in each of a few histories) that set-up cost
 * about as much as the entries themselves.  Any other set of indexes (one
 * added by hand, one being built concurrently and not yet ready) goes the
 * executor's way, which handles every case.
 */
typedef enum MzcIndexKind
{
	MZC_INDEX_OTHER,
	MZC_INDEX_INSERTIONS,
	MZC_INDEX_RETRACTIONS,
} MzcIndexKind;

/*
 * Which sign pred (an index predicate, implicit AND) selects: 1 if it is
 * exactly "diff > 0", -1 if exactly "diff < 0", else 0.
 */
static int
predicate_sign(List *pred, AttrNumber diff_attno)
{
	OpExpr	   *op;
	Var		   *var;
	Const	   *c;
	Oid			fn;
	int64		bound;

	if (list_length(pred) != 1 || !IsA(linitial(pred), OpExpr))
		return 0;
	op = linitial(pred);
	if (list_length(op->args) != 2 || !IsA(linitial(op->args), Var) ||
		!IsA(lsecond(op->args), Const))
		return 0;
	var = linitial(op->args);
	c = lsecond(op->args);
	if (var->varattno != diff_attno || c->constisnull)
		return 0;
	if (c->consttype == INT4OID)
		bound = DatumGetInt32(c->constvalue);
	else if (c->consttype == INT8OID)
		bound = DatumGetInt64(c->constvalue);
	else
		return 0;
	if (bound != 0)
		return 0;
	fn = get_opcode(op->opno);
	if (fn == F_INT84LT || fn == F_INT8LT)
		return -1;
	if (fn == F_INT84GT || fn == F_INT8GT)
		return 1;
	return 0;
}

/*
 * Which of the two index shapes idx has, if any, as an index of a history
 * whose ts and diff columns are ts_attno and diff_attno.
 */
static MzcIndexKind
index_kind_of(Relation idx, AttrNumber ts_attno, AttrNumber diff_attno)
{
	Form_pg_index ind = idx->rd_index;
	int			sign;

	if (idx->rd_rel->relam != BTREE_AM_OID || ind->indnatts != 1 ||
		ind->indnkeyatts != 1 || ind->indisunique || ind->indisexclusion ||
		!ind->indisready || !ind->indislive ||
		ind->indkey.values[0] != ts_attno ||
		idx->rd_opfamily[0] != INTEGER_BTREE_FAM_OID ||
		idx->rd_indoption[0] != 0 ||
		RelationGetIndexExpressions(idx) != NIL)
		return MZC_INDEX_OTHER;
	sign = predicate_sign(RelationGetIndexPredicate(idx), diff_attno);
	return sign > 0 ? MZC_INDEX_INSERTIONS :
		sign < 0 ? MZC_INDEX_RETRACTIONS : MZC_INDEX_OTHER;
}

/* Which of the two index shapes of h's history idx has, if any. */
static MzcIndexKind
index_kind(Relation idx, const MzcHistory *h)
{
	return index_kind_of(idx, h->ts_attno, h->diff_attno);
}

/*
 * Can a read use idx, an index of history hrel, as the history's index of
 * insertions (or, if retractions, of retractions)?  Only an index of the
 * shape install.c creates, and valid: a btree that finds every insertion
 * (or every retraction) by its ts.  Another index under that name (replaced by
 * hand, or left invalid by a failed concurrent build) would make a read
 * miss rows or fail in the access method.
 */
bool
mzcoord_history_index_serves(Relation hrel, Relation idx, bool retractions)
{
	TupleDesc	desc = RelationGetDescr(hrel);
	MzcIndexKind kind;

	if (idx->rd_index->indrelid != RelationGetRelid(hrel) ||
		!idx->rd_index->indisvalid)
		return false;
	kind = index_kind_of(idx, mzcoord_desc_attnum(desc, MZC_HISTORY_TS),
						 mzcoord_desc_attnum(desc, MZC_HISTORY_DIFF));
	return kind == (retractions ? MZC_INDEX_RETRACTIONS : MZC_INDEX_INSERTIONS);
}

/*
 * The IndexInfo index_insert hands the access method, for both shapes: one
 * key column, no expressions (nor the predicate: the writer chooses the
 * index by the sign of the row's diff).  The btree access method reads nothing from
 * it for an insert (other access methods keep state there, hence not NULL).
 */
static IndexInfo *direct_index_info = NULL;

static IndexInfo *
make_direct_index_info(void)
{
	MemoryContext old = MemoryContextSwitchTo(history_cxt);
	IndexInfo  *ii = makeIndexInfo(1, 1, BTREE_AM_OID, NIL, NIL,
								   false, false, true, false);

	MemoryContextSwitchTo(old);
	return ii;
}

/* Look at the indexes of the writer's history (locked): see above. */
static void
inspect_indexes(MzcHistoryWriter *w, MzcIndexShape *s)
{
	List	   *list = RelationGetIndexList(w->rel);
	ListCell   *lc;

	s->insertions_index = InvalidOid;
	s->retractions_index = InvalidOid;
	if (list_length(list) == 2)
	{
		foreach(lc, list)
		{
			Relation	idx = index_open(lfirst_oid(lc), RowExclusiveLock);
			MzcIndexKind kind = index_kind(idx, w->hist);

			index_close(idx, NoLock);
			if (kind == MZC_INDEX_INSERTIONS)
				s->insertions_index = lfirst_oid(lc);
			else if (kind == MZC_INDEX_RETRACTIONS)
				s->retractions_index = lfirst_oid(lc);
		}
	}
	if (!OidIsValid(s->insertions_index) || !OidIsValid(s->retractions_index))
		s->insertions_index = s->retractions_index = InvalidOid;
	s->known = true;
	list_free(list);
}

/*
 * Open the writer's indexes: the two known ones directly when that is all
 * the history has, else all of them through a result relation.
 */
static void
open_indexes(MzcHistoryWriter *w)
{
	MzcIndexShape *s;
	bool		found;
	Oid			histid = RelationGetRelid(w->rel);

	history_cache_init();
	s = hash_search(shape_cache, &histid, HASH_ENTER, &found);
	if (!found)
		s->known = false;
	if (!s->known)
		inspect_indexes(w, s);
	if (OidIsValid(s->insertions_index))
	{
		if (direct_index_info == NULL)
			direct_index_info = make_direct_index_info();
		w->insertions_index = index_open(s->insertions_index, RowExclusiveLock);
		w->retractions_index = index_open(s->retractions_index, RowExclusiveLock);
		return;
	}
	w->estate = CreateExecutorState();
	w->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(w->rri, w->rel, 1, NULL, 0);
	ExecOpenIndices(w->rri, false);
}

/*
 * Start writing updates into h's history.  bulk: many rows are expected
 * (use a bulk-insert buffer strategy).  The caller holds a lock on the
 * relation that excludes concurrent DDL.  The history is opened with
 * RowExclusiveLock, which does not conflict with the
 * ShareUpdateExclusiveLock of compaction: writers never wait for it.
 */
void
mzcoord_history_writer_begin(MzcHistoryWriter *w, const MzcHistory *h, bool bulk)
{
	memset(w, 0, sizeof(*w));
	w->hist = h;
	w->rel = table_open(h->histid, RowExclusiveLock);
	if (RelationGetDescr(w->rel)->natts != h->hist_natts)
		elog(ERROR, "history \"%s\" has %d columns, its writer expects %d",
			 RelationGetRelationName(w->rel), RelationGetDescr(w->rel)->natts,
			 h->hist_natts);
	open_indexes(w);
	w->maxslots = bulk ? MZC_WRITE_BATCH_ROWS : 16;
	w->slots = palloc0(sizeof(TupleTableSlot *) * w->maxslots);
	w->ts = palloc(sizeof(int64) * w->maxslots);
	w->diffs = palloc(sizeof(int64) * w->maxslots);
	w->bistate = bulk ? GetBulkInsertState() : NULL;
	w->cid = GetCurrentCommandId(true);
}

/*
 * Index the i-th row of the batch, just written into the heap: one entry,
 * in the index its diff's sign selects (none for a diff of zero, which no
 * writer writes).
 */
static void
index_row(MzcHistoryWriter *w, int i)
{
	TupleTableSlot *slot = w->slots[i];
	Datum		key = Int64GetDatum(w->ts[i]);
	bool		isnull = false;

	if (w->insertions_index == NULL)
	{
		if (w->rri->ri_NumIndices > 0)
			list_free(ExecInsertIndexTuples(w->rri, slot, w->estate,
											false, false, NULL, NIL));
		ResetPerTupleExprContext(w->estate);
		return;
	}
	if (w->diffs[i] > 0)
		index_insert(w->insertions_index, &key, &isnull, &slot->tts_tid,
					 w->rel, UNIQUE_CHECK_NO, false, direct_index_info);
	else if (w->diffs[i] < 0)
		index_insert(w->retractions_index, &key, &isnull, &slot->tts_tid,
					 w->rel, UNIQUE_CHECK_NO, false, direct_index_info);
}

static void
history_writer_flush(MzcHistoryWriter *w)
{
	if (w->nslots == 0)
		return;
	table_multi_insert(w->rel, w->slots, w->nslots, w->cid, 0, w->bistate);
	for (int i = 0; i < w->nslots; i++)
	{
		index_row(w, i);
		ExecClearTuple(w->slots[i]);
	}
	w->written += w->nslots;
	w->nslots = 0;
	w->batch_bytes = 0;
}

/* The writer's next slot, emptied, with every column null. */
static TupleTableSlot *
writer_next_slot(MzcHistoryWriter *w)
{
	TupleTableSlot *slot;

	if (w->slots[w->nslots] == NULL)
		w->slots[w->nslots] = table_slot_create(w->rel, NULL);
	slot = w->slots[w->nslots];
	ExecClearTuple(slot);
	for (int i = 0; i < w->hist->hist_natts; i++)
	{
		slot->tts_values[i] = (Datum) 0;
		slot->tts_isnull[i] = true;
	}
	return slot;
}

/* Set slot's time and diff, keep it, and write the batch when it is full. */
static void
writer_keep_slot(MzcHistoryWriter *w, TupleTableSlot *slot, int64 ts, int64 diff)
{
	const MzcHistory *h = w->hist;

	slot->tts_values[h->ts_attno - 1] = Int64GetDatum(ts);
	slot->tts_isnull[h->ts_attno - 1] = false;
	slot->tts_values[h->diff_attno - 1] = Int64GetDatum(diff);
	slot->tts_isnull[h->diff_attno - 1] = false;
	ExecStoreVirtualTuple(slot);
	/* The caller reuses what the values point to: own them. */
	ExecMaterializeSlot(slot);
	w->ts[w->nslots] = ts;
	w->diffs[w->nslots] = diff;
	w->batch_bytes += 64;

	if (++w->nslots >= w->maxslots || w->batch_bytes >= MZC_WRITE_BATCH_BYTES)
		history_writer_flush(w);
}

/*
 * Add one update: the row (a slot of the relation's descriptor) with its
 * time and diff.
 */
void
mzcoord_history_writer_add(MzcHistoryWriter *w, TupleTableSlot *row,
						   int64 ts, int64 diff)
{
	const MzcHistory *h = w->hist;
	TupleTableSlot *slot;

	if (row->tts_tupleDescriptor->natts != h->natts)
		elog(ERROR, "row of %d columns for the history of a relation of %d",
			 row->tts_tupleDescriptor->natts, h->natts);
	slot = writer_next_slot(w);
	slot_getallattrs(row);
	for (int i = 0; i < h->natts; i++)
	{
		AttrNumber	a = h->hist_attno[i];

		if (a == 0)
			continue;
		slot->tts_values[a - 1] = row->tts_values[i];
		slot->tts_isnull[a - 1] = row->tts_isnull[i];
		if (!row->tts_isnull[i] && TupleDescAttr(row->tts_tupleDescriptor, i)->attlen == -1)
			w->batch_bytes += VARSIZE_ANY(DatumGetPointer(row->tts_values[i]));
	}
	writer_keep_slot(w, slot, ts, diff);
}

/*
 * Add one update given as the columns of a history row (values and isnull
 * in the history's column order; its ts and diff are ignored), at ts with
 * diff: compaction writes back rows it read from the history.
 */
void
mzcoord_history_writer_add_columns(MzcHistoryWriter *w, Datum *values,
								   bool *isnull, int64 ts, int64 diff)
{
	TupleDesc	desc = RelationGetDescr(w->rel);
	TupleTableSlot *slot = writer_next_slot(w);

	for (int i = 0; i < w->hist->hist_natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		slot->tts_values[i] = values[i];
		slot->tts_isnull[i] = isnull[i];
		if (!isnull[i] && att->attlen == -1)
			w->batch_bytes += VARSIZE_ANY(DatumGetPointer(values[i]));
	}
	writer_keep_slot(w, slot, ts, diff);
}

void
mzcoord_history_writer_end(MzcHistoryWriter *w)
{
	history_writer_flush(w);
	for (int i = 0; i < w->maxslots; i++)
		if (w->slots[i] != NULL)
			ExecDropSingleTupleTableSlot(w->slots[i]);
	if (w->bistate)
		FreeBulkInsertState(w->bistate);
	if (w->insertions_index != NULL)
	{
		index_close(w->insertions_index, NoLock);
		index_close(w->retractions_index, NoLock);
	}
	else
	{
		ExecCloseIndices(w->rri);
		FreeExecutorState(w->estate);
	}
	table_close(w->rel, NoLock);
}

/* Refuse relations that take part in inheritance or partitioning. */
void
mzcoord_check_no_inheritance(Oid relid)
{
	if (has_superclass(relid) || has_subclass(relid) ||
		get_rel_relispartition(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("mzcoord tables cannot take part in inheritance or partitioning"),
				 errdetail("Relation \"%s\" has an inheritance parent or child.",
						   get_rel_name(relid)),
				 errhint("Statements on a parent or child change rows that the history of the other would not record.")));
}

/* ----------------------------------------------------------------
 * Reading a history (history.h)
 * ----------------------------------------------------------------
 */

/* OID of one of the indexes of a history ("insertions" or "retractions"). */
static Oid
history_index(const MzcHistory *h, const char *suffix)
{
	char		name[NAMEDATALEN];
	Oid			idx;

	snprintf(name, sizeof(name), "history_u" INT64_FORMAT "_%s", h->gid, suffix);
	idx = get_relname_relid(name, get_rel_namespace(h->histid));
	if (!OidIsValid(idx))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index \"%s\" of history \"%s\" is missing",
						name, get_rel_name(h->histid))));
	return idx;
}

/*
 * Map a history tuple to a row of the relation (a virtual slot of the
 * relation's descriptor; dropped attributes are null) and return its time
 * and diff.  The row's values point into hslot.
 */
void
mzcoord_history_to_row(const MzcHistory *h, TupleTableSlot *hslot,
					   TupleTableSlot *row, int64 *ts, int64 *diff)
{
	int			maxatt = Max(h->ts_attno, h->diff_attno);

	for (int i = 0; i < h->natts; i++)
		if (h->hist_attno[i] > maxatt)
			maxatt = h->hist_attno[i];
	slot_getsomeattrs(hslot, maxatt);
	*ts = DatumGetInt64(hslot->tts_values[h->ts_attno - 1]);
	*diff = DatumGetInt64(hslot->tts_values[h->diff_attno - 1]);

	ExecClearTuple(row);
	for (int i = 0; i < h->natts; i++)
	{
		AttrNumber	a = h->hist_attno[i];

		if (a == 0)
		{
			row->tts_values[i] = (Datum) 0;
			row->tts_isnull[i] = true;
		}
		else
		{
			row->tts_values[i] = hslot->tts_values[a - 1];
			row->tts_isnull[i] = hslot->tts_isnull[a - 1];
		}
	}
	ExecStoreVirtualTuple(row);
}

/*
 * Open one index of the read's history (its name's suffix, "insertions" or
 * "retractions") as part i; a clear error if it is not the index mzcoord
 * created.
 */
static void
open_read_part(MzcHistoryRead *r, int i, const char *suffix)
{
	MzcHistoryReadPart *p = &r->parts[i];
	bool		retractions = strcmp(suffix, "retractions") == 0;

	p->idx = index_open(history_index(r->h, suffix), AccessShareLock);
	if (!mzcoord_history_index_serves(r->hrel, p->idx, retractions))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" of history \"%s\" is not the index mzcoord created",
						RelationGetRelationName(p->idx),
						RelationGetRelationName(r->hrel)),
				 errdetail("Reads need a valid btree index on column \"%s\" of the rows with \"%s\" %s 0.",
						   MZC_HISTORY_TS, MZC_HISTORY_DIFF, retractions ? "<" : ">"),
				 errhint("Drop it and create it again: CREATE INDEX %s ON %s (%s) WHERE %s %s 0.",
						 quote_identifier(RelationGetRelationName(p->idx)),
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(r->hrel)),
													RelationGetRelationName(r->hrel)),
						 MZC_HISTORY_TS, MZC_HISTORY_DIFF, retractions ? "<" : ">")));
	p->slot = table_slot_create(r->hrel, NULL);
	p->scan = NULL;
	p->fetched = false;
	p->done = true;
}

/*
 * Open h's history for reads with snapshot: of every row ("ts"), through
 * both its indexes, or of its retractions ("retractions"); h must stay
 * valid until mzcoord_history_close_read.
 */
void
mzcoord_history_open_read(MzcHistoryRead *r, const MzcHistory *h,
						  const char *index, Snapshot snapshot)
{
	r->h = h;
	r->hrel = table_open(h->histid, AccessShareLock);
	if (strcmp(index, "retractions") == 0)
	{
		r->nparts = 1;
		open_read_part(r, 0, "retractions");
	}
	else
	{
		r->nparts = 2;
		open_read_part(r, 0, "insertions");
		open_read_part(r, 1, "retractions");
	}
	r->hslot = r->parts[0].slot;
	r->snapshot = snapshot;
	r->from = 0;
	r->upto = -1;
}

/*
 * Start a scan of the rows with from <= ts < upto (no upper limit when
 * upto < 0), in time order; a scan already running restarts with these
 * bounds, which costs one descent of each index, not a new scan.
 */
void
mzcoord_history_time_scan(MzcHistoryRead *r, int64 from, int64 upto)
{
	ScanKeyData keys[2];
	int			nkeys = 1;

	ScanKeyInit(&keys[0], 1, BTGreaterEqualStrategyNumber, F_INT8GE,
				Int64GetDatum(from));
	if (upto >= 0)
		ScanKeyInit(&keys[nkeys++], 1, BTLessStrategyNumber, F_INT8LT,
					Int64GetDatum(upto));
	for (int i = 0; i < r->nparts; i++)
	{
		MzcHistoryReadPart *p = &r->parts[i];

		/* A restart keeps the number of keys the scan began with. */
		if (p->scan != NULL && p->scan->numberOfKeys != nkeys)
		{
			index_endscan(p->scan);
			p->scan = NULL;
		}
		if (p->scan == NULL)
			p->scan = index_beginscan(r->hrel, p->idx, r->snapshot, nkeys, 0);
		index_rescan(p->scan, keys, nkeys, NULL, 0);
		p->fetched = false;
		p->done = false;
	}
	r->from = from;
	r->upto = upto;
}

/* Start a scan of the rows at exactly time `at`. */
void
mzcoord_history_at_scan(MzcHistoryRead *r, int64 at)
{
	mzcoord_history_time_scan(r, at, at < PG_INT64_MAX ? at + 1 : -1);
}

/*
 * Fetch part p's next row within the scan's bounds, unless it has one
 * waiting.  The bounds are checked again on each row, as every reader of a
 * history always has: a scan key is the index's promise, the check is the
 * reader's.
 */
static void
fetch_part(MzcHistoryRead *r, MzcHistoryReadPart *p)
{
	const MzcHistory *h = r->h;

	if (p->fetched || p->done)
		return;
	while (index_getnext_slot(p->scan, ForwardScanDirection, p->slot))
	{
		CHECK_FOR_INTERRUPTS();
		slot_getsomeattrs(p->slot, Max(h->ts_attno, h->diff_attno));
		p->ts = DatumGetInt64(p->slot->tts_values[h->ts_attno - 1]);
		p->diff = DatumGetInt64(p->slot->tts_values[h->diff_attno - 1]);
		if (p->ts < r->from || (r->upto >= 0 && p->ts >= r->upto))
			continue;
		p->fetched = true;
		return;
	}
	p->done = true;
}

/*
 * The next row of the scan, false at its end: its time and diff, and, if
 * row is not NULL, the row itself in row (see mzcoord_history_to_row;
 * valid until the next call).  The rows of the parts come merged by time;
 * at one time, insertions before retractions.
 */
bool
mzcoord_history_next(MzcHistoryRead *r, TupleTableSlot *row, int64 *ts,
					 int64 *diff)
{
	MzcHistoryReadPart *next = NULL;

	for (int i = 0; i < r->nparts; i++)
	{
		MzcHistoryReadPart *p = &r->parts[i];

		fetch_part(r, p);
		if (p->fetched && (next == NULL || p->ts < next->ts))
			next = p;
	}
	if (next == NULL)
		return false;
	next->fetched = false;
	r->hslot = next->slot;
	if (row != NULL)
		mzcoord_history_to_row(r->h, next->slot, row, ts, diff);
	else
	{
		*ts = next->ts;
		*diff = next->diff;
	}
	return true;
}

/* End the read: the scans, the indexes and the history. */
void
mzcoord_history_close_read(MzcHistoryRead *r)
{
	for (int i = 0; i < r->nparts; i++)
	{
		MzcHistoryReadPart *p = &r->parts[i];

		if (p->scan != NULL)
			index_endscan(p->scan);
		index_close(p->idx, AccessShareLock);
		ExecDropSingleTupleTableSlot(p->slot);
	}
	table_close(r->hrel, AccessShareLock);
}

/*
 * An SQL condition on the rows of a history for which cond (a condition on
 * ts) holds, written so that the planner can find them through the two
 * partial indexes (a BitmapOr): every row has a diff other than zero.
 */
char *
mzcoord_history_indexed_condition(const char *cond)
{
	return psprintf("((%s AND " MZC_HISTORY_DIFF " OPERATOR(pg_catalog.>) 0)"
					" OR (%s AND " MZC_HISTORY_DIFF " OPERATOR(pg_catalog.<) 0))",
					cond, cond);
}
