/*-------------------------------------------------------------------------
 *
 * ddl.c
 *	  The DDL functions of the catalog plane and the sql_drop event trigger.
 *
 * Each DDL function validates everything it is given before anything
 * changes, in the caller's terms: names and queries are resolved with the
 * caller's search_path, and privileges are the caller's (ownership of a
 * table being registered or indexed, CREATE on the target schema, SELECT on
 * what a materialized view or a sink reads, EXECUTE on the functions a
 * query calls).  Then it writes one catalog row through an internal
 * function that is SECURITY DEFINER with a pinned search_path and not
 * executable by PUBLIC (mzcoord._catalog_insert and friends); the catalog
 * implications, run by the statement triggers on mzcoord.items, derive
 * everything else from that row.
 *
 * The DDL functions themselves are therefore SECURITY INVOKER: a SECURITY
 * DEFINER function with "SET search_path" can no longer see the caller's
 * search_path, which the text arguments (a relation name, a query, column
 * types) must be resolved with, and GetUserId() inside it is the definer,
 * not the caller.  The privilege switch happens through PostgreSQL's own
 * SECURITY DEFINER machinery when the internal function is called (through
 * fmgr, which does not check EXECUTE: the internal function is reachable
 * only through the validation in this file).
 *
 * Dropping goes through PostgreSQL: mzcoord.drop checks the catalog's
 * dependents and then runs DROP TABLE / DROP INDEX as the caller; the
 * sql_drop event trigger deletes the item rows of every dropped relation in
 * one statement, and the implications do the rest.  A plain DROP TABLE,
 * DROP SCHEMA ... CASCADE or DROP OWNED BY takes the same path.
 *
 * Concurrency: the relation an item is created from or on is locked for the
 * rest of the transaction (as the corresponding PostgreSQL command would),
 * so a concurrent DROP either waits for the creation to commit and then
 * sees its dependency, or makes the creation fail.  Creations of the same
 * name serialize on a lock of their own, so the second one reports "already
 * exists" instead of a unique violation.
 *
 * IDENTIFICATION
 *	  src/catalog/ddl.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "parser/scansup.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "catalog.h"
#include "coldefs.h"
#include "dispatch.h"
#include "extension.h"
#include "query.h"
#include "rec_items.h"
#include "schedule.h"
#include "settings.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_create_table);
PG_FUNCTION_INFO_V1(mzcoord_create_source);
PG_FUNCTION_INFO_V1(mzcoord_create_materialized_view);
PG_FUNCTION_INFO_V1(mzcoord_create_index);
PG_FUNCTION_INFO_V1(mzcoord_create_sink);
PG_FUNCTION_INFO_V1(mzcoord_set_retain_history);
PG_FUNCTION_INFO_V1(mzcoord_drop);
PG_FUNCTION_INFO_V1(mzcoord_on_sql_drop);

/* locktag_field4 of the name locks; PostgreSQL's advisory locks use 1 and 2. */
#define MZC_NAME_LOCK_TAG 0x4D5A

#define MZC_INSERT_SIGNATURE \
	"mzcoord._catalog_insert(text,name,name,regclass,regrole,interval,text[],text,text,text[])"
#define MZC_SET_RETAIN_SIGNATURE \
	"mzcoord._catalog_set_retain_history(text,interval)"
#define MZC_SINK_OPTIONS_SIGNATURE \
	"mzcoord._catalog_set_sink_options(text,boolean)"

/* ----------------------------------------------------------------
 * Helpers
 * ----------------------------------------------------------------
 */

/* The words used for a kind in messages. */
static const char *
mzc_kind_label(const char *kind)
{
	if (strcmp(kind, "materialized_view") == 0)
		return "materialized view";
	return kind;
}

/* Call one of the internal catalog-writing functions (catalog.c). */
static Datum
mzc_call_internal(const char *signature, int nargs, Datum *values,
				  bool *nulls, bool *isnull)
{
	return mzcoord_catalog_call(signature, nargs, values, nulls, isnull);
}

/* The item row to insert; NULL pointers are SQL NULLs. */
typedef struct MzcNewItem
{
	const char *kind;
	Oid			nspid;
	const char *name;
	Oid			relid;
	Oid			owner;
	Interval   *retain_history;
	ArrayType  *refresh;
	const char *definition;
	const char *on_item;
	ArrayType  *index_keys;
} MzcNewItem;

