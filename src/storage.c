/*-------------------------------------------------------------------------
 *
 * storage.c
 *	  History relations: creating them when a table or source is
 *	  registered, finding them, writing updates into them, following column
 *	  changes of their relations, and the storage consistency checks.
 *
 * A history is created by the catalog implications, in the transaction
 * that registers the table or creates the source (mzcoord._storage_install),
 * as a relation mzcoord.history_u<N> owned by the extension owner, readable
 * and writable by nobody else.  It depends automatically on its relation
 * and on the extension, so DROP TABLE, mzcoord.drop() and DROP EXTENSION
 * take it along; a sql_drop event trigger deletes its row in mzcoord.storage
 * when it goes.
 *
 * The triggers that capture a table's writes (storage_capture.c) and the
 * guard of a source's relation (storage_source.c) are internal triggers
 * owned by the history (an internal dependency): the table's owner cannot
 * drop or disable them, and they go away with the history.
 *
 * Updates are written straight into the heap and its indexes with
 * table_multi_insert, as COPY does: no executor, no plan, no permission
 * check on the history (the caller checked the user's right to write the
 * relation itself).
 *
 * IDENTIFICATION
 *	  src/storage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
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

#include "controller.h"
#include "mzcoord.h"
#include "storage.h"

PG_FUNCTION_INFO_V1(mzcoord_storage_install);
PG_FUNCTION_INFO_V1(mzcoord_storage_on_ddl);
PG_FUNCTION_INFO_V1(mzcoord_storage_problems);
PG_FUNCTION_INFO_V1(mzcoord_storage_reattach);

/* A history write buffers at most this many rows or bytes before flushing. */
#define MZC_WRITE_BATCH_ROWS 1000
#define MZC_WRITE_BATCH_BYTES (256 * 1024)

/* ----------------------------------------------------------------
 * Running SQL as the extension owner
 * ----------------------------------------------------------------
 */

/*
 * Switch to the owner of the histories (the extension owner) for internal
 * statements on mzcoord's relations, as a restricted operation.
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
int
mzcoord_become_owner(Oid owner, Oid *save_user, int *save_sec)
{
	int			nest;

	GetUserIdAndSecContext(save_user, save_sec);
	SetUserIdAndSecContext(owner, *save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	nest = NewGUCNestLevel();
	(void) set_config_option("search_path", MZC_SAFE_SEARCH_PATH,
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return nest;
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

static HTAB *history_cache = NULL;
static MemoryContext history_cxt = NULL;

/* Relcache invalidation of a relation or its history drops the entry. */
static void
history_cache_inval(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	MzcHistoryCacheEntry *e;

	if (history_cache == NULL)
		return;
	hash_seq_init(&status, history_cache);
	while ((e = hash_seq_search(&status)) != NULL)
		if (e->hist != NULL &&
			(!OidIsValid(relid) || e->relid == relid || e->hist->histid == relid))
			e->hist->valid = false;
}

static void
history_cache_init(void)
{
	HASHCTL		ctl;

	if (history_cache != NULL)
		return;
	history_cxt = AllocSetContextCreate(CacheMemoryContext,
										"mzcoord history cache",
										ALLOCSET_SMALL_SIZES);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(MzcHistoryCacheEntry);
	ctl.hcxt = history_cxt;
	history_cache = hash_create("mzcoord history cache", 64, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	CacheRegisterRelcacheCallback(history_cache_inval, (Datum) 0);
}

/* Attribute number of column "name" in rel's descriptor, 0 if none. */
static AttrNumber
desc_attnum(TupleDesc desc, const char *name)
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
static bool
storage_row(Oid relid, int64 *gid, MzcKind *kind, Oid *histid)
{
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	SPIPlanPtr	plan;
	bool		found = false;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare("SELECT s.global_id, s.kind, s.history::oid"
					   "  FROM mzcoord.storage s"
					   " WHERE s.relation OPERATOR(pg_catalog.=) $1",
					   1, argtypes);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, true, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the history of relation %u", relid);
	if (SPI_processed > 0)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		if (!mzcoord_parse_gid(SPI_getvalue(tup, desc, 1), gid) ||
			!mzcoord_kind_parse(SPI_getvalue(tup, desc, 2), kind))
			elog(ERROR, "invalid row in mzcoord.storage for relation %u", relid);
		*histid = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
		found = true;
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

	if (!storage_row(relid, &gid, &kind, &histid))
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
			h->hist_attno[i] = desc_attnum(RelationGetDescr(hrel), name);
			if (h->hist_attno[i] == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("history of relation \"%s\" has no column for column \"%s\"",
								RelationGetRelationName(rel), NameStr(att->attname))));
		}
		h->ts_attno = desc_attnum(RelationGetDescr(hrel), MZC_HISTORY_TS);
		h->diff_attno = desc_attnum(RelationGetDescr(hrel), MZC_HISTORY_DIFF);
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
				 errmsg("relation \"%s\" is not an mzcoord table or source",
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
	w->estate = CreateExecutorState();
	w->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(w->rri, w->rel, 1, NULL, 0);
	ExecOpenIndices(w->rri, false);
	w->maxslots = bulk ? MZC_WRITE_BATCH_ROWS : 16;
	w->slots = palloc0(sizeof(TupleTableSlot *) * w->maxslots);
	w->bistate = bulk ? GetBulkInsertState() : NULL;
	w->cid = GetCurrentCommandId(true);
}

