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
#include "extension.h"
#include "history.h"
#include "ids.h"
#include "rec_storage.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_storage_install);
PG_FUNCTION_INFO_V1(mzcoord_storage_reattach);

/* ----------------------------------------------------------------
 * Steps shared by _storage_install and _storage_reattach
 * ----------------------------------------------------------------
 */

/* One of the four statement triggers that capture a table's writes. */
typedef struct CaptureTrigger
{
	const char *name;
	int16		timing;
	int16		event;
	bool		old_table;		/* with transition table mzcoord_old */
	bool		new_table;		/* with transition table mzcoord_new */
} CaptureTrigger;

/* The capture triggers of a table, in the order they are created. */
static const CaptureTrigger capture_triggers[] = {
	{"mzcoord_capture_insert", TRIGGER_TYPE_AFTER, TRIGGER_TYPE_INSERT, false, true},
	{"mzcoord_capture_update", TRIGGER_TYPE_AFTER, TRIGGER_TYPE_UPDATE, true, true},
	{"mzcoord_capture_delete", TRIGGER_TYPE_AFTER, TRIGGER_TYPE_DELETE, true, false},
	{"mzcoord_capture_truncate", TRIGGER_TYPE_BEFORE, TRIGGER_TYPE_TRUNCATE, false, false},
};

#define NUM_CAPTURE_TRIGGERS ((int) lengthof(capture_triggers))

/* The function of a kind's internal triggers: mzcoord._capture or _source_guard. */
static const char *
internal_trigger_function(MzcKind kind)
{
	return kind == MZC_KIND_TABLE ? "_capture" : "_source_guard";
}

/* A transition table of a capture trigger: the new rows, or the old ones. */
static TriggerTransition *
transition_table(const char *name, bool is_new)
{
	TriggerTransition *t = makeNode(TriggerTransition);

	t->name = (char *) name;
	t->isNew = is_new;
	t->isTable = true;
	return t;
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
		stmt->transitionRels = lappend(stmt->transitionRels,
									   transition_table("mzcoord_old", false));
	if (new_table)
		stmt->transitionRels = lappend(stmt->transitionRels,
									   transition_table("mzcoord_new", true));
	/* Fires whatever session_replication_role says. */
	trig = CreateTriggerFiringOn(stmt, NULL, relid, InvalidOid, InvalidOid,
								 InvalidOid, funcoid, InvalidOid, NULL,
								 true, false, TRIGGER_FIRES_ALWAYS);
	ObjectAddressSet(hist, RelationRelationId, histid);
	recordDependencyOn(&trig, &hist, DEPENDENCY_INTERNAL);
}

/*
 * Which internal triggers rel has (have[k]: capture trigger k of a table,
 * have[0]: the guard of a source).  Internal trigger names carry their OID,
 * so they are told apart by function and event.
 */
static void
find_internal_triggers(Relation rel, MzcKind kind,
					   bool have[NUM_CAPTURE_TRIGGERS])
{
	Oid			fn;

	fn = LookupFuncName(list_make2(makeString("mzcoord"),
								   makeString((char *) internal_trigger_function(kind))),
						0, NULL, false);
	if (rel->trigdesc == NULL)
		return;
	for (int t = 0; t < rel->trigdesc->numtriggers; t++)
	{
		Trigger    *trig = &rel->trigdesc->triggers[t];

		if (trig->tgfoid != fn)
			continue;
		if (kind != MZC_KIND_TABLE)
			have[0] = true;
		else
			for (int k = 0; k < NUM_CAPTURE_TRIGGERS; k++)
				if ((trig->tgtype & TRIGGER_TYPE_EVENT_MASK) == capture_triggers[k].event)
					have[k] = true;
	}
}

/*
 * Create the internal triggers of relid that have[] says are missing (all
 * of them for a new history): a table's four capture triggers, or a
 * source's guard.  Returns how many were created.
 */
