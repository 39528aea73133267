/*-------------------------------------------------------------------------
 *
 * extension.c
 *	  DROP EXTENSION mzcoord takes its locks in an order that cannot deadlock
 *	  with the sessions using the extension.
 *
 * PostgreSQL's DROP EXTENSION locks the extension, then every object that
 * depends on it as it finds them (the histories, the catalog tables, the
 * relations mzcoord created), and only while it deletes them the tables
 * those objects hang on: a registered table when its capture triggers go,
 * the table of an mzcoord index when the index goes.  Sessions take the
 * other order: a writer locks its table, then (in the capture trigger, or
 * when it opens the table's indexes) the history or the index.  Hence
 * 40P01.
 *
 * A utility hook therefore takes, before PostgreSQL's own work, the
 * extension's lock and then, in OID order, an ACCESS EXCLUSIVE lock on each
 * table the drop will reach: the registered tables and sources (the
 * relations of the histories), the relations mzcoord created, and the
 * tables of the indexes it created.  Once the drop holds the extension's
 * lock, sessions fail fast in mzcoord_extension_guard() (55000) instead of
 * waiting for a history or a catalog table, so the drop gets the tables as
 * soon as their current statements end.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"
#include "storage/lmgr.h"
#include "tcop/utility.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "extension.h"
#include "worker.h"

static ProcessUtility_hook_type prev_process_utility = NULL;

/*
 * The other ends of the pg_depend rows of type deptype that reference the
 * given object (ref) or that it has (!ref), where that end is in
 * otherclass.
 */
static List *
depend_rows(Oid classid, Oid objid, bool ref, char deptype, Oid otherclass)
{
	Relation	depRel;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *result = NIL;

	depRel = table_open(DependRelationId, AccessShareLock);
	ScanKeyInit(&key[0],
				ref ? Anum_pg_depend_refclassid : Anum_pg_depend_classid,
				BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(classid));
	ScanKeyInit(&key[1],
				ref ? Anum_pg_depend_refobjid : Anum_pg_depend_objid,
				BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(objid));
	scan = systable_beginscan(depRel,
							  ref ? DependReferenceIndexId : DependDependerIndexId,
							  true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tup);

		if (dep->deptype != deptype)
			continue;
		if (ref && dep->classid == otherclass)
			result = lappend_oid(result, dep->objid);
		else if (!ref && dep->refclassid == otherclass)
			result = lappend_oid(result, dep->refobjid);
	}
	systable_endscan(scan);
	table_close(depRel, AccessShareLock);
	return result;
}

/* Lock the extension, then every table the drop will reach, in OID order. */
static void
lock_for_drop(Oid ext)
{
	List	   *tables = NIL;
	ListCell   *lc;

	LockDatabaseObject(ExtensionRelationId, ext, 0, AccessExclusiveLock);
	if (get_extension_oid("mzcoord", true) != ext)
		return;

	/* Histories (an automatic extension dependency) and their relations. */
	foreach(lc, depend_rows(ExtensionRelationId, ext, true,
							DEPENDENCY_AUTO_EXTENSION, RelationRelationId))
		tables = list_concat_unique_oid(tables,
										depend_rows(RelationRelationId,
													lfirst_oid(lc), false,
													DEPENDENCY_AUTO,
													RelationRelationId));

	/* Relations mzcoord created; of an index, its table. */
	foreach(lc, depend_rows(ExtensionRelationId, ext, true,
							DEPENDENCY_NORMAL, RelationRelationId))
	{
		Oid			relid = lfirst_oid(lc);

		if (get_rel_relkind(relid) == RELKIND_INDEX)
			relid = IndexGetRelation(relid, true);
		if (OidIsValid(relid))
			tables = list_append_unique_oid(tables, relid);
	}

	list_sort(tables, list_oid_cmp);
	foreach(lc, tables)
		LockRelationOid(lfirst_oid(lc), AccessExclusiveLock);
}

static void
mzc_process_utility(PlannedStmt *pstmt, const char *queryString,
					bool readOnlyTree, ProcessUtilityContext context,
					ParamListInfo params, QueryEnvironment *queryEnv,
					DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	if (IsA(parsetree, DropStmt) &&
		((DropStmt *) parsetree)->removeType == OBJECT_EXTENSION)
	{
		ListCell   *lc;

		foreach(lc, ((DropStmt *) parsetree)->objects)
		{
			Node	   *name = lfirst(lc);
			Oid			ext;

			if (!IsA(name, String) || strcmp(strVal(name), "mzcoord") != 0)
				continue;
			ext = get_extension_oid("mzcoord", true);
			if (OidIsValid(ext))
				lock_for_drop(ext);
		}
	}

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

void
mzcoord_install_drop_hook(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = mzc_process_utility;
}