static void
history_writer_flush(MzcHistoryWriter *w)
{
	if (w->nslots == 0)
		return;
	table_multi_insert(w->rel, w->slots, w->nslots, w->cid, 0, w->bistate);
	for (int i = 0; i < w->nslots; i++)
	{
		if (w->rri->ri_NumIndices > 0)
		{
			List	   *recheck;

			recheck = ExecInsertIndexTuples(w->rri, w->slots[i], w->estate,
											false, false, NULL, NIL);
			list_free(recheck);
		}
		ResetPerTupleExprContext(w->estate);
		ExecClearTuple(w->slots[i]);
	}
	w->written += w->nslots;
	w->nslots = 0;
	w->batch_bytes = 0;
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
	Datum	   *values;
	bool	   *isnull;

	if (row->tts_tupleDescriptor->natts != h->natts)
		elog(ERROR, "row of %d columns for the history of a relation of %d",
			 row->tts_tupleDescriptor->natts, h->natts);
	if (w->slots[w->nslots] == NULL)
		w->slots[w->nslots] = table_slot_create(w->rel, NULL);
	slot = w->slots[w->nslots];
	ExecClearTuple(slot);
	values = slot->tts_values;
	isnull = slot->tts_isnull;
	for (int i = 0; i < h->hist_natts; i++)
	{
		values[i] = (Datum) 0;
		isnull[i] = true;
	}
	slot_getallattrs(row);
	for (int i = 0; i < h->natts; i++)
	{
		AttrNumber	a = h->hist_attno[i];

		if (a == 0)
			continue;
		values[a - 1] = row->tts_values[i];
		isnull[a - 1] = row->tts_isnull[i];
		if (!isnull[a - 1] && TupleDescAttr(row->tts_tupleDescriptor, i)->attlen == -1)
			w->batch_bytes += VARSIZE_ANY(DatumGetPointer(values[a - 1]));
	}
	values[h->ts_attno - 1] = Int64GetDatum(ts);
	isnull[h->ts_attno - 1] = false;
	values[h->diff_attno - 1] = Int64GetDatum(diff);
	isnull[h->diff_attno - 1] = false;
	ExecStoreVirtualTuple(slot);
	/* The row's slot is reused by the caller: own the values. */
	ExecMaterializeSlot(slot);
	w->batch_bytes += 64;

	if (++w->nslots >= w->maxslots || w->batch_bytes >= MZC_WRITE_BATCH_BYTES)
		history_writer_flush(w);
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
	ExecCloseIndices(w->rri);
	FreeExecutorState(w->estate);
	table_close(w->rel, NoLock);
}

/* ----------------------------------------------------------------
 * Creating a history: mzcoord._storage_install
 * ----------------------------------------------------------------
 */

/* Refuse relations that take part in inheritance or partitioning. */
static void
check_no_inheritance(Oid relid)
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

static void
spi_exec(const char *sql, int expected)
{
	int			ret = SPI_execute(sql, false, 0);

	if (ret != expected)
		elog(ERROR, "mzcoord: could not run \"%s\": %s", sql,
			 SPI_result_code_string(ret));
}

/*
 * The type of the history column of attribute att, as SQL: a domain is
 * replaced by its base type.  The values are the same, and no constraint
 * of a user's domain is ever evaluated on the history, by compaction or
 * anything else that runs as the extension owner.
 */
static char *
history_type_sql(Form_pg_attribute att, Oid *typid, int32 *typmod)
{
	char	   *type;

	*typmod = att->atttypmod;
	*typid = getBaseTypeAndTypmod(att->atttypid, typmod);
	type = format_type_extended(*typid, *typmod,
								FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);
	if (!OidIsValid(att->attcollation))
		return type;
	return psprintf("%s COLLATE %s", type, generate_collation_name(att->attcollation));
}

/* Column definitions of the history of a relation with descriptor desc. */
static char *
history_column_defs(TupleDesc desc)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Oid			typid;
		int32		typmod;

		if (att->attisdropped)
			continue;
		appendStringInfo(&buf, "c%d %s, ", att->attnum,
						 history_type_sql(att, &typid, &typmod));
	}
	appendStringInfoString(&buf, MZC_HISTORY_TS " bigint NOT NULL, "
						   MZC_HISTORY_DIFF " bigint NOT NULL");
	return buf.data;
}

/* Create one internal statement trigger on relid, owned by the history. */
static void
create_internal_trigger(Oid relid, Oid histid, const char *name,
						const char *funcname, int16 timing, int16 events,
						bool old_table, bool new_table)
{
	CreateTrigStmt *stmt = makeNode(CreateTrigStmt);
	Oid			funcoid;
	ObjectAddress trig;
	ObjectAddress hist;

	funcoid = LookupFuncName(list_make2(makeString("mzcoord"), makeString(pstrdup(funcname))),
							 0, NULL, false);
	stmt->trigname = pstrdup(name);
	stmt->relation = NULL;
	stmt->funcname = list_make2(makeString("mzcoord"), makeString(pstrdup(funcname)));
	stmt->row = false;
	stmt->timing = timing;
	stmt->events = events;
	if (old_table)
	{
		TriggerTransition *t = makeNode(TriggerTransition);

		t->name = "mzcoord_old";
		t->isNew = false;
		t->isTable = true;
		stmt->transitionRels = lappend(stmt->transitionRels, t);
	}
	if (new_table)
	{
		TriggerTransition *t = makeNode(TriggerTransition);

		t->name = "mzcoord_new";
		t->isNew = true;
		t->isTable = true;
		stmt->transitionRels = lappend(stmt->transitionRels, t);
	}
	/* Fires whatever session_replication_role says. */
	trig = CreateTriggerFiringOn(stmt, NULL, relid, InvalidOid, InvalidOid,
								 InvalidOid, funcoid, InvalidOid, NULL,
								 true, false, TRIGGER_FIRES_ALWAYS);
	ObjectAddressSet(hist, RelationRelationId, histid);
	recordDependencyOn(&trig, &hist, DEPENDENCY_INTERNAL);
}

static char *column_changes(Relation rel, Relation hrel, bool *rewrites,
							 char **unsafe);

