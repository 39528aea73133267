/*-------------------------------------------------------------------------
 *
 * core_sql.c
 *	  SQL wrappers of mzcoord's pure core (src/core).
 *
 *	  mzcoord.lag_frontier(upper, lag_ms, granularity_ms)	  P2 read policy
 *	  mzcoord.largest_not_in_advance_of_upper(upper)		  F6
 *	  mzcoord.determine_timestamp(request jsonb)			  2.5
 *	  mzcoord.select_as_ofs(request jsonb)					  2.6
 *
 * Frontier arguments and results are bigint, NULL meaning the empty
 * frontier {}.  These functions touch no shared memory and no catalog: they
 * only compute, so they are immutable and safe to call anywhere.
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
 * determine_timestamp request:
 *	 {"isolation": "serializable" | "strict serializable"
 *				   | "strong session serializable",
 *	  "when": {"kind": "immediately" | "freshest_table_write"
 *					 | "as_of" | "as_of_at_least",
 *			   "ts": N (as_of and as_of_at_least only)},
 *	  "inputs": [{"id": "u1", "since": N|null, "upper": N|null}, ...],
 *	  "oracle_read_ts": N|null,				(optional, default null)
 *	  "timeline": true|false,				(optional, default true)
 *	  "session_oracle_read_ts": N|null,		(optional, strong session only)
 *	  "real_time_recency_ts": N|null}		(optional, strict only)
 * result:
 *	 {"timestamp": N, "respond_immediately": bool, "since": N|null,
 *	  "upper": N|null, "largest_not_in_advance_of_upper": N,
 *	  "constraints": {"lower": [C, ...], "upper": [C, ...]}}
 * where each binding constraint C is
 *	 {"ts": N|null, "reason": "storage_input", "input": "u1"}
 *	 {"ts": N, "reason": "query_as_of"}
 *	 {"ts": N, "reason": "isolation_level", "isolation": "..."}
 *	 {"ts": N, "reason": "real_time_recency"}
 * A candidate below some input's since is the since-violation error (55000)
 * naming every blocking input.
 *
 * select_as_ofs request:
 *	 {"now": N, "read_only": bool (optional, default false),
 *	  "storage": {"s1": {"since": N|null, "upper": N|null}, ...},
 *	  "dataflows": [{"id": "u1", "inputs": ["s1", ...],
 *					 "policy": {"lag": N, "granularity": N (default 1000)}
 *							 | {"valid_from": N} | null (optional)}, ...]}
 * result: {"u1": N|null, ...} (null: sealed or pruned).  A dataflow whose id
 * is also under "storage" writes that collection (a materialized view); the
 * others are indexes.  Inputs under "storage" are storage inputs, the others
 * must be dataflow ids.
 *
 * IDENTIFICATION
 *	  src/controller/core_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>

#include "common/hashfn.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "asof.h"
#include "mzcoord.h"
#include "policy.h"
#include "tsselect.h"

PG_FUNCTION_INFO_V1(mzcoord_lag_frontier);
PG_FUNCTION_INFO_V1(mzcoord_largest_not_in_advance_of_upper);
PG_FUNCTION_INFO_V1(mzcoord_determine_timestamp);
PG_FUNCTION_INFO_V1(mzcoord_select_as_ofs);

/* Ids and isolation levels quoted in a message are cut to this many bytes. */
#define QUOTE_MAX 64

/* A nullable bigint frontier argument; negative times are rejected. */
static mzc_frontier
frontier_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	int64		t;

	if (PG_ARGISNULL(argno))
		return mzc_frontier_empty();
	t = PG_GETARG_INT64(argno);
	if (t < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative: " INT64_FORMAT, name, t),
				 errhint("Timestamps are milliseconds since the Unix epoch; NULL is the empty frontier.")));
	return mzc_frontier_at(t);
}

static int64
required_int64_arg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	return PG_GETARG_INT64(argno);
}

