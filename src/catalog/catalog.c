/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  Lookups in the catalog of items, and the relations an item may be,
 *	  create or depend on.
 *
 * The catalog plane's other shared modules each own one kind of argument:
 * retain history windows and refresh schedules (schedule.c), column
 * definitions (coldefs.c) and the queries of materialized views (query.c).
 * The DDL functions (ddl.c) use them to validate everything before writing
 * a catalog row, the catalog implications (apply.c) to derive everything
 * else from that row.  Only mzcoord._record_dependencies changes anything:
 * PostgreSQL's dependencies of a relation mzcoord created.
 *
 * The SQL-callable functions (mzcoord_sql_*) are internal (EXECUTE is
 * revoked from PUBLIC); the implications call them.
 *
 * IDENTIFICATION
 *	  src/catalog/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/catalog.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/syscache.h"

#include "catalog.h"
#include "extension.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_sql_record_dependencies);
PG_FUNCTION_INFO_V1(mzcoord_sql_forget_dependencies);
PG_FUNCTION_INFO_V1(mzcoord_sql_check_table);
PG_FUNCTION_INFO_V1(mzcoord_sql_check_new_relation);

static bool mzcoord_reserved_namespace(Oid nspid);

/* ----------------------------------------------------------------
 * Catalog lookups
 * ----------------------------------------------------------------
 */

/*
 * OID of the extension's schema.
 */
Oid
mzcoord_catalog_namespace(void)
{
	return get_namespace_oid("mzcoord", false);
}

/* ----------------------------------------------------------------
 * Relations an item may be, create or depend on
 * ----------------------------------------------------------------
 */

/*
 * Can relid be registered as a table?  It must be a permanent, ordinary,
 * non-system table.  (Ownership and "already registered" are checked by
 * the DDL function and the catalog's unique constraint.)
 */
void
mzcoord_check_registrable_table(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Form_pg_class cls;
	char	   *name;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	cls = (Form_pg_class) GETSTRUCT(tup);
	name = pstrdup(NameStr(cls->relname));

	if (cls->relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register partitioned table \"%s\"", name),
				 errdetail("Partitioned tables are not supported.")));
	if (cls->relkind == RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register foreign table \"%s\"", name),
				 errdetail("The writes of a foreign table happen elsewhere; their history cannot be kept.")));
	if (cls->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", name)));
	if (cls->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register temporary table \"%s\"", name),
				 errdetail("A temporary table disappears with its session; its history could not be kept.")));
	if (cls->relpersistence == RELPERSISTENCE_UNLOGGED)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register unlogged table \"%s\"", name),
				 errdetail("An unlogged table is emptied by a crash, which would contradict its history.")));
	if (mzcoord_reserved_namespace(cls->relnamespace))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot register system table \"%s\"", name),
				 errdetail("Schema \"%s\" is reserved for the system.",
						   get_namespace_name(cls->relnamespace))));
	ReleaseSysCache(tup);
}

/*
 * Is nspid a schema no item may live in?  pg_dump dumps no relation of
 * pg_catalog, information_schema or any other schema whose name starts with
 * "pg_" (pg_toast among them), and the extension's schema holds its
 * catalog.  An item there would be in the dumped catalog but its relation
 * not in the dump, and no dump of the database would restore.  The same
 * rule is the check "item relation in a schema that is not dumped" of
 * check_consistency() (src/sql/70_hardening.sql).
 */
static bool
mzcoord_reserved_namespace(Oid nspid)
{
	char	   *nspname;

	if (IsCatalogNamespace(nspid) || IsToastNamespace(nspid) ||
		nspid == mzcoord_catalog_namespace())
		return true;
	nspname = get_namespace_name(nspid);
	return nspname != NULL &&
		(strncmp(nspname, "pg_", 3) == 0 ||
		 strcmp(nspname, "information_schema") == 0);
}

/*
 * Refuse to change the catalog under session_replication_role = replica.
 * In that mode PostgreSQL fires no foreign key (the cascades from items to
 * collections, bounds and requirements) and no trigger that is not ALWAYS:
 * a DDL function would return an id without its collection, and a drop
 * would leave its collections behind.  The catalog's own triggers fire
 * ALWAYS (src/sql/70_hardening.sql) and call this too, so a direct write
 * is refused the same way.
 */