/* Does object (classid, objid) depend on (refclassid, refobjid) with deptype? */
static bool
has_dependency(Oid classid, Oid objid, Oid refclassid, Oid refobjid,
			   char deptype)
{
	bool		found = false;
	int			ret;

	ret = SPI_execute(psprintf("SELECT 1 FROM pg_catalog.pg_depend"
							   " WHERE classid = %u AND objid = %u AND objsubid = 0"
							   "   AND refclassid = %u AND refobjid = %u AND refobjsubid = 0"
							   "   AND deptype = '%c'",
							   classid, objid, refclassid, refobjid, deptype),
					  true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_depend: %s", SPI_result_code_string(ret));
	found = SPI_processed > 0;
	return found;
}

/*
 * SQL: mzcoord._storage_reattach(global_id text) RETURNS integer
 *
 * After a restore from a dump (mzcoord.restore_after_dump()): attach the
 * history of a table or source collection again, as _storage_install left
 * it.  pg_dump carries the history's rows and the mzcoord.storage row, but
 * neither the internal triggers on the relation (capture or source guard)
 * nor the history's dependencies on its relation and on the extension.
 * Fails if the history or the relation is missing or their columns differ.
 * Returns the number of triggers created.
 */
Datum
mzcoord_storage_reattach(PG_FUNCTION_ARGS)
{
	char	   *gidtext;
	int64		gid;
	Oid			relid;
	Oid			histid;
	MzcKind		kind;
	Relation	rel;
	Relation	hrel;
	Oid			extoid;
	Oid			fn;
	bool		rewrites;
	char	   *unsafe;
	char	   *changes;
	char	   *histname;
	int			created = 0;
	bool		have[4] = {false, false, false, false};
	static const char *const capture_names[4] = {
		"mzcoord_capture_insert", "mzcoord_capture_update",
		"mzcoord_capture_delete", "mzcoord_capture_truncate"
	};
	static const int16 capture_events[4] = {
		TRIGGER_TYPE_INSERT, TRIGGER_TYPE_UPDATE,
		TRIGGER_TYPE_DELETE, TRIGGER_TYPE_TRUNCATE
	};
	ObjectAddress histaddr;
	ObjectAddress ref;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("global id must not be null")));
	gidtext = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (!mzcoord_parse_gid(gidtext, &gid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid global id: \"%s\"", gidtext)));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	{
		Oid			argtypes[1] = {TEXTOID};
		Datum		values[1] = {CStringGetTextDatum(gidtext)};
		bool		isnull;

		if (SPI_execute_with_args("SELECT relation::pg_catalog.oid, kind,"
								  "       history::pg_catalog.oid"
								  "  FROM mzcoord.storage WHERE global_id OPERATOR(pg_catalog.=) $1",
								  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read mzcoord.storage");
		if (SPI_processed == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("collection %s has no history in mzcoord.storage", gidtext)));
		relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
											   SPI_tuptable->tupdesc, 1, &isnull));
		if (!mzcoord_kind_parse(SPI_getvalue(SPI_tuptable->vals[0],
											 SPI_tuptable->tupdesc, 2), &kind))
			elog(ERROR, "unrecognized kind in mzcoord.storage for %s", gidtext);
		histid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
												SPI_tuptable->tupdesc, 3, &isnull));
	}

	rel = try_table_open(relid, ShareRowExclusiveLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the relation of collection %s does not exist", gidtext)));
	hrel = try_table_open(histid, ShareRowExclusiveLock);
	if (hrel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the history of collection %s does not exist", gidtext)));
	histname = psprintf("history_u" INT64_FORMAT, gid);
	if (RelationGetNamespace(hrel) != get_namespace_oid("mzcoord", false) ||
		strcmp(RelationGetRelationName(hrel), histname) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the history of collection %s is \"%s\", not mzcoord.%s",
						gidtext, RelationGetRelationName(hrel), histname)));
	changes = column_changes(rel, hrel, &rewrites, &unsafe);
	if (changes[0] != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the columns of %s differ from those of its relation \"%s\"",
						histname, RelationGetRelationName(rel)),
				 errdetail("It would need: %s", changes)));
	check_no_inheritance(relid);

	extoid = get_extension_oid("mzcoord", false);
	ObjectAddressSet(histaddr, RelationRelationId, histid);
	if (!has_dependency(RelationRelationId, histid, RelationRelationId, relid,
						DEPENDENCY_AUTO))
	{
		ObjectAddressSet(ref, RelationRelationId, relid);
		recordDependencyOn(&histaddr, &ref, DEPENDENCY_AUTO);
	}
	if (!has_dependency(RelationRelationId, histid, ExtensionRelationId, extoid,
						DEPENDENCY_AUTO_EXTENSION))
	{
		mzcoord_extension_lock_for_dependency();
		ObjectAddressSet(ref, ExtensionRelationId, extoid);
		recordDependencyOn(&histaddr, &ref, DEPENDENCY_AUTO_EXTENSION);
	}

	fn = LookupFuncName(list_make2(makeString("mzcoord"),
								   makeString(kind == MZC_KIND_TABLE ? "_capture" : "_source_guard")),
						0, NULL, false);
	if (rel->trigdesc != NULL)
		for (int t = 0; t < rel->trigdesc->numtriggers; t++)
		{
			Trigger    *trig = &rel->trigdesc->triggers[t];

			if (trig->tgfoid != fn)
				continue;
			/* Internal trigger names carry their OID: go by the event. */
			if (kind != MZC_KIND_TABLE)
				have[0] = true;
			else
				for (int k = 0; k < 4; k++)
					if ((trig->tgtype & TRIGGER_TYPE_EVENT_MASK) == capture_events[k])
						have[k] = true;
		}
	if (kind == MZC_KIND_TABLE)
	{
		if (!have[0])
			create_internal_trigger(relid, histid, capture_names[0],
									"_capture", TRIGGER_TYPE_AFTER,
									TRIGGER_TYPE_INSERT, false, true);
		if (!have[1])
			create_internal_trigger(relid, histid, capture_names[1],
									"_capture", TRIGGER_TYPE_AFTER,
									TRIGGER_TYPE_UPDATE, true, true);
		if (!have[2])
			create_internal_trigger(relid, histid, capture_names[2],
									"_capture", TRIGGER_TYPE_AFTER,
									TRIGGER_TYPE_DELETE, true, false);
		if (!have[3])
			create_internal_trigger(relid, histid, capture_names[3],
									"_capture", TRIGGER_TYPE_BEFORE,
									TRIGGER_TYPE_TRUNCATE, false, false);
		for (int k = 0; k < 4; k++)
			created += have[k] ? 0 : 1;
	}
	else if (!have[0])
	{
		create_internal_trigger(relid, histid, "mzcoord_source_guard",
								"_source_guard", TRIGGER_TYPE_BEFORE,
								TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE |
								TRIGGER_TYPE_DELETE | TRIGGER_TYPE_TRUNCATE,
								false, false);
		created = 1;
	}
	SPI_finish();
	CommandCounterIncrement();
	CacheInvalidateRelcacheByRelid(relid);
	table_close(hrel, NoLock);
	table_close(rel, NoLock);
	PG_RETURN_INT32(created);
}