/*
 * SQL: mzcoord.lag_frontier(upper bigint, lag_ms bigint,
 *							 granularity_ms bigint DEFAULT 1000) RETURNS bigint
 *
 * The since that a lag read policy asks for at this upper (P2, P4): a NULL
 * (empty) upper gives 0, a lag of 0 gives the upper itself.
 */
Datum
mzcoord_lag_frontier(PG_FUNCTION_ARGS)
{
	mzc_frontier upper = frontier_arg(fcinfo, 0, "upper");
	int64		lag = required_int64_arg(fcinfo, 1, "lag_ms");
	int64		granularity = required_int64_arg(fcinfo, 2, "granularity_ms");
	mzc_policy	policy;
	mzc_error	err;
	mzc_frontier result;

	if (mzc_policy_lag(lag, granularity, &policy, &err) != MZC_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid lag policy: %s", err.message),
				 errhint("lag_ms must be zero or more and granularity_ms at least 1.")));
	result = mzc_policy_frontier(&policy, upper);
	/* A lag policy never yields {} (P4 maps {} to {0}). */
	Assert(!result.empty);
	PG_RETURN_INT64(result.ts);
}

/*
 * SQL: mzcoord.largest_not_in_advance_of_upper(upper bigint) RETURNS bigint
 *
 * F6: upper - 1 (0 for 0); the empty upper (NULL) gives 2^63-1.
 */
Datum
mzcoord_largest_not_in_advance_of_upper(PG_FUNCTION_ARGS)
{
	mzc_frontier upper = frontier_arg(fcinfo, 0, "upper");

	PG_RETURN_INT64(mzc_largest_not_in_advance_of_upper(upper));
}

/* ---------------------------------------------------------------------- */
/* Reading a jsonb request												  */
/* ---------------------------------------------------------------------- */

/*
 * The path of a request value, for messages only ("request.inputs[2].since").
 * Bounded, so that a huge key cannot make a huge message.
 */
#define REQUEST_PATH_LEN 256

typedef struct jpath
{
	char		s[REQUEST_PATH_LEN];
} jpath;

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

static void
path_key(jpath *out, const jpath *parent, const char *key, int keylen)
{
	snprintf(out->s, sizeof(out->s), "%s.%.*s", parent->s, keylen, key);
	path_clip(out);
}

static void
path_index(jpath *out, const jpath *parent, int i)
{
	snprintf(out->s, sizeof(out->s), "%s[%d]", parent->s, i);
	path_clip(out);
}

/* A string value cut to QUOTE_MAX bytes of whole characters, for quoting. */
static char *
quote_text(const char *s, int len)
{
	return pnstrdup(s, pg_mbcliplen(s, len, Min(len, QUOTE_MAX)));
}

/*
 * Raises the request error: SQLSTATE 22023, "invalid request: <path>:
 * <problem>".  The problem is formatted here, so that every check below
 * stays one line.
 */
static void request_error(const jpath *path, const char *fmt,...)
			pg_attribute_printf(2, 3) pg_attribute_noreturn();

static void
request_error(const jpath *path, const char *fmt,...)
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
static void *
alloc_array(size_t n, size_t size)
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

static void
wrong_type(const jpath *path, const JsonbValue *v, const char *expected)
{
	request_error(path, "expected %s, found %s", expected, found_what(v));
}

/*
 * The request as a value: a container, or the scalar that jsonb keeps in a
 * one-element pseudo-array, so that "expected an object, found a string"
 * names what the caller wrote.
 */
static void
request_root(Jsonb *jb, JsonbValue *root)
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

static void
require_object(const JsonbValue *v, const jpath *path)
{
	if (!is_object(v))
		wrong_type(path, v, "an object");
}

static void
require_array(const JsonbValue *v, const jpath *path)
{
	if (!is_array(v))
		wrong_type(path, v, "an array");
}

static bool
string_is(const JsonbValue *v, const char *s)
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
static void
check_keys(const JsonbValue *obj, const jpath *path,
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
			if (string_is(&v, allowed[i]))
				break;
		if (i == nallowed)
		{
			jpath		p;

			path_key(&p, path, v.val.string.val, v.val.string.len);
			request_error(&p, "unrecognized key");
		}
	}
}

