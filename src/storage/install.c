/*-------------------------------------------------------------------------
 *
 * install.c
 *	  Creating a history when a table or source is registered, and
 *	  reattaching it after a restore.
 *
 * A history is created by the catalog implications, in the transaction
 * that registers the table or creates the source (mzcoord._storage_install).
 * It depends automatically on its relation and on the extension, so DROP
 * TABLE, mzcoord.drop() and DROP EXTENSION take it along; a sql_drop event
 * trigger deletes its row in mzcoord.storage when it goes.
 *
 * The triggers that capture a table's writes (capture.c) and the guard of a
 * source's relation (source.c) are internal triggers owned by the history
 * (an internal dependency): the table's owner cannot drop or disable them,
 * and they go away with the history.
 *
 * IDENTIFICATION
 *	  src/storage/install.c
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

#include "columns.h"
#include "history.h"
#include "ids.h"

PG_FUNCTION_INFO_V1(mzcoord_storage_install);
PG_FUNCTION_INFO_V1(mzcoord_storage_reattach);

/* ----------------------------------------------------------------
 * Creating a history: mzcoord._storage_install
 * ----------------------------------------------------------------
 */

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
						 mzcoord_history_type_sql(att, &typid, &typmod));
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
	changes = mzcoord_column_changes(rel, hrel, &rewrites, &unsafe);
	if (changes[0] != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the columns of %s differ from those of its relation \"%s\"",
						histname, RelationGetRelationName(rel)),
				 errdetail("It would need: %s", changes)));
	mzcoord_check_no_inheritance(relid);

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
	mzcoord_check_no_inheritance(relid);
	desc = RelationGetDescr(rel);
	extoid = get_extension_oid("mzcoord", false);

	histname = psprintf("history_u" INT64_FORMAT, gid);
	qhist = psprintf("mzcoord.%s", quote_identifier(histname));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	mzcoord_spi_exec(psprintf("CREATE TABLE %s (%s)", qhist, history_column_defs(desc)),
			 SPI_OK_UTILITY);
	mzcoord_spi_exec(psprintf("CREATE INDEX %s ON %s (" MZC_HISTORY_TS ")",
					  quote_identifier(psprintf("%s_ts", histname)), qhist),
			 SPI_OK_UTILITY);
	mzcoord_spi_exec(psprintf("CREATE INDEX %s ON %s (" MZC_HISTORY_TS ") WHERE "
					  MZC_HISTORY_DIFF " OPERATOR(pg_catalog.<) 0",
					  quote_identifier(psprintf("%s_retractions", histname)), qhist),
			 SPI_OK_UTILITY);
	mzcoord_spi_exec(psprintf("REVOKE ALL ON TABLE %s FROM PUBLIC", qhist), SPI_OK_UTILITY);
	histid = get_relname_relid(histname, get_namespace_oid("mzcoord", false));
	if (!OidIsValid(histid))
		elog(ERROR, "history \"%s\" was not created", histname);

	/* Dropped with its relation, and with the extension. */
	ObjectAddressSet(histaddr, RelationRelationId, histid);
	ObjectAddressSet(ref, RelationRelationId, relid);
	recordDependencyOn(&histaddr, &ref, DEPENDENCY_AUTO);
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
