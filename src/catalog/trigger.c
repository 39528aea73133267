/*-------------------------------------------------------------------------
 *
 * trigger.c
 *	  The statement triggers on mzcoord.items: one catalog change per
 *	  statement, handed to the implications.
 *
 * A catalog change (a "batch", reference I1) is everything one statement
 * did to mzcoord.items.  PostgreSQL fires a statement-level AFTER trigger
 * with transition tables once per statement AND per event (INSERT, UPDATE,
 * DELETE; transition tables cannot be shared by several events), so a
 * statement that both inserts and deletes items, such as a writable CTE,
 * fires two AFTER triggers, in an order that depends on the shape of the
 * query.  To fold both halves into one batch, a BEFORE STATEMENT trigger
 * counts the events the statement is going to report: PostgreSQL fires
 * every BEFORE STATEMENT trigger of a statement (at most once per event,
 * even with several data-modifying CTEs) before any of its AFTER STATEMENT
 * triggers, and fires exactly one AFTER STATEMENT trigger per BEFORE one.
 * Each AFTER trigger adds its transition rows to the pending batch; the one
 * that brings the count back to zero applies the whole batch, by calling
 * mzcoord._apply_implications(old_rows, new_rows) (apply.c)
 * through fmgr, so that it runs as its SECURITY DEFINER owner.
 *
 * The pending batch is detached before it is applied, so the statements the
 * implications run themselves (filling in an item's relation) form batches
 * of their own.  A statement run while another one is still executing
 * (from a function called by the outer statement) joins the outer batch;
 * it is applied when the outer statement's AFTER triggers have fired.
 *
 * Transaction boundaries: a subtransaction that aborts takes back the counts
 * and rows it added (its statements never finished); a top-level abort
 * forgets everything.  The state lives in TopTransactionContext.
 *
 * IDENTIFICATION
 *	  src/catalog/trigger.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "parser/parse_func.h"
#include "tcop/pquery.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/portal.h"
#include "utils/rel.h"

#include "catalog.h"
#include "rec_items.h"
#include "support.h"
#include "trigger.h"

PG_FUNCTION_INFO_V1(mzcoord_items_trigger);
PG_FUNCTION_INFO_V1(mzcoord_applying_implications);
PG_FUNCTION_INFO_V1(mzcoord_in_copy);

/* The batch being collected. */
static int	pending_events = 0; /* AFTER triggers still to come */
static List *pending_old = NIL; /* retracted rows (Datum of the row type) */
static List *pending_new = NIL; /* added rows */

/*
 * State saved at the start of each subtransaction that began while a batch
 * was pending, to be restored if it aborts.  (When nothing was pending at
 * its start, an abort simply empties the batch.)
 */
typedef struct PendingSave
{
	SubTransactionId subid;
	int			events;
	int			nold;
	int			nnew;
} PendingSave;

static List *saves = NIL;

static bool callbacks_registered = false;

/* Nesting depth of mzcoord._apply_implications calls in this backend. */
static int	applying_depth = 0;

static void
mzc_reset_pending(void)
{
	/* The lists live in TopTransactionContext, about to go away. */
	pending_events = 0;
	pending_old = NIL;
	pending_new = NIL;
	saves = NIL;
}

static void
mzc_catalog_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			mzc_reset_pending();
			break;
		default:
			break;
	}
}

static void
mzc_catalog_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							 SubTransactionId parentSubid, void *arg)
{
	PendingSave *top = saves != NIL ? (PendingSave *) llast(saves) : NULL;

	switch (event)
	{
		case SUBXACT_EVENT_START_SUB:
			if (pending_events > 0 || pending_old != NIL || pending_new != NIL)
			{
				MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
				PendingSave *s = palloc(sizeof(PendingSave));

				s->subid = mySubid;
				s->events = pending_events;
				s->nold = list_length(pending_old);
				s->nnew = list_length(pending_new);
				saves = lappend(saves, s);
				MemoryContextSwitchTo(old);
			}
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			if (top != NULL && top->subid == mySubid)
				saves = list_delete_last(saves);
			break;
		case SUBXACT_EVENT_ABORT_SUB:
			if (top != NULL && top->subid == mySubid)
			{
				pending_events = top->events;
				pending_old = list_truncate(pending_old, top->nold);
				pending_new = list_truncate(pending_new, top->nnew);
				saves = list_delete_last(saves);
			}
			else
			{
				/* Nothing was pending when this subtransaction started. */
				pending_events = 0;
				pending_old = NIL;
				pending_new = NIL;
			}
			break;
		default:
			break;
	}
}

/*
 * Register the transaction callbacks, once per process; called from the
 * trigger the first time it fires (nothing can be pending before that).
 */
static void
catalog_trigger_init(void)
{
	mzcoord_register_xact_callbacks(&callbacks_registered,
									mzc_catalog_xact_callback,
									mzc_catalog_subxact_callback);
}

/*
 * Append the rows of a transition table to a pending list, as datums of
 * the table's row type copied into TopTransactionContext.
 */