/* mzcoord.max_collections_per_role; -1 is half of mzcoord.max_collections. */
static int
collections_per_role_limit(void)
{
	if (mzcoord_max_collections_per_role >= 0)
		return mzcoord_max_collections_per_role;
	return Max(mzcoord_max_collections / 2, 1);
}

/*
 * The number of items of `owner` in mzcoord.items, counting those that
 * transactions still in progress (this one included) have inserted or are
 * deleting: a dirty snapshot, through items_owner_idx.
 */
static int64
count_role_items(Oid owner)
{
	Oid			nsp = mzcoord_catalog_namespace();
	Oid			items = get_relname_relid("items", nsp);
	Oid			index = get_relname_relid("items_owner_idx", nsp);
	AttrNumber	attnum;
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	SnapshotData dirty;
	int64		n = 0;

	if (!OidIsValid(items) || !OidIsValid(index))
		elog(ERROR, "mzcoord: the catalog has no index of items by owner");
	attnum = get_attnum(items, "owner");
	rel = table_open(items, AccessShareLock);
	InitDirtySnapshot(dirty);
	ScanKeyInit(&key, attnum, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(owner));
	scan = systable_beginscan(rel, index, true, &dirty, 1, &key);
	while (HeapTupleIsValid(systable_getnext(scan)))
		n++;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return n;
}

/*
 * Refuse a new item of `owner` once the role owns more than
 * mzcoord.max_collections_per_role items, so that one role cannot take the
 * collection slots every other role needs (the global limit is only checked
 * at COMMIT, against shared memory).  Called after the item's row is
 * inserted, and counting the items other transactions are creating: of two
 * concurrent transactions that take the last place, the one that counts
 * second sees the other's item (committed or not) and is refused, so the
 * limit holds without making one role's creations wait for each other.
 * Both may be refused if both insert before either counts; a retry after
 * the other ends succeeds if there is room.
 */
static void
mzc_check_role_limit(Oid owner)
{
	int			limit = collections_per_role_limit();
	int64		owned;

	/*
	 * At or above the global limit the per-role limit cannot bind first
	 * (every item has at least one collection slot): skip the count.
	 */
	if (limit >= mzcoord_max_collections)
		return;
	owned = count_role_items(owner);
	if (owned > limit)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many mzcoord collections for role \"%s\"",
						GetUserNameFromId(owner, false)),
				 errdetail_plural("The role owns or is creating %d collection besides this one (tables, sources, materialized views, indexes and sinks count), and mzcoord.max_collections_per_role allows %d.",
								  "The role owns or is creating %d collections besides this one (tables, sources, materialized views, indexes and sinks count), and mzcoord.max_collections_per_role allows %d.",
								  (unsigned long) (owned - 1),
								  (int) (owned - 1), limit),
				 errhint("Drop collections the role owns, or have a superuser raise mzcoord.max_collections_per_role.")));
}

static Datum
mzc_insert_item(MzcNewItem *item)
{
	Datum		values[10];
	bool		nulls[10] = {false};
	NameData	nsp;
	NameData	rel;
	bool		isnull;
	Datum		id;

	namestrcpy(&nsp, get_namespace_name(item->nspid));
	namestrcpy(&rel, item->name);
	values[0] = CStringGetTextDatum(item->kind);
	values[1] = NameGetDatum(&nsp);
	values[2] = NameGetDatum(&rel);
	values[3] = ObjectIdGetDatum(item->relid);
	nulls[3] = !OidIsValid(item->relid);
	values[4] = ObjectIdGetDatum(item->owner);
	values[5] = PointerGetDatum(item->retain_history);
	nulls[5] = item->retain_history == NULL;
	values[6] = PointerGetDatum(item->refresh);
	nulls[6] = item->refresh == NULL;
	values[7] = item->definition ? CStringGetTextDatum(item->definition) : (Datum) 0;
	nulls[7] = item->definition == NULL;
	values[8] = item->on_item ? CStringGetTextDatum(item->on_item) : (Datum) 0;
	nulls[8] = item->on_item == NULL;
	values[9] = PointerGetDatum(item->index_keys);
	nulls[9] = item->index_keys == NULL;

	id = mzc_call_internal(MZC_INSERT_SIGNATURE, 10, values, nulls, &isnull);
	if (isnull)
		elog(ERROR, "catalog insert returned no item id");
	mzc_check_role_limit(item->owner);
	return id;
}

