/*-------------------------------------------------------------------------
 *
 * replace.c
 *	  Replacing a materialized view's definition in place (issue 23):
 *	  mzcoord.create_replacement() and mzcoord.apply_replacement().
 *
 * A replacement is an ordinary maintained view, paired with its target in
 * mzcoord.replacements: it reads its own inputs from its own as-of, and the
 * target is not one of them.  Applying it, in one transaction:
 *
 *	1. locks the target's relation as a refresh does (SHARE ROW EXCLUSIVE:
 *	   the target's refreshes skip it until commit, a drop waits), and reads
 *	   the target's durable upper T, with a snapshot taken after the lock;
 *	2. waits until the replacement is complete beyond T (its refreshes go
 *	   on), holds it at T, then locks its relation too;
 *	3. the target adopts the replacement (refresh.c): the difference between
 *	   the replacement's contents at T and the target's at T - 1 is written
 *	   into the target's history at T, the replacement's updates after T are
 *	   copied, and the target's upper becomes the replacement's;
 *	4. the catalog (part 84, _swap_definition): the old definition is kept
 *	   with its validity, the target's item takes the new one, and the
 *	   implications give it the new inputs (requirements, dependencies, and
 *	   at commit the controller's, mzc_coll_set_deps); the target's error
 *	   ranges end at T and the replacement's from T on become the target's
 *	   (mzcoord_rec_view_errors_swap);
 *	5. drops the replacement's relation, as its owner: its item goes.
 *
 * So for every t < T the target's history is what it was, and from T on it
 * is the replacement's; a reader holding a time below T reads the same
 * rows.  A crash before the commit leaves nothing of it; after, everything.
 *
 * IDENTIFICATION
 *	  src/compute/replace.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "acquire.h"
#include "catalog.h"
#include "controller.h"
#include "extension.h"
#include "failpoint.h"
#include "history.h"
#include "ids.h"
#include "oracle.h"
#include "rec_collections.h"
#include "rec_items.h"
#include "rec_replacements.h"
#include "rec_view_errors.h"
#include "refresh.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_create_replacement);
PG_FUNCTION_INFO_V1(mzcoord_apply_replacement);
PG_FUNCTION_INFO_V1(mzcoord_replacing);

/*
 * Backend-local: the item whose definition apply_replacement is swapping,
 * the time and the successor's global id; empty otherwise.  The one change
 * of a definition the catalog implications accept (_replace_definition).
 */
static char replacing_item[MZC_ITEM_ID_LEN] = "";
static char replacing_successor[MZC_ITEM_ID_LEN] = "";
static int64 replacing_at = 0;

/*
 * The durable upper of gid in a fresh snapshot (its collections row, as
 * mzcoord_rec_current_upper reads it): *found whether it has a row, *empty if the upper is
 * NULL or there is no row.
 */
static int64
durable_upper(const char *gid, bool *found, bool *empty)
{
	int64		upper;

	mzcoord_spi_connect();
	if (mzcoord_rec_current_upper(gid, found, &upper, empty) != SPI_OK_SELECT)
		elog(ERROR, "could not read the mzcoord catalog");
	SPI_finish();
	return upper;
}

static void
require_owner(Oid relid)
{
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));
}

/* "a integer, b text": the live columns of relid, for messages. */
static char *
column_text(TupleDesc desc)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (a->attisdropped)
			continue;
		appendStringInfo(&buf, "%s%s %s", buf.len > 0 ? ", " : "",
						 quote_identifier(NameStr(a->attname)),
						 format_type_with_typemod(a->atttypid, a->atttypmod));
	}
	return buf.data;
}

/*
 * The replacement must have the target's columns, in order: names, types,
 * type modifiers and collations (the target's readers and its history
 * keep them).
 */
static void
check_same_columns(Oid target, Oid replacement)
{
	Relation	t = table_open(target, AccessShareLock);
	Relation	r = table_open(replacement, AccessShareLock);
	TupleDesc	td = RelationGetDescr(t);
	TupleDesc	rd = RelationGetDescr(r);
	bool		same = td->natts == rd->natts;

	for (int i = 0; same && i < td->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(td, i);
		Form_pg_attribute b = TupleDescAttr(rd, i);

		same = a->attisdropped == b->attisdropped &&
			(a->attisdropped ||
			 (strcmp(NameStr(a->attname), NameStr(b->attname)) == 0 &&
			  a->atttypid == b->atttypid && a->atttypmod == b->atttypmod &&
			  a->attcollation == b->attcollation));
	}
	if (!same)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("a replacement of \"%s\" must have its columns",
						RelationGetRelationName(t)),
				 errdetail("\"%s\" has (%s); the query gives (%s).",
						   RelationGetRelationName(t), column_text(td),
						   column_text(rd))));
	table_close(r, AccessShareLock);
	table_close(t, AccessShareLock);
}