/*
 * SQL: mzcoord._storage_install(global_id text, kind text, relation regclass,
 *		since bigint) RETURNS void
 *
 * Called by the catalog implications (as the extension owner) when a
 * collection is installed.  Tables and sources get a history; a table's
 * existing rows are recorded at its since (its registration time) and its
 * writes are captured from now on; a source's relation is guarded against
 * direct writes.  Other kinds have no history here.
 */
Datum
mzcoord_storage_install(PG_FUNCTION_ARGS)
{
	char	   *gidtext;
	char	   *kindname;
	Oid			relid;
	int64		since;
	int64		gid;
	MzcKind		kind;
	Relation	rel;
	TupleDesc	desc;
	char	   *histname;
	char	   *qhist;
	Oid			histid;
	Oid			extoid;
	int64		nrows = 0;
	ObjectAddress histaddr;
	ObjectAddress ref;
	Oid			argtypes[6] = {TEXTOID, REGCLASSOID, TEXTOID, REGCLASSOID, INT8OID, INT8OID};
	Datum		values[6];

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("global id, kind, relation and since must not be null")));
	gidtext = text_to_cstring(PG_GETARG_TEXT_PP(0));
	kindname = text_to_cstring(PG_GETARG_TEXT_PP(1));
	relid = PG_GETARG_OID(2);
	since = PG_GETARG_INT64(3);
	if (!mzcoord_parse_gid(gidtext, &gid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid global id: \"%s\"", gidtext)));
	if (!mzcoord_kind_parse(kindname, &kind))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized item kind: \"%s\"", kindname)));
	if (kind != MZC_KIND_TABLE && kind != MZC_KIND_SOURCE)
		PG_RETURN_VOID();
	if (since < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("since must not be negative")));

	/* No write may slip between reading the rows and capturing the next. */
	rel = try_table_open(relid, ShareRowExclusiveLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (rel->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(rel))));
	check_no_inheritance(relid);
	desc = RelationGetDescr(rel);
	extoid = get_extension_oid("mzcoord", false);

	histname = psprintf("history_u" INT64_FORMAT, gid);
	qhist = psprintf("mzcoord.%s", quote_identifier(histname));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	spi_exec(psprintf("CREATE TABLE %s (%s)", qhist, history_column_defs(desc)),
			 SPI_OK_UTILITY);
	spi_exec(psprintf("CREATE INDEX %s ON %s (" MZC_HISTORY_TS ")",
					  quote_identifier(psprintf("%s_ts", histname)), qhist),
			 SPI_OK_UTILITY);
	spi_exec(psprintf("CREATE INDEX %s ON %s (" MZC_HISTORY_TS ") WHERE "
					  MZC_HISTORY_DIFF " OPERATOR(pg_catalog.<) 0",
					  quote_identifier(psprintf("%s_retractions", histname)), qhist),
			 SPI_OK_UTILITY);
	spi_exec(psprintf("REVOKE ALL ON TABLE %s FROM PUBLIC", qhist), SPI_OK_UTILITY);
	histid = get_relname_relid(histname, get_namespace_oid("mzcoord", false));
	if (!OidIsValid(histid))
		elog(ERROR, "history \"%s\" was not created", histname);

	/* Dropped with its relation, and with the extension. */
	ObjectAddressSet(histaddr, RelationRelationId, histid);
	ObjectAddressSet(ref, RelationRelationId, relid);
	recordDependencyOn(&histaddr, &ref, DEPENDENCY_AUTO);
	mzcoord_extension_lock_for_dependency();
	ObjectAddressSet(ref, ExtensionRelationId, extoid);
	recordDependencyOn(&histaddr, &ref, DEPENDENCY_AUTO_EXTENSION);

	if (kind == MZC_KIND_TABLE)
	{
		create_internal_trigger(relid, histid, "mzcoord_capture_insert",
								"_capture", TRIGGER_TYPE_AFTER,
								TRIGGER_TYPE_INSERT, false, true);
		create_internal_trigger(relid, histid, "mzcoord_capture_update",
								"_capture", TRIGGER_TYPE_AFTER,
								TRIGGER_TYPE_UPDATE, true, true);
		create_internal_trigger(relid, histid, "mzcoord_capture_delete",
								"_capture", TRIGGER_TYPE_AFTER,
								TRIGGER_TYPE_DELETE, true, false);
		create_internal_trigger(relid, histid, "mzcoord_capture_truncate",
								"_capture", TRIGGER_TYPE_BEFORE,
								TRIGGER_TYPE_TRUNCATE, false, false);
	}
	else
		create_internal_trigger(relid, histid, "mzcoord_source_guard",
								"_source_guard", TRIGGER_TYPE_BEFORE,
								TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE |
								TRIGGER_TYPE_DELETE | TRIGGER_TYPE_TRUNCATE,
								false, false);
	CommandCounterIncrement();

	/*
	 * The rows the table has now are its contents at its registration time.
	 * Read them with a snapshot taken after the lock: every writer before us
	 * has committed, whatever this transaction's isolation level.
	 */
	if (kind == MZC_KIND_TABLE)
	{
		char	   *hcols = mzcoord_history_column_list(desc, "");
		char	   *rcols = mzcoord_relation_column_list(desc, "");
		const char *sep = hcols[0] ? ", " : "";
		SPIPlanPtr	plan;
		Oid			sinceargs[1] = {INT8OID};
		Datum		sinceval[1] = {Int64GetDatum(since)};
		int			ret;

		plan = SPI_prepare(psprintf("INSERT INTO %s (%s%s" MZC_HISTORY_TS ", " MZC_HISTORY_DIFF ")"
									" SELECT %s%s$1, 1 FROM ONLY %s",
									qhist, hcols, sep, rcols, sep,
									quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
															   RelationGetRelationName(rel))),
						   1, sinceargs);
		if (plan == NULL)
			elog(ERROR, "could not prepare the registration copy: %s",
				 SPI_result_code_string(SPI_result));
		ret = SPI_execute_snapshot(plan, sinceval, NULL, GetLatestSnapshot(),
								   InvalidSnapshot, false, true, 0);
		if (ret != SPI_OK_INSERT)
			elog(ERROR, "could not record the rows of \"%s\": %s",
				 RelationGetRelationName(rel), SPI_result_code_string(ret));
		nrows = SPI_processed;
	}

	values[0] = CStringGetTextDatum(gidtext);
	values[1] = ObjectIdGetDatum(relid);
	values[2] = CStringGetTextDatum(kindname);
	values[3] = ObjectIdGetDatum(histid);
	values[4] = Int64GetDatum(since);
	values[5] = Int64GetDatum(nrows);
	if (SPI_execute_with_args("INSERT INTO mzcoord.storage"
							  " (global_id, relation, kind, history, compacted,"
							  "  compacted_rows)"
							  " VALUES ($1, $2, $3, $4, $5, $6)",
							  6, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the history of \"%s\"",
			 RelationGetRelationName(rel));
	SPI_finish();

	CacheInvalidateRelcacheByRelid(relid);
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}

