/*-------------------------------------------------------------------------
 *
 * problems.c
 *	  The storage consistency checks: mzcoord._storage_problems().
 *
 * IDENTIFICATION
 *	  src/storage/problems.c
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
#include "controller.h"
#include "capture.h"
#include "history.h"
#include "ids.h"
#include "oracle.h"
#include "read.h"
#include "rec_collections.h"
#include "rec_storage.h"
#include "rowimage.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_storage_problems);

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
	Snapshot	snapshot;
	MzcReconcile st;
	int64		negative;
	int64		upto = PG_INT64_MAX;
	int64		missing = 0;
	int64		extra = 0;

	/* This transaction's rows kept for its commit are in the relation. */
	if (!RecoveryInProgress())
		mzcoord_capture_flush(h->histid);
	snapshot = RegisterSnapshot(GetLatestSnapshot());

	/* A fed relation (source, materialized view) shows the contents before its upper. */
	if (mzcoord_kind_is_fed(r->kind))
	{
		bool		found;
		bool		isnull;
		int64		upper;

		mzcoord_spi_connect();
		if (mzcoord_rec_read_upper(r->gid, snapshot, &found, &upper,
								   &isnull) == SPI_OK_SELECT &&
			found && !isnull)
			upto = upper - 1;
		SPI_finish();
	}

	mzcoord_reconcile_begin(&st, rel, desc, snapshot);
	mzcoord_history_contents(h, desc, snapshot, upto, mzcoord_reconcile_subtract, &st,
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
 * says (an operator of pg_catalog), only the retractions if retractions,
 * leaving out the caller's own uncommitted ones; run as the history's
 * owner.  fresh: with a snapshot taken now, else with the statement's.
 */
static int64
count_history(Relation hrel, const char *cmp, int64 bound, bool retractions,
			  bool fresh)
{
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(bound)};
	Oid			save_user;
	int			save_sec;
	int			save_nest;
	int64		n;
	bool		isnull;
	char	   *cond = psprintf(MZC_HISTORY_TS " OPERATOR(pg_catalog.%s) $1", cmp);

	/* Written so that the history's indexes serve it. */
	if (retractions)
		cond = psprintf("%s AND " MZC_HISTORY_DIFF " OPERATOR(pg_catalog.<) 0", cond);
	else
		cond = mzcoord_history_indexed_condition(cond);
	save_nest = mzcoord_become_owner(hrel->rd_rel->relowner, &save_user, &save_sec);
	mzcoord_spi_connect();
	if (SPI_execute_with_args(psprintf("SELECT pg_catalog.count(*) FROM mzcoord.%s"
									   " WHERE %s AND NOT mzcoord._row_is_own(xmin)",
									   quote_identifier(RelationGetRelationName(hrel)), cond),
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
 *
 * On a hot standby the replayed table upper may lag a replayed commit (the
 * primary logs the upper after the commits below it), but not the ceiling:
 * the primary hands out no time above a ceiling whose record it has not
 * flushed, so a commit's record always follows the ceiling that covers it.
 */
static void
check_above_upper(ProblemSink *sink, StorageCheckRow *r, Relation hrel)
{
	mzc_ts		latest;
	int64		above;

	if (RecoveryInProgress())
	{
		mzc_ts		closed;

		mzcoord_oracle_state(&closed, &latest);
		above = count_history(hrel, ">", latest, false, false);
		if (above > 0)
			problem(sink, "history above the ceiling", r->gid,
					psprintf("%lld rows of %s are above the replayed ceiling " INT64_FORMAT,
							 (long long) above, RelationGetRelationName(hrel),
							 (int64) latest));
		return;
	}
	latest = mzcoord_oracle_latest();
	above = count_history(hrel, ">", latest, false, false);
	if (above > 0)
		problem(sink, "history above the upper", r->gid,
				psprintf("%lld rows of %s are above the latest table timestamp " INT64_FORMAT,
						 (long long) above, RelationGetRelationName(hrel),
						 (int64) latest));
}

/*
 * The rows of mzcoord.storage, in global id order, allocated in caller
 * (SPI connected); *nrows gets their number.
 */
static StorageCheckRow *
read_storage_rows(MemoryContext caller, int *nrows)
{
	MzcRecStorage *recs = mzcoord_rec_storage_all(caller, nrows);
	StorageCheckRow *rows = NULL;

	if (*nrows > 0)
		rows = MemoryContextAlloc(caller, sizeof(StorageCheckRow) * *nrows);
	for (int i = 0; i < *nrows; i++)
	{
		StorageCheckRow *r = &rows[i];

		r->gid = recs[i].global_id;
		r->relid = recs[i].relid;
		if (!mzcoord_kind_parse(recs[i].kind, &r->kind))
			r->kind = MZC_KIND_TABLE;
		r->histid = recs[i].histid;
		r->compacted = recs[i].compacted;
	}
	return rows;
}

/*
 * A table's four capture triggers (fn: mzcoord._capture), or a source's
 * guard (fn: mzcoord._source_guard), are all there and enabled.
 */
static void
check_triggers(ProblemSink *sink, StorageCheckRow *r, Relation rel, Oid fn)
{
	int			want = r->kind == MZC_KIND_TABLE ? 4 : 1;
	int			enabled = 0;

	if (rel->trigdesc != NULL)
		for (int t = 0; t < rel->trigdesc->numtriggers; t++)
		{
			Trigger    *trig = &rel->trigdesc->triggers[t];

			if (trig->tgfoid == fn && trig->tgenabled != TRIGGER_DISABLED)
				enabled++;
		}
	if (enabled != want)
		problem(sink, r->kind == MZC_KIND_TABLE ? "capture triggers missing or disabled" :
				"guard missing or disabled", r->gid,
				psprintf("%s has %d of its %d triggers enabled",
						 RelationGetRelationName(rel), enabled, want));
}

/*
 * No retraction below the compacted frontier, which is not beyond the
 * since (a row below the frontier is read as at it: compaction consolidated
 * every row a retraction there touched, see compact.c); for a table,
 * nothing above the table timeline either.  The frontier was read with a
 * fresh snapshot, so the rows are counted with a still fresher one: a
 * compaction committed between the two would otherwise leave retractions
 * "below" it.
 */
static void
check_compaction(ProblemSink *sink, StorageCheckRow *r, Relation hrel)
{
	int64		below = count_history(hrel, "<", r->compacted, true, true);
	int64		gid;
	MzcCollectionInfo info;

	if (below > 0)
		problem(sink, "retraction below the compacted frontier", r->gid,
				psprintf("%lld retractions of %s are below " INT64_FORMAT,
						 (long long) below, RelationGetRelationName(hrel),
						 r->compacted));
	if (r->kind == MZC_KIND_TABLE)
		check_above_upper(sink, r, hrel);
	/*
	 * A hot standby has no controller; the check of the compacted frontier
	 * against the replayed bound (_check_authority) stands in.
	 */
	if (RecoveryInProgress())
		return;
	if (mzcoord_parse_gid(r->gid, &gid) && mzcoord_ctl_lookup_gid(gid, &info) &&
		!info.since.empty && r->compacted > info.since.ts)
		problem(sink, "compaction ahead of the since", r->gid,
				psprintf("compacted to " INT64_FORMAT ", since " INT64_FORMAT,
						 r->compacted, (int64) info.since.ts));
}

/*
 * On a hot standby: the replayed table upper is not above the replayed
 * ceiling (the primary logs an upper only below a ceiling it flushed).
 */
static void
check_replayed_timeline(ProblemSink *sink)
{
	mzc_ts		closed;
	mzc_ts		ceiling;
	mzc_ts		upper = mzcoord_oracle_replayed_upper();

	mzcoord_oracle_state(&closed, &ceiling);
	if (upper > ceiling)
		problem(sink, "replayed upper above the ceiling", "timeline",
				psprintf("table upper " INT64_FORMAT ", ceiling " INT64_FORMAT,
						 (int64) upper, (int64) ceiling));
}

/*
 * Every check of one mzcoord.storage row: its relation and history exist,
 * its internal triggers (fn) are enabled, the history's columns match, the
 * compacted frontier is right, and (below MZC_CHECK_MAX_ROWS rows) the
 * relation's contents are the history's.
 */
static void
check_storage_row(ProblemSink *sink, StorageCheckRow *r, Oid fn)
{
	Relation	rel;
	Relation	hrel;
	bool		rewrites;
	char	   *unsafe;
	char	   *changes;

	rel = try_relation_open(r->relid, AccessShareLock);
	hrel = try_relation_open(r->histid, AccessShareLock);
	if (rel == NULL || hrel == NULL)
	{
		problem(sink, rel == NULL ? "history of a missing relation" : "collection without history",
				r->gid, NULL);
		if (rel)
			relation_close(rel, AccessShareLock);
		if (hrel)
			relation_close(hrel, AccessShareLock);
		return;
	}

	check_triggers(sink, r, rel, fn);
	changes = mzcoord_column_changes(rel, hrel, &rewrites, &unsafe);
	if (changes[0] != '\0')
	{
		problem(sink, "history columns differ from the relation", r->gid,
				psprintf("%s would need: %s", RelationGetRelationName(hrel), changes));
		relation_close(hrel, AccessShareLock);
		relation_close(rel, AccessShareLock);
		return;
	}
	check_compaction(sink, r, hrel);

	if (rel->rd_rel->reltuples <= MZC_CHECK_MAX_ROWS &&
		hrel->rd_rel->reltuples <= MZC_CHECK_MAX_ROWS)
	{
		MzcHistory *h = mzcoord_history_lookup(r->relid, true);

		if (h != NULL)
			check_contents(sink, r, rel, h);
	}
	relation_close(hrel, AccessShareLock);
	relation_close(rel, AccessShareLock);
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
 * source's before its upper).  On a hot standby the same checks run on what
 * recovery replayed, against the replayed ceiling instead of the
 * controller's timeline (no controller runs there).
 */
Datum
mzcoord_storage_problems(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ProblemSink sink;
	StorageCheckRow *rows;
	int			nrows;
	char	  **orphans;
	int			norphans;
	Oid			capture_fn;
	Oid			guard_fn;
	MemoryContext caller = CurrentMemoryContext;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	sink.store = rsinfo->setResult;
	sink.desc = rsinfo->setDesc;
	capture_fn = LookupFuncName(list_make2(makeString("mzcoord"), makeString("_capture")),
								0, NULL, false);
	guard_fn = LookupFuncName(list_make2(makeString("mzcoord"), makeString("_source_guard")),
							  0, NULL, false);

	mzcoord_spi_connect();
	foreach(lc, mzcoord_rec_collections_without_history())
		problem(&sink, "collection without history", lfirst(lc), NULL);
	mzcoord_rec_storage_orphans(&orphans, &norphans);
	for (int i = 0; i < norphans; i++)
		problem(&sink, "history without collection", orphans[i], NULL);
	rows = read_storage_rows(caller, &nrows);
	SPI_finish();
	if (RecoveryInProgress())
		check_replayed_timeline(&sink);

	for (int i = 0; i < nrows; i++)
		check_storage_row(&sink, &rows[i],
						  rows[i].kind == MZC_KIND_TABLE ? capture_fn : guard_fn);
	return (Datum) 0;
}
