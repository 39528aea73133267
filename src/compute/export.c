/*-------------------------------------------------------------------------
 *
 * export.c
 *	  Exporting a sink: the consolidated updates of its input written into
 *	  the sink's relation, and its upper advanced, in the caller's
 *	  transaction.
 *
 * A sink is a collection whose upper U is its export progress: its relation
 * holds, as rows (columns..., mz_timestamp, mz_diff), every update of its
 * input with ts < U that its consumers have not deleted, each exactly
 * once.  An export of a sink whose input is complete up to M > U:
 *
 *	1. locks the sink's relation in SHARE ROW EXCLUSIVE mode (one export at
 *	   a time; a DROP waits for it; a consumer's DELETE too, and while one
 *	   runs the export is left to the next pass) and reads U, the as-of and the options
 *	   again with a fresh snapshot (the previous export has committed);
 *	   then its input, without waiting (a DROP of the input locks the
 *	   input first and the sink next: waiting could deadlock);
 *	2. reads M from the controller, and only then takes the snapshot it
 *	   reads the input's history with: every update below M is committed
 *	   and visible to it.  The input cannot be compacted past U - 1 (the
 *	   sink's durable read requirement is its upper - 1, its as-of before
 *	   the first export), so every update in [U, M) is exact;
 *	3. writes the updates with ts in [U, M) into the sink's relation,
 *	   consolidated per (row, ts) and in time order (changes.c), as the
 *	   relation's owner, in batches.  The first export (U = as-of) with the
 *	   snapshot option writes the input's contents at the as-of instead of
 *	   the updates at the as-of, each row with its multiplicity as mz_diff;
 *	   without it, it starts after the as-of.  At most
 *	   MZC_EXPORT_MAX_UPDATES updates or MZC_EXPORT_MAX_TIMES times are
 *	   exported per transaction, never part of a time: the new upper is
 *	   then the first time not exported;
 *	4. records the new upper in mzcoord.collections (whose trigger moves the
 *	   sink's requirement on its input to upper - 1) and stages it for the
 *	   controller, which publishes it at commit (source.c,
 *	   mzcoord_record_upper, the one writer of a fed collection's upper).
 *
 * The rows and the upper commit together or not at all: after a crash the
 * next export starts at the durable upper, so no update is exported twice
 * and none is skipped.
 *
 * IDENTIFICATION
 *	  src/compute/export.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "parser/parse_func.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "catalog.h"
#include "changes.h"
#include "controller.h"
#include "export.h"
#include "failpoint.h"
#include "history.h"
#include "ids.h"
#include "read.h"
#include "rec_items.h"
#include "rowimage.h"
#include "source.h"
#include "support.h"
#include "viewerrors.h"

PG_FUNCTION_INFO_V1(mzcoord_sink_guard);
PG_FUNCTION_INFO_V1(mzcoord_sink_install_guard);

/* The sink relation this backend is exporting into, if any. */
static Oid	exporting_relid = InvalidOid;

/* At most this much is exported in one transaction (never part of a time). */
#define MZC_EXPORT_MAX_UPDATES 100000
#define MZC_EXPORT_MAX_TIMES 10000

/* Rows inserted into the sink's relation per statement. */
#define MZC_EXPORT_BATCH 10000

/* Where a sink column comes from. */
#define MZC_SINKCOL_TIME (-1)
#define MZC_SINKCOL_DIFF (-2)
#define MZC_SINKCOL_DROPPED (-3)

/* An export in progress: the rows waiting to be inserted. */
typedef struct ExportState
{
	Relation	sink;
	TupleDesc	sdesc;
	int		   *map;			/* per sink attribute: input attribute or
								 * MZC_SINKCOL_* */
	Datum	   *values;			/* a sink row being formed */
	bool	   *isnull;
	MemoryContext batch_cxt;
	Datum	   *batch;			/* composite datums of the sink's row type */
	int			nbatch;
	char	   *insert_sql;		/* INSERT INTO sink SELECT * FROM unnest($1) */
	int64		rows;
} ExportState;

/* Read the sink's catalog row with a fresh snapshot; false if it is gone. */
static bool
read_sink_row(int64 gid, MzcRecSink *s)
{
	bool		found;

	mzcoord_spi_connect();
	found = mzcoord_rec_items_read_sink(gid, s);
	SPI_finish();
	return found;
}

/*
 * Where each column of the sink comes from: the input's column of the same
 * name and type, or the sink's time and diff.  A sink whose columns no
 * longer match its input's (its input was altered) cannot export: 55000.
 */
