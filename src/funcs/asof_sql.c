/*-------------------------------------------------------------------------
 *
 * asof_sql.c
 *	  mzcoord.select_as_ofs(request jsonb): the pure core's as-of selection
 *	  (2.6) over a jsonb request.  Immutable: no shared memory, no catalog.
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
 *	  src/funcs/asof_sql.c
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

#include "asof.h"
#include "policy.h"
#include "request.h"

PG_FUNCTION_INFO_V1(mzcoord_select_as_ofs);

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
	mzcoord_req_require_object(v, path);
	if (getKeyJsonValueFromContainer(v->val.binary.data, "valid_from",
									 strlen("valid_from"), NULL) != NULL)
	{
		mzcoord_req_check_keys(v, path, valid_from_keys, lengthof(valid_from_keys));
		f = mzcoord_req_member(v, path, "valid_from", false, &fp);
		d->has_policy = true;
		d->policy = mzc_policy_valid_from(mzc_frontier_at(mzcoord_req_read_ts(f, &fp)));
	}
	else
	{
		mzc_ts		lag,
					granularity = MZC_SINCE_GRANULARITY_MS;
		mzc_error	err;

		mzcoord_req_check_keys(v, path, lag_keys, lengthof(lag_keys));
		f = mzcoord_req_member(v, path, "lag", false, &fp);
		lag = mzcoord_req_read_ts(f, &fp);
		f = mzcoord_req_member(v, path, "granularity", true, &fp);
		if (f != NULL)
		{
			granularity = mzcoord_req_read_ts(f, &fp);
			if (granularity < 1)
				mzcoord_req_error(&fp, "granularity must be positive");
		}
		d->has_policy = true;
		/* Cannot fail: lag >= 0 and granularity >= 1 are checked above. */
		if (mzc_policy_lag(lag, granularity, &d->policy, &err) != MZC_OK)
			mzcoord_req_error(path, "%s", err.message);
	}
}

/*
 * What reading one request needs across its parts: the storage collections
 * and dataflows read so far, their id maps, and per collection or dataflow
 * the last dataflow that named it as an input (to find inputs listed twice).
 */
typedef struct AsofReader
{
	mzc_asof_storage *storage;
	int32		ns;
	int32	   *storage_mark;
	idmap		smap;
	mzc_asof_dataflow *flows;
	char	  **flow_ids;
	int32		nd;
	int32	   *flow_mark;
	idmap		dmap;
} AsofReader;

/* "storage": {id: {"since": N|null, "upper": N|null}, ...} */
static void
read_storage(AsofReader *r, const JsonbValue *storage_obj, const jpath *sp)
{
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	m;
	jpath		ep;
	int32		i = 0;

	mzcoord_req_require_object(storage_obj, sp);
	r->ns = JsonContainerSize(storage_obj->val.binary.data);
	r->storage = mzcoord_req_alloc_array(r->ns, sizeof(mzc_asof_storage));
	r->storage_mark = mzcoord_req_alloc_array(r->ns, sizeof(int32));
	mzcoord_req_idmap_init(&r->smap, r->ns);
	it = JsonbIteratorInit(storage_obj->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &m, true)) != WJB_DONE)
	{
		JsonbValue *f;
		jpath		fp;

		if (tok == WJB_KEY)
		{
			char	   *id = pnstrdup(m.val.string.val, m.val.string.len);

			mzcoord_req_path_key(&ep, sp, m.val.string.val, m.val.string.len);
			if (m.val.string.len == 0)
				mzcoord_req_error(&ep, "id must not be empty");
			/* jsonb keeps one member per key; this only guards the map */
			if (!mzcoord_req_idmap_insert(&r->smap, id, i))
				mzcoord_req_error(&ep, "duplicate storage id");
			continue;
		}
		if (tok != WJB_VALUE)
			continue;
		mzcoord_req_require_object(&m, &ep);
		mzcoord_req_check_keys(&m, &ep, frontier_keys, lengthof(frontier_keys));
		f = mzcoord_req_member(&m, &ep, "since", false, &fp);
		r->storage[i].since = mzcoord_req_read_frontier(f, &fp, true);
		f = mzcoord_req_member(&m, &ep, "upper", false, &fp);
		r->storage[i].upper = mzcoord_req_read_frontier(f, &fp, true);
		/* F5: a collection is readable from its since up to its upper. */
		if (!r->storage[i].since.empty &&
			!mzc_frontier_le(r->storage[i].since, r->storage[i].upper))
			mzcoord_req_error(&ep, "since must not be beyond upper");
		r->storage_mark[i] = -1;
		i++;
	}
}

/* The ids of "dataflows", first, so that inputs may name later dataflows. */
static void
read_flow_ids(AsofReader *r, JsonbContainer *fc, const jpath *dp)
{
	r->nd = JsonContainerSize(fc);
	r->flows = mzcoord_req_alloc_array(r->nd, sizeof(mzc_asof_dataflow));
	r->flow_ids = mzcoord_req_alloc_array(r->nd, sizeof(char *));
	r->flow_mark = mzcoord_req_alloc_array(r->nd, sizeof(int32));
	mzcoord_req_idmap_init(&r->dmap, r->nd);
	for (int32 i = 0; i < r->nd; i++)
	{
		JsonbValue *d = getIthJsonbValueFromContainer(fc, i);
		JsonbValue *f;
		jpath		ep,
					fp;

		mzcoord_req_path_index(&ep, dp, i);
		mzcoord_req_require_object(d, &ep);
		mzcoord_req_check_keys(d, &ep, dataflow_keys, lengthof(dataflow_keys));
		f = mzcoord_req_member(d, &ep, "id", false, &fp);
		r->flow_ids[i] = mzcoord_req_read_id(f, &fp);
		if (!mzcoord_req_idmap_insert(&r->dmap, r->flow_ids[i], i))
			mzcoord_req_error(&fp, "duplicate dataflow id \"%s\"",
							  mzcoord_req_quote_text(r->flow_ids[i],
													 strlen(r->flow_ids[i])));
		r->flow_mark[i] = -1;
	}
}