static List *
mzc_collect_rows(List *rows, const char *tablename, Oid rowtype)
{
	Datum		arr;

	if (mzcoord_rec_items_transition(tablename, &arr))
	{
		Datum	   *elems;
		bool	   *nulls;
		int			n;
		int16		typlen;
		bool		typbyval;
		char		typalign;
		MemoryContext old;

		get_typlenbyvalalign(rowtype, &typlen, &typbyval, &typalign);
		deconstruct_array(DatumGetArrayTypeP(arr), rowtype, typlen, typbyval,
						  typalign, &elems, &nulls, &n);
		old = MemoryContextSwitchTo(TopTransactionContext);
		for (int i = 0; i < n; i++)
			rows = lappend(rows, DatumGetPointer(datumCopy(elems[i], typbyval,
														   typlen)));
		MemoryContextSwitchTo(old);
	}
	return rows;
}

static Datum
mzc_rows_array(List *rows, Oid rowtype)
{
	int			n = list_length(rows);
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			i = 0;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	ListCell   *lc;

	get_typlenbyvalalign(rowtype, &typlen, &typbyval, &typalign);
	foreach(lc, rows)
		d[i++] = PointerGetDatum(lfirst(lc));
	return PointerGetDatum(construct_array(d, n, rowtype, typlen, typbyval,
										   typalign));
}

/*
 * Trigger function of mzcoord.items, for BEFORE and AFTER statement
 * triggers (see the file header).
 */
Datum
mzcoord_items_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td;
	Oid			rowtype;
	Oid			arraytype;
	List	   *old_rows;
	List	   *new_rows;
	Oid			argtypes[2];
	Oid			fnoid;
	FmgrInfo	flinfo;
	LOCAL_FCINFO(call, 2);

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._items_trigger() must be called as a trigger")));
	td = (TriggerData *) fcinfo->context;
	if (!TRIGGER_FIRED_FOR_STATEMENT(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("mzcoord._items_trigger() must be fired for each statement")));
	catalog_trigger_init();

	if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot truncate the mzcoord catalog"),
				 errhint("Use mzcoord.drop() or DELETE, which drop the items' collections too.")));

	if (TRIGGER_FIRED_BEFORE(td->tg_event))
	{
		/* This trigger fires ALWAYS; the foreign keys do not under replica. */
		mzcoord_require_origin_role();
		pending_events++;
		return PointerGetDatum(NULL);
	}

	rowtype = RelationGetForm(td->tg_relation)->reltype;
	mzcoord_spi_connect();
	if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "could not register the transition tables");
	if (td->tg_trigger->tgoldtable != NULL)
		pending_old = mzc_collect_rows(pending_old,
									   td->tg_trigger->tgoldtable, rowtype);
	if (td->tg_trigger->tgnewtable != NULL)
		pending_new = mzc_collect_rows(pending_new,
									   td->tg_trigger->tgnewtable, rowtype);
	SPI_finish();

	/* A trigger disabled by hand must not leave the count stuck. */
	if (pending_events > 0)
		pending_events--;
	if (pending_events > 0)
		return PointerGetDatum(NULL);

	/* Detach the batch, so that nested statements start their own. */
	old_rows = pending_old;
	new_rows = pending_new;
	pending_old = NIL;
	pending_new = NIL;
	saves = NIL;
	if (old_rows == NIL && new_rows == NIL)
		return PointerGetDatum(NULL);

	arraytype = get_array_type(rowtype);
	argtypes[0] = arraytype;
	argtypes[1] = arraytype;
	fnoid = LookupFuncName(list_make2(makeString("mzcoord"),
									  makeString("_apply_implications")),
						   2, argtypes, false);
	fmgr_info(fnoid, &flinfo);
	InitFunctionCallInfoData(*call, &flinfo, 2, InvalidOid, NULL, NULL);
	call->args[0].value = mzc_rows_array(old_rows, rowtype);
	call->args[0].isnull = false;
	call->args[1].value = mzc_rows_array(new_rows, rowtype);
	call->args[1].isnull = false;
	applying_depth++;
	PG_TRY();
	{
		/* A void function may return NULL; nothing to look at. */
		(void) FunctionCallInvoke(call);
	}
	PG_FINALLY();
	{
		applying_depth--;
	}
	PG_END_TRY();
	return PointerGetDatum(NULL);
}

/*
 * SQL: mzcoord._applying_implications() RETURNS boolean
 *
 * True while this backend applies catalog implications: the event trigger
 * that makes item rows follow their relations stays out of the way while
 * the implications make relations follow their rows.
 */
Datum
mzcoord_applying_implications(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(applying_depth > 0);
}

/*
 * SQL: mzcoord._in_copy() RETURNS boolean
 *
 * Is the top-level statement a COPY?  A restore from a dump (pg_restore,
 * or psql running a plain dump) loads the rows of mzcoord.items with COPY;
 * the implications recognise it by this and by complete rows.
 */
Datum
mzcoord_in_copy(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(mzcoord_catalog_in_copy());
}

bool
mzcoord_catalog_in_copy(void)
{
	return ActivePortal != NULL && ActivePortal->commandTag == CMDTAG_COPY;
}
