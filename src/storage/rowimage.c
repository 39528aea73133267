/*-------------------------------------------------------------------------
 *
 * rowimage.c
 *	  Rows identified by their binary image, and multisets of such rows.
 *
 * The data plane consolidates updates: it adds up the diffs of identical
 * rows.  "Identical" cannot mean the equality operators of the column types:
 * json and point have none, and where they exist they may merge rows that
 * are different values (numeric 1.0 and 1.00, interval '1 day' and
 * '24 hours', citext 'A' and 'a', float -0 and 0), which a plain SELECT
 * would show apart.  So a row is identified by the bytes of its columns
 * (PostgreSQL's datum_image_eq, the identity REFRESH MATERIALIZED VIEW
 * CONCURRENTLY uses); toasted and compressed values are compared after
 * detoasting.  A history only ever retracts a row it inserted byte for byte,
 * so this never separates what should cancel.
 *
 * Here: hashing and comparing rows of a tuple descriptor, a multiset of rows
 * (a chained hash table in its own memory context), and two SQL helpers
 * for grouping rows by identity in SQL: mzcoord._row_image(VARIADIC "any")
 * (the bytes of a list of values, to group by) and the aggregate
 * mzcoord._any (any value of a group).  Compaction used them until it moved
 * to C (compact.c); they stay in the catalog, where SQL may use them.
 *
 * IDENTIFICATION
 *	  src/storage/rowimage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "rowimage.h"

PG_FUNCTION_INFO_V1(mzcoord_row_image);
PG_FUNCTION_INFO_V1(mzcoord_any_transfn);

/* Hash of a row: combines the image hash of every non-dropped attribute. */
uint32
mzcoord_row_hash(TupleDesc desc, Datum *values, bool *isnull)
{
	uint32		h = 0x9e3779b9;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		uint32		v;

		if (att->attisdropped)
			continue;
		if (isnull[i])
			v = 0x5bd1e995 + i;
		else
			v = datum_image_hash(values[i], att->attbyval, att->attlen);
		h = hash_combine(h, v);
	}
	return h;
}

/* Are two rows of desc identical, column by column, byte for byte? */
bool
mzcoord_row_equal(TupleDesc desc, Datum *v1, bool *n1, Datum *v2, bool *n2)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		if (n1[i] != n2[i])
			return false;
		if (n1[i])
			continue;
		if (!datum_image_eq(v1[i], v2[i], att->attbyval, att->attlen))
			return false;
	}
	return true;
}

/* ----------------------------------------------------------------
 * Row sets
 *
 * A simplehash table of pointers to entries: the entries themselves never
 * move (callers keep them, and walk them in insertion order), only the
 * table's slots do when it grows.  A lookup probes with a stack entry that
 * holds the caller's values.
 * ----------------------------------------------------------------
 */

typedef struct MzcRowSlot
{
	MzcRowEntry *entry;
	uint32		hash;
	char		status;			/* simplehash's slot state */
} MzcRowSlot;

#define SH_PREFIX rowslots
#define SH_ELEMENT_TYPE MzcRowSlot
#define SH_KEY_TYPE MzcRowEntry *
#define SH_KEY entry
#define SH_HASH_KEY(tb, key) ((key)->hash)
#define SH_EQUAL(tb, a, b) ((a)->hash == (b)->hash && \
	mzcoord_row_equal(((MzcRowSet *) (tb)->private_data)->desc, \
					  (a)->values, (a)->isnull, (b)->values, (b)->isnull))
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a) ((a)->hash)
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

MzcRowSet *
mzcoord_rowset_create(TupleDesc desc, MemoryContext parent)
{
	MemoryContext cxt = AllocSetContextCreate(parent, "mzcoord row set",
											  ALLOCSET_DEFAULT_SIZES);
	MzcRowSet  *set = MemoryContextAllocZero(cxt, sizeof(MzcRowSet));

	set->cxt = cxt;
	set->desc = desc;
	set->table = rowslots_create(cxt, 256, set);
	return set;
}

void
mzcoord_rowset_destroy(MzcRowSet *set)
{
	MemoryContextDelete(set->cxt);
}

MzcRowEntry *
mzcoord_rowset_find(MzcRowSet *set, Datum *values, bool *isnull, uint32 hash)
{
	MzcRowEntry probe = {.hash = hash,.values = values,.isnull = isnull};
	MzcRowSlot *slot = rowslots_lookup(set->table, &probe);

	return slot ? slot->entry : NULL;
}

