/*-------------------------------------------------------------------------
 *
 * apply.c
 *	  The catalog implications of one catalog change (reference I1, I2,
 *	  I4-I6): mzcoord._apply_implications(old_rows, new_rows).
 *
 * The statement triggers (trigger.c) collect what one statement did
 * to mzcoord.items and call this function, which is SECURITY DEFINER, so
 * that everything below runs as the extension owner with a pinned
 * search_path.  It
 *
 *	 1. turns the rows into core rows (numeric id, kind, diff, whether the
 *		relation is filled in) and lets the core (src/core/implications.c)
 *		consolidate and fold them per item, comparing rows with PostgreSQL's
 *		record equality, as GROUP BY on the rows would;
 *	 2. stops if nothing is left, or if the change is a restore (a COPY of
 *		complete rows, which brings its collections with it);
 *	 3. numbers the batch and validates the new and altered rows;
 *	 4. finds what the materialized views of the batch read (the names in
 *		the queries of added views, mzcoord.item_inputs for dropped ones)
 *		and lets the core order the steps;
 *	 5. runs the steps, each by one PL/pgSQL leaf that issues the DDL and
 *		writes the derived catalog rows: _create_<kind>, _init_policy,
 *		_alter_item, _drop_item.
 *
 * Everything is validated and ordered before the first leaf runs, so a
 * cycle among new views, or a definition that is not a query, is reported
 * before any relation is created.  Errors of the leaves abort the statement
 * like any other error.
 *
 * IDENTIFICATION
 *	  src/catalog/apply.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "catalog.h"
#include "query.h"
#include "rec_items.h"
#include "schedule.h"
#include "support.h"
#include "trigger.h"
#include "implications.h"

PG_FUNCTION_INFO_V1(mzcoord_apply_implications);
PG_FUNCTION_INFO_V1(mzcoord_sql_gid_num);

/* Columns of mzcoord.items the implications look at. */
typedef enum ItemColumn
{
	COL_ID,
	COL_KIND,
	COL_SCHEMA_NAME,
	COL_NAME,
	COL_RELATION,
	COL_RETAIN_HISTORY,
	COL_REFRESH,
	COL_DEFINITION,
	NUM_COLS
} ItemColumn;

static const char *const column_names[NUM_COLS] = {
	"id", "kind", "schema_name", "name", "relation", "retain_history",
	"refresh", "definition"
};

/* The rows of one catalog change, deformed once. */
typedef struct ChangeRows
{
	Oid			rowtype;
	TupleDesc	desc;
	AttrNumber	attnums[NUM_COLS];
	int			nrows;
	Datum	   *rows;			/* the row datums, retracted ones first */
	Datum	  **values;			/* per row, by attribute */
	bool	  **nulls;
	Datum	   *sans_relation;	/* per row, made on demand: relation NULL */
	mzc_impl_row *core;
	FmgrInfo	record_eq;
} ChangeRows;

/*
 * The number of a global id, or an error: 22003 for an id of the right form
 * whose number does not fit in a bigint (the table's check accepts it, and
 * the ids used to be cast to bigint), 22P02 for anything else.
 */
static int64
parse_gid_or_error(const char *gid)
{
	int64_t		num;
	const char *p;

	if (mzc_gid_parse(gid, &num))
		return (int64) num;
	for (p = gid + (gid[0] == 'u' ? 1 : 0); *p >= '0' && *p <= '9'; p++)
		;
	if (gid[0] == 'u' && gid[1] >= '1' && gid[1] <= '9' && *p == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("global id \"%s\" is out of range", gid)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid global id: \"%s\"", gid),
			 errdetail("A global id is \"u\" followed by a positive number.")));
	pg_unreachable();
}

/* Value of a column of row r, or NULL. */
static char *
row_text(ChangeRows *cr, int r, ItemColumn col)
{
	int			att = cr->attnums[col] - 1;

	if (cr->nulls[r][att])
		return NULL;
	return TextDatumGetCString(cr->values[r][att]);
}