/* The member key of obj, or NULL if optional and absent. */
static JsonbValue *
member(const JsonbValue *obj, const jpath *path, const char *key,
	   bool optional, jpath *child)
{
	JsonbValue *v;

	path_key(child, path, key, strlen(key));
	v = getKeyJsonValueFromContainer(obj->val.binary.data, key, strlen(key),
									 NULL);
	if (v == NULL && !optional)
		request_error(child, "missing key");
	return v;
}

/*
 * A non-negative int64; null gives {} when allowed.  The number is judged by
 * its canonical text, which the messages show: jsonb keeps 1.0 apart from 1
 * (a fraction) but has already turned 1e3 into 1000.
 */
static mzc_frontier
read_frontier(const JsonbValue *v, const jpath *path, bool allow_null)
{
	Numeric		num;
	char	   *text;
	char	   *end;
	int64		t;

	if (v->type == jbvNull && allow_null)
		return mzc_frontier_empty();
	if (v->type != jbvNumeric)
		wrong_type(path, v, allow_null ?
				   "a non-negative integer or null" :
				   "a non-negative integer");
	num = v->val.numeric;
	text = DatumGetCString(DirectFunctionCall1(numeric_out,
											   NumericGetDatum(num)));
	if (numeric_is_nan(num) || numeric_is_inf(num) ||
		strchr(text, '.') != NULL)
		request_error(path, "expected an integer, found %.40s", text);
	errno = 0;
	t = strtoi64(text, &end, 10);
	if (errno == ERANGE || end == text || *end != '\0')
		request_error(path, "integer out of range: %.40s", text);
	if (t < 0)
		request_error(path, "must not be negative: " INT64_FORMAT, t);
	return mzc_frontier_at(t);
}

static mzc_ts
read_ts(const JsonbValue *v, const jpath *path)
{
	return read_frontier(v, path, false).ts;
}

static bool
read_bool(const JsonbValue *v, const jpath *path)
{
	if (v->type != jbvBool)
		wrong_type(path, v, "a boolean");
	return v->val.boolean;
}