/* Refuse a replacement that reads its target or anything that reads it. */
static void
check_no_cycle(const char *item_id, const char *target_id, Oid target)
{
	bool		cycle;

	mzcoord_spi_connect();
	cycle = mzcoord_rec_items_reads_target(item_id, target_id);
	SPI_finish();
	if (cycle)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("a replacement of \"%s\" cannot read it or anything that reads it",
						get_rel_name(target))));
}

/*
 * SQL: mzcoord.create_replacement(target regclass, name text, query text)
 *		RETURNS text
 *
 * A materialized view under name computing query, with the target's
 * retain history and refresh schedule, paired with the target.  The caller
 * must own the target; the new view is the caller's, created as
 * create_materialized_view creates it (privileges, names, limits).
 */
Datum
mzcoord_create_replacement(PG_FUNCTION_ARGS)
{
	Oid			target;
	char	   *target_id;
	char	   *kind;
	char	   *item_id;
	char	   *relname;
	bool		found;
	bool		sealed;
	Oid			argtypes[4] = {TEXTOID, TEXTOID, INTERVALOID, TEXTARRAYOID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	Datum		rec[2];
	bool		recnulls[2] = {false, false};
	bool		isnull;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("target, name and query must not be null")));
	target = PG_GETARG_OID(0);
	if (!OidIsValid(get_rel_relkind(target)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", target)));
	mzcoord_extension_guard();
	kind = mzcoord_rec_items_kind_of(target);
	if (kind == NULL || strcmp(kind, "materialized_view") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an mzcoord materialized view",
						get_rel_name(target))));
	require_owner(target);
	/* The target's refreshes wait; so does a drop of it. */
	LockRelationOid(target, ShareRowExclusiveLock);
	target_id = mzcoord_rec_items_id_of(target);
	if (target_id == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an mzcoord materialized view",
						get_rel_name(target))));
	if (mzcoord_rec_replacements_is_one(target_id))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a replacement itself", get_rel_name(target)),
				 errhint("Apply or drop it first.")));
	(void) durable_upper(target_id, &found, &sealed);
	if (found && sealed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized view \"%s\" is complete and changes no more",
						get_rel_name(target))));

	/* The new view, created as the caller, with the target's settings. */
	values[0] = PG_GETARG_DATUM(1);
	values[1] = PG_GETARG_DATUM(2);
	mzcoord_spi_connect();
	mzcoord_rec_items_settings(target_id, target, &values[2], &nulls[2]);
	if (SPI_execute_with_args("SELECT mzcoord.create_materialized_view($1, $2, $3, $4)",
							  4, argtypes, values, nulls, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not create the replacement");
	item_id = MemoryContextStrdup(TopTransactionContext,
								  SPI_getvalue(SPI_tuptable->vals[0],
											   SPI_tuptable->tupdesc, 1));
	SPI_finish();
	relname = mzcoord_rec_items_relation_text(item_id);
	if (relname == NULL)
		elog(ERROR, "the replacement \"%s\" has no relation", item_id);
	check_same_columns(target, (Oid) strtoul(relname, NULL, 10));
	check_no_cycle(item_id, target_id, target);

	rec[0] = CStringGetTextDatum(item_id);
	rec[1] = CStringGetTextDatum(target_id);
	(void) mzcoord_catalog_call("mzcoord._record_replacement(text,text)", 2, rec,
								recnulls, &isnull);
	PG_RETURN_TEXT_P(cstring_to_text(item_id));
}

/* The pair of the replacement whose relation is relid; raises if none. */
static MzcReplacementPair
find_pair(Oid relid)
{
	MzcReplacementPair p = mzcoord_rec_replacements_pair(relid);

	if (p.item_id == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a replacement", get_rel_name(relid)),
				 errhint("Create one with mzcoord.create_replacement().")));
	return p;
}

/*
 * Wait until the replacement (gid) is complete beyond at: its refreshes
 * run meanwhile (it is not locked yet).
 */
static void
wait_beyond(int64 gid, int64 at)
{
	for (;;)
	{
		MzcCollectionInfo info;

		mzcoord_prepare_upper_wait();
		if (!mzcoord_ctl_lookup_gid(gid, &info))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the replacement was dropped")));
		if (!mzc_frontier_le_ts(info.upper, at))
			break;
		CHECK_FOR_INTERRUPTS();
		mzcoord_upper_wait(100);
	}
	mzcoord_end_upper_wait();
}