static bool
row_null(ChangeRows *cr, int r, ItemColumn col)
{
	return cr->nulls[r][cr->attnums[col] - 1];
}

static Datum
row_value(ChangeRows *cr, int r, ItemColumn col)
{
	return cr->values[r][cr->attnums[col] - 1];
}

/* The name of a kind as the messages spell it ("materialized view"). */
static char *
kind_words(ChangeRows *cr, int r)
{
	char	   *kind = row_text(cr, r, COL_KIND);

	for (char *p = kind; *p; p++)
		if (*p == '_')
			*p = ' ';
	return kind;
}

/* schema.name as format('%I.%I') writes it. */
static char *
row_qualified_name(ChangeRows *cr, int r)
{
	return quote_qualified_identifier(NameStr(*DatumGetName(row_value(cr, r, COL_SCHEMA_NAME))),
									  NameStr(*DatumGetName(row_value(cr, r, COL_NAME))));
}

/*
 * Collect the non-NULL elements of an items[] argument.  A NULL element
 * (possible only when the function is called directly) implies nothing:
 * it has no id to fold under.
 */
static void
add_rows(ChangeRows *cr, ArrayType *arr, int diff)
{
	Datum	   *elems;
	bool	   *elnulls;
	int			n;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(cr->rowtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, cr->rowtype, typlen, typbyval, typalign,
					  &elems, &elnulls, &n);
	for (int i = 0; i < n; i++)
	{
		int			r = cr->nrows;
		HeapTupleHeader th;
		HeapTupleData tuple;
		char	   *id;
		char	   *kind;
		int64_t		num;
		mzc_item_kind k;

		if (elnulls[i])
			continue;
		th = DatumGetHeapTupleHeader(elems[i]);
		tuple.t_len = HeapTupleHeaderGetDatumLength(th);
		ItemPointerSetInvalid(&tuple.t_self);
		tuple.t_tableOid = InvalidOid;
		tuple.t_data = th;
		cr->rows[r] = PointerGetDatum(th);
		cr->values[r] = palloc(sizeof(Datum) * cr->desc->natts);
		cr->nulls[r] = palloc(sizeof(bool) * cr->desc->natts);
		heap_deform_tuple(&tuple, cr->desc, cr->values[r], cr->nulls[r]);

		/*
		 * The table's constraints guarantee both; only a direct call can
		 * pass anything else.
		 */
		id = row_text(cr, r, COL_ID);
		if (id == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("catalog item without an id")));
		num = parse_gid_or_error(id);
		kind = row_text(cr, r, COL_KIND);
		if (kind == NULL || !mzc_item_kind_parse(kind, &k))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid kind of catalog item %s: %s", id,
							kind ? kind : "NULL")));
		cr->core[r].id = num;
		cr->core[r].kind = k;
		cr->core[r].diff = diff;
		cr->core[r].relation_null = row_null(cr, r, COL_RELATION);
		cr->nrows++;
	}
}

/* Row r with its relation set to NULL, made once. */
static Datum
sans_relation(ChangeRows *cr, int r)
{
	if (cr->sans_relation[r] == (Datum) 0)
	{
		Datum	   *values = palloc(sizeof(Datum) * cr->desc->natts);
		bool	   *nulls = palloc(sizeof(bool) * cr->desc->natts);
		HeapTuple	tuple;

		memcpy(values, cr->values[r], sizeof(Datum) * cr->desc->natts);
		memcpy(nulls, cr->nulls[r], sizeof(bool) * cr->desc->natts);
		nulls[cr->attnums[COL_RELATION] - 1] = true;
		tuple = heap_form_tuple(cr->desc, values, nulls);
		cr->sans_relation[r] = heap_copy_tuple_as_datum(tuple, cr->desc);
	}
	return cr->sans_relation[r];
}

