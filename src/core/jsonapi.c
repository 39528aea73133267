/*-------------------------------------------------------------------------
 *
 * jsonapi.c
 *	  JSON entry points to timestamp selection and as-of selection.
 *
 * Every check that can name a JSON path is done here, before the core
 * functions run, so that their errors never need translating.
 *
 * IDENTIFICATION
 *	  src/core/jsonapi.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "asof.h"
#include "jsonapi.h"
#include "tsselect.h"

typedef struct jpath
{
	char		s[MZC_ERRPATH_LEN];
} jpath;

/* out = parent + a + b, truncated to fit (paths are for messages only). */
static void
path_join(jpath *out, const jpath *parent, const char *a, const char *b)
{
	const char *parts[3];
	size_t		n = 0;
	int			k;

	parts[0] = parent->s;
	parts[1] = a;
	parts[2] = b;
	for (k = 0; k < 3; k++)
	{
		const char *q;

		for (q = parts[k]; *q != '\0' && n + 1 < sizeof(out->s); q++)
			out->s[n++] = *q;
	}
	out->s[n] = '\0';
}

static void
path_key(jpath *out, const jpath *parent, const char *key)
{
	path_join(out, parent, ".", key);
}

static void
path_index(jpath *out, const jpath *parent, int32_t i)
{
	char		buf[16];

	snprintf(buf, sizeof(buf), "[%d]", (int) i);
	path_join(out, parent, buf, "");
}

size_t
mzc_json_arena_size(size_t request_len)
{
	size_t		limit = ((size_t) -1 - 65536) / 160;

	if (request_len > limit)
		request_len = limit;
	return 65536 + 160 * request_len;
}

static mzc_status
no_space(mzc_error *err)
{
	return mzc_fail(err, MZC_ERR_NO_SPACE, "out of memory for the request");
}

static void *
alloc_zero(mzc_arena *arena, size_t n, size_t size)
{
	void	   *p;

	if (size != 0 && n > ((size_t) -1) / size)
		return NULL;
	p = mzc_arena_alloc(arena, n * size == 0 ? 1 : n * size);
	if (p != NULL)
		memset(p, 0, n * size == 0 ? 1 : n * size);
	return p;
}

/* "null", "a boolean", "a number", "a string", "an array", "an object" */
static const char *
found_what(mzc_json_type t)
{
	switch (t)
	{
		case MZC_JSON_NULL:
			return "null";
		case MZC_JSON_BOOL:
			return "a boolean";
		case MZC_JSON_NUMBER:
			return "a number";
		case MZC_JSON_STRING:
			return "a string";
		case MZC_JSON_ARRAY:
			return "an array";
		case MZC_JSON_OBJECT:
			return "an object";
	}
	return "an unknown value";
}

static mzc_status
wrong_type(const jpath *path, const mzc_json *v, const char *expected,
		   mzc_error *err)
{
	return mzc_fail_at(err, MZC_ERR_INVALID, path->s, "expected %s, found %s",
					   expected, found_what(v->type));
}

/*
 * Checks that every member of obj is one of allowed[] and appears once.
 */
static mzc_status
check_keys(const mzc_json *obj, const jpath *path, const char *const *allowed,
		   int nallowed, mzc_error *err)
{
	bool		seen[8];
	const mzc_json *m;
	int			i;

	memset(seen, 0, sizeof(seen));
	for (m = obj->first; m != NULL; m = m->next)
	{
		jpath		p;

		for (i = 0; i < nallowed; i++)
			if (strcmp(m->key, allowed[i]) == 0)
				break;
		path_key(&p, path, m->key);
		if (i == nallowed)
			return mzc_fail_at(err, MZC_ERR_INVALID, p.s, "unrecognized key");
		if (seen[i])
			return mzc_fail_at(err, MZC_ERR_INVALID, p.s, "duplicate key");
		seen[i] = true;
	}
	return MZC_OK;
}