/* A non-empty string, NUL-terminated (jsonb strings cannot hold NUL). */
static char *
read_id(const JsonbValue *v, const jpath *path)
{
	if (v->type != jbvString)
		wrong_type(path, v, "a string");
	if (v->val.string.len == 0)
		request_error(path, "id must not be empty");
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* An optional timestamp member: absent or null means none. */
static bool
optional_ts(const JsonbValue *obj, const jpath *path, const char *key,
			mzc_ts *ts, jpath *child)
{
	JsonbValue *v = member(obj, path, key, true, child);

	if (v == NULL || v->type == jbvNull)
		return false;
	*ts = read_ts(v, child);
	return true;
}

/*
 * An id -> index map (open addressing) for the ids of one request.  The
 * core works with indexes; the ids only exist here, to resolve inputs and
 * to name values in messages and results.
 */
typedef struct idmap
{
	const char **keys;
	int32	   *vals;
	uint32		mask;
} idmap;

static void
idmap_init(idmap *m, int32 n)
{
	uint32		cap = 8;

	while (cap < (uint32) n * 2u && cap < (1u << 30))
		cap <<= 1;
	m->keys = alloc_array(cap, sizeof(const char *));
	m->vals = alloc_array(cap, sizeof(int32));
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
static int32
idmap_find(const idmap *m, const char *key)
{
	uint32		i = idmap_slot(m, key);

	return m->keys[i] != NULL ? m->vals[i] : -1;
}

/* false if the key is already present */
static bool
idmap_insert(idmap *m, const char *key, int32 val)
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

static void
push_key(JsonbParseState **ps, const char *key)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	pushJsonbValue(ps, WJB_KEY, &k);
}

static void
push_int(JsonbParseState **ps, const char *key, int64 t)
{
	JsonbValue	v;

	push_key(ps, key);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(t);
	pushJsonbValue(ps, WJB_VALUE, &v);
}

/* {t} as t, {} as null. */
static void
push_frontier(JsonbParseState **ps, const char *key, mzc_frontier f)
{
	JsonbValue	v;

	if (!f.empty)
	{
		push_int(ps, key, f.ts);
		return;
	}
	push_key(ps, key);
	v.type = jbvNull;
	pushJsonbValue(ps, WJB_VALUE, &v);
}

static void
push_bool(JsonbParseState **ps, const char *key, bool b)
{
	JsonbValue	v;

	push_key(ps, key);
	v.type = jbvBool;
	v.val.boolean = b;
	pushJsonbValue(ps, WJB_VALUE, &v);
}

static void
push_string(JsonbParseState **ps, const char *key, const char *s)
{
	JsonbValue	v;

	push_key(ps, key);
	v.type = jbvString;
	v.val.string.val = (char *) s;
	v.val.string.len = strlen(s);
	pushJsonbValue(ps, WJB_VALUE, &v);
}

/*
 * A core failure that the checks above should have made impossible: still a
 * clean, coded error.
 */
static void report_core_error(mzc_status st, const mzc_error *err)
			pg_attribute_noreturn();

static void
report_core_error(mzc_status st, const mzc_error *err)
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

/* ---------------------------------------------------------------------- */
/* determine_timestamp													  */
/* ---------------------------------------------------------------------- */

static const char *const ts_request_keys[] = {
	"isolation", "when", "inputs", "oracle_read_ts", "timeline",
	"session_oracle_read_ts", "real_time_recency_ts"
};
static const char *const when_keys[] = {"kind", "ts"};
static const char *const input_keys[] = {"id", "since", "upper"};

static mzc_isolation
read_isolation(const JsonbValue *v, const jpath *path)
{
	if (v->type != jbvString)
		wrong_type(path, v, "a string");
	if (string_is(v, "serializable"))
		return MZC_ISO_SERIALIZABLE;
	if (string_is(v, "strict serializable"))
		return MZC_ISO_STRICT_SERIALIZABLE;
	if (string_is(v, "strong session serializable"))
		return MZC_ISO_STRONG_SESSION_SERIALIZABLE;
	request_error(path, "unrecognized isolation level \"%s\"",
				  quote_text(v->val.string.val, v->val.string.len));
}

static void
read_when(const JsonbValue *v, const jpath *path, mzc_ts_request *req)
{
	JsonbValue *kind,
			   *ts;
	jpath		kp,
				tp;

	require_object(v, path);
	check_keys(v, path, when_keys, lengthof(when_keys));
	kind = member(v, path, "kind", false, &kp);
	ts = member(v, path, "ts", true, &tp);
	if (kind->type != jbvString)
		wrong_type(&kp, kind, "a string");
	if (string_is(kind, "immediately"))
		req->when = MZC_WHEN_IMMEDIATELY;
	else if (string_is(kind, "freshest_table_write"))
		req->when = MZC_WHEN_FRESHEST_TABLE_WRITE;
	else if (string_is(kind, "as_of"))
		req->when = MZC_WHEN_AS_OF;
	else if (string_is(kind, "as_of_at_least"))
		req->when = MZC_WHEN_AS_OF_AT_LEAST;
	else
		request_error(&kp, "unrecognized kind \"%s\"",
					  quote_text(kind->val.string.val, kind->val.string.len));
	if (req->when == MZC_WHEN_AS_OF || req->when == MZC_WHEN_AS_OF_AT_LEAST)
	{
		if (ts == NULL)
			request_error(&tp, "missing key");
		req->when_ts = read_ts(ts, &tp);
	}
	else if (ts != NULL && ts->type != jbvNull)
		request_error(&tp, "a timestamp is only allowed with kind as_of or as_of_at_least");
}

/*
 * Fills req from the request; *ids_out gets the input ids (the core only
 * knows input indexes).  The order of the checks decides which error a
 * request with several problems gets, and is kept stable.
 */
static void
read_ts_request(Jsonb *jb, mzc_ts_request *req, char ***ids_out)
{
	JsonbValue	root;
	JsonbValue *v;
	jpath		rp,
				p,
				ip;
	mzc_ts_input *inputs;
	char	  **ids;
	idmap		map;
	int32		n,
				i;

	strlcpy(rp.s, "request", sizeof(rp.s));
	request_root(jb, &root);
	require_object(&root, &rp);
	check_keys(&root, &rp, ts_request_keys, lengthof(ts_request_keys));
	memset(req, 0, sizeof(*req));
	req->mode = MZC_TS_VERIFY;
	req->timeline = true;

	v = member(&root, &rp, "isolation", false, &p);
	req->isolation = read_isolation(v, &p);
	v = member(&root, &rp, "when", false, &p);
	read_when(v, &p, req);
	v = member(&root, &rp, "timeline", true, &p);
	if (v != NULL)
		req->timeline = read_bool(v, &p);
	req->has_oracle_ts = optional_ts(&root, &rp, "oracle_read_ts",
									 &req->oracle_ts, &p);
	req->has_session_ts = optional_ts(&root, &rp, "session_oracle_read_ts",
									  &req->session_ts, &p);
	if (req->has_session_ts &&
		req->isolation != MZC_ISO_STRONG_SESSION_SERIALIZABLE)
		request_error(&p, "only allowed with strong session serializable isolation");
	req->has_rtr_ts = optional_ts(&root, &rp, "real_time_recency_ts",
								  &req->rtr_ts, &p);
	if (req->has_rtr_ts && req->isolation != MZC_ISO_STRICT_SERIALIZABLE)
		request_error(&p, "only allowed with strict serializable isolation");
	if (req->has_rtr_ts &&
		(req->when == MZC_WHEN_AS_OF || req->when == MZC_WHEN_AS_OF_AT_LEAST))
		request_error(&p, "cannot be combined with an as-of");

	v = member(&root, &rp, "inputs", false, &ip);
	require_array(v, &ip);
	n = JsonContainerSize(v->val.binary.data);
	inputs = alloc_array(n, sizeof(mzc_ts_input));
	ids = alloc_array(n, sizeof(char *));
	idmap_init(&map, n);
	for (i = 0; i < n; i++)
	{
		JsonbValue *in = getIthJsonbValueFromContainer(v->val.binary.data, i);
		JsonbValue *f;
		jpath		ep,
					fp;

		path_index(&ep, &ip, i);
		require_object(in, &ep);
		check_keys(in, &ep, input_keys, lengthof(input_keys));
		f = member(in, &ep, "id", false, &fp);
		ids[i] = read_id(f, &fp);
		if (!idmap_insert(&map, ids[i], i))
			request_error(&fp, "duplicate input id \"%s\"",
						  quote_text(ids[i], strlen(ids[i])));
		f = member(in, &ep, "since", false, &fp);
		inputs[i].since = read_frontier(f, &fp, true);
		f = member(in, &ep, "upper", false, &fp);
		inputs[i].upper = read_frontier(f, &fp, true);

		/*
		 * No collection has a since beyond its upper (invariant I1); an
		 * empty since (nothing readable any more) goes with any upper.  The
		 * core computes with such an input all the same, so the check is
		 * made here.
		 */
		if (!inputs[i].since.empty &&
			!mzc_frontier_le(inputs[i].since, inputs[i].upper))
			request_error(&ep, "since must not be beyond upper");
	}
	req->inputs = inputs;
	req->ninputs = n;
	*ids_out = ids;
}

static void
push_constraint(JsonbParseState **ps, const mzc_ts_constraint *c,
				char *const *ids)
{
	pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
	push_frontier(ps, "ts", c->bound);
	push_string(ps, "reason", mzc_ts_reason_name(c->reason));
	if (c->reason == MZC_REASON_STORAGE_INPUT)
		push_string(ps, "input", ids[c->input]);
	else if (c->reason == MZC_REASON_ISOLATION_LEVEL)
		push_string(ps, "isolation", mzc_isolation_name(c->isolation));
	pushJsonbValue(ps, WJB_END_OBJECT, NULL);
}

/*
 * SQL: mzcoord.determine_timestamp(request jsonb) RETURNS jsonb
 *
 * Timestamp selection (reference 2.5); see the top of this file for the
 * request and result shapes.
 */
Datum
mzcoord_determine_timestamp(PG_FUNCTION_ARGS)
{
	mzc_ts_request req;
	mzc_ts_result res;
	char	  **ids;
	mzc_error	err;
	mzc_status	st;
	JsonbParseState *ps = NULL;
	JsonbValue *result;
	int32		n,
				i;

	read_ts_request(PG_GETARG_JSONB_P(0), &req, &ids);
	n = req.ninputs;
	mzc_ts_result_init(&res,
					   alloc_array((size_t) n + MZC_TS_EXTRA_LOWER,
								   sizeof(mzc_ts_constraint)),
					   n + MZC_TS_EXTRA_LOWER,
					   alloc_array(n, sizeof(int32)), n);
	mzc_error_clear(&err);
	st = mzc_determine_timestamp(&req, &res, &err);
	if (st == MZC_ERR_SINCE_VIOLATION)
	{
		const char **names = alloc_array(res.nblocking, sizeof(char *));
		mzc_frontier *sinces = alloc_array(res.nblocking,
										   sizeof(mzc_frontier));

		for (i = 0; i < res.nblocking; i++)
		{
			names[i] = ids[res.blocking[i]];
			sinces[i] = req.inputs[res.blocking[i]].since;
		}
		mzcoord_report_since_violation(res.candidate, res.nblocking, names,
									   sinces);
	}
	if (st != MZC_OK)
		report_core_error(st, &err);

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	push_int(&ps, "timestamp", res.timestamp);
	push_bool(&ps, "respond_immediately", res.respond_immediately);
	push_frontier(&ps, "since", res.since);
	push_frontier(&ps, "upper", res.upper);
	push_int(&ps, "largest_not_in_advance_of_upper",
			 res.largest_not_in_advance_of_upper);
	push_key(&ps, "constraints");
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	push_key(&ps, "lower");
	pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < res.nlower; i++)
		push_constraint(&ps, &res.lower[i], ids);
	pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
	push_key(&ps, "upper");
	pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < res.nupper; i++)
		push_constraint(&ps, &res.upper_constraints[i], ids);
	pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
	pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	result = pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}