/* ----------------------------------------------------------------
 * Following column changes: the ddl_command_end event trigger
 * ----------------------------------------------------------------
 */

/* A base or enum type (arrays: of such types): its input runs no user code. */
static bool
plain_type(Oid typid)
{
	char		typtype = get_typtype(typid);
	Oid			elem;

	if (typtype == TYPTYPE_ENUM)
		return true;
	if (typtype != TYPTYPE_BASE)
		return false;
	elem = get_element_type(typid);
	return !OidIsValid(elem) || plain_type(elem);
}

/*
 * Can history values of type `from` be converted to (to, typmod) by their
 * cast without running code a user wrote?  The conversion runs as the
 * extension owner.
 */
static bool
builtin_cast(Oid from, Oid to, int32 typmod)
{
	Oid			funcid = InvalidOid;

	if (!plain_type(to))
		return false;
	if (typmod >= 0 &&
		find_typmod_coercion_function(to, &funcid) == COERCION_PATH_FUNC &&
		get_func_namespace(funcid) != PG_CATALOG_NAMESPACE)
		return false;
	if (from == to)
		return true;
	switch (find_coercion_pathway(to, from, COERCION_EXPLICIT, &funcid))
	{
		case COERCION_PATH_RELABELTYPE:
		case COERCION_PATH_COERCEVIAIO:
			return true;
		case COERCION_PATH_FUNC:
			return get_func_namespace(funcid) == PG_CATALOG_NAMESPACE;
		case COERCION_PATH_ARRAYCOERCE:
			return builtin_cast(get_element_type(from), get_element_type(to), -1);
		default:
			return false;
	}
}

/*
 * The ALTER TABLE subcommands that bring the history's columns in line with
 * the relation's ("" if none).  *rewrites: some change alters the values
 * (a new column or a new type), so the contents must be reconciled.
 * *unsafe: the name of a column whose new type could only be reached by a
 * cast that is not built in (NULL if none).
 */
static char *
column_changes(Relation rel, Relation hrel, bool *rewrites, char **unsafe)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleDesc	hdesc = RelationGetDescr(hrel);
	StringInfoData buf;

	initStringInfo(&buf);
	*rewrites = false;
	*unsafe = NULL;
	for (int i = 0; i < hdesc->natts; i++)
	{
		Form_pg_attribute h = TupleDescAttr(hdesc, i);
		const char *name = NameStr(h->attname);
		int			k;
		Form_pg_attribute t;
		Oid			typid;
		int32		typmod;
		char	   *typesql;

		if (h->attisdropped || name[0] != 'c' || strspn(name + 1, "0123456789") != strlen(name + 1))
			continue;
		k = atoi(name + 1);
		t = (k >= 1 && k <= desc->natts) ? TupleDescAttr(desc, k - 1) : NULL;
		if (t == NULL || t->attisdropped)
		{
			appendStringInfo(&buf, "%sDROP COLUMN %s", buf.len ? ", " : "", name);
			continue;
		}
		typesql = history_type_sql(t, &typid, &typmod);
		if (typid == h->atttypid && typmod == h->atttypmod &&
			t->attcollation == h->attcollation)
			continue;
		if (!builtin_cast(h->atttypid, typid, typmod))
			*unsafe = pstrdup(NameStr(t->attname));
		appendStringInfo(&buf, "%sALTER COLUMN %s TYPE %s USING %s::%s",
						 buf.len ? ", " : "", name, typesql, name,
						 format_type_extended(typid, typmod,
											  FORMAT_TYPE_TYPEMOD_GIVEN |
											  FORMAT_TYPE_FORCE_QUALIFY));
		*rewrites = true;
	}
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute t = TupleDescAttr(desc, i);
		char		name[NAMEDATALEN];
		Oid			typid;
		int32		typmod;

		if (t->attisdropped)
			continue;
		snprintf(name, sizeof(name), "c%d", t->attnum);
		if (desc_attnum(hdesc, name) == 0)
		{
			appendStringInfo(&buf, "%sADD COLUMN %s %s", buf.len ? ", " : "",
							 name, history_type_sql(t, &typid, &typmod));
			*rewrites = true;
		}
	}
	return buf.data;
}

typedef struct ReconcileState
{
	MzcRowSet  *set;
	TupleDesc	desc;
} ReconcileState;

