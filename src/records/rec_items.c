/*-------------------------------------------------------------------------
 *
 * rec_items.c
 *	  The statements of C on the catalog of items: mzcoord.items,
 *	  mzcoord.item_inputs and mzcoord.sink_options (see rec_items.h for
 *	  who writes each).
 *
 * Each function runs its statement through SPI as its caller did before
 * (the same text, parameters, snapshot and locking) and returns typed
 * values, so that no caller names a catalog table or a column position.
 *
 * IDENTIFICATION
 *	  src/records/rec_items.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "ids.h"
#include "implications.h"
#include "rec_items.h"
#include "support.h"

/*
 * The first row of a read-only query on the catalog with one parameter, as
 * palloc'd strings (NULL for a null), or NULL if it returns no row.  Like
 * PostgreSQL's own catalog lookups, this reads the latest committed catalog
 * plus what this transaction wrote so far (e.g. earlier implications of the
 * same batch), whatever the isolation level.  what names the query in
 * internal errors.  Connects to SPI itself.
 */
static char **
first_row(const char *what, const char *sql, Oid argtype, Datum arg)
{
	MemoryContext caller = CurrentMemoryContext;
	SPIPlanPtr	plan;
	int			ret;
	char	  **row = NULL;

	mzcoord_spi_connect();
	plan = SPI_prepare(sql, 1, &argtype);
	if (plan == NULL)
		elog(ERROR, "could not prepare the %s: %s", what,
			 SPI_result_code_string(SPI_result));
	ret = SPI_execute_snapshot(plan, &arg, NULL, GetLatestSnapshot(),
							   InvalidSnapshot, true, false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "%s failed: %s", what, SPI_result_code_string(ret));
	if (SPI_processed > 0)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;

		row = MemoryContextAlloc(caller, sizeof(char *) * desc->natts);
		for (int i = 0; i < desc->natts; i++)
		{
			char	   *v = SPI_getvalue(tup, desc, i + 1);

			row[i] = v ? MemoryContextStrdup(caller, v) : NULL;
		}
	}
	SPI_finish();
	return row;
}

/*
 * The first column of the first row of sql, run with one parameter (value,
 * of type), as text; NULL if there is no row or the value is NULL.
 * Connects to SPI itself.
 */