/*
 * Parse a possibly qualified name given as text, as PostgreSQL parses an
 * identifier: a part longer than NAMEDATALEN - 1 bytes is truncated with
 * the scanner's NOTICE (42622), not silently (stringToQualifiedNameList
 * truncates without a word).  Malformed names are left to
 * stringToQualifiedNameList to report.
 */
static List *
mzc_name_list(const char *s)
{
	const char *p = s;

	for (;;)
	{
		StringInfoData part;
		char	   *ident;

		initStringInfo(&part);
		while (scanner_isspace(*p))
			p++;
		if (*p == '"')
		{
			for (p++;; p++)
			{
				if (*p == '\0')
					return stringToQualifiedNameList(s);
				if (*p == '"')
				{
					if (p[1] != '"')
						break;
					p++;
				}
				appendStringInfoChar(&part, *p);
			}
			p++;
			ident = part.data;
		}
		else
		{
			while (*p != '\0' && *p != '.' && !scanner_isspace(*p))
				appendStringInfoChar(&part, *p++);
			ident = downcase_identifier(part.data, part.len, false, false);
		}
		truncate_identifier(ident, strlen(ident), true);
		while (scanner_isspace(*p))
			p++;
		if (*p != '.')
			break;
		p++;
	}
	return stringToQualifiedNameList(s);
}

/*
 * Lock a relation given by OID for the rest of the transaction and make
 * sure it still exists once locked.
 */
static void
mzc_lock_relation(Oid relid, LOCKMODE mode)
{
	/* An OID that names nothing is not a race: say so plainly. */
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	LockRelationOid(relid, mode);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation was dropped concurrently"),
				 errdetail("The relation with OID %u no longer exists.", relid)));
}

static Oid
mzc_rel_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/* The caller must own the relation. */
static void
mzc_require_owner(Oid relid)
{
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER,
					   get_relkind_objtype(get_rel_relkind(relid)),
					   get_rel_name(relid));
}

/* The relation must be registered; returns its item. */
static void
mzc_require_item(Oid relid, MzcItemRef *ref)
{
	mzcoord_rec_items_lookup(relid, ref);
	if (!ref->found && get_rel_relkind(relid) == RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("relation \"%s\" is not registered with mzcoord",
						get_rel_name(relid)),
				 errhint("Register the table first: SELECT mzcoord.create_table('%s');",
						 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
													get_rel_name(relid)))));
	if (!ref->found)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("relation \"%s\" is not registered with mzcoord",
						get_rel_name(relid))));
}

/* The item must be a readable collection: a table, source or MV. */
static void
mzc_require_readable(Oid relid, MzcItemRef *ref, const char *what)
{
	mzc_require_item(relid, ref);
	if (strcmp(ref->kind, "index") == 0 || strcmp(ref->kind, "sink") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot create %s on %s \"%s\"", what,
						mzc_kind_label(ref->kind), get_rel_name(relid)),
				 errdetail("Only tables, sources and materialized views can be read.")));
}

/*
 * Serialize creations of the same name until the end of the transaction,
 * then check that the name is (still) free.
 */
static void
mzc_claim_name(Oid nspid, const char *relname)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, nspid,
						 hash_any((const unsigned char *) relname,
								  strlen(relname)),
						 MZC_NAME_LOCK_TAG);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	/* See relations that a creation we waited for has committed. */
	AcceptInvalidationMessages();
	mzcoord_check_new_relation(nspid, relname);
}

/*
 * Resolve the name of a relation to create, with the caller's search_path,
 * check the caller may create it there, and claim the name; the item gets
 * the schema and the name.
 */
static void
mzc_resolve_new_name(text *name, MzcNewItem *item)
{
	char	   *s = text_to_cstring(name);
	List	   *names;
	RangeVar   *rv;
	AclResult	aclresult;

	names = mzc_name_list(s);
	rv = makeRangeVarFromNameList(names);
	if (rv->catalogname != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cross-database references are not implemented: \"%s\"",
						s)));
	item->nspid = RangeVarGetCreationNamespace(rv);
	item->name = rv->relname;
	aclresult = pg_namespace_aclcheck(item->nspid, GetUserId(), ACL_CREATE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_SCHEMA,
					   get_namespace_name(item->nspid));
	mzc_claim_name(item->nspid, item->name);
}

