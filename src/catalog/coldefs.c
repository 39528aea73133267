/*-------------------------------------------------------------------------
 *
 * coldefs.c
 *	  Column definitions in their canonical form, every name qualified so
 *	  that the text means the same under any search_path.
 *
 * - the column definitions of a source, parsed with the PostgreSQL grammar
 *   and printed back fully qualified;
 * - the columns of an existing relation, and those of a sink that exports
 *   it (the relation's, then the sink's time and diff columns);
 * - the key list of an index item.
 *
 * The output columns of a materialized view's query (query.c) are checked
 * and printed with the same functions, and parse errors in a query are
 * reported with the same error context as those in a column list.  Nothing
 * here changes the catalog.
 *
 * The SQL-callable functions (mzcoord_sql_*) are internal (EXECUTE is
 * revoked from PUBLIC); the implications call them.
 *
 * IDENTIFICATION
 *	  src/catalog/coldefs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/heap.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "parser/parser.h"
#include "parser/parse_type.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "coldefs.h"
#include "support.h"

PG_FUNCTION_INFO_V1(mzcoord_sql_source_columns);
PG_FUNCTION_INFO_V1(mzcoord_sql_sink_columns);
PG_FUNCTION_INFO_V1(mzcoord_sql_relation_columns);
PG_FUNCTION_INFO_V1(mzcoord_sql_index_key_list);

/* Columns a sink adds to the columns of the item it exports. */
#define MZC_SINK_TIME_COLUMN "mz_timestamp"
#define MZC_SINK_DIFF_COLUMN "mz_diff"

/*
 * Append "name type [COLLATE coll]" with every name qualified, so that the
 * text means the same under any search_path.
 */
void
mzcoord_append_column(StringInfo buf, const char *name, Oid typid,
					  int32 typmod, Oid collid)
{
	if (buf->len > 0)
		appendStringInfoString(buf, ", ");
	appendStringInfo(buf, "%s %s", quote_identifier(name),
					 format_type_extended(typid, typmod,
										  FORMAT_TYPE_TYPEMOD_GIVEN |
										  FORMAT_TYPE_FORCE_QUALIFY));
	if (OidIsValid(collid) && collid != get_typcollation(typid))
	{
		HeapTuple	tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(collid));
		Form_pg_collation coll;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for collation %u", collid);
		coll = (Form_pg_collation) GETSTRUCT(tup);
		appendStringInfo(buf, " COLLATE %s",
						 quote_qualified_identifier(get_namespace_name(coll->collnamespace),
													NameStr(coll->collname)));
		ReleaseSysCache(tup);
	}
}

/*
 * Check a column of a new relation as CREATE TABLE would: no clash with a
 * system column or an earlier column (seen, the names so far, to which name
 * is added) and no pseudo-type.
 */
void
mzcoord_check_column(const char *name, Oid typid, List **seen)
{
	ListCell   *lc;

	if (SystemAttributeByName(name) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_COLUMN),
				 errmsg("column name \"%s\" conflicts with a system column name",
						name)));
	foreach(lc, *seen)
	{
		if (strcmp((char *) lfirst(lc), name) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("column \"%s\" specified more than once", name)));
	}
	*seen = lappend(*seen, (void *) name);
	if (get_typtype(typid) == TYPTYPE_PSEUDO)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
				 errmsg("column \"%s\" has pseudo-type %s",
						name, format_type_be(typid))));
}

/*
 * Report errors inside a query or column list against that text, not
 * against the statement that called the DDL function.
 */
static void
parse_error_context(void *arg)
{
	MzcParseContext *ctx = (MzcParseContext *) arg;
	int			pos = geterrposition();

	if (pos > 0)
	{
		errposition(0);
		if (pos > ctx->offset)
			internalerrposition(pos - ctx->offset);
	}
	internalerrquery(ctx->text);
	errcontext("%s", ctx->what);
}