char *
mzcoord_rec_fresh_value(const char *sql, Oid type, Datum value)
{
	char	   *v = NULL;
	MemoryContext caller = CurrentMemoryContext;

	mzcoord_spi_connect();
	/* Not read-only: sees what this transaction wrote before, fresh. */
	if (SPI_execute_with_args(sql, 1, &type, &value, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the mzcoord catalog");
	if (SPI_processed == 1)
	{
		char	   *s = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (s != NULL)
			v = MemoryContextStrdup(caller, s);
	}
	SPI_finish();
	return v;
}

/*
 * Find the item whose relation is relid, and the global id of its primary
 * collection, in the latest catalog (see first_row).  Connects to SPI
 * itself.
 */
void
mzcoord_rec_items_lookup(Oid relid, MzcItemRef *ref)
{
	char	  **row;

	memset(ref, 0, sizeof(*ref));
	row = first_row("catalog lookup",
					"SELECT i.id, i.kind, c.global_id"
					"  FROM mzcoord.items i"
					"  LEFT JOIN mzcoord.collections c"
					"    ON c.item_id OPERATOR(pg_catalog.=) i.id"
					"   AND c.primary_id IS NULL"
					" WHERE i.relation OPERATOR(pg_catalog.=) $1",
					REGCLASSOID, ObjectIdGetDatum(relid));
	if (row != NULL)
	{
		ref->found = true;
		ref->id = row[0];
		ref->kind = row[1];
		ref->global_id = row[2];
	}
}

/*
 * The items that read item_id, directly or transitively, as message lines
 * "materialized view s.v depends on table s.t"; NULL if there are none.
 * Reads the latest committed catalog (plus this transaction's changes).
 * Connects to SPI itself.
 */
char *
mzcoord_rec_items_dependents(const char *item_id)
{
	char	  **row;

	row = first_row("dependents query",
					"WITH RECURSIVE dep(item_id, input_item_id, depth) AS ("
					"  SELECT ii.item_id, ii.input_item_id, 1"
					"    FROM mzcoord.item_inputs ii"
					"   WHERE ii.input_item_id = $1"
					"  UNION"
					"  SELECT ii.item_id, ii.input_item_id, d.depth + 1"
					"    FROM mzcoord.item_inputs ii"
					"    JOIN dep d ON ii.input_item_id = d.item_id"
					"   WHERE d.depth < 1000"
					")"
					"SELECT pg_catalog.string_agg(pg_catalog.format('%s %I.%I depends on %s %I.%I',"
					"         pg_catalog.replace(i.kind, '_', ' '), i.schema_name, i.name,"
					"         pg_catalog.replace(p.kind, '_', ' '), p.schema_name, p.name),"
					"         E'\\n' ORDER BY e.depth, pg_catalog.length(i.id), i.id)"
					"  FROM (SELECT DISTINCT ON (item_id, input_item_id) * FROM dep"
					"         ORDER BY item_id, input_item_id, depth) e"
					"  JOIN mzcoord.items i ON i.id = e.item_id"
					"  JOIN mzcoord.items p ON p.id = e.input_item_id",
					TEXTOID, CStringGetTextDatum(item_id));
	return row ? row[0] : NULL;
}

/*
 * Delete, in one statement, the items whose relations are in relids (an
 * oid[]), found with the latest snapshot and, under REPEATABLE READ,
 * checked against the transaction's (see mzcoord_on_sql_drop, ddl.c).
 */
void
mzcoord_rec_items_delete_dropped(Datum relids)
{
	SPIPlanPtr	plan;
	Oid			argtypes[1] = {OIDARRAYOID};
	Snapshot	crosscheck = InvalidSnapshot;
	int			ret;

	plan = SPI_prepare("DELETE FROM mzcoord.items"
					   " WHERE relation OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.regclass[])",
					   1, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare the item deletion: %s",
			 SPI_result_code_string(SPI_result));
	if (IsolationUsesXactSnapshot())
	{
		CommandCounterIncrement();
		crosscheck = GetTransactionSnapshot();
	}
	ret = SPI_execute_snapshot(plan, &relids, NULL,
							   GetLatestSnapshot(), crosscheck,
							   false, true, 0);
	if (ret != SPI_OK_DELETE)
		elog(ERROR, "item deletion failed: %s",
			 SPI_result_code_string(ret));
}

/*
 * The rows of a transition table of mzcoord.items, as one array of the
 * table's row type into *rows; false if the table is empty.
 */
bool
mzcoord_rec_items_transition(const char *tablename, Datum *rows)
{
	int			ret;
	bool		isnull;

	ret = SPI_execute(psprintf("SELECT pg_catalog.array_agg(r::mzcoord.items) FROM %s r",
							   tablename),
					  true, 0);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read transition table %s: %s", tablename,
			 SPI_result_code_string(ret));
	*rows = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
						  &isnull);
	return !isnull;
}

/*
 * Which of the items ids (a text[]) read which others of them, into a
 * palloc'd *reads; returns how many.
 */
int
mzcoord_rec_items_reads_among(Datum ids, MzcRecRead **reads)
{
	Oid			argtypes[1] = {TEXTARRAYOID};
	int			ret;

	ret = SPI_execute_with_args("SELECT ii.item_id, ii.input_item_id"
								"  FROM mzcoord.item_inputs ii"
								" WHERE ii.item_id OPERATOR(pg_catalog.=) ANY ($1)"
								"   AND ii.input_item_id OPERATOR(pg_catalog.=) ANY ($1)",
								1, argtypes, &ids, NULL, false, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read the inputs of the dropped views: %s",
			 SPI_result_code_string(ret));
	*reads = palloc(sizeof(MzcRecRead) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		int64_t		reader;
		int64_t		input;

		if (!mzc_gid_parse(SPI_getvalue(SPI_tuptable->vals[i],
										SPI_tuptable->tupdesc, 1), &reader) ||
			!mzc_gid_parse(SPI_getvalue(SPI_tuptable->vals[i],
										SPI_tuptable->tupdesc, 2), &input))
			elog(ERROR, "invalid item id in mzcoord.item_inputs");
		(*reads)[i].reader = reader;
		(*reads)[i].input = input;
	}
	return (int) SPI_processed;
}