static int *
sink_column_map(Relation sink, Relation input)
{
	TupleDesc	sdesc = RelationGetDescr(sink);
	TupleDesc	idesc = RelationGetDescr(input);
	int		   *map = palloc(sizeof(int) * Max(sdesc->natts, 1));

	for (int i = 0; i < sdesc->natts; i++)
	{
		Form_pg_attribute sa = TupleDescAttr(sdesc, i);
		const char *name = NameStr(sa->attname);

		map[i] = MZC_SINKCOL_DROPPED;
		if (sa->attisdropped)
			continue;
		if (strcmp(name, "mz_timestamp") == 0)
			map[i] = MZC_SINKCOL_TIME;
		else if (strcmp(name, "mz_diff") == 0)
			map[i] = MZC_SINKCOL_DIFF;
		else
		{
			for (int j = 0; j < idesc->natts; j++)
			{
				Form_pg_attribute ia = TupleDescAttr(idesc, j);

				if (!ia->attisdropped && strcmp(NameStr(ia->attname), name) == 0 &&
					ia->atttypid == sa->atttypid)
					map[i] = j;
			}
			if (map[i] == MZC_SINKCOL_DROPPED)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("column \"%s\" of sink \"%s\" has no counterpart in \"%s\"",
								name, RelationGetRelationName(sink),
								RelationGetRelationName(input)),
						 errdetail("A sink exports the columns its input had when it was created.")));
		}
	}
	return map;
}

/* INSERT the rows of the batch into the sink's relation, as its owner. */
static void
flush_batch(ExportState *st)
{
	Oid			save_user;
	int			save_sec;
	int			save_nest;
	Datum		arg;
	Oid			rowtype = RelationGetForm(st->sink)->reltype;
	Oid			argtypes[1] = {get_array_type(rowtype)};
	SPIPlanPtr	plan;

	if (st->nbatch == 0)
		return;
	arg = PointerGetDatum(construct_array(st->batch, st->nbatch, rowtype, -1,
										  false, TYPALIGN_DOUBLE));
	save_nest = mzcoord_become_owner(st->sink->rd_rel->relowner, &save_user,
									 &save_sec);
	mzcoord_spi_connect();
	/* Prepared per batch (a batch is thousands of rows): nothing outlives SPI. */
	plan = SPI_prepare(st->insert_sql, 1, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare the export into \"%s\"",
			 RelationGetRelationName(st->sink));
	/* Past the sink's guard, for this statement only. */
	exporting_relid = RelationGetRelid(st->sink);
	PG_TRY();
	{
		if (SPI_execute_snapshot(plan, &arg, NULL, GetLatestSnapshot(),
								 InvalidSnapshot, false, true, 0) != SPI_OK_INSERT ||
			SPI_processed != (uint64) st->nbatch)
			elog(ERROR, "could not export into sink \"%s\"",
				 RelationGetRelationName(st->sink));
	}
	PG_FINALLY();
	{
		exporting_relid = InvalidOid;
	}
	PG_END_TRY();
	SPI_finish();
	mzcoord_restore_user(save_user, save_sec, save_nest);
	st->rows += st->nbatch;
	st->nbatch = 0;
	MemoryContextReset(st->batch_cxt);
}

/* One update of the input (values of the input's descriptor), to the sink. */
static void
export_emit(void *arg, Datum *values, bool *isnull, int64 ts, int64 diff)
{
	ExportState *st = arg;
	MemoryContext old;
	HeapTuple	tup;

	for (int i = 0; i < st->sdesc->natts; i++)
	{
		int			m = st->map[i];

		st->isnull[i] = false;
		if (m == MZC_SINKCOL_TIME)
			st->values[i] = Int64GetDatum(ts);
		else if (m == MZC_SINKCOL_DIFF)
			st->values[i] = Int64GetDatum(diff);
		else if (m == MZC_SINKCOL_DROPPED)
		{
			st->values[i] = (Datum) 0;
			st->isnull[i] = true;
		}
		else
		{
			st->values[i] = values[m];
			st->isnull[i] = isnull[m];
		}
	}
	old = MemoryContextSwitchTo(st->batch_cxt);
	tup = heap_form_tuple(st->sdesc, st->values, st->isnull);
	st->batch[st->nbatch++] = heap_copy_tuple_as_datum(tup, st->sdesc);
	MemoryContextSwitchTo(old);
	if (st->nbatch == MZC_EXPORT_BATCH)
		flush_batch(st);
}

/* The contents of the input at as_of, consolidated, each row once. */
static void
snapshot_add(void *arg, TupleTableSlot *row, int64 n)
{
	MzcRowSet  *set = arg;

	(void) mzcoord_rowset_add(set, row->tts_values, row->tts_isnull,
							  mzcoord_row_hash(set->desc, row->tts_values,
											   row->tts_isnull), n);
}