static Interval *
mzc_retain_history_arg(FunctionCallInfo fcinfo, int argno)
{
	Interval   *iv;

	if (PG_ARGISNULL(argno))
		return NULL;
	iv = PG_GETARG_INTERVAL_P(argno);
	(void) mzcoord_retain_history_ms(iv);
	return iv;
}

static void
mzc_require_args(FunctionCallInfo fcinfo, int nargs)
{
	for (int i = 0; i < nargs; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d must not be null", i + 1)));
	/* Before anything is locked: see mzcoord_extension_guard(). */
	mzcoord_extension_guard();
	mzcoord_require_origin_role();
}

/* ----------------------------------------------------------------
 * DDL functions
 * ----------------------------------------------------------------
 */

/*
 * SQL: mzcoord.create_table(rel regclass, retain_history interval
 *		DEFAULT NULL) RETURNS text
 */
Datum
mzcoord_create_table(PG_FUNCTION_ARGS)
{
	Oid			relid;
	MzcItemRef	ref;
	MzcNewItem	item = {0};

	mzc_require_args(fcinfo, 1);
	relid = PG_GETARG_OID(0);
	mzc_lock_relation(relid, ShareUpdateExclusiveLock);
	mzcoord_check_registrable_table(relid);
	mzc_require_owner(relid);
	mzcoord_rec_items_lookup(relid, &ref);
	if (ref.found)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("relation \"%s\" is already registered with mzcoord",
						get_rel_name(relid)),
				 errdetail("It is a %s.", mzc_kind_label(ref.kind))));

	item.kind = "table";
	item.nspid = get_rel_namespace(relid);
	item.name = get_rel_name(relid);
	item.relid = relid;
	item.owner = mzc_rel_owner(relid);
	item.retain_history = mzc_retain_history_arg(fcinfo, 1);
	PG_RETURN_DATUM(mzc_insert_item(&item));
}

/*
 * SQL: mzcoord.create_source(name text, columns text, retain_history
 *		interval DEFAULT NULL) RETURNS text
 */
Datum
mzcoord_create_source(PG_FUNCTION_ARGS)
{
	MzcNewItem	item = {0};

	mzc_require_args(fcinfo, 2);
	item.retain_history = mzc_retain_history_arg(fcinfo, 2);
	item.definition = mzcoord_source_columns(text_to_cstring(PG_GETARG_TEXT_PP(1)),
											 GetUserId());
	mzc_resolve_new_name(PG_GETARG_TEXT_PP(0), &item);

	item.kind = "source";
	item.owner = GetUserId();
	PG_RETURN_DATUM(mzc_insert_item(&item));
}

/*
 * SQL: mzcoord.create_materialized_view(name text, query text,
 *		retain_history interval DEFAULT NULL, refresh text[] DEFAULT NULL)
 *		RETURNS text
 */
Datum
mzcoord_create_materialized_view(PG_FUNCTION_ARGS)
{
	MzcNewItem	item = {0};
	MzcQueryInfo info;

	mzc_require_args(fcinfo, 2);
	item.retain_history = mzc_retain_history_arg(fcinfo, 2);
	if (!PG_ARGISNULL(3))
		item.refresh = mzcoord_refresh_canonical(PG_GETARG_ARRAYTYPE_P(3));
	mzcoord_analyze_query(text_to_cstring(PG_GETARG_TEXT_PP(1)), GetUserId(),
						  &info);
	mzc_resolve_new_name(PG_GETARG_TEXT_PP(0), &item);

	item.kind = "materialized_view";
	item.owner = GetUserId();
	item.definition = mzcoord_deparse_qualified(info.query);
	PG_RETURN_DATUM(mzc_insert_item(&item));
}

/*
 * SQL: mzcoord.create_index(name text, on_rel regclass, keys text[])
 *		RETURNS text
 *
 * Like CREATE INDEX: the caller must own the indexed relation and may
 * create objects in its schema; the index lives in that schema.
 */