static mzc_status
require_object(const mzc_json *v, const jpath *path, mzc_error *err)
{
	if (v->type != MZC_JSON_OBJECT)
		return wrong_type(path, v, "an object", err);
	return MZC_OK;
}

/* The member key of obj; missing is an error unless optional. */
static mzc_status
member(const mzc_json *obj, const jpath *path, const char *key, bool optional,
	   const mzc_json **out, jpath *child, mzc_error *err)
{
	path_key(child, path, key);
	*out = mzc_json_member(obj, key);
	if (*out == NULL && !optional)
		return mzc_fail_at(err, MZC_ERR_INVALID, child->s, "missing key");
	return MZC_OK;
}

/* A non-negative int64; null gives {} when allowed. */
static mzc_status
read_frontier(const mzc_json *v, const jpath *path, bool allow_null,
			  mzc_frontier *out, mzc_error *err)
{
	if (v->type == MZC_JSON_NULL && allow_null)
	{
		*out = mzc_frontier_empty();
		return MZC_OK;
	}
	if (v->type != MZC_JSON_NUMBER)
		return wrong_type(path, v, allow_null ?
						  "a non-negative integer or null" :
						  "a non-negative integer", err);
	if (!v->integral)
		return mzc_fail_at(err, MZC_ERR_INVALID, path->s,
						   "expected an integer, found %.40s", v->str);
	if (!v->in_range)
		return mzc_fail_at(err, MZC_ERR_INVALID, path->s,
						   "integer out of range: %.40s", v->str);
	if (v->integer < 0)
		return mzc_fail_at(err, MZC_ERR_INVALID, path->s,
						   "must not be negative: %lld",
						   (long long) v->integer);
	*out = mzc_frontier_at(v->integer);
	return MZC_OK;
}

static mzc_status
read_ts(const mzc_json *v, const jpath *path, mzc_ts *out, mzc_error *err)
{
	mzc_frontier f;
	mzc_status	st = read_frontier(v, path, false, &f, err);

	if (st == MZC_OK)
		*out = f.ts;
	return st;
}

static mzc_status
read_bool(const mzc_json *v, const jpath *path, bool *out, mzc_error *err)
{
	if (v->type != MZC_JSON_BOOL)
		return wrong_type(path, v, "a boolean", err);
	*out = v->boolean;
	return MZC_OK;
}

static mzc_status
read_id(const mzc_json *v, const jpath *path, const char **out, mzc_error *err)
{
	if (v->type != MZC_JSON_STRING)
		return wrong_type(path, v, "a string", err);
	if (v->len == 0)
		return mzc_fail_at(err, MZC_ERR_INVALID, path->s,
						   "id must not be empty");
	*out = v->str;
	return MZC_OK;
}

/* ---- a string -> index hash map in the arena ---- */

typedef struct idmap
{
	const char **keys;
	int32_t    *vals;
	uint32_t	mask;
} idmap;

static uint32_t
hash_str(const char *s)
{
	uint32_t	h = 2166136261u;

	for (; *s != '\0'; s++)
	{
		h ^= (unsigned char) *s;
		h *= 16777619u;
	}
	return h;
}

static bool
idmap_init(idmap *m, mzc_arena *arena, int32_t n)
{
	uint32_t	cap = 8;

	while (cap < (uint32_t) n * 2u && cap < (1u << 30))
		cap <<= 1;
	m->keys = alloc_zero(arena, cap, sizeof(const char *));
	m->vals = alloc_zero(arena, cap, sizeof(int32_t));
	m->mask = cap - 1;
	return m->keys != NULL && m->vals != NULL;
}

static int32_t
idmap_find(const idmap *m, const char *key)
{
	uint32_t	i = hash_str(key) & m->mask;

	while (m->keys[i] != NULL)
	{
		if (strcmp(m->keys[i], key) == 0)
			return m->vals[i];
		i = (i + 1) & m->mask;
	}
	return -1;
}