/* ---------------------------------------------------------------------- */
/* select_as_ofs														  */
/* ---------------------------------------------------------------------- */

static const char *const asof_request_keys[] = {
	"now", "read_only", "storage", "dataflows"
};
static const char *const frontier_keys[] = {"since", "upper"};
static const char *const dataflow_keys[] = {"id", "inputs", "policy"};
static const char *const lag_keys[] = {"lag", "granularity"};
static const char *const valid_from_keys[] = {"valid_from"};

static void
read_policy(const JsonbValue *v, const jpath *path, mzc_asof_dataflow *d)
{
	JsonbValue *f;
	jpath		fp;

	if (v->type == jbvNull)
		return;
	require_object(v, path);
	if (getKeyJsonValueFromContainer(v->val.binary.data, "valid_from",
									 strlen("valid_from"), NULL) != NULL)
	{
		check_keys(v, path, valid_from_keys, lengthof(valid_from_keys));
		f = member(v, path, "valid_from", false, &fp);
		d->has_policy = true;
		d->policy = mzc_policy_valid_from(mzc_frontier_at(read_ts(f, &fp)));
	}
	else
	{
		mzc_ts		lag,
					granularity = MZC_SINCE_GRANULARITY_MS;
		mzc_error	err;

		check_keys(v, path, lag_keys, lengthof(lag_keys));
		f = member(v, path, "lag", false, &fp);
		lag = read_ts(f, &fp);
		f = member(v, path, "granularity", true, &fp);
		if (f != NULL)
		{
			granularity = read_ts(f, &fp);
			if (granularity < 1)
				request_error(&fp, "granularity must be positive");
		}
		d->has_policy = true;
		/* Cannot fail: lag >= 0 and granularity >= 1 are checked above. */
		if (mzc_policy_lag(lag, granularity, &d->policy, &err) != MZC_OK)
			request_error(path, "%s", err.message);
	}
}