/*
 * The core's row equality: record equality, what GROUP BY on the rows and
 * IS NOT DISTINCT FROM use (type equality per column, NULLs equal).
 */
static bool
rows_same(void *ctx, int32_t a, int32_t b, bool except_relation)
{
	ChangeRows *cr = ctx;
	Datum		x = except_relation ? sans_relation(cr, a) : cr->rows[a];
	Datum		y = except_relation ? sans_relation(cr, b) : cr->rows[b];

	return DatumGetBool(FunctionCall2(&cr->record_eq, x, y));
}

/* A PL/pgSQL leaf of the implications, looked up once per call. */
static void
leaf_init(FmgrInfo *finfo, const char *name, int nargs, Oid *argtypes)
{
	Oid			fnoid;

	fnoid = LookupFuncName(list_make2(makeString("mzcoord"),
									  makeString(pstrdup(name))),
						   nargs, argtypes, false);
	fmgr_info(fnoid, finfo);
}

static void
leaf_call(FmgrInfo *finfo, int nargs, Datum a0, Datum a1, Datum a2)
{
	LOCAL_FCINFO(call, 3);

	InitFunctionCallInfoData(*call, finfo, nargs, InvalidOid, NULL, NULL);
	call->args[0].value = a0;
	call->args[0].isnull = false;
	call->args[1].value = a1;
	call->args[1].isnull = false;
	call->args[2].value = a2;
	call->args[2].isnull = false;
	/* A void PL/pgSQL function returns NULL; nothing to look at. */
	(void) FunctionCallInvoke(call);
}

/*
 * I5's inputs: which added materialized views read which (by the names in
 * their queries; their relations do not exist yet).  A view naming itself
 * reads itself.
 */
static int
added_view_reads(ChangeRows *cr, mzc_impl *impls, int nimpls,
				 mzc_impl_read **readsp, int nreads)
{
	mzc_impl_read *reads = *readsp;
	List	   *views = NIL;
	List	   *names = NIL;
	ListCell   *lc;

	for (int i = 0; i < nimpls; i++)
		if (impls[i].action == MZC_IMPL_ADDED &&
			impls[i].kind == MZC_ITEM_MATERIALIZED_VIEW)
		{
			views = lappend_int(views, i);
			names = lappend(names, row_qualified_name(cr, impls[i].new_row));
		}
	foreach(lc, views)
	{
		mzc_impl   *reader = &impls[lfirst_int(lc)];
		List	   *refs;
		ListCell   *rc;

		refs = mzcoord_query_relation_names(row_text(cr, reader->new_row,
													 COL_DEFINITION));
		foreach(rc, refs)
		{
			ListCell   *vc;
			ListCell   *nc;

			forboth(vc, views, nc, names)
			{
				if (strcmp(lfirst(rc), lfirst(nc)) != 0)
					continue;
				reads = repalloc(reads, sizeof(mzc_impl_read) * (nreads + 1));
				reads[nreads].reader = reader->id;
				reads[nreads].input = impls[lfirst_int(vc)].id;
				nreads++;
			}
		}
	}
	*readsp = reads;
	return nreads;
}

/* I6's inputs: which dropped materialized views read which. */
static int
dropped_view_reads(ChangeRows *cr, mzc_impl *impls, int nimpls,
				   mzc_impl_read **readsp, int nreads)
{
	Datum	   *ids = palloc(sizeof(Datum) * Max(nimpls, 1));
	int			nids = 0;
	Datum		arr;
	mzc_impl_read *reads = *readsp;
	MzcRecRead *found;
	int			n;

	for (int i = 0; i < nimpls; i++)
		if (impls[i].action == MZC_IMPL_DROPPED &&
			impls[i].kind == MZC_ITEM_MATERIALIZED_VIEW)
			ids[nids++] = CStringGetTextDatum(row_text(cr, impls[i].old_row,
													   COL_ID));
	/* One view alone is free to go (what it reads of itself is ignored). */
	if (nids < 2)
		return nreads;

	arr = PointerGetDatum(construct_array(ids, nids, TEXTOID, -1, false,
										  TYPALIGN_INT));
	mzcoord_spi_connect();
	n = mzcoord_rec_items_reads_among(arr, &found);
	reads = repalloc(reads, sizeof(mzc_impl_read) * (nreads + n + 1));
	for (int i = 0; i < n; i++)
	{
		reads[nreads].reader = found[i].reader;
		reads[nreads].input = found[i].input;
		nreads++;
	}
	SPI_finish();
	*readsp = reads;
	return nreads;
}