static int
create_internal_triggers(Oid relid, Oid histid, MzcKind kind,
						 const bool have[NUM_CAPTURE_TRIGGERS])
{
	int			created = 0;

	if (kind != MZC_KIND_TABLE)
	{
		if (have[0])
			return 0;
		create_internal_trigger(relid, histid, "mzcoord_source_guard",
								internal_trigger_function(kind), TRIGGER_TYPE_BEFORE,
								TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE |
								TRIGGER_TYPE_DELETE | TRIGGER_TYPE_TRUNCATE,
								false, false);
		return 1;
	}
	for (int k = 0; k < NUM_CAPTURE_TRIGGERS; k++)
	{
		const CaptureTrigger *ct = &capture_triggers[k];

		if (have[k])
			continue;
		create_internal_trigger(relid, histid, ct->name,
								internal_trigger_function(kind), ct->timing,
								ct->event, ct->old_table, ct->new_table);
		created++;
	}
	return created;
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
 * The history is dropped with its relation (auto) and with the extension
 * (auto extension).  missing_only: record only the dependencies pg_depend
 * does not have yet (a restored history); needs SPI then.
 */
static void
record_history_dependencies(Oid histid, Oid relid, Oid extoid,
							bool missing_only)
{
	ObjectAddress histaddr;
	ObjectAddress ref;

	ObjectAddressSet(histaddr, RelationRelationId, histid);
	if (!missing_only ||
		!has_dependency(RelationRelationId, histid, RelationRelationId, relid,
						DEPENDENCY_AUTO))
	{
		ObjectAddressSet(ref, RelationRelationId, relid);
		recordDependencyOn(&histaddr, &ref, DEPENDENCY_AUTO);
	}
	if (!missing_only ||
		!has_dependency(RelationRelationId, histid, ExtensionRelationId, extoid,
						DEPENDENCY_AUTO_EXTENSION))
	{
		mzcoord_extension_lock_for_dependency();
		ObjectAddressSet(ref, ExtensionRelationId, extoid);
		recordDependencyOn(&histaddr, &ref, DEPENDENCY_AUTO_EXTENSION);
	}
}

/* The global id gidtext names, or 22023. */
static int64
parse_global_id(const char *gidtext)
{
	int64		gid;

	if (!mzcoord_parse_gid(gidtext, &gid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid global id: \"%s\"", gidtext)));
	return gid;
}

/* ----------------------------------------------------------------
 * Reattaching a restored history: mzcoord._storage_reattach
 * ----------------------------------------------------------------
 */

/*
 * The relation, kind and history mzcoord.storage records for gidtext, or
 * 42704 if it has no row (SPI connected).
 */
static void
read_storage_row(const char *gidtext, Oid *relid, MzcKind *kind, Oid *histid)
{
	MzcRecStorage row;
	bool		found;

	if (!mzcoord_rec_storage_of_gid(gidtext, &row, &found))
		elog(ERROR, "could not read mzcoord.storage");
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("collection %s has no history in mzcoord.storage", gidtext)));
	*relid = row.relid;
	if (!mzcoord_kind_parse(row.kind, kind))
		elog(ERROR, "unrecognized kind in mzcoord.storage for %s", gidtext);
	*histid = row.histid;
}

/*
 * Open (SHARE ROW EXCLUSIVE) the relation and the history of a restored
 * collection, checking that both exist, that the history is
 * mzcoord.history_u<gid>, that its columns match the relation's and that
 * the relation has no inheritance.
 */
static void
open_restored_pair(int64 gid, const char *gidtext, Oid relid, Oid histid,
				   Relation *relp, Relation *hrelp)
{
	Relation	rel;
	Relation	hrel;
	char	   *histname;
	char	   *changes;
	bool		rewrites;
	char	   *unsafe;

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
	*relp = rel;
	*hrelp = hrel;
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
	int			created;
	bool		have[NUM_CAPTURE_TRIGGERS] = {false};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("global id must not be null")));
	gidtext = text_to_cstring(PG_GETARG_TEXT_PP(0));
	gid = parse_global_id(gidtext);
	mzcoord_spi_connect();
	read_storage_row(gidtext, &relid, &kind, &histid);
	open_restored_pair(gid, gidtext, relid, histid, &rel, &hrel);

	record_history_dependencies(histid, relid,
								get_extension_oid("mzcoord", false), true);
	find_internal_triggers(rel, kind, have);
	created = create_internal_triggers(relid, histid, kind, have);
	SPI_finish();
	CommandCounterIncrement();
	CacheInvalidateRelcacheByRelid(relid);
	table_close(hrel, NoLock);
	table_close(rel, NoLock);
	PG_RETURN_INT32(created);
}

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

/*
 * Open relid (SHARE ROW EXCLUSIVE: no write may slip between reading its
 * rows and capturing the next) and check that it is a plain table without
 * inheritance.
 */
static Relation
open_install_relation(Oid relid)
{
	Relation	rel = try_table_open(relid, ShareRowExclusiveLock);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (rel->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(rel))));
	mzcoord_check_no_inheritance(relid);
	return rel;
}