/*
 * The one row sql ($1: the global id of gid) selects, read-only with a fresh
 * snapshot, or NULL unless there is exactly one (at most maxrows are
 * fetched); *desc gets its descriptor.  An error names the object as what.
 * SPI connected by the caller.
 */
static HeapTuple
gid_row(const char *sql, int64 gid, int maxrows, const char *what,
		TupleDesc *desc)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(mzcoord_gid_text(gid))};
	SPIPlanPtr	plan = SPI_prepare(sql, 1, argtypes);

	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, true, false, maxrows) != SPI_OK_SELECT)
		elog(ERROR, "could not read %s " MZC_GID_FMT, what, gid);
	if (SPI_processed != 1)
		return NULL;
	*desc = SPI_tuptable->tupdesc;
	return SPI_tuptable->vals[0];
}

/* Read the sink's catalog row with a fresh snapshot; false if it is gone. */
bool
mzcoord_rec_items_read_sink(int64 gid, MzcRecSink *s)
{
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		d;

	tup = gid_row("SELECT c.as_of, c.upper,"
					   "       mzcoord._gid_num(r.input_global_id),"
					   "       COALESCE(o.snapshot, true)"
					   "  FROM mzcoord.items i"
					   "  JOIN mzcoord.collections c"
					   "    ON c.item_id OPERATOR(pg_catalog.=) i.id AND c.primary_id IS NULL"
					   "  JOIN mzcoord.item_inputs r"
					   "    ON r.item_id OPERATOR(pg_catalog.=) i.id"
					   "  LEFT JOIN mzcoord.sink_options o"
					   "    ON o.item_id OPERATOR(pg_catalog.=) i.id"
					   " WHERE c.global_id OPERATOR(pg_catalog.=) $1"
					   "   AND i.kind OPERATOR(pg_catalog.=) 'sink'",
					   gid, 2, "sink", &desc);
	if (tup == NULL)
		return false;
	s->as_of = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	d = SPI_getbinval(tup, desc, 2, &s->sealed);
	s->upper = s->sealed ? 0 : DatumGetInt64(d);
	s->input = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
	s->snapshot = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
	return true;
}

/*
 * Read the view's catalog row with a fresh snapshot, into v allocated in
 * cxt; false if it is gone.
 */
bool
mzcoord_rec_items_read_view(int64 gid, MemoryContext cxt, MzcRecView *v)
{
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		d;

	tup = gid_row("SELECT i.definition, i.refresh, c.as_of, c.upper,"
					   "       ARRAY(SELECT mzcoord._gid_num(r.input_global_id)"
					   "               FROM mzcoord.item_inputs r"
					   "              WHERE r.item_id OPERATOR(pg_catalog.=) i.id)"
					   "  FROM mzcoord.items i"
					   "  JOIN mzcoord.collections c"
					   "    ON c.item_id OPERATOR(pg_catalog.=) i.id AND c.primary_id IS NULL"
					   " WHERE c.global_id OPERATOR(pg_catalog.=) $1"
					   "   AND i.kind OPERATOR(pg_catalog.=) 'materialized_view'",
					   gid, 1, "materialized view", &desc);
	if (tup == NULL)
		return false;
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);
		ArrayType  *arr;
		Datum	   *elems;
		bool	   *nulls;

		v->definition = SPI_getvalue(tup, desc, 1);
		d = SPI_getbinval(tup, desc, 2, &isnull);
		v->schedule = isnull ? NULL : DatumGetArrayTypePCopy(d);
		v->as_of = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
		d = SPI_getbinval(tup, desc, 4, &v->sealed);
		v->upper = v->sealed ? 0 : DatumGetInt64(d);
		arr = DatumGetArrayTypeP(SPI_getbinval(tup, desc, 5, &isnull));
		deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &elems, &nulls, &v->ninputs);
		v->inputs = palloc(sizeof(int64) * Max(v->ninputs, 1));
		for (int i = 0; i < v->ninputs; i++)
			v->inputs[i] = DatumGetInt64(elems[i]);
		MemoryContextSwitchTo(old);
	}
	return true;
}

