/*
 * libFuzzer target: mzc_json_determine_timestamp() on arbitrary bytes.
 *
 * Every input must end in one of three ways: a result that parses back as
 * an object whose timestamp is not below its since; MZC_ERR_INVALID with a
 * message naming a path under "request"; or a since violation whose
 * blocking inputs really have a since beyond the candidate.  Anything else
 * (including a crash, which the sanitizers catch) aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonapi.h"
#include "fuzz_util.h"

#define MAX_ARENA (64u << 20)

static const mzc_json *
member(const mzc_json *obj, const char *key)
{
	const mzc_json *m = mzc_json_member(obj, key);

	check(m != NULL, "result lacks a key");
	return m;
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t		cap = mzc_json_arena_size(size);

	fuzz_target_name = "fuzz_determine_timestamp";
	mzc_status	st;
	mzc_arena	a;
	const char *out = NULL;
	size_t		out_len = 0;
	mzc_since_violation viol;
	mzc_error	err;
	int			attempt;

	for (attempt = 0;; attempt++)
	{
		mzc_arena_init(&a, arena_of(cap), cap);
		mzc_error_clear(&err);
		st = mzc_json_determine_timestamp((const char *) data, size, &a, &out,
										  &out_len, &viol, &err);
		if (st != MZC_ERR_NO_SPACE || cap >= MAX_ARENA)
			break;
		/* the first guess should nearly always do */
		check(attempt < 2, "arena size hint far too small");
		cap *= 4;
	}

	if (st == MZC_OK)
	{
		static char mem[1 << 20];
		mzc_arena	b;
		const mzc_json *v,
				   *ts,
				   *since,
				   *c;

		check(strlen(out) == out_len, "result length");
		mzc_arena_init(&b, mem, sizeof(mem));
		check(mzc_json_parse(out, out_len, "result", &b, &v, NULL) == MZC_OK,
			  "result does not parse");
		check(v->type == MZC_JSON_OBJECT, "result is not an object");
		ts = member(v, "timestamp");
		since = member(v, "since");
		check(ts->in_range && ts->integer >= 0, "bad timestamp");
		check(since->type == MZC_JSON_NUMBER, "a success has a finite since");
		check(since->integer <= ts->integer, "timestamp below since");
		(void) member(v, "respond_immediately");
		(void) member(v, "upper");
		(void) member(v, "largest_not_in_advance_of_upper");
		c = member(v, "constraints");
		check(member(c, "lower")->type == MZC_JSON_ARRAY, "lower constraints");
		check(member(c, "upper")->type == MZC_JSON_ARRAY, "upper constraints");
	}
	else if (st == MZC_ERR_INVALID)
	{
		check(strncmp(err.message, "request", 7) == 0, "error without a path");
		check(strncmp(err.path, "request", 7) == 0, "error without a path");
	}
	else if (st == MZC_ERR_SINCE_VIOLATION)
	{
		int32_t		i;

		check(viol.n >= 1, "a violation lists its inputs");
		for (i = 0; i < viol.n; i++)
			check(viol.sinces[i].empty || viol.sinces[i].ts > viol.timestamp,
				  "a listed input does not block");
	}
	else
		check(st == MZC_ERR_NO_SPACE && cap >= MAX_ARENA, "unexpected status");
	return 0;
}