/*
 * SQL: mzcoord.apply_replacement(replacement regclass) RETURNS bigint
 *
 * See the head of this file.  The caller must own the replacement and its
 * target.  Returns T: read_at(target, t) answers with the old definition
 * for t < T and with the new one from T on.
 */
Datum
mzcoord_apply_replacement(PG_FUNCTION_ARGS)
{
	Oid			relid;
	MzcReplacementPair p;
	int64		at;
	int64		upper;
	bool		found;
	bool		empty;
	int64		rgid;
	MzcHistory *vh;
	MzcHistory *rh;
	Relation	vrel;
	Datum		args[3];
	bool		argnulls[3] = {false, false, false};
	bool		isnull;
	char	   *qname;
	Oid			save_user;
	int			save_sec;
	int			save_nest;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("replacement must not be null")));
	relid = PG_GETARG_OID(0);
	if (!OidIsValid(get_rel_relkind(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	mzcoord_extension_guard();
	p = find_pair(relid);
	require_owner(relid);
	require_owner(p.target_rel);
	if (!mzcoord_parse_gid(p.item_id, &rgid))
		elog(ERROR, "invalid item id \"%s\"", p.item_id);

	/* 1. The target stops where it is; its durable upper is T. */
	LockRelationOid(p.target_rel, ShareRowExclusiveLock);
	at = durable_upper(p.target_id, &found, &empty);
	if (empty)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized view \"%s\" is complete and changes no more",
						get_rel_name(p.target_rel))));

	/* 2. The replacement complete beyond T, held at T, then stopped. */
	wait_beyond(rgid, at);
	(void) mzcoord_ctl_hold_for_read(relid, at);
	LockRelationOid(relid, ShareRowExclusiveLock);
	upper = durable_upper(p.item_id, &found, &empty);
	if (empty)
		upper = -1;
	else if (upper <= at)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("replacement \"%s\" is not complete beyond " INT64_FORMAT,
						get_rel_name(relid), at),
				 errhint("Apply it again.")));

	vh = mzcoord_history_copy(mzcoord_history_lookup(p.target_rel, false));
	rh = mzcoord_history_copy(mzcoord_history_lookup(relid, false));
	strlcpy(replacing_item, p.target_id, sizeof(replacing_item));
	strlcpy(replacing_successor, p.item_id, sizeof(replacing_successor));
	replacing_at = at;
	PG_TRY();
	{
		/* 3. The target adopts the replacement's contents and progress. */
		vrel = table_open(p.target_rel, NoLock);
		mzcoord_refresh_adopt(vh, vrel, rh, at, upper);
		mzcoord_ctl_check_read(relid, at);
		table_close(vrel, NoLock);

		/* 4. The catalog: the new definition and its inputs. */
		args[0] = CStringGetTextDatum(p.target_id);
		args[1] = CStringGetTextDatum(p.item_id);
		args[2] = Int64GetDatum(at);
		(void) mzcoord_catalog_call("mzcoord._swap_definition(text,text,bigint)",
									3, args, argnulls, &isnull);
		/* ... and its error ranges, as _swap_definition's definer. */
		save_nest = mzcoord_become_definer(vh->owner, &save_user, &save_sec);
		mzcoord_rec_view_errors_swap(p.target_id, p.item_id, at);
		mzcoord_restore_user(save_user, save_sec, save_nest);

		/* 5. The replacement's name goes, as its owner drops it. */
		qname = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
										   get_rel_name(relid));
		mzcoord_spi_connect();
		if (SPI_execute(psprintf("DROP TABLE %s", qname), false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not drop the replacement %s", qname);
		SPI_finish();
		/* Test only: everything done, the transaction not committed. */
		mzcoord_failpoint_check("replacement_before_commit");
	}
	PG_FINALLY();
	{
		replacing_item[0] = '\0';
		replacing_successor[0] = '\0';
		replacing_at = 0;
	}
	PG_END_TRY();
	PG_RETURN_INT64(at);
}

/*
 * SQL: mzcoord._replacing(OUT item_id text, OUT at bigint, OUT successor
 *		text) RETURNS record
 */
Datum
mzcoord_replacing(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[3];
	bool		nulls[3] = {true, true, true};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (replacing_item[0] != '\0')
	{
		values[0] = CStringGetTextDatum(replacing_item);
		values[1] = Int64GetDatum(replacing_at);
		values[2] = CStringGetTextDatum(replacing_successor);
		nulls[0] = nulls[1] = nulls[2] = false;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc),
													  values, nulls)));
}