/* Export the input's contents at as_of, at mz_timestamp as_of. */
static void
export_snapshot(ExportState *st, const MzcHistory *h, TupleDesc idesc,
				Snapshot snapshot, int64 as_of)
{
	MzcRowSet  *set = mzcoord_rowset_create(idesc, CurrentMemoryContext);
	int64		negative;

	mzcoord_history_contents(h, idesc, snapshot, as_of, snapshot_add, set,
							 &negative);
	if (negative > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("history of \"%s\" retracts rows it does not have at timestamp " INT64_FORMAT,
						get_rel_name(h->relid), as_of)));
	for (MzcRowEntry *e = set->first; e != NULL; e = e->link)
		if (e->count > 0)
			export_emit(st, e->values, e->isnull, as_of, e->count);
	mzcoord_rowset_destroy(set);
}

/*
 * A sink over a materialized view exports only times at which the view has
 * contents: while the view is in error (an open range of
 * mzcoord.view_errors) the window [from, m) (m -1: no end) stops before
 * the range, and an export whose window starts in it fails (55000), to be
 * retried until the view has a value again.  A closed range has no
 * updates in the view's history: the window goes through it, and the
 * update at its end brings the sink from the last good contents to the
 * new ones.  Returns the end of the window.
 */
static int64
window_before_error(Relation input, const MzcHistory *h, Snapshot snapshot,
					int64 from, int64 m)
{
	MzcViewError err;

	if (!mzcoord_view_error_open(h->gid, snapshot, &err) ||
		(m >= 0 && err.from_ts >= m))
		return m;
	if (err.from_ts > from)
		return err.from_ts;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot export materialized view \"%s\" at time " INT64_FORMAT ": it is in error",
					RelationGetRelationName(input), from),
			 errdetail("%s (SQLSTATE %s), since time " INT64_FORMAT ".",
					   err.message, unpack_sql_state(err.sqlerrcode),
					   err.from_ts),
			 errhint("The export is retried until the view has contents again; see mzcoord.view_errors.")));
	return m;					/* keep the compiler quiet */
}

/*
 * Write the window of the export (see the top of the file) into the sink;
 * returns the new upper (m, or the first time left for the next export).
 */
static int64
export_window(ExportState *st, const MzcRecSink *s, const MzcHistory *h,
			  Relation input, int64 m, MzcExportResult *res)
{
	TupleDesc	idesc = RelationGetDescr(input);
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	bool		first = s->upper == s->as_of;
	MzcChangeLimits limits = {MZC_EXPORT_MAX_UPDATES, MZC_EXPORT_MAX_TIMES};
	int64		next = m;
	int			ntimes = 0;

	m = window_before_error(input, h, snapshot, s->upper, m);
	next = m;
	if (first && s->snapshot)
	{
		export_snapshot(st, h, idesc, snapshot, s->as_of);
		res->times++;
		limits.max_updates = Max(1, limits.max_updates - st->rows - st->nbatch);
	}
	if (mzcoord_history_changes(h, idesc, snapshot,
								first ? s->as_of + 1 : s->upper, m, &limits,
								export_emit, st, &next, &ntimes))
		m = next;
	res->times += ntimes;
	flush_batch(st);
	UnregisterSnapshot(snapshot);
	return m;
}

/*
 * Export sink gid if its input moved on (see the top of the file).
 * Returns false, doing nothing, if it is gone or has nothing to export.
 */
