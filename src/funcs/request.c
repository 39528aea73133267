/*-------------------------------------------------------------------------
 *
 * request.c
 *	  Reading a jsonb request into the core's structs and building a jsonb
 *	  result, for determine_timestamp and select_as_ofs.
 *
 * The two jsonb functions read their request with PostgreSQL's Jsonb API
 * straight into the core's request structs (tsselect.h, asof.h) and build
 * the result with pushJsonbValue; the core itself knows no JSON.  Requests
 * are checked strictly before the core runs: unknown and missing keys,
 * wrong types, fractions, integers beyond int64, negative timestamps, empty,
 * unknown or duplicate ids, a since beyond its upper, inputs listed twice,
 * a dataflow reading itself and cycles are all SQLSTATE 22023, "invalid
 * request: <path>: <problem>", where the path names the offending value
 * ("request.inputs[2].since").  Only the parts of a request that have a
 * shape are walked, and never recursively, so a deeply nested value is
 * refused by its type like any other misplaced value.
 *
 * IDENTIFICATION
 *	  src/funcs/request.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "request.h"

/* ---------------------------------------------------------------------- */
/* Reading a jsonb request												  */
/* ---------------------------------------------------------------------- */

/*
 * Cuts a snprintf-truncated path back to whole characters, so that a message
 * never carries half of a multibyte character.
 */
static void
path_clip(jpath *p)
{
	int			len = strlen(p->s);

	if (len == sizeof(p->s) - 1)
		p->s[pg_mbcliplen(p->s, len, len)] = '\0';
}

void
mzcoord_req_path_key(jpath *out, const jpath *parent, const char *key, int keylen)
{
	snprintf(out->s, sizeof(out->s), "%s.%.*s", parent->s, keylen, key);
	path_clip(out);
}

void
mzcoord_req_path_index(jpath *out, const jpath *parent, int i)
{
	snprintf(out->s, sizeof(out->s), "%s[%d]", parent->s, i);
	path_clip(out);
}

/* A string value cut to QUOTE_MAX bytes of whole characters, for quoting. */
char *
mzcoord_req_quote_text(const char *s, int len)
{
	return pnstrdup(s, pg_mbcliplen(s, len, Min(len, QUOTE_MAX)));
}

/*
 * Raises the request error: SQLSTATE 22023, "invalid request: <path>:
 * <problem>".  The problem is formatted here, so that every check below
 * stays one line.
 */
void
mzcoord_req_error(const jpath *path, const char *fmt,...)
{
	StringInfoData problem;

	initStringInfo(&problem);
	for (;;)
	{
		va_list		args;
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&problem, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&problem, needed);
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid request: %s: %s", path->s, problem.data)));
	pg_unreachable();
}

/*
 * Zeroed memory for n elements.  A jsonb request can hold tens of millions
 * of elements; an array beyond palloc's limit is refused with a clear error
 * rather than palloc's internal one.
 */
void *
mzcoord_req_alloc_array(size_t n, size_t size)
{
	if (n == 0)
		n = 1;
	if (n > MaxAllocSize / size)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("request is too large")));
	return palloc0(n * size);
}

static bool
is_object(const JsonbValue *v)
{
	return v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data);
}

static bool
is_array(const JsonbValue *v)
{
	return v->type == jbvBinary && JsonContainerIsArray(v->val.binary.data) &&
		!JsonContainerIsScalar(v->val.binary.data);
}

/* "null", "a boolean", "a number", "a string", "an array", "an object" */
static const char *
found_what(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvBool:
			return "a boolean";
		case jbvNumeric:
			return "a number";
		case jbvString:
			return "a string";
		case jbvArray:
			return "an array";
		case jbvObject:
			return "an object";
		case jbvBinary:
			return is_object(v) ? "an object" : "an array";
		default:
			break;
	}
	return "an unknown value";
}

void
mzcoord_req_wrong_type(const jpath *path, const JsonbValue *v, const char *expected)
{
	mzcoord_req_error(path, "expected %s, found %s", expected, found_what(v));
}

/*
 * The request as a value: a container, or the scalar that jsonb keeps in a
 * one-element pseudo-array, so that "expected an object, found a string"
 * names what the caller wrote.
 */