void
mzcoord_require_origin_role(void)
{
	/* Nor on a hot standby, as PostgreSQL refuses writes there (25006). */
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change the mzcoord catalog during recovery"),
				 errhint("Run the command on the primary.")));
	if (SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot change the mzcoord catalog while session_replication_role is \"replica\""),
				 errdetail("Foreign keys and ordinary triggers do not fire in this mode, so the catalog would become inconsistent."),
				 errhint("Run the command with session_replication_role set to \"origin\".")));
}

/*
 * Can an item create relation relname in schema nspid?
 */
void
mzcoord_check_new_relation(Oid nspid, const char *relname)
{
	if (isAnyTempNamespace(nspid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("mzcoord items cannot be temporary")));
	if (mzcoord_reserved_namespace(nspid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot create \"%s\" in schema \"%s\"",
						relname, get_namespace_name(nspid)),
				 errdetail("Schema \"%s\" is reserved for the system.",
						   get_namespace_name(nspid))));
	if (OidIsValid(get_relname_relid(relname, nspid)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation \"%s\" already exists", relname)));
}

/* The non-null elements of an oid[]. */
static List *
oid_list(ArrayType *arr)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	List	   *out = NIL;

	deconstruct_array(arr, OIDOID, sizeof(Oid), true, TYPALIGN_INT,
					  &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			out = lappend_oid(out, DatumGetObjectId(elems[i]));
	return out;
}

/*
 * SQL: mzcoord._record_dependencies(depender regclass, relations oid[],
 *		functions oid[], operators oid[]) RETURNS void
 *
 * Normal dependencies of a relation mzcoord created for an item (source,
 * materialized view, index, sink) on the extension and on what its
 * definition names, so that PostgreSQL refuses to drop them without CASCADE
 * (and drops the item's relation with CASCADE, which the sql_drop event
 * trigger turns into the item's deletion).  DROP EXTENSION without CASCADE
 * thus refuses (2BP01) while such relations exist, and with CASCADE drops
 * them.  Not a membership: pg_dump still dumps them as the user's tables.
 * Dependencies are on whole relations, never on columns: ALTER COLUMN TYPE
 * rejects relations that depend on a column.
 */
Datum
mzcoord_sql_record_dependencies(PG_FUNCTION_ARGS)
{
	ObjectAddress depender;
	ObjectAddress ext;
	ObjectAddresses *refs = new_object_addresses();
	Oid			classes[3] = {RelationRelationId, ProcedureRelationId,
	OperatorRelationId};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	ObjectAddressSet(depender, RelationRelationId, PG_GETARG_OID(0));
	mzcoord_extension_lock_for_dependency();
	ObjectAddressSet(ext, ExtensionRelationId, get_extension_oid("mzcoord", false));
	add_exact_object_address(&ext, refs);
	for (int arg = 1; arg <= 3; arg++)
	{
		ListCell   *lc;

		if (PG_ARGISNULL(arg))
			continue;
		foreach(lc, oid_list(PG_GETARG_ARRAYTYPE_P(arg)))
		{
			ObjectAddress ref;

			ObjectAddressSet(ref, classes[arg - 1], lfirst_oid(lc));
			add_exact_object_address(&ref, refs);
		}
	}
	record_object_address_dependencies(&depender, refs, DEPENDENCY_NORMAL);
	free_object_addresses(refs);
	PG_RETURN_VOID();
}

/*
 * SQL: mzcoord._forget_dependencies(depender regclass) RETURNS void
 *
 * Removes what _record_dependencies recorded for the relation (its normal
 * dependencies on relations, functions, operators and the extension), so
 * that a replaced definition's dependencies can be recorded instead.
 */
Datum
mzcoord_sql_forget_dependencies(PG_FUNCTION_ARGS)
{
	Oid			classes[4] = {RelationRelationId, ProcedureRelationId,
	OperatorRelationId, ExtensionRelationId};

	for (int i = 0; i < 4; i++)
		(void) deleteDependencyRecordsForClass(RelationRelationId,
											   PG_GETARG_OID(0), classes[i],
											   DEPENDENCY_NORMAL);
	CommandCounterIncrement();
	PG_RETURN_VOID();
}