Datum
mzcoord_create_index(PG_FUNCTION_ARGS)
{
	MzcNewItem	item = {0};
	MzcItemRef	on;
	Oid			relid;
	Oid			nspid;
	char	   *s;
	List	   *names;
	RangeVar   *rv;
	AclResult	aclresult;

	mzc_require_args(fcinfo, 3);
	relid = PG_GETARG_OID(1);
	/* CREATE INDEX's lock: blocks writers and DROP, not readers. */
	mzc_lock_relation(relid, ShareLock);
	mzc_require_readable(relid, &on, "an index");
	mzc_require_owner(relid);
	nspid = get_rel_namespace(relid);

	s = text_to_cstring(PG_GETARG_TEXT_PP(0));
	names = mzc_name_list(s);
	rv = makeRangeVarFromNameList(names);
	if (rv->catalogname != NULL ||
		(rv->schemaname != NULL &&
		 get_namespace_oid(rv->schemaname, true) != nspid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("index \"%s\" must be in schema \"%s\" of its relation",
						s, get_namespace_name(nspid))));
	aclresult = pg_namespace_aclcheck(nspid, GetUserId(), ACL_CREATE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_SCHEMA, get_namespace_name(nspid));
	(void) mzcoord_index_key_list(relid, PG_GETARG_ARRAYTYPE_P(2));
	mzc_claim_name(nspid, rv->relname);

	item.kind = "index";
	item.nspid = nspid;
	item.name = rv->relname;
	item.owner = mzc_rel_owner(relid);	/* an index has its table's owner */
	item.on_item = on.id;
	item.index_keys = PG_GETARG_ARRAYTYPE_P(2);
	PG_RETURN_DATUM(mzc_insert_item(&item));
}

/*
 * SQL: mzcoord.create_sink(name text, from_rel regclass,
 *		snapshot boolean DEFAULT true) RETURNS text
 *
 * The options of the sink (whether its first export starts with a snapshot
 * of its input at its as-of) are recorded in mzcoord.sink_options, in the
 * same transaction as its item.
 */
Datum
mzcoord_create_sink(PG_FUNCTION_ARGS)
{
	MzcNewItem	item = {0};
	MzcItemRef	from;
	Oid			relid;
	Datum		id;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	bool		isnull;

	mzc_require_args(fcinfo, PG_NARGS());
	relid = PG_GETARG_OID(1);
	mzc_lock_relation(relid, AccessShareLock);
	mzc_require_readable(relid, &from, "a sink");
	/* SELECT, and no row-level security: checked again at every export. */
	mzcoord_sink_check_input(relid, GetUserId(), NULL);
	mzc_resolve_new_name(PG_GETARG_TEXT_PP(0), &item);

	item.kind = "sink";
	item.owner = GetUserId();
	item.on_item = from.id;
	id = mzc_insert_item(&item);

	values[0] = id;
	values[1] = BoolGetDatum(PG_NARGS() < 3 || PG_GETARG_BOOL(2));
	(void) mzc_call_internal(MZC_SINK_OPTIONS_SIGNATURE, 2, values, nulls,
							 &isnull);
	PG_RETURN_DATUM(id);
}

/*
 * SQL: mzcoord.set_retain_history(rel regclass, retain_history interval)
 *		RETURNS void
 *
 * NULL resets the window to the default.
 */
Datum
mzcoord_set_retain_history(PG_FUNCTION_ARGS)
{
	Oid			relid;
	MzcItemRef	ref;
	Datum		values[2];
	bool		nulls[2] = {false};
	bool		isnull;

	mzc_require_args(fcinfo, 1);
	relid = PG_GETARG_OID(0);
	mzc_lock_relation(relid, ShareUpdateExclusiveLock);
	mzc_require_item(relid, &ref);
	if (strcmp(ref.kind, "sink") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot set the retain history of sink \"%s\"",
						get_rel_name(relid)),
				 errdetail("A sink is not readable, so it has no history to retain.")));
	mzc_require_owner(relid);

	values[0] = CStringGetTextDatum(ref.id);
	values[1] = PointerGetDatum(mzc_retain_history_arg(fcinfo, 1));
	nulls[1] = PG_ARGISNULL(1);
	(void) mzc_call_internal(MZC_SET_RETAIN_SIGNATURE, 2, values, nulls,
							 &isnull);
	PG_RETURN_VOID();
}

/*
 * SQL: mzcoord.drop(rel regclass, cascade boolean DEFAULT false)
 *		RETURNS void
 */