void
mzcoord_req_request_root(Jsonb *jb, JsonbValue *root)
{
	if (JB_ROOT_IS_SCALAR(jb))
	{
		if (!JsonbExtractScalar(&jb->root, root))
			root->type = jbvNull;	/* not reached: the root is a scalar */
		return;
	}
	root->type = jbvBinary;
	root->val.binary.data = &jb->root;
	root->val.binary.len = VARSIZE(jb) - VARHDRSZ;
}

void
mzcoord_req_require_object(const JsonbValue *v, const jpath *path)
{
	if (!is_object(v))
		mzcoord_req_wrong_type(path, v, "an object");
}

void
mzcoord_req_require_array(const JsonbValue *v, const jpath *path)
{
	if (!is_array(v))
		mzcoord_req_wrong_type(path, v, "an array");
}

bool
mzcoord_req_string_is(const JsonbValue *v, const char *s)
{
	return v->type == jbvString && v->val.string.len == strlen(s) &&
		memcmp(v->val.string.val, s, v->val.string.len) == 0;
}

/*
 * Refuses any member of obj that is not in allowed[].  Members are visited
 * in jsonb's key order, so the first unknown key reported is stable.  jsonb
 * has already kept one member per key (the last), so there are no
 * duplicates to find.
 */
void
mzcoord_req_check_keys(const JsonbValue *obj, const jpath *path,
		   const char *const *allowed, int nallowed)
{
	JsonbIterator *it = JsonbIteratorInit(obj->val.binary.data);
	JsonbIteratorToken tok;
	JsonbValue	v;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		int			i;

		if (tok != WJB_KEY)
			continue;
		for (i = 0; i < nallowed; i++)
			if (mzcoord_req_string_is(&v, allowed[i]))
				break;
		if (i == nallowed)
		{
			jpath		p;

			mzcoord_req_path_key(&p, path, v.val.string.val, v.val.string.len);
			mzcoord_req_error(&p, "unrecognized key");
		}
	}
}

/* The member key of obj, or NULL if optional and absent. */
JsonbValue *
mzcoord_req_member(const JsonbValue *obj, const jpath *path, const char *key,
	   bool optional, jpath *child)
{
	JsonbValue *v;

	mzcoord_req_path_key(child, path, key, strlen(key));
	v = getKeyJsonValueFromContainer(obj->val.binary.data, key, strlen(key),
									 NULL);
	if (v == NULL && !optional)
		mzcoord_req_error(child, "missing key");
	return v;
}

/*
 * A non-negative int64; null gives {} when allowed.  The number is judged by
 * its canonical text, which the messages show: jsonb keeps 1.0 apart from 1
 * (a fraction) but has already turned 1e3 into 1000.
 */
mzc_frontier
mzcoord_req_read_frontier(const JsonbValue *v, const jpath *path, bool allow_null)
{
	Numeric		num;
	char	   *text;
	char	   *end;
	int64		t;

	if (v->type == jbvNull && allow_null)
		return mzc_frontier_empty();
	if (v->type != jbvNumeric)
		mzcoord_req_wrong_type(path, v, allow_null ?
				   "a non-negative integer or null" :
				   "a non-negative integer");
	num = v->val.numeric;
	text = DatumGetCString(DirectFunctionCall1(numeric_out,
											   NumericGetDatum(num)));
	if (numeric_is_nan(num) || numeric_is_inf(num) ||
		strchr(text, '.') != NULL)
		mzcoord_req_error(path, "expected an integer, found %.40s", text);
	errno = 0;
	t = strtoi64(text, &end, 10);
	if (errno == ERANGE || end == text || *end != '\0')
		mzcoord_req_error(path, "integer out of range: %.40s", text);
	if (t < 0)
		mzcoord_req_error(path, "must not be negative: " INT64_FORMAT, t);
	return mzc_frontier_at(t);
}

mzc_ts
mzcoord_req_read_ts(const JsonbValue *v, const jpath *path)
{
	return mzcoord_req_read_frontier(v, path, false).ts;
}