static void
reconcile_subtract(void *arg, TupleTableSlot *row, int64 n)
{
	ReconcileState *st = arg;

	(void) mzcoord_rowset_add(st->set, row->tts_values, row->tts_isnull,
							  mzcoord_row_hash(st->desc, row->tts_values,
											   row->tts_isnull), -n);
}

/*
 * Start a reconciliation: a row set holding the contents of rel, as seen by
 * snapshot, each row with count 1 per copy.  The history's contents are
 * then subtracted from it with reconcile_subtract.
 */
static void
reconcile_begin(ReconcileState *st, Relation rel, TupleDesc desc,
				Snapshot snapshot)
{
	TupleTableSlot *slot;
	TableScanDesc scan;

	st->desc = desc;
	st->set = mzcoord_rowset_create(desc, CurrentMemoryContext);
	slot = table_slot_create(rel, NULL);
	scan = table_beginscan(rel, snapshot, 0, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		slot_getallattrs(slot);
		(void) mzcoord_rowset_add(st->set, slot->tts_values, slot->tts_isnull,
								  mzcoord_row_hash(desc, slot->tts_values,
												   slot->tts_isnull), 1);
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
}

/*
 * After DDL changed relid's columns: change its history's columns the same
 * way, then record at this transaction's write timestamp whatever makes the
 * history's contents equal the table's again (new columns with defaults,
 * values converted by a USING clause).  Earlier times keep their rows, with
 * new columns null and changed types converted by their cast.
 */
static void
follow_columns(Oid relid)
{
	int64		gid;
	MzcKind		kind;
	Oid			histid;
	Relation	rel;
	Relation	hrel;
	char	   *changes;
	bool		rewrites;
	char	   *unsafe;
	Oid			owner;
	Oid			save_user;
	int			save_sec;
	int			save_nest;

	if (!storage_row(relid, &gid, &kind, &histid))
		return;
	rel = relation_open(relid, AccessShareLock);
	hrel = relation_open(histid, AccessExclusiveLock);
	owner = hrel->rd_rel->relowner;
	changes = column_changes(rel, hrel, &rewrites, &unsafe);
	relation_close(hrel, NoLock);
	if (changes[0] == '\0')
	{
		relation_close(rel, NoLock);
		return;
	}
	if (kind == MZC_KIND_SOURCE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the columns of source \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("The columns of a source are fixed when it is created."),
				 errhint("Create a new source instead.")));
	if (unsafe != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the type of column \"%s\" of registered table \"%s\"",
						unsafe, RelationGetRelationName(rel)),
				 errdetail("Its history would have to be converted by a cast that is not built in."),
				 errhint("Keep the type, or convert to a built-in type.")));

	save_nest = mzcoord_become_owner(owner, &save_user, &save_sec);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	spi_exec(psprintf("ALTER TABLE mzcoord.%s %s",
					  quote_identifier(get_rel_name(histid)), changes),
			 SPI_OK_UTILITY);
	SPI_finish();
	mzcoord_restore_user(save_user, save_sec, save_nest);
	CommandCounterIncrement();
	CacheInvalidateRelcacheByRelid(relid);

	if (rewrites)
	{
		MzcHistory *h = mzcoord_history_lookup(relid, false);
		TupleDesc	desc = RelationGetDescr(rel);
		Snapshot	snapshot;
		ReconcileState st;
		TupleTableSlot *slot;
		int64		negative;
		mzc_ts		w;
		MzcHistoryWriter writer;

		mzcoord_prepare_write(h, true, InvalidOid);
		w = mzcoord_write_ts();
		snapshot = RegisterSnapshot(GetLatestSnapshot());
		reconcile_begin(&st, rel, desc, snapshot);

		mzcoord_history_contents(h, desc, snapshot, PG_INT64_MAX,
								 reconcile_subtract, &st, &negative);
		UnregisterSnapshot(snapshot);

		slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
		mzcoord_history_writer_begin(&writer, h, st.set->nentries > 1000);
		for (MzcRowEntry *e = st.set->first; e != NULL; e = e->link)
		{
			if (e->count == 0)
				continue;
			ExecClearTuple(slot);
			memcpy(slot->tts_values, e->values, sizeof(Datum) * desc->natts);
			memcpy(slot->tts_isnull, e->isnull, sizeof(bool) * desc->natts);
			ExecStoreVirtualTuple(slot);
			mzcoord_history_writer_add(&writer, slot, w, e->count);
		}
		mzcoord_history_writer_end(&writer);
		if (writer.written > 0)
			mzcoord_note_history_written(h, w);
		ExecDropSingleTupleTableSlot(slot);
		mzcoord_rowset_destroy(st.set);
	}
	relation_close(rel, NoLock);
}

/*
 * Event trigger function mzcoord._storage_on_ddl(), on ddl_command_end of
 * CREATE TABLE and ALTER TABLE: registered tables stay out of inheritance
 * (a statement on a parent or a child would change rows the other's history
 * misses), and their histories follow their columns.
 */
Datum
mzcoord_storage_on_ddl(PG_FUNCTION_ARGS)
{
	List	   *rels = NIL;
	ListCell   *lc;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._storage_on_ddl() must be called as an event trigger")));

	/* Before mzcoord.storage is read: see mzcoord_extension_guard(). */
	mzcoord_extension_guard();

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	spi_exec("WITH cmd AS ("
			 "  SELECT DISTINCT c.objid FROM pg_catalog.pg_event_trigger_ddl_commands() c"
			 "   WHERE c.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass)"
			 " SELECT s.relation::pg_catalog.oid FROM mzcoord.storage s"
			 "  WHERE s.relation::pg_catalog.oid IN ("
			 "        SELECT objid FROM cmd"
			 "        UNION SELECT i.inhparent FROM pg_catalog.pg_inherits i"
			 "               JOIN cmd ON i.inhrelid OPERATOR(pg_catalog.=) cmd.objid"
			 "        UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i"
			 "               JOIN cmd ON i.inhparent OPERATOR(pg_catalog.=) cmd.objid)"
			 "  ORDER BY 1",
			 SPI_OK_SELECT);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
														   SPI_tuptable->tupdesc,
														   1, &isnull));
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		rels = lappend_oid(rels, relid);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();

	foreach(lc, rels)
	{
		Oid			relid = lfirst_oid(lc);

		if (get_rel_relkind(relid) != RELKIND_RELATION)
			continue;
		check_no_inheritance(relid);
		follow_columns(relid);
	}
	list_free(rels);
	PG_RETURN_VOID();
}