bool
mzcoord_export_sink(int64 gid, MzcExportResult *res)
{
	Oid			relid = mzcoord_ctl_relation_of(gid, MZC_KIND_SINK);
	Relation	sink;
	Relation	input;
	MzcRecSink	s;
	MzcCollectionInfo in;
	MzcHistory *h;
	ExportState st = {0};
	int64		m;

	memset(res, 0, sizeof(*res));
	if (!OidIsValid(relid))
		return false;

	/*
	 * A consumer deleting rows holds a lock that conflicts: the coordinator
	 * does not wait for it (its whole pass would), the next pass retries.
	 */
	if (!ConditionalLockRelationOid(relid, ShareRowExclusiveLock))
		return false;
	sink = try_table_open(relid, NoLock);
	if (sink == NULL)
		return false;
	if (!read_sink_row(gid, &s) || s.sealed ||
		!mzcoord_ctl_lookup_gid(s.input, &in))
	{
		table_close(sink, NoLock);
		return false;
	}
	/* -1: the input is sealed, every time is complete. */
	m = in.upper.empty ? -1 : in.upper.ts;
	if (m >= 0 && m <= s.upper)
	{
		table_close(sink, NoLock);
		return false;
	}
	/*
	 * A DROP of the input locks it before the sink: never wait for the
	 * input while holding the sink, or the two could deadlock.  The next
	 * pass retries.
	 */
	if (!ConditionalLockRelationOid(in.relid, AccessShareLock))
	{
		table_close(sink, NoLock);
		return false;
	}
	input = try_table_open(in.relid, NoLock);
	if (input == NULL)
	{
		table_close(sink, NoLock);
		return false;
	}

	/*
	 * Nothing is exported that the owner could not SELECT at this moment:
	 * the error (42501) is recorded in mzcoord.maintenance and the export
	 * retried, from the same upper, until the owner may read it again.
	 */
	mzcoord_sink_check_input(in.relid, sink->rd_rel->relowner,
							 RelationGetRelationName(sink));
	h = mzcoord_history_copy(mzcoord_history_lookup(in.relid, false));

	st.sink = sink;
	st.sdesc = RelationGetDescr(sink);
	st.map = sink_column_map(sink, input);
	st.values = palloc(sizeof(Datum) * Max(st.sdesc->natts, 1));
	st.isnull = palloc(sizeof(bool) * Max(st.sdesc->natts, 1));
	st.batch = palloc(sizeof(Datum) * MZC_EXPORT_BATCH);
	st.insert_sql = psprintf("INSERT INTO %s SELECT * FROM pg_catalog.unnest($1)",
							 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(sink)),
														RelationGetRelationName(sink)));
	st.batch_cxt = AllocSetContextCreate(CurrentMemoryContext,
										 "mzcoord export batch",
										 ALLOCSET_DEFAULT_SIZES);

	res->from_upper = s.upper;
	res->new_upper = export_window(&st, &s, h, input, m, res);
	res->rows_exported = st.rows;
	MemoryContextDelete(st.batch_cxt);

	/* Rows written, upper not: the crash test's window (017, 020). */
	mzcoord_failpoint_check("export_before_upper");
	CommandCounterIncrement();
	mzcoord_record_upper(gid, h->owner,
						 psprintf("sink \"%s\"", RelationGetRelationName(sink)),
						 res->new_upper);
	mzcoord_failpoint_check("export_before_commit");

	table_close(input, NoLock);
	table_close(sink, NoLock);
	return true;
}

/* ----------------------------------------------------------------
 * The guard of a sink's relation
 * ----------------------------------------------------------------
 */

/*
 * Trigger function mzcoord._sink_guard(): rows of a sink's relation are
 * written only by its export; consumers may delete them (and truncate the
 * relation), never insert or update them, which would corrupt the stream.
 */
Datum
mzcoord_sink_guard(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._sink_guard() must be called as a trigger")));
	if (OidIsValid(exporting_relid) &&
		exporting_relid == RelationGetRelid(td->tg_relation))
		return PointerGetDatum(NULL);
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("cannot %s sink \"%s\" directly",
					TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? "update" : "insert into",
					RelationGetRelationName(td->tg_relation)),
			 errdetail("The rows of a sink are the updates its input exported, each exactly once."),
			 errhint("Consumers delete the rows they have processed; see doc/sinks.md.")));
	return PointerGetDatum(NULL);
}

/* Whether rel has the internal trigger calling fn. */
static bool
has_guard(Relation rel, Oid fn)
{
	if (rel->trigdesc == NULL)
		return false;
	for (int i = 0; i < rel->trigdesc->numtriggers; i++)
		if (rel->trigdesc->triggers[i].tgfoid == fn &&
			rel->trigdesc->triggers[i].tgisinternal)
			return true;
	return false;
}

/*
 * SQL: mzcoord._sink_install_guard(rel regclass) RETURNS integer
 *
 * Gives a sink's relation its guard (an internal statement trigger, which
 * pg_dump leaves out: mzcoord.restore_after_dump() installs it again).
 * Returns 1 if it was created, 0 if the relation had it.
 */
Datum
mzcoord_sink_install_guard(PG_FUNCTION_ARGS)
{
	Oid			relid;
	Relation	rel;
	Oid			fn;
	List	   *fname = list_make2(makeString("mzcoord"), makeString("_sink_guard"));
	CreateTrigStmt *stmt;
	bool		had;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	rel = try_table_open(relid, ShareRowExclusiveLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	fn = LookupFuncName(fname, 0, NULL, false);
	had = has_guard(rel, fn);
	if (!had)
	{
		stmt = makeNode(CreateTrigStmt);
		stmt->trigname = "mzcoord_sink_guard";
		stmt->funcname = fname;
		stmt->row = false;
		stmt->timing = TRIGGER_TYPE_BEFORE;
		stmt->events = TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE;
		/* Fires whatever session_replication_role says. */
		(void) CreateTriggerFiringOn(stmt, NULL, relid, InvalidOid, InvalidOid,
									 InvalidOid, fn, InvalidOid, NULL,
									 true, false, TRIGGER_FIRES_ALWAYS);
		CommandCounterIncrement();
	}
	table_close(rel, NoLock);
	PG_RETURN_INT32(had ? 0 : 1);
}