/*
 * Report errors against text until mzcoord_parse_context_pop; offset is the
 * length of what the caller puts before text in the string it parses.
 */
void
mzcoord_parse_context_push(MzcParseContext *ctx, const char *what,
						   const char *text, int offset)
{
	ctx->what = what;
	ctx->text = text;
	ctx->offset = offset;
	ctx->callback.callback = parse_error_context;
	ctx->callback.arg = ctx;
	ctx->callback.previous = error_context_stack;
	error_context_stack = &ctx->callback;
}

void
mzcoord_parse_context_pop(MzcParseContext *ctx)
{
	error_context_stack = ctx->callback.previous;
}

/*
 * Parse the column definitions of a source with the CREATE TABLE grammar
 * and print them back canonically.  Only plain columns are accepted: a
 * name, a type, optionally a collation and NOT NULL.  Types are resolved
 * with the active search_path; when check_user is valid, it must have USAGE
 * on every type.
 */
char *
mzcoord_source_columns(const char *columns, Oid check_user)
{
	MzcParseContext ctx;
	List	   *raw;
	CreateStmt *stmt;
	ListCell   *lc;
	List	   *seen = NIL;
	StringInfoData buf;

	mzcoord_parse_context_push(&ctx, "column definitions of a source", columns,
							   strlen("CREATE TABLE mzcoord_source ("));

	raw = raw_parser(psprintf("CREATE TABLE mzcoord_source (%s)", columns),
					 RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1 ||
		!IsA(linitial_node(RawStmt, raw)->stmt, CreateStmt))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid column definitions for a source")));
	stmt = (CreateStmt *) linitial_node(RawStmt, raw)->stmt;
	if (stmt->inhRelations != NIL || stmt->partbound != NULL ||
		stmt->partspec != NULL || stmt->ofTypename != NULL ||
		stmt->constraints != NIL || stmt->options != NIL ||
		stmt->oncommit != ONCOMMIT_NOOP || stmt->tablespacename != NULL ||
		stmt->accessMethod != NULL ||
		strcmp(stmt->relation->relname, "mzcoord_source") != 0 ||
		stmt->relation->schemaname != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid column definitions for a source"),
				 errdetail("Only a list of column definitions is accepted.")));
	if (stmt->tableElts == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a source needs at least one column")));

	initStringInfo(&buf);
	foreach(lc, stmt->tableElts)
	{
		ColumnDef  *col = (ColumnDef *) lfirst(lc);
		bool		not_null = false;
		ListCell   *lc2;
		Oid			typid;
		int32		typmod;
		Oid			collid;

		if (!IsA(col, ColumnDef))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("source columns cannot have table constraints or LIKE clauses")));
		if (col->raw_default != NULL || col->identity != 0 ||
			col->generated != 0 || col->compression != NULL ||
			col->storage != 0 || col->fdwoptions != NIL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("source column \"%s\" cannot have a default, identity, generation, storage or compression clause",
							col->colname)));
		foreach(lc2, col->constraints)
		{
			Constraint *con = lfirst_node(Constraint, lc2);

			if (con->contype == CONSTR_NOTNULL)
				not_null = true;
			else if (con->contype != CONSTR_NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("source column \"%s\" can only be constrained to NOT NULL",
								col->colname)));
		}

		typenameTypeIdAndMod(NULL, col->typeName, &typid, &typmod);
		if (OidIsValid(check_user))
		{
			AclResult	aclresult = pg_type_aclcheck(typid, check_user, ACL_USAGE);

			if (aclresult != ACLCHECK_OK)
				aclcheck_error_type(aclresult, typid);
		}
		mzcoord_check_column(col->colname, typid, &seen);
		collid = GetColumnDefCollation(NULL, col, typid);

		mzcoord_append_column(&buf, col->colname, typid, typmod, collid);
		if (not_null)
			appendStringInfoString(&buf, " NOT NULL");
	}

	mzcoord_parse_context_pop(&ctx);
	return buf.data;
}