/*
 * Validate before applying anything: the new rows' retain history, relation
 * and refresh schedule, then every alteration (_check_alteration).
 */
static void
validate(ChangeRows *cr, mzc_impl *impls, int nimpls)
{
	FmgrInfo	check_alteration;
	Oid			argtypes[2] = {cr->rowtype, cr->rowtype};
	bool		have_check = false;

	for (int i = 0; i < nimpls; i++)
	{
		int			r = impls[i].new_row;

		if (impls[i].action != MZC_IMPL_ADDED)
			continue;
		if (!row_null(cr, r, COL_RETAIN_HISTORY))
			(void) mzcoord_retain_history_ms(DatumGetIntervalP(row_value(cr, r, COL_RETAIN_HISTORY)));
		if (impls[i].kind != MZC_ITEM_TABLE && !row_null(cr, r, COL_RELATION))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the relation of new %s %s is created by mzcoord",
							kind_words(cr, r), row_qualified_name(cr, r)),
					 errhint("Leave the column \"relation\" NULL.")));
		if (!row_null(cr, r, COL_REFRESH))
			(void) mzcoord_refresh_canonical(DatumGetArrayTypeP(row_value(cr, r, COL_REFRESH)));
	}
	for (int i = 0; i < nimpls; i++)
	{
		if (impls[i].action != MZC_IMPL_ALTERED)
			continue;
		if (!have_check)
		{
			leaf_init(&check_alteration, "_check_alteration", 2, argtypes);
			have_check = true;
		}
		leaf_call(&check_alteration, 2, cr->rows[impls[i].old_row],
				  cr->rows[impls[i].new_row], (Datum) 0);
	}
}

/*
 * Deform the rows of a catalog change (maxrows of them at most), retracted
 * ones first, finding the columns the implications look at by name.
 */
static void
change_rows_init(ChangeRows *cr, ArrayType *old_rows, ArrayType *new_rows,
				 int maxrows)
{
	memset(cr, 0, sizeof(*cr));
	cr->rowtype = ARR_ELEMTYPE(old_rows ? old_rows : new_rows);
	cr->desc = lookup_rowtype_tupdesc_copy(cr->rowtype, -1);
	for (int c = 0; c < NUM_COLS; c++)
	{
		for (int a = 0; a < cr->desc->natts; a++)
		{
			Form_pg_attribute att = TupleDescAttr(cr->desc, a);

			if (!att->attisdropped &&
				strcmp(NameStr(att->attname), column_names[c]) == 0)
				cr->attnums[c] = att->attnum;
		}
		if (cr->attnums[c] == InvalidAttrNumber)
			elog(ERROR, "mzcoord.items has no column \"%s\"", column_names[c]);
	}
	cr->rows = palloc0(sizeof(Datum) * maxrows);
	cr->values = palloc0(sizeof(Datum *) * maxrows);
	cr->nulls = palloc0(sizeof(bool *) * maxrows);
	cr->sans_relation = palloc0(sizeof(Datum) * maxrows);
	cr->core = palloc0(sizeof(mzc_impl_row) * maxrows);
	fmgr_info(F_RECORD_EQ, &cr->record_eq);
	if (old_rows)
		add_rows(cr, old_rows, -1);
	if (new_rows)
		add_rows(cr, new_rows, 1);
}

/*
 * I1, I2: consolidate the change and fold it per item into *fold and the
 * returned implications (fold->nimpls of them).
 */