/* ----------------------------------------------------------------
 * Consistency: mzcoord._storage_problems()
 * ----------------------------------------------------------------
 */

/* Relations above this many rows are not compared with their history. */
#define MZC_CHECK_MAX_ROWS 1000000

typedef struct ProblemSink
{
	Tuplestorestate *store;
	TupleDesc	desc;
} ProblemSink;

static void
problem(ProblemSink *sink, const char *check, const char *object,
		const char *detail)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, detail == NULL};

	values[0] = CStringGetTextDatum(check);
	values[1] = CStringGetTextDatum(object);
	values[2] = detail ? CStringGetTextDatum(detail) : (Datum) 0;
	tuplestore_putvalues(sink->store, sink->desc, values, nulls);
}

typedef struct StorageCheckRow
{
	char	   *gid;
	Oid			relid;
	MzcKind		kind;
	Oid			histid;
	int64		compacted;
} StorageCheckRow;

/* Compare a relation's contents with its history's (see below). */
static void
check_contents(ProblemSink *sink, StorageCheckRow *r, Relation rel,
			   MzcHistory *h)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	ReconcileState st;
	int64		negative;
	int64		upto = PG_INT64_MAX;
	int64		missing = 0;
	int64		extra = 0;

	/* A source's relation shows the contents before its upper. */
	if (r->kind == MZC_KIND_SOURCE)
	{
		Oid			argtypes[1] = {TEXTOID};
		Datum		values[1] = {CStringGetTextDatum(r->gid)};
		SPIPlanPtr	plan;
		bool		isnull = true;

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		plan = SPI_prepare("SELECT upper FROM mzcoord.collections"
						   " WHERE global_id OPERATOR(pg_catalog.=) $1", 1, argtypes);
		if (plan != NULL &&
			SPI_execute_snapshot(plan, values, NULL, snapshot, InvalidSnapshot,
								 true, false, 1) == SPI_OK_SELECT &&
			SPI_processed == 1)
		{
			Datum		d = SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull);

			if (!isnull)
				upto = DatumGetInt64(d) - 1;
		}
		SPI_finish();
	}

	reconcile_begin(&st, rel, desc, snapshot);
	mzcoord_history_contents(h, desc, snapshot, upto, reconcile_subtract, &st,
							 &negative);
	UnregisterSnapshot(snapshot);

	for (MzcRowEntry *e = st.set->first; e != NULL; e = e->link)
	{
		if (e->count > 0)
			missing += e->count;
		else
			extra -= e->count;
	}
	if (negative > 0)
		problem(sink, "history with negative counts", r->gid,
				psprintf("%lld retractions of %s have no matching row",
						 (long long) negative, get_rel_name(r->histid)));
	if (missing > 0 || extra > 0)
		problem(sink, "relation differs from its history", r->gid,
				psprintf("%s has %lld rows its history does not have and lacks %lld rows it has",
						 RelationGetRelationName(rel), (long long) missing,
						 (long long) extra));
	mzcoord_rowset_destroy(st.set);
}

/*
 * Count the history rows (of hrel) whose time compares with bound as cmp
 * says (an operator of pg_catalog), leaving out the caller's own
 * uncommitted ones; run as the history's owner.  fresh: with a snapshot
 * taken now, else with the statement's.
 */
static int64
count_history(Relation hrel, const char *cmp, int64 bound, bool fresh)
{
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(bound)};
	Oid			save_user;
	int			save_sec;
	int			save_nest;
	int64		n;
	bool		isnull;

	save_nest = mzcoord_become_owner(hrel->rd_rel->relowner, &save_user, &save_sec);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("SELECT pg_catalog.count(*) FROM mzcoord.%s"
									   " WHERE " MZC_HISTORY_TS " OPERATOR(pg_catalog.%s) $1"
									   "   AND NOT mzcoord._row_is_own(xmin)",
									   quote_identifier(RelationGetRelationName(hrel)), cmp),
							  1, argtypes, values, NULL, !fresh, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not count the history of %s",
			 RelationGetRelationName(hrel));
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
									SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	mzcoord_restore_user(save_user, save_sec, save_nest);
	return n;
}

/*
 * No committed update of a table is beyond the table timeline: every update
 * visible to the check's snapshot was sealed before that snapshot was taken,
 * so it is at or below the latest commit timestamp read afterwards (hence
 * the statement's snapshot, not a fresh one).
 */
static void
check_above_upper(ProblemSink *sink, StorageCheckRow *r, Relation hrel)
{
	mzc_ts		latest = mzcoord_oracle_latest();
	int64		above = count_history(hrel, ">", latest, false);

	if (above > 0)
		problem(sink, "history above the upper", r->gid,
				psprintf("%lld rows of %s are above the latest table timestamp " INT64_FORMAT,
						 (long long) above, RelationGetRelationName(hrel),
						 (int64) latest));
}

/*
 * SQL: mzcoord._storage_problems(OUT check_name text, OUT object text,
 *		OUT detail text) RETURNS SETOF record
 *
 * One row per violated invariant of the data plane: every table and source
 * collection has its history, capture triggers (tables) or guard (sources)
 * enabled, and history columns matching its relation; no history row is
 * below the compacted frontier, which is not beyond the since; the
 * relation's contents are the history's (a table's at its latest time, a
 * source's before its upper).
 */
