/*-------------------------------------------------------------------------
 *
 * columns.c
 *	  Following column changes of registered relations in their histories
 *	  (the ddl_command_end event trigger).
 *
 * IDENTIFICATION
 *	  src/storage/columns.c
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

#include "capture.h"
#include "columns.h"
#include "extension.h"
#include "history.h"
#include "rec_storage.h"
#include "ids.h"
#include "oracle.h"
#include "read.h"
#include "rowimage.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_storage_on_ddl);

/*
 * The type of the history column of attribute att, as SQL: a domain is
 * replaced by its base type.  The values are the same, and no constraint
 * of a user's domain is ever evaluated on the history, by compaction or
 * anything else that runs as the extension owner.
 */
char *
mzcoord_history_type_sql(Form_pg_attribute att, Oid *typid, int32 *typmod)
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
char *
mzcoord_column_changes(Relation rel, Relation hrel, bool *rewrites, char **unsafe)
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
		typesql = mzcoord_history_type_sql(t, &typid, &typmod);
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
		if (mzcoord_desc_attnum(hdesc, name) == 0)
		{
			appendStringInfo(&buf, "%sADD COLUMN %s %s", buf.len ? ", " : "",
							 name, mzcoord_history_type_sql(t, &typid, &typmod));
			*rewrites = true;
		}
	}
	return buf.data;
}

void
mzcoord_reconcile_subtract(void *arg, TupleTableSlot *row, int64 n)
{
	MzcReconcile *st = arg;

	(void) mzcoord_rowset_add(st->set, row->tts_values, row->tts_isnull,
							  mzcoord_row_hash(st->desc, row->tts_values,
											   row->tts_isnull), -n);
}

/*
 * Start a reconciliation: a row set holding the contents of rel, as seen by
 * snapshot, each row with count 1 per copy.  The history's contents are
 * then subtracted from it with mzcoord_reconcile_subtract.
 */
void
mzcoord_reconcile_begin(MzcReconcile *st, Relation rel, TupleDesc desc,
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

	if (!mzcoord_storage_row(relid, &gid, &kind, &histid))
		return;
	/* Rows kept for the commit have the history's present shape. */
	mzcoord_capture_flush(histid);
	rel = relation_open(relid, AccessShareLock);
	hrel = relation_open(histid, AccessExclusiveLock);
	owner = hrel->rd_rel->relowner;
	changes = mzcoord_column_changes(rel, hrel, &rewrites, &unsafe);
	relation_close(hrel, NoLock);
	if (changes[0] == '\0')
	{
		relation_close(rel, NoLock);
		return;
	}
	if (mzcoord_kind_is_fed(kind))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the columns of %s \"%s\"",
						kind == MZC_KIND_SOURCE ? "source" : "materialized view",
						RelationGetRelationName(rel)),
				 errdetail("Its columns are fixed when it is created."),
				 errhint("Create a new one instead.")));
	if (unsafe != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the type of column \"%s\" of registered table \"%s\"",
						unsafe, RelationGetRelationName(rel)),
				 errdetail("Its history would have to be converted by a cast that is not built in."),
				 errhint("Keep the type, or convert to a built-in type.")));

	save_nest = mzcoord_become_owner(owner, &save_user, &save_sec);
	mzcoord_spi_connect();
	mzcoord_spi_exec(psprintf("ALTER TABLE mzcoord.%s %s",
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
		MzcReconcile st;
		TupleTableSlot *slot;
		int64		negative;
		mzc_ts		w;
		MzcHistoryWriter writer;

		mzcoord_prepare_write(h, true, InvalidOid);
		w = mzcoord_write_ts();
		snapshot = RegisterSnapshot(GetLatestSnapshot());
		mzcoord_reconcile_begin(&st, rel, desc, snapshot);

		mzcoord_history_contents(h, desc, snapshot, PG_INT64_MAX,
								 mzcoord_reconcile_subtract, &st, &negative);
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
	Oid		   *relids;
	int			nrelids;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._storage_on_ddl() must be called as an event trigger")));

	/* Before mzcoord.storage is read: see mzcoord_extension_guard(). */
	mzcoord_extension_guard();

	mzcoord_spi_connect();
	mzcoord_rec_storage_ddl_targets(&relids, &nrelids);
	for (int i = 0; i < nrelids; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		rels = lappend_oid(rels, relids[i]);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();

	foreach(lc, rels)
	{
		Oid			relid = lfirst_oid(lc);

		if (get_rel_relkind(relid) != RELKIND_RELATION)
			continue;
		mzcoord_check_no_inheritance(relid);
		follow_columns(relid);
	}
	list_free(rels);
	PG_RETURN_VOID();
}