/*
 * Lock the object's item row FOR KEY SHARE, never waiting (SKIP LOCKED):
 * a drop deletes the row and then drops the relation, so a step that holds
 * the row first cannot deadlock with it, and until the step commits the
 * row (which mzcoord.maintenance refers to) stays.  False if the item is
 * gone or being changed: the next pass tries again.
 */
bool
mzcoord_rec_items_claim(int64 gid)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(mzcoord_gid_text(gid))};

	if (SPI_execute_with_args("SELECT 1 FROM mzcoord.items i"
							  " WHERE i.id OPERATOR(pg_catalog.=) $1"
							  "   FOR KEY SHARE SKIP LOCKED",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the item of " MZC_GID_FMT, gid);
	return SPI_processed == 1;
}

/*
 * The kind of the item whose relation is relid, fresh (see
 * mzcoord_rec_fresh_value); NULL if none.  Connects to SPI itself.
 */
char *
mzcoord_rec_items_kind_of(Oid relid)
{
	return mzcoord_rec_fresh_value("SELECT i.kind FROM mzcoord.items i"
								   " WHERE i.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
								   OIDOID, ObjectIdGetDatum(relid));
}

/* The same, its id. */
char *
mzcoord_rec_items_id_of(Oid relid)
{
	return mzcoord_rec_fresh_value("SELECT i.id FROM mzcoord.items i"
								   " WHERE i.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
								   OIDOID, ObjectIdGetDatum(relid));
}

/* The OID of item_id's relation, as text, fresh; NULL if none. */
char *
mzcoord_rec_items_relation_text(const char *item_id)
{
	return mzcoord_rec_fresh_value("SELECT i.relation::pg_catalog.oid::pg_catalog.text"
								   "  FROM mzcoord.items i WHERE i.id OPERATOR(pg_catalog.=) $1",
								   TEXTOID, CStringGetTextDatum(item_id));
}

/*
 * The retain history and refresh schedule of item_id (whose relation is
 * relid, for the message) into values[0..1] and nulls[0..1] (' ' or 'n'),
 * the Datums as SPI returned them.
 */
void
mzcoord_rec_items_settings(const char *item_id, Oid relid, Datum *values,
						   char *nulls)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		id = CStringGetTextDatum(item_id);
	bool		isnull;

	if (SPI_execute_with_args("SELECT i.retain_history, i.refresh FROM mzcoord.items i"
							  " WHERE i.id OPERATOR(pg_catalog.=) $1",
							  1, argtypes, &id, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not read the item of \"%s\"", get_rel_name(relid));
	values[0] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	nulls[0] = isnull ? 'n' : ' ';
	values[1] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	nulls[1] = isnull ? 'n' : ' ';
}

/* Does item_id read target_id or anything that reads it? */
bool
mzcoord_rec_items_reads_target(const char *item_id, const char *target_id)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(item_id),
	CStringGetTextDatum(target_id)};

	if (SPI_execute_with_args("WITH RECURSIVE readers(id) AS ("
							  "  SELECT $2::pg_catalog.text"
							  "  UNION"
							  "  SELECT ii.item_id FROM mzcoord.item_inputs ii"
							  "    JOIN readers r ON ii.input_item_id OPERATOR(pg_catalog.=) r.id)"
							  " SELECT 1 FROM mzcoord.item_inputs ii"
							  "  WHERE ii.item_id OPERATOR(pg_catalog.=) $1"
							  "    AND ii.input_item_id IN (SELECT id FROM readers)",
							  2, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the mzcoord catalog");
	return SPI_processed > 0;
}