Datum
mzcoord_storage_problems(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ProblemSink sink;
	StorageCheckRow *rows = NULL;
	int			nrows = 0;
	Oid			capture_fn;
	Oid			guard_fn;
	MemoryContext caller = CurrentMemoryContext;

	InitMaterializedSRF(fcinfo, 0);
	sink.store = rsinfo->setResult;
	sink.desc = rsinfo->setDesc;
	capture_fn = LookupFuncName(list_make2(makeString("mzcoord"), makeString("_capture")),
								0, NULL, false);
	guard_fn = LookupFuncName(list_make2(makeString("mzcoord"), makeString("_source_guard")),
							  0, NULL, false);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	spi_exec("SELECT c.global_id FROM mzcoord.collections c"
			 "  JOIN mzcoord.items i ON i.id OPERATOR(pg_catalog.=) c.item_id"
			 " WHERE i.kind IN ('table', 'source')"
			 "   AND NOT EXISTS (SELECT 1 FROM mzcoord.storage s"
			 "                    WHERE s.global_id OPERATOR(pg_catalog.=) c.global_id)"
			 " ORDER BY 1", SPI_OK_SELECT);
	for (uint64 i = 0; i < SPI_processed; i++)
		problem(&sink, "collection without history",
				SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1), NULL);
	spi_exec("SELECT s.global_id FROM mzcoord.storage s"
			 " WHERE NOT EXISTS (SELECT 1 FROM mzcoord.collections c"
			 "                    WHERE c.global_id OPERATOR(pg_catalog.=) s.global_id)"
			 " ORDER BY 1", SPI_OK_SELECT);
	for (uint64 i = 0; i < SPI_processed; i++)
		problem(&sink, "history without collection",
				SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1), NULL);
	spi_exec("SELECT global_id, relation::pg_catalog.oid, kind,"
			 "       history::pg_catalog.oid, compacted"
			 "  FROM mzcoord.storage ORDER BY pg_catalog.substr(global_id, 2)::pg_catalog.int8",
			 SPI_OK_SELECT);
	if (SPI_processed > 0)
		rows = MemoryContextAlloc(caller, sizeof(StorageCheckRow) * SPI_processed);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		StorageCheckRow *r = &rows[nrows++];
		bool		isnull;
		MemoryContext old = MemoryContextSwitchTo(caller);

		r->gid = SPI_getvalue(tup, desc, 1);
		MemoryContextSwitchTo(old);
		r->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
		if (!mzcoord_kind_parse(SPI_getvalue(tup, desc, 3), &r->kind))
			r->kind = MZC_KIND_TABLE;
		r->histid = DatumGetObjectId(SPI_getbinval(tup, desc, 4, &isnull));
		r->compacted = DatumGetInt64(SPI_getbinval(tup, desc, 5, &isnull));
	}
	SPI_finish();

	for (int i = 0; i < nrows; i++)
	{
		StorageCheckRow *r = &rows[i];
		Relation	rel;
		Relation	hrel;
		bool		rewrites;
		char	   *unsafe;
		char	   *changes;
		int64		gid;
		MzcCollectionInfo info;
		int			want;
		int			enabled = 0;
		Oid			fn;

		rel = try_relation_open(r->relid, AccessShareLock);
		hrel = try_relation_open(r->histid, AccessShareLock);
		if (rel == NULL || hrel == NULL)
		{
			problem(&sink, rel == NULL ? "history of a missing relation" : "collection without history",
					r->gid, NULL);
			if (rel)
				relation_close(rel, AccessShareLock);
			if (hrel)
				relation_close(hrel, AccessShareLock);
			continue;
		}

		/* Its triggers, enabled. */
		want = r->kind == MZC_KIND_TABLE ? 4 : 1;
		fn = r->kind == MZC_KIND_TABLE ? capture_fn : guard_fn;
		if (rel->trigdesc != NULL)
			for (int t = 0; t < rel->trigdesc->numtriggers; t++)
			{
				Trigger    *trig = &rel->trigdesc->triggers[t];

				if (trig->tgfoid == fn && trig->tgenabled != TRIGGER_DISABLED)
					enabled++;
			}
		if (enabled != want)
			problem(&sink, r->kind == MZC_KIND_TABLE ? "capture triggers missing or disabled" :
					"source guard missing or disabled", r->gid,
					psprintf("%s has %d of its %d triggers enabled",
							 RelationGetRelationName(rel), enabled, want));

		changes = column_changes(rel, hrel, &rewrites, &unsafe);
		if (changes[0] != '\0')
		{
			problem(&sink, "history columns differ from the relation", r->gid,
					psprintf("%s would need: %s", RelationGetRelationName(hrel), changes));
			relation_close(hrel, AccessShareLock);
			relation_close(rel, AccessShareLock);
			continue;
		}

		/*
		 * Nothing below the compacted frontier, which is not beyond the
		 * since.  The frontier was read with a fresh snapshot, so the rows
		 * are counted with a still fresher one: a compaction committed
		 * between the two would otherwise leave rows "below" it.
		 */
		{
			int64		below = count_history(hrel, "<", r->compacted, true);

			if (below > 0)
				problem(&sink, "history below its compacted frontier", r->gid,
						psprintf("%lld rows of %s are below " INT64_FORMAT,
								 (long long) below, RelationGetRelationName(hrel),
								 r->compacted));
		}
		if (r->kind == MZC_KIND_TABLE)
			check_above_upper(&sink, r, hrel);
		if (mzcoord_parse_gid(r->gid, &gid) && mzcoord_ctl_lookup_gid(gid, &info) &&
			!info.since.empty && r->compacted > info.since.ts)
			problem(&sink, "compaction ahead of the since", r->gid,
					psprintf("compacted to " INT64_FORMAT ", since " INT64_FORMAT,
							 r->compacted, (int64) info.since.ts));

		if (rel->rd_rel->reltuples <= MZC_CHECK_MAX_ROWS &&
			hrel->rd_rel->reltuples <= MZC_CHECK_MAX_ROWS)
		{
			MzcHistory *h = mzcoord_history_lookup(r->relid, true);

			if (h != NULL)
				check_contents(&sink, r, rel, h);
		}
		relation_close(hrel, AccessShareLock);
		relation_close(rel, AccessShareLock);
	}
	return (Datum) 0;
}