/*
 * Fills req from the request; *flow_ids_out gets the dataflow ids.  Storage
 * collections are indexed in jsonb's key order, dataflows in array order
 * (which the core's visit order follows).
 */
static void
read_asof_request(Jsonb *jb, mzc_asof_request *req, char ***flow_ids_out)
{
	JsonbValue	root;
	JsonbValue *v,
			   *storage_obj,
			   *flows_arr;
	JsonbContainer *fc;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	m;
	jpath		rp,
				p,
				sp,
				dp,
				ep;
	mzc_asof_storage *storage;
	mzc_asof_dataflow *flows;
	char	  **flow_ids;
	int32	   *storage_mark,
			   *flow_mark;
	idmap		smap,
				dmap;
	int32		ns,
				nd,
				i;

	strlcpy(rp.s, "request", sizeof(rp.s));
	request_root(jb, &root);
	require_object(&root, &rp);
	check_keys(&root, &rp, asof_request_keys, lengthof(asof_request_keys));
	memset(req, 0, sizeof(*req));
	v = member(&root, &rp, "now", false, &p);
	req->now = read_ts(v, &p);
	v = member(&root, &rp, "read_only", true, &p);
	if (v != NULL)
		req->read_only = read_bool(v, &p);

	/* storage: id -> {since, upper} */
	storage_obj = member(&root, &rp, "storage", false, &sp);
	require_object(storage_obj, &sp);
	ns = JsonContainerSize(storage_obj->val.binary.data);
	storage = alloc_array(ns, sizeof(mzc_asof_storage));
	storage_mark = alloc_array(ns, sizeof(int32));
	idmap_init(&smap, ns);
	i = 0;
	it = JsonbIteratorInit(storage_obj->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &m, true)) != WJB_DONE)
	{
		JsonbValue *f;
		jpath		fp;

		if (tok == WJB_KEY)
		{
			char	   *id = pnstrdup(m.val.string.val, m.val.string.len);

			path_key(&ep, &sp, m.val.string.val, m.val.string.len);
			if (m.val.string.len == 0)
				request_error(&ep, "id must not be empty");
			/* jsonb keeps one member per key; this only guards the map */
			if (!idmap_insert(&smap, id, i))
				request_error(&ep, "duplicate storage id");
			continue;
		}
		if (tok != WJB_VALUE)
			continue;
		require_object(&m, &ep);
		check_keys(&m, &ep, frontier_keys, lengthof(frontier_keys));
		f = member(&m, &ep, "since", false, &fp);
		storage[i].since = read_frontier(f, &fp, true);
		f = member(&m, &ep, "upper", false, &fp);
		storage[i].upper = read_frontier(f, &fp, true);
		/* I1, as for determine_timestamp's inputs */
		if (!storage[i].since.empty &&
			!mzc_frontier_le(storage[i].since, storage[i].upper))
			request_error(&ep, "since must not be beyond upper");
		storage_mark[i] = -1;
		i++;
	}

	/* dataflows: ids first, so inputs may name later dataflows */
	flows_arr = member(&root, &rp, "dataflows", false, &dp);
	require_array(flows_arr, &dp);
	fc = flows_arr->val.binary.data;
	nd = JsonContainerSize(fc);
	flows = alloc_array(nd, sizeof(mzc_asof_dataflow));
	flow_ids = alloc_array(nd, sizeof(char *));
	flow_mark = alloc_array(nd, sizeof(int32));
	idmap_init(&dmap, nd);
	for (i = 0; i < nd; i++)
	{
		JsonbValue *d = getIthJsonbValueFromContainer(fc, i);
		JsonbValue *f;
		jpath		fp;

		path_index(&ep, &dp, i);
		require_object(d, &ep);
		check_keys(d, &ep, dataflow_keys, lengthof(dataflow_keys));
		f = member(d, &ep, "id", false, &fp);
		flow_ids[i] = read_id(f, &fp);
		if (!idmap_insert(&dmap, flow_ids[i], i))
			request_error(&fp, "duplicate dataflow id \"%s\"",
						  quote_text(flow_ids[i], strlen(flow_ids[i])));
		flow_mark[i] = -1;
	}
	for (i = 0; i < nd; i++)
	{
		JsonbValue *dv = getIthJsonbValueFromContainer(fc, i);
		mzc_asof_dataflow *d = &flows[i];
		JsonbValue *f;
		jpath		fp;
		int32	   *sin,
				   *cin;
		int32		ninputs,
					j;

		path_index(&ep, &dp, i);
		f = member(dv, &ep, "inputs", false, &fp);
		require_array(f, &fp);
		ninputs = JsonContainerSize(f->val.binary.data);
		sin = alloc_array(ninputs, sizeof(int32));
		cin = alloc_array(ninputs, sizeof(int32));
		for (j = 0; j < ninputs; j++)
		{
			JsonbValue *e = getIthJsonbValueFromContainer(f->val.binary.data,
														  j);
			jpath		xp;
			char	   *id;
			int32		k;

			path_index(&xp, &fp, j);
			id = read_id(e, &xp);
			if ((k = idmap_find(&smap, id)) >= 0)
			{
				/* A materialized view reading the collection it writes. */
				if (strcmp(id, flow_ids[i]) == 0)
					request_error(&xp, "a dataflow cannot read itself");
				if (storage_mark[k] == i)
					request_error(&xp, "input \"%s\" is listed twice",
								  quote_text(id, strlen(id)));
				storage_mark[k] = i;
				sin[d->nstorage_inputs++] = k;
			}
			else if ((k = idmap_find(&dmap, id)) >= 0)
			{
				if (flow_mark[k] == i)
					request_error(&xp, "input \"%s\" is listed twice",
								  quote_text(id, strlen(id)));
				if (k == i)
					request_error(&xp, "a dataflow cannot read itself");
				flow_mark[k] = i;
				cin[d->ncompute_inputs++] = k;
			}
			else
				request_error(&xp, "unknown input \"%s\"",
							  quote_text(id, strlen(id)));
		}
		d->storage_inputs = sin;
		d->compute_inputs = cin;
		d->export_storage = idmap_find(&smap, flow_ids[i]);
		f = member(dv, &ep, "policy", true, &fp);
		if (f != NULL)
			read_policy(f, &fp, d);
	}

	req->storage = storage;
	req->nstorage = ns;
	req->dataflows = flows;
	req->ndataflows = nd;
	*flow_ids_out = flow_ids;
}

