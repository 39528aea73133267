/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  Physical compaction of histories up to their since.
 *
 * Compacting a history up to a time S (never beyond the collection's since,
 * which holds and policies keep at or below every time anyone may read, nor
 * beyond its committed compaction bound in mzcoord.compaction_bounds, read
 * in the compaction's own transaction: the catalog is the authority)
 * advances every update at a time below S to S and consolidates: identical
 * rows add up, rows that add up to zero disappear.  Reads at any time >= S
 * see the same contents before, during and after: compaction is one
 * statement, in one transaction,
 *
 *	 WITH moved AS (DELETE FROM history WHERE ts < S RETURNING row, diff)
 *	 INSERT INTO history SELECT row, S, sum(diff) FROM moved GROUP BY row
 *	 HAVING sum(diff) <> 0
 *
 * (columns whose types have an equality that is byte identity are grouped
 * by value, the others by their image and aggregated with mzcoord._any, see
 * rowimage.c).  It only touches rows below S.  Writers are never blocked:
 * they insert rows at times at or after the upper, which is beyond S, and
 * take ROW EXCLUSIVE on the history, which does not conflict with the
 * SHARE UPDATE EXCLUSIVE lock that keeps two compactions of one history
 * apart.  The compacted frontier (no update below it) is recorded in
 * mzcoord.storage in the same transaction.
 *
 * Policy of the coordinator.  Compaction rewrites every row below S, so it
 * runs only when it pays: a collection is compacted when it has updates
 * between its compacted frontier C and its since S, and either they number
 * at least a quarter of the rows left by the last compaction, or the last
 * compaction is older than one second per thousand of those rows (at least
 * one second).  A large table with a trickle of updates is thus rewritten
 * at most about every rows/1000 seconds, a busy one after every 25% of new
 * updates, a small one within a second or two.  Each tick examines at most
 * MZC_COMPACT_SCAN collections (round robin over the controller's
 * collections), and stops starting compactions once half a tick interval
 * has passed (but always starts the first one due, so that a loaded
 * machine still makes progress); one compaction is not interrupted.  A collection found with
 * nothing above its compacted frontier is not looked at again (not even
 * opened) until the cumulative statistics show writes to its history.  A compaction that fails
 * is logged and retried a minute later; it never stops the coordinator.
 * mzcoord.compact(rel) compacts one collection now, whatever the policy.
 * mzcoord.auto_compact = off pauses the coordinator's compaction (for
 * maintenance, or to keep history around while investigating).
 *
 * IDENTIFICATION
 *	  src/storage/compact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "compact.h"
#include "controller.h"
#include "extension.h"
#include "failpoint.h"
#include "history.h"
#include "ids.h"
#include "rec_bounds.h"
#include "rec_storage.h"

PG_FUNCTION_INFO_V1(mzcoord_compact);

/* Does the default equality of this type (and collation) mean identical bytes? */
static bool
groups_by_value(Oid typid, Oid collid)
{
	typid = getBaseType(typid);
	if (type_is_enum(typid))
		return true;
	switch (typid)
	{
		case BOOLOID:
		case CHAROID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case REGCLASSOID:
		case REGTYPEOID:
		case REGPROCOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case UUIDOID:
		case BYTEAOID:
		case CASHOID:
			return true;
		case TEXTOID:
		case VARCHAROID:
		case NAMEOID:
			return !OidIsValid(collid) || get_collation_isdeterministic(collid);
		default:
			return false;
	}
}

/*
 * How far a collection may be compacted now: its since, and for a fed
 * history (a source, a materialized view) never its upper (an advance
 * applies the updates at times from the upper on to the relation; none may
 * be moved there).  -1: not at all.
 */
int64
mzcoord_compaction_target(const MzcCollectionInfo *info)
{
	int64		target;

	if (info->since.empty)
		return -1;
	target = info->since.ts;
	if (mzcoord_kind_is_fed(info->kind) && !info->upper.empty)
		target = Min(target, info->upper.ts - 1);
	return target;
}