/*
 * Create mzcoord.<histname> (qhist, quoted) for a relation with descriptor
 * desc, with its indexes of insertions and of retractions (history.c),
 * closed to PUBLIC; returns its OID (SPI connected).
 */
static Oid
create_history_table(const char *histname, const char *qhist, TupleDesc desc)
{
	Oid			histid;

	mzcoord_spi_exec(psprintf("CREATE TABLE %s (%s)", qhist, history_column_defs(desc)),
			 SPI_OK_UTILITY);
	mzcoord_spi_exec(psprintf("CREATE INDEX %s ON %s (" MZC_HISTORY_TS ") WHERE "
					  MZC_HISTORY_DIFF " OPERATOR(pg_catalog.>) 0",
					  quote_identifier(psprintf("%s_insertions", histname)), qhist),
			 SPI_OK_UTILITY);
	mzcoord_spi_exec(psprintf("CREATE INDEX %s ON %s (" MZC_HISTORY_TS ") WHERE "
					  MZC_HISTORY_DIFF " OPERATOR(pg_catalog.<) 0",
					  quote_identifier(psprintf("%s_retractions", histname)), qhist),
			 SPI_OK_UTILITY);
	mzcoord_spi_exec(psprintf("REVOKE ALL ON TABLE %s FROM PUBLIC", qhist), SPI_OK_UTILITY);
	histid = get_relname_relid(histname, get_namespace_oid("mzcoord", false));
	if (!OidIsValid(histid))
		elog(ERROR, "history \"%s\" was not created", histname);
	return histid;
}

/*
 * Record the rows table rel has now in its history qhist at since: they are
 * its contents at its registration time.  Read them with a snapshot taken
 * after the lock: every writer before us has committed, whatever this
 * transaction's isolation level.  Returns the number of rows.
 */
static int64
record_registration_rows(Relation rel, const char *qhist, int64 since)
{
	TupleDesc	desc = RelationGetDescr(rel);
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
	return SPI_processed;
}

/* The history's row in mzcoord.storage, compacted at since (SPI connected). */
static void
insert_storage_row(const char *gidtext, Relation rel, const char *kindname,
				   Oid histid, int64 since, int64 nrows)
{
	if (!mzcoord_rec_storage_insert(gidtext, RelationGetRelid(rel), kindname,
									histid, since, nrows))
		elog(ERROR, "could not record the history of \"%s\"",
			 RelationGetRelationName(rel));
}

/*
 * SQL: mzcoord._storage_install(global_id text, kind text, relation regclass,
 *		since bigint) RETURNS void
 *
 * Called by the catalog implications (as the extension owner) when a
 * collection is installed.  Tables and sources get a history; a table's
 * existing rows are recorded at its since (its registration time) and its
 * writes are captured from now on; the relation of a source or a
 * materialized view (a fed history, written by appends and refreshes) is
 * guarded against direct writes.  Indexes and sinks have no history.
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
	char	   *histname;
	char	   *qhist;
	Oid			histid;
	Oid			extoid;
	int64		nrows = 0;
	bool		none[NUM_CAPTURE_TRIGGERS] = {false};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("global id, kind, relation and since must not be null")));
	gidtext = text_to_cstring(PG_GETARG_TEXT_PP(0));
	kindname = text_to_cstring(PG_GETARG_TEXT_PP(1));
	relid = PG_GETARG_OID(2);
	since = PG_GETARG_INT64(3);
	gid = parse_global_id(gidtext);
	if (!mzcoord_kind_parse(kindname, &kind))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized item kind: \"%s\"", kindname)));
	if (!mzcoord_kind_has_history(kind))
		PG_RETURN_VOID();
	if (since < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("since must not be negative")));

	rel = open_install_relation(relid);
	extoid = get_extension_oid("mzcoord", false);
	histname = psprintf("history_u" INT64_FORMAT, gid);
	qhist = psprintf("mzcoord.%s", quote_identifier(histname));

	mzcoord_spi_connect();
	histid = create_history_table(histname, qhist, RelationGetDescr(rel));
	record_history_dependencies(histid, relid, extoid, false);
	(void) create_internal_triggers(relid, histid, kind, none);
	CommandCounterIncrement();
	if (kind == MZC_KIND_TABLE)
		nrows = record_registration_rows(rel, qhist, since);
	insert_storage_row(gidtext, rel, kindname, histid, since, nrows);
	SPI_finish();

	CacheInvalidateRelcacheByRelid(relid);
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}