/*
 * One input id of dataflow i: a storage collection or another dataflow,
 * each at most once, never the dataflow itself.
 */
static void
read_flow_input(AsofReader *r, int32 i, const char *id, const jpath *xp,
				int32 *sin, int32 *cin)
{
	mzc_asof_dataflow *d = &r->flows[i];
	int32		k;

	if ((k = mzcoord_req_idmap_find(&r->smap, id)) >= 0)
	{
		/* A materialized view reading the collection it writes. */
		if (strcmp(id, r->flow_ids[i]) == 0)
			mzcoord_req_error(xp, "a dataflow cannot read itself");
		if (r->storage_mark[k] == i)
			mzcoord_req_error(xp, "input \"%s\" is listed twice",
							  mzcoord_req_quote_text(id, strlen(id)));
		r->storage_mark[k] = i;
		sin[d->nstorage_inputs++] = k;
	}
	else if ((k = mzcoord_req_idmap_find(&r->dmap, id)) >= 0)
	{
		if (r->flow_mark[k] == i)
			mzcoord_req_error(xp, "input \"%s\" is listed twice",
							  mzcoord_req_quote_text(id, strlen(id)));
		if (k == i)
			mzcoord_req_error(xp, "a dataflow cannot read itself");
		r->flow_mark[k] = i;
		cin[d->ncompute_inputs++] = k;
	}
	else
		mzcoord_req_error(xp, "unknown input \"%s\"",
						  mzcoord_req_quote_text(id, strlen(id)));
}

/* Dataflow i's "inputs" and "policy". */
static void
read_flow(AsofReader *r, JsonbContainer *fc, const jpath *dp, int32 i)
{
	JsonbValue *dv = getIthJsonbValueFromContainer(fc, i);
	mzc_asof_dataflow *d = &r->flows[i];
	JsonbValue *f;
	jpath		ep,
				fp;
	int32		ninputs;
	int32	   *sin,
			   *cin;

	mzcoord_req_path_index(&ep, dp, i);
	f = mzcoord_req_member(dv, &ep, "inputs", false, &fp);
	mzcoord_req_require_array(f, &fp);
	ninputs = JsonContainerSize(f->val.binary.data);
	sin = mzcoord_req_alloc_array(ninputs, sizeof(int32));
	cin = mzcoord_req_alloc_array(ninputs, sizeof(int32));
	for (int32 j = 0; j < ninputs; j++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(f->val.binary.data, j);
		jpath		xp;

		mzcoord_req_path_index(&xp, &fp, j);
		read_flow_input(r, i, mzcoord_req_read_id(e, &xp), &xp, sin, cin);
	}
	d->storage_inputs = sin;
	d->compute_inputs = cin;
	d->export_storage = mzcoord_req_idmap_find(&r->smap, r->flow_ids[i]);
	f = mzcoord_req_member(dv, &ep, "policy", true, &fp);
	if (f != NULL)
		read_policy(f, &fp, d);
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
	JsonbValue *v;
	JsonbContainer *fc;
	jpath		rp,
				p;
	AsofReader	r;

	memset(&r, 0, sizeof(r));
	strlcpy(rp.s, "request", sizeof(rp.s));
	mzcoord_req_request_root(jb, &root);
	mzcoord_req_require_object(&root, &rp);
	mzcoord_req_check_keys(&root, &rp, asof_request_keys, lengthof(asof_request_keys));
	memset(req, 0, sizeof(*req));
	v = mzcoord_req_member(&root, &rp, "now", false, &p);
	req->now = mzcoord_req_read_ts(v, &p);
	v = mzcoord_req_member(&root, &rp, "read_only", true, &p);
	if (v != NULL)
		req->read_only = mzcoord_req_read_bool(v, &p);

	v = mzcoord_req_member(&root, &rp, "storage", false, &p);
	read_storage(&r, v, &p);

	v = mzcoord_req_member(&root, &rp, "dataflows", false, &p);
	mzcoord_req_require_array(v, &p);
	fc = v->val.binary.data;
	read_flow_ids(&r, fc, &p);
	for (int32 i = 0; i < r.nd; i++)
		read_flow(&r, fc, &p, i);

	req->storage = r.storage;
	req->nstorage = r.ns;
	req->dataflows = r.flows;
	req->ndataflows = r.nd;
	*flow_ids_out = r.flow_ids;
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
		mzcoord_req_path_index(&ep, &rp, stats.invalid_dataflow);
		mzcoord_req_path_key(&fp, &ep, "inputs", strlen("inputs"));
		mzcoord_req_error(&fp, "dataflow inputs form a cycle through \"%s\"",
					  mzcoord_req_quote_text(id, strlen(id)));
	}
	if (st != MZC_OK)
		mzcoord_req_report_core_error(st, &err);

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (i = 0; i < req.ndataflows; i++)
		mzcoord_req_push_frontier(&ps, flow_ids[i], req.dataflows[i].as_of);
	result = pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}
