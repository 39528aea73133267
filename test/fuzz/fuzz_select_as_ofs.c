/*
 * libFuzzer target: mzc_select_as_ofs() on requests decoded from the input
 * bytes (the SQL function reads its jsonb request into the same structs;
 * see src/funcs/asof_sql.c).
 *
 * Input: a storage count byte (% 9), a dataflow count byte (% 13), the
 * current time, a read-only byte (bit 0), each storage collection's since
 * and upper frontier, then per dataflow: an input count byte (% 5) and one
 * byte per input (bit 0 set: dataflow input (b >> 1) % (ndataflows + 1),
 * else storage input (b >> 1) % (nstorage + 1); the last value of each is
 * out of range), an export byte (% (nstorage + 2) - 1: -1 is an index, and
 * nstorage is out of range), a policy byte (% 4: none, lag with lag and
 * granularity timestamps, valid_from with a frontier, step back), and a
 * fixed-as-of byte (% 8 == 1: a frontier follows).
 *
 * Selection must fail with MZC_ERR_INVALID exactly when the request is
 * malformed as asof.h defines it (an index out of range, a negative time,
 * an invalid policy, a cycle), checked independently; otherwise it must
 * succeed (best effort) with every pruned dataflow at {} and ordered bounds.
 * On a plain request (no fixed as-of, no input listed twice, no dataflow
 * reading the storage it writes: what the SQL function lets through), the
 * properties of test/unit/test_asof.c must hold as well: as-ofs ordered
 * along every edge, storage sinces respected unless a hard constraint
 * failed, and bounded propagation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asof.h"
#include "fuzz_util.h"

#define MAX_STORAGE 8
#define MAX_FLOWS 12
#define MAX_INPUTS 4

/* The rules of asof.h, restated; *plain as described above. */
static int
expect_invalid(const mzc_asof_request *req, int *plain)
{
	bool		reach[MAX_FLOWS][MAX_FLOWS];
	int32_t		i,
				j,
				k;
	int			bad = 0;

	*plain = 1;
	memset(reach, 0, sizeof(reach));
	if (req->now < 0)
		bad = 1;
	for (i = 0; i < req->nstorage; i++)
		if (frontier_negative(req->storage[i].since) ||
			frontier_negative(req->storage[i].upper))
			bad = 1;
	for (i = 0; i < req->ndataflows; i++)
	{
		const mzc_asof_dataflow *d = &req->dataflows[i];

		for (j = 0; j < d->nstorage_inputs; j++)
		{
			if (d->storage_inputs[j] >= req->nstorage)
				bad = 1;
			else if (d->storage_inputs[j] == d->export_storage)
				*plain = 0;
			for (k = 0; k < j; k++)
				if (d->storage_inputs[k] == d->storage_inputs[j])
					*plain = 0;
		}
		for (j = 0; j < d->ncompute_inputs; j++)
		{
			if (d->compute_inputs[j] >= req->ndataflows)
				bad = 1;
			else
				reach[d->compute_inputs[j]][i] = true;
			for (k = 0; k < j; k++)
				if (d->compute_inputs[k] == d->compute_inputs[j])
					*plain = 0;
		}
		if (d->export_storage >= req->nstorage)
			bad = 1;
		if (d->has_policy && mzc_policy_validate(&d->policy, NULL) != MZC_OK)
			bad = 1;
		if (d->has_fixed_as_of)
		{
			*plain = 0;
			if (frontier_negative(d->fixed_as_of))
				bad = 1;
		}
	}
	/* a cycle: some dataflow reaches itself (transitive closure) */
	for (k = 0; k < req->ndataflows; k++)
		for (i = 0; i < req->ndataflows; i++)
			if (reach[i][k])
				for (j = 0; j < req->ndataflows; j++)
					reach[i][j] |= reach[k][j];
	for (i = 0; i < req->ndataflows; i++)
		if (reach[i][i])
			bad = 1;
	return bad;
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_reader r = {data, size};
	mzc_asof_storage storage[MAX_STORAGE];
	mzc_asof_dataflow flows[MAX_FLOWS];
	int32_t		sin[MAX_FLOWS][MAX_INPUTS],
				cin[MAX_FLOWS][MAX_INPUTS];
	mzc_asof_request req;
	mzc_asof_stats stats;
	mzc_error	err;
	mzc_status	st;
	int			invalid,
				plain;
	int32_t		ns,
				nd,
				i,
				j;

	fuzz_target_name = "fuzz_select_as_ofs";
	memset(&req, 0, sizeof(req));
	memset(flows, 0, sizeof(flows));
	ns = fz_below(&r, MAX_STORAGE + 1);
	nd = fz_below(&r, MAX_FLOWS + 1);
	req.now = fz_ts(&r);
	req.read_only = (fz_byte(&r) & 1) != 0;
	for (i = 0; i < ns; i++)
	{
		storage[i].since = fz_frontier(&r);
		storage[i].upper = fz_frontier(&r);
	}
	for (i = 0; i < nd; i++)
	{
		mzc_asof_dataflow *d = &flows[i];
		int32_t		k = fz_below(&r, MAX_INPUTS + 1);

		for (j = 0; j < k; j++)
		{
			uint8_t		b = fz_byte(&r);

			if (b & 1)
				cin[i][d->ncompute_inputs++] = (b >> 1) % (nd + 1);
			else
				sin[i][d->nstorage_inputs++] = (b >> 1) % (ns + 1);
		}
		d->storage_inputs = sin[i];
		d->compute_inputs = cin[i];
		d->export_storage = fz_below(&r, ns + 2) - 1;
		switch (fz_below(&r, 4))
		{
			case 1:
				d->has_policy = true;
				d->policy.kind = MZC_POLICY_LAG;
				d->policy.lag_ms = fz_ts(&r);
				d->policy.granularity_ms = fz_ts(&r);
				break;
			case 2:
				d->has_policy = true;
				d->policy = mzc_policy_valid_from(fz_frontier(&r));
				break;
			case 3:
				d->has_policy = true;
				d->policy = mzc_policy_step_back();
				break;
			default:
				break;
		}
		if (fz_below(&r, 8) == 1)
		{
			d->has_fixed_as_of = true;
			d->fixed_as_of = fz_frontier(&r);
		}
	}
	req.storage = storage;
	req.nstorage = ns;
	req.dataflows = flows;
	req.ndataflows = nd;

	invalid = expect_invalid(&req, &plain);
	mzc_error_clear(&err);
	st = mzc_select_as_ofs(&req, &stats, &err);
	if (invalid)
	{
		check(st == MZC_ERR_INVALID, "a malformed request was accepted");
		return 0;
	}
	check(st == MZC_OK, "a well-formed request failed");
	for (i = 0; i < nd; i++)
	{
		mzc_asof_dataflow *x = &flows[i];

		check(!frontier_negative(x->as_of), "negative as-of");
		if (x->pruned)
		{
			check(x->as_of.empty, "a pruned dataflow has an as-of");
			continue;
		}
		check(mzc_frontier_le(x->lower, x->upper), "bounds out of order");
		if (!plain)
			continue;
		for (j = 0; j < x->ncompute_inputs; j++)
		{
			mzc_asof_dataflow *y = &flows[x->compute_inputs[j]];

			check(!y->pruned, "a dataflow reads a pruned one");
			check(mzc_frontier_le(y->as_of, x->as_of),
				  "as-of of an input beyond its reader's");
		}
		if (stats.hard_failures == 0)
			for (j = 0; j < x->nstorage_inputs; j++)
				check(mzc_frontier_le(storage[x->storage_inputs[j]].since,
									  x->as_of),
					  "as-of below a storage since without a hard failure");
	}
	if (plain)
		check(stats.passes < 64 + 8 * nd * nd, "propagation did not settle");
	return 0;
}