static mzc_impl *
fold_change(ChangeRows *cr, mzc_impl_fold_result *fold)
{
	int32	   *scratch = palloc(sizeof(int32) * Max(cr->nrows, 1));
	mzc_impl   *impls = palloc(sizeof(mzc_impl) * Max(cr->nrows, 1));
	mzc_error	err;
	mzc_status	st;

	st = mzc_impl_fold(cr->core, cr->nrows, rows_same, cr, scratch, impls,
					   fold, &err);
	if (st == MZC_ERR_STATE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s", err.message),
				 errdetail(fold->conflict_added ?
						   "One catalog change adds the item more than once." :
						   "One catalog change drops the item more than once.")));
	if (st != MZC_OK)
		elog(ERROR, "could not fold the catalog change: %s", err.message);
	return impls;
}

/*
 * I4-I6: order the implications into steps (*nsteps of them), given what
 * the materialized views of the batch read.  New views that read each other
 * cannot be ordered: name them.
 */
static mzc_impl_step *
plan_steps(ChangeRows *cr, mzc_impl *impls, int nimpls, int32 *nsteps)
{
	mzc_impl_read *reads = palloc(sizeof(mzc_impl_read));
	int			nreads;
	mzc_impl_step *steps;
	int32	   *stuck;
	int32		nstuck;
	mzc_error	err;
	mzc_status	st;

	nreads = added_view_reads(cr, impls, nimpls, &reads, 0);
	nreads = dropped_view_reads(cr, impls, nimpls, &reads, nreads);
	steps = palloc(sizeof(mzc_impl_step) * MZC_IMPL_MAX_STEPS(nimpls));
	stuck = palloc(sizeof(int32) * nimpls);
	st = mzc_impl_plan(impls, nimpls, reads, nreads, steps,
					   MZC_IMPL_MAX_STEPS(nimpls), nsteps, stuck,
					   &nstuck, &err);
	if (st == MZC_ERR_INVALID && nstuck > 0)
	{
		StringInfoData names;

		initStringInfo(&names);
		for (int i = 0; i < nstuck; i++)
			appendStringInfo(&names, "%s%s", i > 0 ? ", " : "",
							 row_qualified_name(cr, impls[stuck[i]].new_row));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("materialized views %s cannot be created: they read each other or themselves",
						names.data)));
	}
	if (st != MZC_OK)
		elog(ERROR, "could not order the catalog implications: %s",
			 err.message);
	return steps;
}

/*
 * Run the steps of batch number batch, each by its PL/pgSQL leaf, looked
 * up the first time it is needed.
 */