bool
mzcoord_req_read_bool(const JsonbValue *v, const jpath *path)
{
	if (v->type != jbvBool)
		mzcoord_req_wrong_type(path, v, "a boolean");
	return v->val.boolean;
}

/* A non-empty string, NUL-terminated (jsonb strings cannot hold NUL). */
char *
mzcoord_req_read_id(const JsonbValue *v, const jpath *path)
{
	if (v->type != jbvString)
		mzcoord_req_wrong_type(path, v, "a string");
	if (v->val.string.len == 0)
		mzcoord_req_error(path, "id must not be empty");
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* An optional timestamp member: absent or null means none. */
bool
mzcoord_req_optional_ts(const JsonbValue *obj, const jpath *path, const char *key,
			mzc_ts *ts, jpath *child)
{
	JsonbValue *v = mzcoord_req_member(obj, path, key, true, child);

	if (v == NULL || v->type == jbvNull)
		return false;
	*ts = mzcoord_req_read_ts(v, child);
	return true;
}

void
mzcoord_req_idmap_init(idmap *m, int32 n)
{
	uint32		cap = 8;

	while (cap < (uint32) n * 2u && cap < (1u << 30))
		cap <<= 1;
	m->keys = mzcoord_req_alloc_array(cap, sizeof(const char *));
	m->vals = mzcoord_req_alloc_array(cap, sizeof(int32));
	m->mask = cap - 1;
}

static uint32
idmap_slot(const idmap *m, const char *key)
{
	uint32		i;

	i = hash_bytes((const unsigned char *) key, strlen(key)) & m->mask;

	while (m->keys[i] != NULL && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & m->mask;
	return i;
}

/* The index of key, or -1. */
int32
mzcoord_req_idmap_find(const idmap *m, const char *key)
{
	uint32		i = idmap_slot(m, key);

	return m->keys[i] != NULL ? m->vals[i] : -1;
}

/* false if the key is already present */
bool
mzcoord_req_idmap_insert(idmap *m, const char *key, int32 val)
{
	uint32		i = idmap_slot(m, key);

	if (m->keys[i] != NULL)
		return false;
	m->keys[i] = key;
	m->vals[i] = val;
	return true;
}

/* ---------------------------------------------------------------------- */
/* Building a jsonb result												  */
/* ---------------------------------------------------------------------- */

/* v := the jsonb string s (not copied). */
static void
string_value(JsonbValue *v, const char *s)
{
	v->type = jbvString;
	v->val.string.val = (char *) s;
	v->val.string.len = strlen(s);
}

/* key: v, as a member of the object being built. */
static void
push_member(JsonbParseState **ps, const char *key, JsonbValue *v)
{
	mzcoord_req_push_key(ps, key);
	pushJsonbValue(ps, WJB_VALUE, v);
}

void
mzcoord_req_push_key(JsonbParseState **ps, const char *key)
{
	JsonbValue	k;

	string_value(&k, key);
	pushJsonbValue(ps, WJB_KEY, &k);
}

void
mzcoord_req_push_int(JsonbParseState **ps, const char *key, int64 t)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(t);
	push_member(ps, key, &v);
}

/* {t} as t, {} as null. */
void
mzcoord_req_push_frontier(JsonbParseState **ps, const char *key, mzc_frontier f)
{
	JsonbValue	v;

	if (!f.empty)
	{
		mzcoord_req_push_int(ps, key, f.ts);
		return;
	}
	v.type = jbvNull;
	push_member(ps, key, &v);
}

void
mzcoord_req_push_bool(JsonbParseState **ps, const char *key, bool b)
{
	JsonbValue	v;

	v.type = jbvBool;
	v.val.boolean = b;
	push_member(ps, key, &v);
}

void
mzcoord_req_push_string(JsonbParseState **ps, const char *key, const char *s)
{
	JsonbValue	v;

	string_value(&v, s);
	push_member(ps, key, &v);
}

/*
 * A core failure that the checks above should have made impossible: still a
 * clean, coded error.
 */
void
mzcoord_req_report_core_error(mzc_status st, const mzc_error *err)
{
	if (st == MZC_ERR_INVALID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid request: %s", err->message)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("could not process request: %s", err->message)));
	pg_unreachable();
}
