/*
 * A naive model of counted frontiers for the unit tests and the fuzzer:
 * plain counts per time in [0, MODEL_TIMES) for MODEL_COUNTED counted
 * frontiers that share one pool of nodes.  The includer defines both
 * macros first.  It answers what applying a batch must do (S7, all or
 * nothing, pool capacity) without any of the real structure.
 */
#ifndef MZC_MODEL_COUNTED_H
#define MZC_MODEL_COUNTED_H

#include <string.h>

#include "counted.h"

typedef struct model
{
	int64_t		count[MODEL_COUNTED][MODEL_TIMES];
	int32_t		nfree;
} model;

static inline int32_t
model_distinct(const model *m, int k)
{
	int32_t		n = 0;

	for (int t = 0; t < MODEL_TIMES; t++)
		if (m->count[k][t] > 0)
			n++;
	return n;
}

static inline int
model_frontier(const model *m, int k)
{
	for (int t = 0; t < MODEL_TIMES; t++)
		if (m->count[k][t] > 0)
			return t;
	return -1;
}

/* What applying batch u (n updates) to counted frontier k must do. */
static inline mzc_status
model_apply(model *m, int k, const mzc_update *u, int32_t n)
{
	int64_t		sum[MODEL_TIMES];
	int			f = model_frontier(m, k);
	int32_t		needed = 0,
				freed = 0;

	memset(sum, 0, sizeof(sum));
	for (int32_t i = 0; i < n; i++)
	{
		if (u[i].time < 0)
			return MZC_ERR_INVALID;
		sum[u[i].time] += u[i].diff;
	}
	for (int t = 0; t < MODEL_TIMES; t++)
	{
		int64_t		before = m->count[k][t];
		int64_t		after = before + sum[t];

		if (sum[t] == 0)
			continue;
		if (after < 0)
			return MZC_ERR_NEGATIVE_COUNT;
		if (after > 0 && before == 0)
		{
			if (f < 0 || t < f)
				return MZC_ERR_BEFORE_FRONTIER;
			needed++;
		}
		if (after == 0 && before > 0)
			freed++;
	}
	if (needed - freed > m->nfree)
		return MZC_ERR_NO_SPACE;
	for (int t = 0; t < MODEL_TIMES; t++)
		m->count[k][t] += sum[t];
	m->nfree -= needed - freed;
	return MZC_OK;
}

#endif							/* MZC_MODEL_COUNTED_H */