/* A copy of the row in the set's memory, detoasted, dropped columns null. */
static MzcRowEntry *
rowset_copy_row(MzcRowSet *set, Datum *values, bool *isnull, uint32 hash,
				int64 count)
{
	TupleDesc	desc = set->desc;
	MemoryContext old = MemoryContextSwitchTo(set->cxt);
	MzcRowEntry *e = palloc0(sizeof(MzcRowEntry));

	e->hash = hash;
	e->count = count;
	e->values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	e->isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		e->isnull[i] = isnull[i] || att->attisdropped;
		if (e->isnull[i])
			e->values[i] = (Datum) 0;
		else if (att->attlen == -1)
			e->values[i] = PointerGetDatum(PG_DETOAST_DATUM_COPY(values[i]));
		else
			e->values[i] = datumCopy(values[i], att->attbyval, att->attlen);
	}
	MemoryContextSwitchTo(old);
	return e;
}

/*
 * Add count to the row's count, copying the row in if it is new.  Returns
 * its entry.
 */
MzcRowEntry *
mzcoord_rowset_add(MzcRowSet *set, Datum *values, bool *isnull, uint32 hash,
				   int64 count)
{
	MzcRowEntry probe = {.hash = hash,.values = values,.isnull = isnull};
	bool		found;
	MzcRowSlot *slot = rowslots_insert(set->table, &probe, &found);
	MzcRowEntry *e;

	if (found)
	{
		slot->entry->count += count;
		return slot->entry;
	}

	/*
	 * The slot holds the probe until it gets the copy; nothing between the
	 * two can reach the table (a failed copy leaves the set unusable, but
	 * its memory context goes with the error).
	 */
	e = rowset_copy_row(set, values, isnull, hash, count);
	slot->entry = e;
	if (set->last)
		set->last->link = e;
	else
		set->first = e;
	set->last = e;
	set->nentries++;
	return e;
}

/* ----------------------------------------------------------------
 * SQL helpers for compaction
 * ----------------------------------------------------------------
 */

/*
 * mzcoord._row_image(VARIADIC "any") RETURNS bytea
 *
 * The bytes of its arguments: per argument a null flag, and for a value its
 * length and its (detoasted) bytes.  Two lists of values have the same image
 * exactly when they are identical in the sense above, so grouping by it
 * consolidates rows of any type.
 */
Datum
mzcoord_row_image(PG_FUNCTION_ARGS)
{
	StringInfoData buf;
	bytea	   *result;

	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	for (int i = 0; i < PG_NARGS(); i++)
	{
		Oid			type = get_fn_expr_argtype(fcinfo->flinfo, i);
		int16		typlen;
		bool		typbyval;
		Datum		v;
		const char *data;
		uint32		len;

		if (PG_ARGISNULL(i))
		{
			appendStringInfoChar(&buf, 'n');
			continue;
		}
		if (!OidIsValid(type))
			elog(ERROR, "could not determine the type of argument %d", i + 1);
		get_typlenbyval(type, &typlen, &typbyval);
		v = PG_GETARG_DATUM(i);
		if (typbyval)
		{
			/* As datum_image_hash does: the whole (normalised) Datum. */
			data = (const char *) &v;
			len = sizeof(Datum);
		}
		else if (typlen == -1)
		{
			struct varlena *d = PG_DETOAST_DATUM_PACKED(v);

			data = VARDATA_ANY(d);
			len = VARSIZE_ANY_EXHDR(d);
		}
		else if (typlen == -2)
		{
			data = DatumGetCString(v);
			len = strlen(data);
		}
		else
		{
			data = DatumGetPointer(v);
			len = typlen;
		}
		appendStringInfoChar(&buf, 'v');
		appendBinaryStringInfo(&buf, (const char *) &len, sizeof(len));
		appendBinaryStringInfo(&buf, data, len);
	}
	result = (bytea *) buf.data;
	SET_VARSIZE(result, buf.len);
	PG_RETURN_BYTEA_P(result);
}

/*
 * Transition function of the aggregate mzcoord._any(anyelement): keeps the
 * first non-null value (strict, no initial value).  Compaction groups rows
 * by their image, so every value of a group is the same.
 */
Datum
mzcoord_any_transfn(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
}