/* SQL: mzcoord._source_columns(text) RETURNS text, STRICT */
Datum
mzcoord_sql_source_columns(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(mzcoord_source_columns(text_to_cstring(PG_GETARG_TEXT_PP(0)),
															InvalidOid)));
}

/*
 * Column definitions of an existing relation, in the canonical form; for
 * a sink that exports it, followed by the sink's time and diff columns.
 */
static char *
relation_columns(Oid relid, bool for_sink)
{
	Relation	rel = try_table_open(relid, AccessShareLock);
	TupleDesc	desc;
	StringInfoData buf;

	/* An internal function, but a bad OID must not be an internal error. */
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	desc = RelationGetDescr(rel);

	initStringInfo(&buf);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		if (for_sink &&
			(strcmp(NameStr(att->attname), MZC_SINK_TIME_COLUMN) == 0 ||
			 strcmp(NameStr(att->attname), MZC_SINK_DIFF_COLUMN) == 0))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("cannot create a sink from \"%s\": its column \"%s\" collides with a column of the sink",
							RelationGetRelationName(rel), NameStr(att->attname)),
					 errdetail("A sink has the columns of the relation it exports, followed by \"%s\" and \"%s\".",
							   MZC_SINK_TIME_COLUMN, MZC_SINK_DIFF_COLUMN)));
		mzcoord_append_column(&buf, NameStr(att->attname), att->atttypid,
							  att->atttypmod, att->attcollation);
	}
	table_close(rel, NoLock);
	if (for_sink)
	{
		mzcoord_append_column(&buf, MZC_SINK_TIME_COLUMN, INT8OID, -1,
							  InvalidOid);
		appendStringInfoString(&buf, " NOT NULL");
		mzcoord_append_column(&buf, MZC_SINK_DIFF_COLUMN, INT8OID, -1,
							  InvalidOid);
		appendStringInfoString(&buf, " NOT NULL");
	}
	return buf.data;
}

/* SQL: mzcoord._sink_columns(rel regclass) RETURNS text */
Datum
mzcoord_sql_sink_columns(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(relation_columns(PG_GETARG_OID(0), true)));
}

/* SQL: mzcoord._relation_columns(rel regclass) RETURNS text */
Datum
mzcoord_sql_relation_columns(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(relation_columns(PG_GETARG_OID(0), false)));
}

/*
 * The key list of an index item: every key must be a column of relid whose
 * type has a default btree operator class.  Keys are column names, matched
 * exactly (they are not SQL identifiers and are not case-folded).
 */
char *
mzcoord_index_key_list(Oid relid, ArrayType *keys)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	StringInfoData buf;

	mzcoord_text_array_elems(keys, "index keys", &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("an index needs at least one key")));
	if (n > INDEX_MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("cannot use more than %d columns in an index",
						INDEX_MAX_KEYS)));

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
	{
		char	   *key;
		AttrNumber	attnum;
		Oid			typid;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("index keys must not be null")));
		key = TextDatumGetCString(elems[i]);
		attnum = get_attnum(relid, key);
		if (attnum <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of relation \"%s\" does not exist",
							key, get_rel_name(relid))));
		typid = get_atttype(relid, attnum);
		if (!OidIsValid(GetDefaultOpClass(typid, BTREE_AM_OID)))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("data type %s has no default operator class for access method \"%s\"",
							format_type_be(typid), "btree"),
					 errdetail("Index keys are compared with a btree index.")));
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, quote_identifier(key));
	}
	return buf.data;
}

/* SQL: mzcoord._index_key_list(rel regclass, keys text[]) RETURNS text */
Datum
mzcoord_sql_index_key_list(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(mzcoord_index_key_list(PG_GETARG_OID(0),
															PG_GETARG_ARRAYTYPE_P(1))));
}