Datum
mzcoord_drop(PG_FUNCTION_ARGS)
{
	Oid			relid;
	bool		cascade;
	MzcItemRef	ref;
	char		relkind;
	char	   *qname;
	char	   *dependents;
	int			ret;

	mzc_require_args(fcinfo, 2);
	relid = PG_GETARG_OID(0);
	cascade = PG_GETARG_BOOL(1);
	relkind = get_rel_relkind(relid);
	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));

	/*
	 * A maintenance step of the object, or with cascade of one that reads
	 * it, holds locks that the DROP would wait for, up to the step timeout:
	 * the owner's drop cancels it instead (its worker records nothing).
	 * Only the owner's: nobody else may interrupt the owner's maintenance.
	 */
	if (relkind != RELKIND_INDEX && pg_class_ownercheck(relid, GetUserId()))
		(void) mzcoord_dispatch_cancel_rel(relid, cascade);

	/*
	 * DROP's own lock, taken first so that every creation that read this
	 * relation has committed or failed before dependents are looked for.  An
	 * index is left to DROP INDEX, which locks its table first (nothing reads
	 * an index item).
	 */
	if (relkind != RELKIND_INDEX)
		mzc_lock_relation(relid, AccessExclusiveLock);
	mzc_require_item(relid, &ref);
	mzc_require_owner(relid);

	qname = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									   get_rel_name(relid));
	dependents = mzcoord_rec_items_dependents(ref.id);
	if (dependents != NULL && !cascade)
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("cannot drop %s %s because other objects depend on it",
						mzc_kind_label(ref.kind), qname),
				 errdetail("%s", dependents),
				 errhint("Use cascade => true to drop the dependent objects too.")));

	mzcoord_spi_connect();
	ret = SPI_execute(psprintf("DROP %s %s%s",
							   relkind == RELKIND_INDEX ? "INDEX" : "TABLE",
							   qname, cascade ? " CASCADE" : ""),
					  false, 0);
	if (ret != SPI_OK_UTILITY)
		elog(ERROR, "DROP failed: %s", SPI_result_code_string(ret));
	SPI_finish();
	PG_RETURN_VOID();
}

/* ----------------------------------------------------------------
 * The sql_drop event trigger
 * ----------------------------------------------------------------
 */

/*
 * SQL: mzcoord._on_sql_drop() RETURNS event_trigger, SECURITY DEFINER
 *
 * Deletes, in one statement, the items whose relations were dropped; the
 * implications then drop their collections.  The rows are found with the
 * latest snapshot: under REPEATABLE READ, an item committed after the
 * transaction's snapshot (say, an index created on the table while DROP
 * waited for its lock) would otherwise be left behind without its relation.
 * Deleting a row that the transaction's snapshot cannot see is then a
 * serialization failure, exactly as PostgreSQL's foreign keys do it.
 */
Datum
mzcoord_on_sql_drop(PG_FUNCTION_ARGS)
{
	Oid			nspid;
	Oid			items_relid;
	int			ret;
	Datum		dropped;
	bool		isnull;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._on_sql_drop() must be called as an event trigger")));

	/* Nothing to do while the extension itself is being dropped. */
	nspid = get_namespace_oid("mzcoord", true);
	items_relid = OidIsValid(nspid) ? get_relname_relid("items", nspid) : InvalidOid;
	if (!OidIsValid(items_relid))
		PG_RETURN_VOID();

	/*
	 * Before the catalog is locked: see mzcoord_extension_guard().  The
	 * command holds the dropped relations already; a DROP EXTENSION that
	 * waits for them makes it fail here rather than wait for the drop.
	 */
	mzcoord_extension_guard();

	mzcoord_spi_connect();
	ret = SPI_execute("SELECT pg_catalog.array_agg(objid)"
					  "  FROM pg_catalog.pg_event_trigger_dropped_objects()"
					  " WHERE classid = 'pg_catalog.pg_class'::pg_catalog.regclass"
					  "   AND objsubid = 0",
					  true, 0);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the dropped objects: %s",
			 SPI_result_code_string(ret));
	dropped = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
							&isnull);
	if (!isnull)
	{
		ArrayType  *arr = DatumGetArrayTypeP(dropped);
		Datum	   *elems;
		int			n;
		bool		own = false;

		deconstruct_array(arr, OIDOID, sizeof(Oid), true, TYPALIGN_INT,
						  &elems, NULL, &n);
		for (int i = 0; i < n; i++)
			if (DatumGetObjectId(elems[i]) == items_relid)
				own = true;

		if (!own)
			mzcoord_rec_items_delete_dropped(dropped);
	}
	SPI_finish();
	PG_RETURN_VOID();
}