/* The compacted frontier of gid's history (a fresh snapshot). */
static int64
read_compacted(int64 gid, bool *found)
{
	int64		c = 0;
	bool		isnull;

	*found = mzcoord_rec_storage_compacted(gid, &c, &isnull);
	return c;
}

/*
 * Lock h's history for a compaction and open it, or NULL: with wait =
 * false, when the lock is not free; in any case, when the history was
 * dropped meanwhile.
 *
 * One compaction of a history at a time; writers (ROW EXCLUSIVE) are not
 * affected.  The lock also keeps the history's columns as they are
 * (following an ALTER TABLE alters the history).  The columns come from
 * the history itself, so the relation is not locked: not even a TRUNCATE
 * of it waits for a compaction.
 */
static Relation
open_history_for_compaction(const MzcHistory *h, bool wait)
{
	if (wait)
		LockRelationOid(h->histid, ShareUpdateExclusiveLock);
	else if (!ConditionalLockRelationOid(h->histid, ShareUpdateExclusiveLock))
		return NULL;
	return try_table_open(h->histid, NoLock);	/* NULL: dropped meanwhile */
}

/* Append name to a comma-separated list. */
static void
append_list_item(StringInfo list, const char *name)
{
	appendStringInfo(list, "%s%s", list->len ? ", " : "", name);
}

/*
 * The compaction statement of h's history hrel (qhist: its quoted name),
 * $1 being the time to compact to: see the file header.  Columns whose
 * equality is byte identity are grouped by value, the others by their
 * image, and aggregated with mzcoord._any.
 */
static char *
compaction_sql(const MzcHistory *h, Relation hrel, const char *qhist)
{
	TupleDesc	desc = RelationGetDescr(hrel);
	StringInfoData cols;
	StringInfoData sel;
	StringInfoData grp;
	StringInfoData img;
	StringInfoData sql;

	initStringInfo(&cols);
	initStringInfo(&sel);
	initStringInfo(&grp);
	initStringInfo(&img);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const char *name = quote_identifier(NameStr(att->attname));

		if (att->attisdropped || att->attnum == h->ts_attno ||
			att->attnum == h->diff_attno)
			continue;
		appendStringInfo(&cols, "%s, ", name);
		if (groups_by_value(att->atttypid, att->attcollation))
		{
			appendStringInfo(&sel, "%s, ", name);
			append_list_item(&grp, name);
		}
		else
		{
			appendStringInfo(&sel, "mzcoord._any(%s) AS %s, ", name, name);
			append_list_item(&img, name);
		}
	}
	if (img.len > 0)
		append_list_item(&grp, psprintf("mzcoord._row_image(%s)", img.data));
	if (grp.len == 0)
		appendStringInfoString(&grp, "()");

	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "WITH moved AS ("
					 "  DELETE FROM %s WHERE " MZC_HISTORY_TS " OPERATOR(pg_catalog.<) $1"
					 "  RETURNING %s" MZC_HISTORY_DIFF "),"
					 " merged AS ("
					 "  SELECT %spg_catalog.sum(" MZC_HISTORY_DIFF ") AS " MZC_HISTORY_DIFF
					 "    FROM moved GROUP BY %s),"
					 " written AS ("
					 "  INSERT INTO %s (%s" MZC_HISTORY_TS ", " MZC_HISTORY_DIFF ")"
					 "  SELECT %s$1, " MZC_HISTORY_DIFF "::pg_catalog.int8 FROM merged"
					 "   WHERE " MZC_HISTORY_DIFF " OPERATOR(pg_catalog.<>) 0"
					 "  RETURNING 1)"
					 " SELECT (SELECT pg_catalog.count(*) FROM moved),"
					 "        (SELECT pg_catalog.count(*) FROM written)",
					 qhist, cols.data, sel.data, grp.data, qhist, cols.data,
					 cols.data);
	return sql.data;
}