static void
run_steps(ChangeRows *cr, mzc_impl *impls, mzc_impl_step *steps,
		  int32 nsteps, int64 batch)
{
	Oid			batch_args[2];
	Oid			alter_args[3];
	FmgrInfo	create_leaf[MZC_ITEM_NKINDS];
	FmgrInfo	init_policy;
	FmgrInfo	alter_item;
	FmgrInfo	drop_item;
	static const char *const create_names[MZC_ITEM_NKINDS] = {
		[MZC_ITEM_TABLE] = "_create_table",
		[MZC_ITEM_SOURCE] = "_create_source",
		[MZC_ITEM_MATERIALIZED_VIEW] = "_create_materialized_view",
		[MZC_ITEM_INDEX] = "_create_index",
		[MZC_ITEM_SINK] = "_create_sink",
	};

	batch_args[0] = INT8OID;
	batch_args[1] = cr->rowtype;
	alter_args[0] = INT8OID;
	alter_args[1] = cr->rowtype;
	alter_args[2] = cr->rowtype;
	for (int k = 0; k < MZC_ITEM_NKINDS; k++)
		create_leaf[k].fn_oid = InvalidOid;
	init_policy.fn_oid = InvalidOid;
	alter_item.fn_oid = InvalidOid;
	drop_item.fn_oid = InvalidOid;

	for (int s = 0; s < nsteps; s++)
	{
		mzc_impl   *x = &impls[steps[s].impl];
		FmgrInfo   *leaf;
		const char *name;
		int			nargs = 2;
		Oid		   *argtypes = batch_args;
		Datum		row;

		switch (steps[s].kind)
		{
			case MZC_STEP_CREATE:
				leaf = &create_leaf[x->kind];
				name = create_names[x->kind];
				row = cr->rows[x->new_row];
				break;
			case MZC_STEP_INIT_POLICY:
				leaf = &init_policy;
				name = "_init_policy";
				row = cr->rows[x->new_row];
				break;
			case MZC_STEP_ALTER:
				leaf = &alter_item;
				name = "_alter_item";
				nargs = 3;
				argtypes = alter_args;
				row = cr->rows[x->old_row];
				break;
			case MZC_STEP_DROP:
				leaf = &drop_item;
				name = "_drop_item";
				row = cr->rows[x->old_row];
				break;
			default:
				elog(ERROR, "unknown implication step %d", (int) steps[s].kind);
		}
		if (!OidIsValid(leaf->fn_oid))
			leaf_init(leaf, name, nargs, argtypes);
		leaf_call(leaf, nargs, Int64GetDatum(batch), row,
				  nargs == 3 ? cr->rows[x->new_row] : (Datum) 0);
	}
}

/*
 * SQL: mzcoord._apply_implications(old_rows mzcoord.items[],
 *		new_rows mzcoord.items[]) RETURNS void
 *		SECURITY DEFINER SET search_path = pg_catalog, pg_temp
 *
 * See the file header.
 */
Datum
mzcoord_apply_implications(PG_FUNCTION_ARGS)
{
	ArrayType  *old_rows = PG_ARGISNULL(0) ? NULL : PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *new_rows = PG_ARGISNULL(1) ? NULL : PG_GETARG_ARRAYTYPE_P(1);
	ChangeRows	cr;
	int			maxrows;
	mzc_impl   *impls;
	mzc_impl_fold_result fold;
	mzc_impl_step *steps;
	int32		nsteps;
	int64		batch;

	maxrows = (old_rows ? ArrayGetNItems(ARR_NDIM(old_rows), ARR_DIMS(old_rows)) : 0) +
		(new_rows ? ArrayGetNItems(ARR_NDIM(new_rows), ARR_DIMS(new_rows)) : 0);
	if (maxrows == 0)
		PG_RETURN_VOID();
	change_rows_init(&cr, old_rows, new_rows, maxrows);

	impls = fold_change(&cr, &fold);
	if (fold.nimpls == 0)
		PG_RETURN_VOID();

	/*
	 * A restore from a dump loads mzcoord.items with COPY, in complete rows
	 * (every relation filled in).  Their collections, inputs and histories
	 * come from the dump too: nothing to imply.
	 * mzcoord.restore_after_dump() re-establishes what a dump cannot carry;
	 * until then, mzcoord.check_consistency() reports it.
	 */
	if (mzcoord_catalog_in_copy() && fold.added_filled)
	{
		if (fold.ndropped + fold.naltered > 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot restore catalog items and change others in one statement")));
		PG_RETURN_VOID();
	}
	batch = nextval_internal(get_relname_relid("implication_batch_seq",
											   mzcoord_catalog_namespace()),
							 true);

	validate(&cr, impls, fold.nimpls);
	steps = plan_steps(&cr, impls, fold.nimpls, &nsteps);
	run_steps(&cr, impls, steps, nsteps, batch);
	PG_RETURN_VOID();
}

/*
 * SQL: mzcoord._gid_num(global_id text) RETURNS bigint, IMMUTABLE STRICT
 *
 * The number of a global id (u123 is 123), for ordering ids as numbers.
 */
Datum
mzcoord_sql_gid_num(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(parse_gid_or_error(text_to_cstring(PG_GETARG_TEXT_PP(0))));
}
