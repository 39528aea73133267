/*-------------------------------------------------------------------------
 *
 * timestamp_sql.c
 *	  mzcoord.determine_timestamp(request jsonb): the pure core's timestamp
 *	  selection (2.5) over a jsonb request.  Immutable: no shared memory,
 *	  no catalog.
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
 * IDENTIFICATION
 *	  src/funcs/timestamp_sql.c
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

#include "errors.h"
#include "request.h"
#include "tsselect.h"

PG_FUNCTION_INFO_V1(mzcoord_determine_timestamp);

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
		mzcoord_req_wrong_type(path, v, "a string");
	if (mzcoord_req_string_is(v, "serializable"))
		return MZC_ISO_SERIALIZABLE;
	if (mzcoord_req_string_is(v, "strict serializable"))
		return MZC_ISO_STRICT_SERIALIZABLE;
	if (mzcoord_req_string_is(v, "strong session serializable"))
		return MZC_ISO_STRONG_SESSION_SERIALIZABLE;
	mzcoord_req_error(path, "unrecognized isolation level \"%s\"",
				  mzcoord_req_quote_text(v->val.string.val, v->val.string.len));
}

static void
read_when(const JsonbValue *v, const jpath *path, mzc_ts_request *req)
{
	JsonbValue *kind,
			   *ts;
	jpath		kp,
				tp;

	mzcoord_req_require_object(v, path);
	mzcoord_req_check_keys(v, path, when_keys, lengthof(when_keys));
	kind = mzcoord_req_member(v, path, "kind", false, &kp);
	ts = mzcoord_req_member(v, path, "ts", true, &tp);
	if (kind->type != jbvString)
		mzcoord_req_wrong_type(&kp, kind, "a string");
	if (mzcoord_req_string_is(kind, "immediately"))
		req->when = MZC_WHEN_IMMEDIATELY;
	else if (mzcoord_req_string_is(kind, "freshest_table_write"))
		req->when = MZC_WHEN_FRESHEST_TABLE_WRITE;
	else if (mzcoord_req_string_is(kind, "as_of"))
		req->when = MZC_WHEN_AS_OF;
	else if (mzcoord_req_string_is(kind, "as_of_at_least"))
		req->when = MZC_WHEN_AS_OF_AT_LEAST;
	else
		mzcoord_req_error(&kp, "unrecognized kind \"%s\"",
					  mzcoord_req_quote_text(kind->val.string.val, kind->val.string.len));
	if (req->when == MZC_WHEN_AS_OF || req->when == MZC_WHEN_AS_OF_AT_LEAST)
	{
		if (ts == NULL)
			mzcoord_req_error(&tp, "missing key");
		req->when_ts = mzcoord_req_read_ts(ts, &tp);
	}
	else if (ts != NULL && ts->type != jbvNull)
		mzcoord_req_error(&tp, "a timestamp is only allowed with kind as_of or as_of_at_least");
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
	mzcoord_req_request_root(jb, &root);
	mzcoord_req_require_object(&root, &rp);
	mzcoord_req_check_keys(&root, &rp, ts_request_keys, lengthof(ts_request_keys));
	memset(req, 0, sizeof(*req));
	req->mode = MZC_TS_VERIFY;
	req->timeline = true;

	v = mzcoord_req_member(&root, &rp, "isolation", false, &p);
	req->isolation = read_isolation(v, &p);
	v = mzcoord_req_member(&root, &rp, "when", false, &p);
	read_when(v, &p, req);
	v = mzcoord_req_member(&root, &rp, "timeline", true, &p);
	if (v != NULL)
		req->timeline = mzcoord_req_read_bool(v, &p);
	req->has_oracle_ts = mzcoord_req_optional_ts(&root, &rp, "oracle_read_ts",
									 &req->oracle_ts, &p);
	req->has_session_ts = mzcoord_req_optional_ts(&root, &rp, "session_oracle_read_ts",
									  &req->session_ts, &p);
	if (req->has_session_ts &&
		req->isolation != MZC_ISO_STRONG_SESSION_SERIALIZABLE)
		mzcoord_req_error(&p, "only allowed with strong session serializable isolation");
	req->has_rtr_ts = mzcoord_req_optional_ts(&root, &rp, "real_time_recency_ts",
								  &req->rtr_ts, &p);
	if (req->has_rtr_ts && req->isolation != MZC_ISO_STRICT_SERIALIZABLE)
		mzcoord_req_error(&p, "only allowed with strict serializable isolation");
	if (req->has_rtr_ts &&
		(req->when == MZC_WHEN_AS_OF || req->when == MZC_WHEN_AS_OF_AT_LEAST))
		mzcoord_req_error(&p, "cannot be combined with an as-of");

	v = mzcoord_req_member(&root, &rp, "inputs", false, &ip);
	mzcoord_req_require_array(v, &ip);
	n = JsonContainerSize(v->val.binary.data);
	inputs = mzcoord_req_alloc_array(n, sizeof(mzc_ts_input));
	ids = mzcoord_req_alloc_array(n, sizeof(char *));
	mzcoord_req_idmap_init(&map, n);
	for (i = 0; i < n; i++)
	{
		JsonbValue *in = getIthJsonbValueFromContainer(v->val.binary.data, i);
		JsonbValue *f;
		jpath		ep,
					fp;

		mzcoord_req_path_index(&ep, &ip, i);
		mzcoord_req_require_object(in, &ep);
		mzcoord_req_check_keys(in, &ep, input_keys, lengthof(input_keys));
		f = mzcoord_req_member(in, &ep, "id", false, &fp);
		ids[i] = mzcoord_req_read_id(f, &fp);
		if (!mzcoord_req_idmap_insert(&map, ids[i], i))
			mzcoord_req_error(&fp, "duplicate input id \"%s\"",
						  mzcoord_req_quote_text(ids[i], strlen(ids[i])));
		f = mzcoord_req_member(in, &ep, "since", false, &fp);
		inputs[i].since = mzcoord_req_read_frontier(f, &fp, true);
		f = mzcoord_req_member(in, &ep, "upper", false, &fp);
		inputs[i].upper = mzcoord_req_read_frontier(f, &fp, true);

		/*
		 * No collection has a since beyond its upper (F5); an
		 * empty since (nothing readable any more) goes with any upper.  The
		 * core computes with such an input all the same, so the check is
		 * made here.
		 */
		if (!inputs[i].since.empty &&
			!mzc_frontier_le(inputs[i].since, inputs[i].upper))
			mzcoord_req_error(&ep, "since must not be beyond upper");
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
	mzcoord_req_push_frontier(ps, "ts", c->bound);
	mzcoord_req_push_string(ps, "reason", mzc_ts_reason_name(c->reason));
	if (c->reason == MZC_REASON_STORAGE_INPUT)
		mzcoord_req_push_string(ps, "input", ids[c->input]);
	else if (c->reason == MZC_REASON_ISOLATION_LEVEL)
		mzcoord_req_push_string(ps, "isolation", mzc_isolation_name(c->isolation));
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
					   mzcoord_req_alloc_array((size_t) n + MZC_TS_EXTRA_LOWER,
								   sizeof(mzc_ts_constraint)),
					   n + MZC_TS_EXTRA_LOWER,
					   mzcoord_req_alloc_array(n, sizeof(int32)), n);
	mzc_error_clear(&err);
	st = mzc_determine_timestamp(&req, &res, &err);
	if (st == MZC_ERR_SINCE_VIOLATION)
	{
		const char **names = mzcoord_req_alloc_array(res.nblocking, sizeof(char *));
		mzc_frontier *sinces = mzcoord_req_alloc_array(res.nblocking,
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
		mzcoord_req_report_core_error(st, &err);

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	mzcoord_req_push_int(&ps, "timestamp", res.timestamp);
	mzcoord_req_push_bool(&ps, "respond_immediately", res.respond_immediately);
	mzcoord_req_push_frontier(&ps, "since", res.since);
	mzcoord_req_push_frontier(&ps, "upper", res.upper);
	mzcoord_req_push_int(&ps, "largest_not_in_advance_of_upper",
			 res.largest_not_in_advance_of_upper);
	mzcoord_req_push_key(&ps, "constraints");
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	mzcoord_req_push_key(&ps, "lower");
	pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < res.nlower; i++)
		push_constraint(&ps, &res.lower[i], ids);
	pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
	mzcoord_req_push_key(&ps, "upper");
	pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < res.nupper; i++)
		push_constraint(&ps, &res.upper_constraints[i], ids);
	pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
	pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	result = pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}