/*
 * SQL: mzcoord.select_as_ofs(request jsonb) RETURNS jsonb
 *
 * As-of selection for maintained dataflows (reference 2.6); see the top of
 * this file for the request and result shapes.
 */
Datum
mzcoord_select_as_ofs(PG_FUNCTION_ARGS)
{
	mzc_asof_request req;
	mzc_asof_stats stats;
	char	  **flow_ids;
	mzc_error	err;
	mzc_status	st;
	JsonbParseState *ps = NULL;
	JsonbValue *result;
	int32		i;

	read_asof_request(PG_GETARG_JSONB_P(0), &req, &flow_ids);
	mzc_error_clear(&err);
	st = mzc_select_as_ofs(&req, &stats, &err);

	/*
	 * Everything else the core refuses is checked above, so a dataflow it
	 * names is on a cycle.
	 */
	if (st == MZC_ERR_INVALID && stats.invalid_dataflow >= 0)
	{
		jpath		rp,
					ep,
					fp;
		const char *id = flow_ids[stats.invalid_dataflow];

		strlcpy(rp.s, "request.dataflows", sizeof(rp.s));
		path_index(&ep, &rp, stats.invalid_dataflow);
		path_key(&fp, &ep, "inputs", strlen("inputs"));
		request_error(&fp, "dataflow inputs form a cycle through \"%s\"",
					  quote_text(id, strlen(id)));
	}
	if (st != MZC_OK)
		report_core_error(st, &err);

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < req.ndataflows; i++)
		push_frontier(&ps, flow_ids[i], req.dataflows[i].as_of);
	result = pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}
