/*
 * libFuzzer target: mzc_json_select_as_ofs() on arbitrary bytes.
 *
 * Every input must either produce a result that parses back as an object
 * with one entry per dataflow (each a non-negative integer or null), or
 * fail with MZC_ERR_INVALID and a message naming a path under "request".
 * Selection itself must never fail on a well-formed request (best effort).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonapi.h"
#include "fuzz_util.h"

#define MAX_ARENA (64u << 20)

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t		cap = mzc_json_arena_size(size);

	fuzz_target_name = "fuzz_select_as_ofs";
	mzc_status	st;
	mzc_arena	a;
	const char *out = NULL;
	size_t		out_len = 0;
	mzc_error	err;
	int			attempt;

	for (attempt = 0;; attempt++)
	{
		mzc_arena_init(&a, arena_of(cap), cap);
		mzc_error_clear(&err);
		st = mzc_json_select_as_ofs((const char *) data, size, &a, &out,
									&out_len, &err);
		if (st != MZC_ERR_NO_SPACE || cap >= MAX_ARENA)
			break;
		check(attempt < 2, "arena size hint far too small");
		cap *= 4;
	}

	if (st == MZC_OK)
	{
		static char mem[1 << 22];
		mzc_arena	b;
		const mzc_json *v,
				   *m;

		check(strlen(out) == out_len, "result length");
		mzc_arena_init(&b, mem, sizeof(mem));
		check(mzc_json_parse(out, out_len, "result", &b, &v, NULL) == MZC_OK,
			  "result does not parse");
		check(v->type == MZC_JSON_OBJECT, "result is not an object");
		for (m = v->first; m != NULL; m = m->next)
			check(m->type == MZC_JSON_NULL ||
				  (m->type == MZC_JSON_NUMBER && m->in_range && m->integer >= 0),
				  "an as-of is neither a timestamp nor null");
	}
	else if (st == MZC_ERR_INVALID)
	{
		check(strncmp(err.message, "request", 7) == 0, "error without a path");
		check(strncmp(err.path, "request", 7) == 0, "error without a path");
	}
	else
		check(st == MZC_ERR_NO_SPACE && cap >= MAX_ARENA, "unexpected status");
	return 0;
}