/* false if the key is already present */
static bool
idmap_insert(idmap *m, const char *key, int32_t val)
{
	uint32_t	i = hash_str(key) & m->mask;

	while (m->keys[i] != NULL)
	{
		if (strcmp(m->keys[i], key) == 0)
			return false;
		i = (i + 1) & m->mask;
	}
	m->keys[i] = key;
	m->vals[i] = val;
	return true;
}

static char *
writer_buffer(mzc_arena *arena, size_t cap, mzc_json_writer *w)
{
	char	   *buf = mzc_arena_alloc(arena, cap);

	if (buf != NULL)
		mzc_jw_init(w, buf, cap);
	return buf;
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

static mzc_status
read_isolation(const mzc_json *v, const jpath *path, mzc_isolation *out,
			   mzc_error *err)
{
	if (v->type != MZC_JSON_STRING)
		return wrong_type(path, v, "a string", err);
	if (strcmp(v->str, "serializable") == 0)
		*out = MZC_ISO_SERIALIZABLE;
	else if (strcmp(v->str, "strict serializable") == 0)
		*out = MZC_ISO_STRICT_SERIALIZABLE;
	else if (strcmp(v->str, "strong session serializable") == 0)
		*out = MZC_ISO_STRONG_SESSION_SERIALIZABLE;
	else
		return mzc_fail_at(err, MZC_ERR_INVALID, path->s,
						   "unrecognized isolation level \"%.64s\"", v->str);
	return MZC_OK;
}

static mzc_status
read_when(const mzc_json *v, const jpath *path, mzc_ts_request *req,
		  mzc_error *err)
{
	const mzc_json *kind,
			   *ts;
	jpath		kp,
				tp;
	mzc_status	st;

	if ((st = require_object(v, path, err)) != MZC_OK ||
		(st = check_keys(v, path, when_keys, 2, err)) != MZC_OK ||
		(st = member(v, path, "kind", false, &kind, &kp, err)) != MZC_OK ||
		(st = member(v, path, "ts", true, &ts, &tp, err)) != MZC_OK)
		return st;
	if (kind->type != MZC_JSON_STRING)
		return wrong_type(&kp, kind, "a string", err);
	if (strcmp(kind->str, "immediately") == 0)
		req->when = MZC_WHEN_IMMEDIATELY;
	else if (strcmp(kind->str, "freshest_table_write") == 0)
		req->when = MZC_WHEN_FRESHEST_TABLE_WRITE;
	else if (strcmp(kind->str, "as_of") == 0)
		req->when = MZC_WHEN_AS_OF;
	else if (strcmp(kind->str, "as_of_at_least") == 0)
		req->when = MZC_WHEN_AS_OF_AT_LEAST;
	else
		return mzc_fail_at(err, MZC_ERR_INVALID, kp.s,
						   "unrecognized kind \"%.64s\"", kind->str);
	if (req->when == MZC_WHEN_AS_OF || req->when == MZC_WHEN_AS_OF_AT_LEAST)
	{
		if (ts == NULL)
			return mzc_fail_at(err, MZC_ERR_INVALID, tp.s, "missing key");
		return read_ts(ts, &tp, &req->when_ts, err);
	}
	if (ts != NULL && ts->type != MZC_JSON_NULL)
		return mzc_fail_at(err, MZC_ERR_INVALID, tp.s,
						   "a timestamp is only allowed with kind as_of or as_of_at_least");
	return MZC_OK;
}

/* An optional timestamp member: absent or null means none. */
static mzc_status
optional_ts(const mzc_json *root, const jpath *path, const char *key,
			bool *has, mzc_ts *ts, jpath *child, mzc_error *err)
{
	const mzc_json *v;
	mzc_frontier f;
	mzc_status	st;

	*has = false;
	if ((st = member(root, path, key, true, &v, child, err)) != MZC_OK)
		return st;
	if (v == NULL || v->type == MZC_JSON_NULL)
		return MZC_OK;
	if ((st = read_frontier(v, child, false, &f, err)) != MZC_OK)
		return st;
	*has = true;
	*ts = f.ts;
	return MZC_OK;
}

static mzc_status
write_constraint(mzc_json_writer *w, const mzc_ts_constraint *c,
				 const char *const *ids)
{
	mzc_jw_begin_object(w);
	mzc_jw_key(w, "ts");
	mzc_jw_frontier(w, c->bound);
	mzc_jw_key(w, "reason");
	mzc_jw_string(w, mzc_ts_reason_name(c->reason));
	if (c->reason == MZC_REASON_STORAGE_INPUT)
	{
		mzc_jw_key(w, "input");
		mzc_jw_string(w, ids[c->input]);
	}
	else if (c->reason == MZC_REASON_ISOLATION_LEVEL)
	{
		mzc_jw_key(w, "isolation");
		mzc_jw_string(w, mzc_isolation_name(c->isolation));
	}
	mzc_jw_end_object(w);
	return MZC_OK;
}

mzc_status
mzc_json_determine_timestamp(const char *request, size_t request_len,
							 mzc_arena *arena, const char **result,
							 size_t *result_len,
							 mzc_since_violation *violation, mzc_error *err)
{
	const mzc_json *root,
			   *v,
			   *in;
	jpath		rp,
				p,
				ip;
	mzc_ts_request req;
	mzc_ts_result res;
	mzc_ts_input *inputs;
	const char **ids;
	mzc_ts_constraint *lower;
	int32_t    *blocking;
	idmap		map;
	int32_t		n,
				i;
	size_t		cap;
	mzc_json_writer w;
	mzc_status	st;

	if (violation != NULL)
		memset(violation, 0, sizeof(*violation));
	snprintf(rp.s, sizeof(rp.s), "request");
	if ((st = mzc_json_parse(request, request_len, "request", arena, &root,
							 err)) != MZC_OK)
		return st;
	if ((st = require_object(root, &rp, err)) != MZC_OK ||
		(st = check_keys(root, &rp, ts_request_keys, 7, err)) != MZC_OK)
		return st;
	memset(&req, 0, sizeof(req));
	req.mode = MZC_TS_VERIFY;
	req.timeline = true;

	if ((st = member(root, &rp, "isolation", false, &v, &p, err)) != MZC_OK ||
		(st = read_isolation(v, &p, &req.isolation, err)) != MZC_OK)
		return st;
	if ((st = member(root, &rp, "when", false, &v, &p, err)) != MZC_OK ||
		(st = read_when(v, &p, &req, err)) != MZC_OK)
		return st;
	if ((st = member(root, &rp, "timeline", true, &v, &p, err)) != MZC_OK)
		return st;
	if (v != NULL && (st = read_bool(v, &p, &req.timeline, err)) != MZC_OK)
		return st;
	if ((st = optional_ts(root, &rp, "oracle_read_ts", &req.has_oracle_ts,
						  &req.oracle_ts, &p, err)) != MZC_OK)
		return st;
	if ((st = optional_ts(root, &rp, "session_oracle_read_ts",
						  &req.has_session_ts, &req.session_ts, &p,
						  err)) != MZC_OK)
		return st;
	if (req.has_session_ts &&
		req.isolation != MZC_ISO_STRONG_SESSION_SERIALIZABLE)
		return mzc_fail_at(err, MZC_ERR_INVALID, p.s,
						   "only allowed with strong session serializable isolation");
	if ((st = optional_ts(root, &rp, "real_time_recency_ts", &req.has_rtr_ts,
						  &req.rtr_ts, &p, err)) != MZC_OK)
		return st;
	if (req.has_rtr_ts && req.isolation != MZC_ISO_STRICT_SERIALIZABLE)
		return mzc_fail_at(err, MZC_ERR_INVALID, p.s,
						   "only allowed with strict serializable isolation");
	if (req.has_rtr_ts &&
		(req.when == MZC_WHEN_AS_OF || req.when == MZC_WHEN_AS_OF_AT_LEAST))
		return mzc_fail_at(err, MZC_ERR_INVALID, p.s,
						   "cannot be combined with an as-of");

	if ((st = member(root, &rp, "inputs", false, &v, &ip, err)) != MZC_OK)
		return st;
	if (v->type != MZC_JSON_ARRAY)
		return wrong_type(&ip, v, "an array", err);
	n = v->count;
	inputs = alloc_zero(arena, (size_t) n, sizeof(mzc_ts_input));
	ids = alloc_zero(arena, (size_t) n, sizeof(const char *));
	lower = alloc_zero(arena, (size_t) n + MZC_TS_EXTRA_LOWER,
					   sizeof(mzc_ts_constraint));
	blocking = alloc_zero(arena, (size_t) n, sizeof(int32_t));
	if (inputs == NULL || ids == NULL || lower == NULL || blocking == NULL ||
		!idmap_init(&map, arena, n))
		return no_space(err);
	for (i = 0, in = v->first; in != NULL; i++, in = in->next)
	{
		const mzc_json *f;
		jpath		ep,
					fp;

		path_index(&ep, &ip, i);
		if ((st = require_object(in, &ep, err)) != MZC_OK ||
			(st = check_keys(in, &ep, input_keys, 3, err)) != MZC_OK ||
			(st = member(in, &ep, "id", false, &f, &fp, err)) != MZC_OK ||
			(st = read_id(f, &fp, &ids[i], err)) != MZC_OK)
			return st;
		if (!idmap_insert(&map, ids[i], i))
			return mzc_fail_at(err, MZC_ERR_INVALID, fp.s,
							   "duplicate input id \"%.64s\"", ids[i]);
		if ((st = member(in, &ep, "since", false, &f, &fp, err)) != MZC_OK ||
			(st = read_frontier(f, &fp, true, &inputs[i].since, err)) != MZC_OK ||
			(st = member(in, &ep, "upper", false, &f, &fp, err)) != MZC_OK ||
			(st = read_frontier(f, &fp, true, &inputs[i].upper, err)) != MZC_OK)
			return st;
		/*
		 * No collection has a since beyond its upper (invariant I1); an
		 * empty since (nothing readable any more) goes with any upper.
		 */
		if (!inputs[i].since.empty &&
			!mzc_frontier_le(inputs[i].since, inputs[i].upper))
			return mzc_fail_at(err, MZC_ERR_INVALID, ep.s,
							   "since must not be beyond upper");
	}
	req.inputs = inputs;
	req.ninputs = n;

	mzc_ts_result_init(&res, lower, n + MZC_TS_EXTRA_LOWER, blocking, n);
	st = mzc_determine_timestamp(&req, &res, err);
	if (st == MZC_ERR_SINCE_VIOLATION)
	{
		if (violation != NULL)
		{
			violation->timestamp = res.candidate;
			violation->n = res.nblocking;
			violation->ids = alloc_zero(arena, (size_t) res.nblocking,
										sizeof(const char *));
			violation->sinces = alloc_zero(arena, (size_t) res.nblocking,
										   sizeof(mzc_frontier));
			if (violation->ids == NULL || violation->sinces == NULL)
			{
				violation->n = 0;
				return no_space(err);
			}
			for (i = 0; i < res.nblocking; i++)
			{
				violation->ids[i] = ids[res.blocking[i]];
				violation->sinces[i] = inputs[res.blocking[i]].since;
			}
		}
		return st;
	}
	if (st != MZC_OK)
		return st;

	/* Size the output: fixed part plus each constraint (ids may escape). */
	cap = 512;
	for (i = 0; i < res.nlower; i++)
		cap += 160 + (res.lower[i].reason == MZC_REASON_STORAGE_INPUT ?
					  6 * strlen(ids[res.lower[i].input]) : 0);
	cap += 160 * (size_t) res.nupper;
	if (writer_buffer(arena, cap, &w) == NULL)
		return no_space(err);
	mzc_jw_begin_object(&w);
	mzc_jw_key(&w, "timestamp");
	mzc_jw_int(&w, res.timestamp);
	mzc_jw_key(&w, "respond_immediately");
	mzc_jw_bool(&w, res.respond_immediately);
	mzc_jw_key(&w, "since");
	mzc_jw_frontier(&w, res.since);
	mzc_jw_key(&w, "upper");
	mzc_jw_frontier(&w, res.upper);
	mzc_jw_key(&w, "largest_not_in_advance_of_upper");
	mzc_jw_int(&w, res.largest_not_in_advance_of_upper);
	mzc_jw_key(&w, "constraints");
	mzc_jw_begin_object(&w);
	mzc_jw_key(&w, "lower");
	mzc_jw_begin_array(&w);
	for (i = 0; i < res.nlower; i++)
		write_constraint(&w, &res.lower[i], ids);
	mzc_jw_end_array(&w);
	mzc_jw_key(&w, "upper");
	mzc_jw_begin_array(&w);
	for (i = 0; i < res.nupper; i++)
		write_constraint(&w, &res.upper_constraints[i], ids);
	mzc_jw_end_array(&w);
	mzc_jw_end_object(&w);
	mzc_jw_end_object(&w);
	if (!mzc_jw_finish(&w))
		return no_space(err);
	*result = w.buf;
	*result_len = w.len;
	return MZC_OK;
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

static mzc_status
read_policy(const mzc_json *v, const jpath *path, mzc_asof_dataflow *d,
			mzc_error *err)
{
	const mzc_json *f;
	jpath		fp;
	mzc_status	st;

	if (v->type == MZC_JSON_NULL)
		return MZC_OK;
	if ((st = require_object(v, path, err)) != MZC_OK)
		return st;
	if (mzc_json_member(v, "valid_from") != NULL)
	{
		mzc_ts		t;

		if ((st = check_keys(v, path, valid_from_keys, 1, err)) != MZC_OK ||
			(st = member(v, path, "valid_from", false, &f, &fp, err)) != MZC_OK ||
			(st = read_ts(f, &fp, &t, err)) != MZC_OK)
			return st;
		d->has_policy = true;
		d->policy = mzc_policy_valid_from(mzc_frontier_at(t));
		return MZC_OK;
	}
	else
	{
		mzc_ts		lag,
					granularity = MZC_SINCE_GRANULARITY_MS;

		if ((st = check_keys(v, path, lag_keys, 2, err)) != MZC_OK ||
			(st = member(v, path, "lag", false, &f, &fp, err)) != MZC_OK ||
			(st = read_ts(f, &fp, &lag, err)) != MZC_OK ||
			(st = member(v, path, "granularity", true, &f, &fp, err)) != MZC_OK)
			return st;
		if (f != NULL)
		{
			if ((st = read_ts(f, &fp, &granularity, err)) != MZC_OK)
				return st;
			if (granularity < 1)
				return mzc_fail_at(err, MZC_ERR_INVALID, fp.s,
								   "granularity must be positive");
		}
		d->has_policy = true;
		return mzc_policy_lag(lag, granularity, &d->policy, err);
	}
}

mzc_status
mzc_json_select_as_ofs(const char *request, size_t request_len,
					   mzc_arena *arena, const char **result,
					   size_t *result_len, mzc_error *err)
{
	const mzc_json *root,
			   *v,
			   *storage_obj,
			   *flows_arr,
			   *m;
	jpath		rp,
				p,
				sp,
				dp;
	mzc_asof_request req;
	mzc_asof_stats stats;
	mzc_asof_storage *storage;
	mzc_asof_dataflow *flows;
	const char **flow_ids;
	int32_t    *storage_mark,
			   *flow_mark;
	idmap		smap,
				dmap;
	int32_t		ns,
				nd,
				i;
	size_t		cap;
	mzc_json_writer w;
	mzc_status	st;

	snprintf(rp.s, sizeof(rp.s), "request");
	if ((st = mzc_json_parse(request, request_len, "request", arena, &root,
							 err)) != MZC_OK)
		return st;
	if ((st = require_object(root, &rp, err)) != MZC_OK ||
		(st = check_keys(root, &rp, asof_request_keys, 4, err)) != MZC_OK)
		return st;
	memset(&req, 0, sizeof(req));
	if ((st = member(root, &rp, "now", false, &v, &p, err)) != MZC_OK ||
		(st = read_ts(v, &p, &req.now, err)) != MZC_OK)
		return st;
	if ((st = member(root, &rp, "read_only", true, &v, &p, err)) != MZC_OK)
		return st;
	if (v != NULL && (st = read_bool(v, &p, &req.read_only, err)) != MZC_OK)
		return st;

	/* storage: id -> {since, upper} */
	if ((st = member(root, &rp, "storage", false, &storage_obj, &sp,
					 err)) != MZC_OK ||
		(st = require_object(storage_obj, &sp, err)) != MZC_OK)
		return st;
	ns = storage_obj->count;
	storage = alloc_zero(arena, (size_t) ns, sizeof(mzc_asof_storage));
	storage_mark = alloc_zero(arena, (size_t) ns, sizeof(int32_t));
	if (storage == NULL || storage_mark == NULL || !idmap_init(&smap, arena, ns))
		return no_space(err);
	for (i = 0, m = storage_obj->first; m != NULL; i++, m = m->next)
	{
		const mzc_json *f;
		jpath		ep,
					fp;

		path_key(&ep, &sp, m->key);
		if (m->key_len == 0)
			return mzc_fail_at(err, MZC_ERR_INVALID, ep.s, "id must not be empty");
		if (!idmap_insert(&smap, m->key, i))
			return mzc_fail_at(err, MZC_ERR_INVALID, ep.s,
							   "duplicate storage id");
		if ((st = require_object(m, &ep, err)) != MZC_OK ||
			(st = check_keys(m, &ep, frontier_keys, 2, err)) != MZC_OK ||
			(st = member(m, &ep, "since", false, &f, &fp, err)) != MZC_OK ||
			(st = read_frontier(f, &fp, true, &storage[i].since, err)) != MZC_OK ||
			(st = member(m, &ep, "upper", false, &f, &fp, err)) != MZC_OK ||
			(st = read_frontier(f, &fp, true, &storage[i].upper, err)) != MZC_OK)
			return st;
		if (!storage[i].since.empty &&
			!mzc_frontier_le(storage[i].since, storage[i].upper))
			return mzc_fail_at(err, MZC_ERR_INVALID, ep.s,
							   "since must not be beyond upper");
		storage_mark[i] = -1;
	}

	/* dataflows: ids first, so inputs may name later dataflows */
	if ((st = member(root, &rp, "dataflows", false, &flows_arr, &dp,
					 err)) != MZC_OK)
		return st;
	if (flows_arr->type != MZC_JSON_ARRAY)
		return wrong_type(&dp, flows_arr, "an array", err);
	nd = flows_arr->count;
	flows = alloc_zero(arena, (size_t) nd, sizeof(mzc_asof_dataflow));
	flow_ids = alloc_zero(arena, (size_t) nd, sizeof(const char *));
	flow_mark = alloc_zero(arena, (size_t) nd, sizeof(int32_t));
	if (flows == NULL || flow_ids == NULL || flow_mark == NULL ||
		!idmap_init(&dmap, arena, nd))
		return no_space(err);
	for (i = 0, m = flows_arr->first; m != NULL; i++, m = m->next)
	{
		const mzc_json *f;
		jpath		ep,
					fp;

		path_index(&ep, &dp, i);
		if ((st = require_object(m, &ep, err)) != MZC_OK ||
			(st = check_keys(m, &ep, dataflow_keys, 3, err)) != MZC_OK ||
			(st = member(m, &ep, "id", false, &f, &fp, err)) != MZC_OK ||
			(st = read_id(f, &fp, &flow_ids[i], err)) != MZC_OK)
			return st;
		if (!idmap_insert(&dmap, flow_ids[i], i))
			return mzc_fail_at(err, MZC_ERR_INVALID, fp.s,
							   "duplicate dataflow id \"%.64s\"", flow_ids[i]);
		flow_mark[i] = -1;
	}
	for (i = 0, m = flows_arr->first; m != NULL; i++, m = m->next)
	{
		mzc_asof_dataflow *d = &flows[i];
		const mzc_json *f,
				   *e;
		jpath		ep,
					fp;
		int32_t    *sin,
				   *cin,
					j;

		path_index(&ep, &dp, i);
		if ((st = member(m, &ep, "inputs", false, &f, &fp, err)) != MZC_OK)
			return st;
		if (f->type != MZC_JSON_ARRAY)
			return wrong_type(&fp, f, "an array", err);
		sin = alloc_zero(arena, (size_t) f->count, sizeof(int32_t));
		cin = alloc_zero(arena, (size_t) f->count, sizeof(int32_t));
		if (sin == NULL || cin == NULL)
			return no_space(err);
		for (j = 0, e = f->first; e != NULL; j++, e = e->next)
		{
			jpath		xp;
			const char *id;
			int32_t		k;

			path_index(&xp, &fp, j);
			if ((st = read_id(e, &xp, &id, err)) != MZC_OK)
				return st;
			if ((k = idmap_find(&smap, id)) >= 0)
			{
				/* A materialized view reading the collection it writes. */
				if (strcmp(id, flow_ids[i]) == 0)
					return mzc_fail_at(err, MZC_ERR_INVALID, xp.s,
									   "a dataflow cannot read itself");
				if (storage_mark[k] == i)
					return mzc_fail_at(err, MZC_ERR_INVALID, xp.s,
									   "input \"%.64s\" is listed twice", id);
				storage_mark[k] = i;
				sin[d->nstorage_inputs++] = k;
			}
			else if ((k = idmap_find(&dmap, id)) >= 0)
			{
				if (flow_mark[k] == i)
					return mzc_fail_at(err, MZC_ERR_INVALID, xp.s,
									   "input \"%.64s\" is listed twice", id);
				if (k == i)
					return mzc_fail_at(err, MZC_ERR_INVALID, xp.s,
									   "a dataflow cannot read itself");
				flow_mark[k] = i;
				cin[d->ncompute_inputs++] = k;
			}
			else
				return mzc_fail_at(err, MZC_ERR_INVALID, xp.s,
								   "unknown input \"%.64s\"", id);
		}
		d->storage_inputs = sin;
		d->compute_inputs = cin;
		d->export_storage = idmap_find(&smap, flow_ids[i]);
		if ((st = member(m, &ep, "policy", true, &f, &fp, err)) != MZC_OK)
			return st;
		if (f != NULL && (st = read_policy(f, &fp, d, err)) != MZC_OK)
			return st;
	}

	req.storage = storage;
	req.nstorage = ns;
	req.dataflows = flows;
	req.ndataflows = nd;
	st = mzc_select_as_ofs(&req, &stats, err);
	if (st == MZC_ERR_INVALID && stats.invalid_dataflow >= 0)
	{
		jpath		ep,
					fp;

		path_index(&ep, &dp, stats.invalid_dataflow);
		path_key(&fp, &ep, "inputs");
		return mzc_fail_at(err, MZC_ERR_INVALID, fp.s,
						   "dataflow inputs form a cycle through \"%.64s\"",
						   flow_ids[stats.invalid_dataflow]);
	}
	if (st != MZC_OK)
		return st;

	cap = 64;
	for (i = 0; i < nd; i++)
		cap += 6 * strlen(flow_ids[i]) + 32;
	if (writer_buffer(arena, cap, &w) == NULL)
		return no_space(err);
	mzc_jw_begin_object(&w);
	for (i = 0; i < nd; i++)
	{
		mzc_jw_key(&w, flow_ids[i]);
		mzc_jw_frontier(&w, flows[i].as_of);
	}
	mzc_jw_end_object(&w);
	if (!mzc_jw_finish(&w))
		return no_space(err);
	*result = w.buf;
	*result_len = w.len;
	return MZC_OK;
}