/*
 * Call one of the internal catalog-writing functions.  They are SECURITY
 * DEFINER, so fmgr switches to the extension owner and pins search_path;
 * and fmgr does not check EXECUTE, which PUBLIC lacks: the callers check
 * the user's rights first.
 */
Datum
mzcoord_catalog_call(const char *signature, int nargs, Datum *values,
					 bool *nulls, bool *isnull)
{
	Oid			fnoid;
	FmgrInfo	flinfo;
	LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);
	Datum		result;

	fnoid = DatumGetObjectId(DirectFunctionCall1(regprocedurein,
												 CStringGetDatum(signature)));
	fmgr_info(fnoid, &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, nargs, InvalidOid, NULL, NULL);
	for (int i = 0; i < nargs; i++)
	{
		fcinfo->args[i].value = values[i];
		fcinfo->args[i].isnull = nulls[i];
	}
	result = FunctionCallInvoke(fcinfo);
	*isnull = fcinfo->isnull;
	return result;
}

/* SQL: mzcoord._check_table(rel regclass) RETURNS void */
Datum
mzcoord_sql_check_table(PG_FUNCTION_ARGS)
{
	mzcoord_check_registrable_table(PG_GETARG_OID(0));
	PG_RETURN_VOID();
}

/* SQL: mzcoord._check_new_relation(schema_name name, name name) RETURNS void */
Datum
mzcoord_sql_check_new_relation(PG_FUNCTION_ARGS)
{
	char	   *nspname = NameStr(*PG_GETARG_NAME(0));
	Oid			nspid = get_namespace_oid(nspname, true);

	if (!OidIsValid(nspid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_SCHEMA),
				 errmsg("schema \"%s\" does not exist", nspname)));
	mzcoord_check_new_relation(nspid, NameStr(*PG_GETARG_NAME(1)));
	PG_RETURN_VOID();
}

/*
 * Whether the owner of a sink may export its input: it must be able to read
 * all of it with a plain SELECT, now.  The history holds every row and
 * applies no row security policy, so an input under row-level security for
 * the owner (relrowsecurity, unless the owner bypasses it or owns the
 * relation without FORCE) is refused like a missing SELECT privilege, as
 * read_at() and changes() refuse it.  Checked when the sink is created
 * (sink_name NULL: the current user, who becomes its owner) and at every
 * export, as its owner: privileges can be revoked and policies enabled
 * after the sink was created.  Errors with 42501.
 */
void
mzcoord_sink_check_input(Oid input, Oid owner, const char *sink_name)
{
	AclResult	acl = pg_class_aclcheck(input, owner, ACL_SELECT);
	char	   *input_name = get_rel_name(input);

	if (acl != ACLCHECK_OK)
	{
		if (sink_name == NULL)
			aclcheck_error(acl, get_relkind_objtype(get_rel_relkind(input)),
						   input_name);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to export \"%s\" into sink \"%s\"",
						input_name, sink_name),
				 errdetail("Role \"%s\", the owner of the sink, does not have SELECT privilege on \"%s\".",
						   GetUserNameFromId(owner, false), input_name),
				 errhint("The export resumes where it stopped once the privilege is granted again.")));
	}
	/* noError: the caller's row_security setting changes nothing here. */
	if (check_enable_rls(input, owner, true) == RLS_ENABLED)
	{
		if (sink_name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("cannot create a sink on \"%s\" under row-level security",
							input_name),
					 errdetail("A sink exports the whole history of its input, which does not apply the row security policies of the table."),
					 errhint("Create the sink as a role that row-level security does not apply to on \"%s\".",
							 input_name)));
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("cannot export \"%s\" into sink \"%s\" under row-level security",
						input_name, sink_name),
				 errdetail("Row-level security applies to role \"%s\", the owner of the sink, on \"%s\"; the history does not apply the row security policies of the table.",
						   GetUserNameFromId(owner, false), input_name),
				 errhint("The export resumes where it stopped once row-level security no longer applies to the owner of the sink.")));
	}
}