/*
 * Run the compaction statement sql of history qhist up to since, with a
 * fresh snapshot; res gets the rows it moved and wrote (SPI connected).
 */
static void
run_compaction(const char *sql, const char *qhist, int64 since,
			   MzcCompaction *res)
{
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(since)};
	SPIPlanPtr	plan;
	bool		isnull;

	plan = SPI_prepare(sql, 1, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare the compaction of %s: %s", qhist,
			 SPI_result_code_string(SPI_result));
	if (SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, false, true, 0) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not compact %s", qhist);
	res->rows_in = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
											   SPI_tuptable->tupdesc, 1, &isnull));
	res->rows_out = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
												SPI_tuptable->tupdesc, 2, &isnull));
}

/*
 * Record in mzcoord.storage that gid's history (qhist) is compacted to
 * since, leaving rows_out rows there (SPI connected).
 */
static void
record_compaction(int64 gid, const char *qhist, int64 since, int64 rows_out)
{
	if (!mzcoord_rec_storage_compacted_to(gid, since, rows_out))
		elog(ERROR, "could not record the compaction of %s", qhist);
}

/*
 * Compact h's history up to `since` (at most the collection's since).  With
 * wait = false, gives up (returns false) instead of waiting for a lock.
 */
bool
mzcoord_compact_history(const MzcHistory *h, int64 since, bool wait, MzcCompaction *res)
{
	Relation	hrel;
	char	   *qhist;
	Oid			save_user;
	int			save_sec;
	int			save_nest;
	bool		found;
	int64		bound;
	bool		bound_empty;

	memset(res, 0, sizeof(*res));
	hrel = open_history_for_compaction(h, wait);
	if (hrel == NULL)
		return false;

	save_nest = mzcoord_become_owner(h->owner, &save_user, &save_sec);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	res->frontier = read_compacted(h->gid, &found);

	/* Never beyond the committed bound, the catalog's permission (D2). */
	if (!mzcoord_rec_bound(h->gid, &bound, &bound_empty))
		found = false;
	else if (!bound_empty)
		since = Min(since, bound);
	if (found && since > res->frontier)
	{
		qhist = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(hrel)),
										   RelationGetRelationName(hrel));
		run_compaction(compaction_sql(h, hrel, qhist), qhist, since, res);
		/* Test only: history compacted, its frontier not yet recorded. */
		mzcoord_failpoint_check("compaction_before_record");
		record_compaction(h->gid, qhist, since, res->rows_out);
		res->frontier = since;
		res->compacted = true;
	}
	SPI_finish();
	mzcoord_restore_user(save_user, save_sec, save_nest);
	table_close(hrel, NoLock);
	return true;
}

/*
 * SQL: mzcoord.compact(rel regclass, OUT compacted bigint, OUT rows_in bigint,
 *		OUT rows_out bigint) RETURNS record
 *
 * Compacts the history of a table, source or materialized view up to its
 * current since now.
 */
Datum
mzcoord_compact(PG_FUNCTION_ARGS)
{
	Oid			relid;
	MzcHistory *h;
	MzcCollectionInfo info;
	MzcCompaction res;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	if (!OidIsValid(get_rel_relkind(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));
	/* Before anything is locked: see mzcoord_extension_guard(). */
	mzcoord_extension_guard();
	h = mzcoord_history_lookup(relid, false);
	if (!mzcoord_ctl_lookup_rel(relid, &info))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("collection of \"%s\" is not published yet", get_rel_name(relid)),
				 errhint("Commit the transaction that created it first.")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	if (mzcoord_compaction_target(&info) >= 0)
		(void) mzcoord_compact_history(h, mzcoord_compaction_target(&info), true, &res);
	else
		memset(&res, 0, sizeof(res));
	values[0] = Int64GetDatum(res.frontier);
	values[1] = Int64GetDatum(res.rows_in);
	values[2] = Int64GetDatum(res.rows_out);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}
