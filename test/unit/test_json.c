/*
 * Unit tests of src/core/json.c and src/core/jsonapi.c: the strict reader
 * and the writer, the two JSON entry points (T1-T14 and as-of scenarios
 * through JSON, every malformed-request path), and random mutations of
 * valid requests that must never crash.
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

#include "jsonapi.h"

static char arena_mem[1 << 20];

static const mzc_json *
parse_ok(const char *text)
{
	mzc_arena	a;
	const mzc_json *v = NULL;
	mzc_error	err;

	mzc_arena_init(&a, arena_mem, sizeof(arena_mem));
	if (mzc_json_parse(text, strlen(text), "doc", &a, &v, &err) != MZC_OK)
		fail_msg("parse failed: %s", err.message);
	return v;
}

static void
parse_fails(const char *text, size_t len, const char *message)
{
	mzc_arena	a;
	const mzc_json *v = NULL;
	mzc_error	err;

	mzc_arena_init(&a, arena_mem, sizeof(arena_mem));
	mzc_error_clear(&err);
	assert_int_equal(mzc_json_parse(text, len, "doc", &a, &v, &err),
					 MZC_ERR_INVALID);
	if (message != NULL && strcmp(err.message, message) != 0)
		fail_msg("message \"%s\", expected \"%s\"", err.message, message);
}

static void
test_parse_values(void **state)
{
	const mzc_json *v,
			   *m;

	v = parse_ok(" {\"a\": [1, -2, 3.5, 1e3, true, false, null], \"b\": \"x\\ny\"} ");
	assert_int_equal(v->type, MZC_JSON_OBJECT);
	assert_int_equal(v->count, 2);
	m = mzc_json_member(v, "a");
	assert_non_null(m);
	assert_int_equal(m->count, 7);
	m = m->first;
	assert_true(m->integral && m->in_range);
	assert_int_equal(m->integer, 1);
	m = m->next;
	assert_int_equal(m->integer, -2);
	m = m->next;
	assert_false(m->integral);
	assert_string_equal(m->str, "3.5");
	m = m->next;
	assert_false(m->integral);
	m = m->next;
	assert_int_equal(m->type, MZC_JSON_BOOL);
	assert_true(m->boolean);
	m = m->next;
	assert_false(m->boolean);
	assert_int_equal(m->next->type, MZC_JSON_NULL);
	m = mzc_json_member(v, "b");
	assert_string_equal(m->str, "x\ny");
	assert_null(mzc_json_member(v, "c"));

	/* exact 64-bit integers at both ends, and beyond */
	v = parse_ok("[9223372036854775807, -9223372036854775808, 9223372036854775808, 0]");
	assert_true(v->first->in_range);
	assert_int_equal(v->first->integer, INT64_MAX);
	assert_true(v->first->next->in_range);
	assert_int_equal(v->first->next->integer, INT64_MIN);
	assert_false(v->first->next->next->in_range);
	assert_true(v->first->next->next->integral);

	/* escapes, surrogate pairs and raw UTF-8 */
	v = parse_ok("\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\r\\t\xc3\xa9\"");
	assert_string_equal(v->str, "\xc3\xa9\xf0\x9f\x98\x80\"\\/\b\f\r\t\xc3\xa9");
	v = parse_ok("[]");
	assert_int_equal(v->count, 0);
	v = parse_ok("{}");
	assert_int_equal(v->count, 0);
}

static void
test_parse_errors(void **state)
{
	char		deep[200];
	int			i;

	parse_fails("", 0, "doc: invalid JSON at byte 0: unexpected end of input");
	parse_fails("   ", 3, NULL);
	parse_fails("{\"a\": 1} x", 10,
				"doc: invalid JSON at byte 9: unexpected data after the value");
	parse_fails("{\"a\": [1, 2,]}", 14,
				"doc.a[2]: invalid JSON at byte 12: unexpected character");
	parse_fails("{\"a\" 1}", 7, "doc: invalid JSON at byte 5: expected ':'");
	parse_fails("{1: 2}", 6, "doc: invalid JSON at byte 1: expected a string key");
	parse_fails("[1 2]", 5, "doc: invalid JSON at byte 3: expected ',' or ']'");
	parse_fails("01", 2, "doc: invalid JSON at byte 0: leading zeros in number");
	parse_fails("-", 1, NULL);
	parse_fails("1.", 2, NULL);
	parse_fails("1e", 2, NULL);
	parse_fails("tru", 3, NULL);
	parse_fails("nul", 3, NULL);
	parse_fails("\"abc", 4, NULL);
	parse_fails("\"a\tb\"", 5, NULL);
	parse_fails("\"\\x\"", 4, NULL);
	parse_fails("\"\\u12\"", 6, NULL);
	parse_fails("\"\\u0000\"", 8, NULL);
	parse_fails("\"\\ud800\"", 8, NULL);
	parse_fails("\"\\udc00\"", 8, NULL);
	parse_fails("\"\\ud800\\u0041\"", 14, NULL);
	parse_fails("\"\xff\"", 3, NULL);
	parse_fails("\"\xc0\x80\"", 4, NULL);
	parse_fails("\"\xed\xa0\x80\"", 5, NULL);
	parse_fails("\"\xe2\x82\"", 4, NULL);
	parse_fails("[1]\0", 4, NULL);
	/* nesting: 64 levels are fine, 65 are not */
	for (i = 0; i < 64; i++)
		deep[i] = '[';
	for (i = 0; i < 64; i++)
		deep[64 + i] = ']';
	deep[128] = '\0';
	(void) parse_ok(deep);
	memmove(deep + 1, deep, 129);
	deep[0] = '[';
	deep[130] = '\0';
	deep[129] = ']';
	parse_fails(deep, 130, NULL);
}

static void
test_arena_exhaustion(void **state)
{
	mzc_arena	a;
	const mzc_json *v;
	mzc_error	err;
	char		small[64];

	mzc_arena_init(&a, small, sizeof(small));
	assert_int_equal(mzc_json_parse("[1,2,3,4,5,6]", 13, "doc", &a, &v, &err),
					 MZC_ERR_NO_SPACE);
	assert_null(mzc_arena_alloc(&a, 1000));
	mzc_arena_init(&a, NULL, 100);
	assert_null(mzc_arena_alloc(&a, 1));
}

static void
test_writer(void **state)
{
	char		buf[256];
	mzc_json_writer w;

	mzc_jw_init(&w, buf, sizeof(buf));
	mzc_jw_begin_object(&w);
	mzc_jw_key(&w, "a\"b");
	mzc_jw_begin_array(&w);
	mzc_jw_int(&w, -5);
	mzc_jw_null(&w);
	mzc_jw_bool(&w, true);
	mzc_jw_frontier(&w, AT(7));
	mzc_jw_frontier(&w, EMPTY);
	mzc_jw_string(&w, "x\n\x01y");
	mzc_jw_begin_object(&w);
	mzc_jw_end_object(&w);
	mzc_jw_end_array(&w);
	mzc_jw_key(&w, "c");
	mzc_jw_int(&w, INT64_MAX);
	mzc_jw_end_object(&w);
	assert_true(mzc_jw_finish(&w));
	assert_string_equal(buf,
						"{\"a\\\"b\":[-5,null,true,7,null,\"x\\n\\u0001y\",{}],\"c\":9223372036854775807}");
	/* overflow is remembered, the buffer stays terminated */
	mzc_jw_init(&w, buf, 8);
	mzc_jw_begin_array(&w);
	mzc_jw_string(&w, "too long for the buffer");
	mzc_jw_end_array(&w);
	assert_false(mzc_jw_finish(&w));
	assert_true(strlen(buf) < 8);
}

/* ---- determine_timestamp through JSON ---- */

static mzc_status
dt(const char *req, const char **out, mzc_since_violation *viol,
   mzc_error *err)
{
	mzc_arena	a;
	size_t		len;

	mzc_arena_init(&a, arena_mem, sizeof(arena_mem));
	mzc_error_clear(err);
	return mzc_json_determine_timestamp(req, strlen(req), &a, out, &len, viol,
										err);
}

static void
dt_ok(const char *req, const char *expect)
{
	const char *out = NULL;
	mzc_error	err;

	if (dt(req, &out, NULL, &err) != MZC_OK)
		fail_msg("request failed: %s", err.message);
	if (strcmp(out, expect) != 0)
		fail_msg("result\n  %s\nexpected\n  %s", out, expect);
}

static void
dt_invalid(const char *req, const char *message)
{
	const char *out = NULL;
	mzc_error	err;

	assert_int_equal(dt(req, &out, NULL, &err), MZC_ERR_INVALID);
	if (strcmp(err.message, message) != 0)
		fail_msg("message\n  %s\nexpected\n  %s", err.message, message);
}

#define INPUT1 "\"inputs\": [{\"id\": \"u1\", \"since\": 10, \"upper\": 20}]"

static void
test_dt_scenarios(void **state)
{
	dt_ok("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, "
		  INPUT1 "}",
		  "{\"timestamp\":19,\"respond_immediately\":true,\"since\":10,\"upper\":20,"
		  "\"largest_not_in_advance_of_upper\":19,\"constraints\":{\"lower\":"
		  "[{\"ts\":10,\"reason\":\"storage_input\",\"input\":\"u1\"}],\"upper\":[]}}");
	dt_ok("{\"isolation\": \"strict serializable\", \"when\": {\"kind\": \"immediately\"}, "
		  INPUT1 ", \"oracle_read_ts\": 25, \"timeline\": true}",
		  "{\"timestamp\":25,\"respond_immediately\":false,\"since\":10,\"upper\":20,"
		  "\"largest_not_in_advance_of_upper\":19,\"constraints\":{\"lower\":"
		  "[{\"ts\":25,\"reason\":\"isolation_level\",\"isolation\":\"strict serializable\"}],"
		  "\"upper\":[]}}");
	dt_ok("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"as_of\", \"ts\": 12}, "
		  INPUT1 "}",
		  "{\"timestamp\":12,\"respond_immediately\":true,\"since\":10,\"upper\":20,"
		  "\"largest_not_in_advance_of_upper\":19,\"constraints\":{\"lower\":"
		  "[{\"ts\":12,\"reason\":\"query_as_of\"}],\"upper\":"
		  "[{\"ts\":12,\"reason\":\"query_as_of\"}]}}");
	/* T4: no timeline */
	dt_ok("{\"isolation\": \"strict serializable\", \"when\": {\"kind\": \"immediately\", \"ts\": null}, "
		  INPUT1 ", \"oracle_read_ts\": null, \"timeline\": false}",
		  "{\"timestamp\":19,\"respond_immediately\":true,\"since\":10,\"upper\":20,"
		  "\"largest_not_in_advance_of_upper\":19,\"constraints\":{\"lower\":"
		  "[{\"ts\":10,\"reason\":\"storage_input\",\"input\":\"u1\"}],\"upper\":[]}}");
	/* T11: strong session serializable */
	dt_ok("{\"isolation\": \"strong session serializable\", \"when\": {\"kind\": \"immediately\"}, "
		  INPUT1 ", \"oracle_read_ts\": 25, \"session_oracle_read_ts\": 12}",
		  "{\"timestamp\":19,\"respond_immediately\":true,\"since\":10,\"upper\":20,"
		  "\"largest_not_in_advance_of_upper\":19,\"constraints\":{\"lower\":"
		  "[{\"ts\":19,\"reason\":\"isolation_level\",\"isolation\":\"strong session serializable\"}],"
		  "\"upper\":[]}}");
	/* T14: a sealed input */
	dt_ok("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, "
		  "\"inputs\": [{\"id\": \"u1\", \"since\": 10, \"upper\": null}]}",
		  "{\"timestamp\":9223372036854775807,\"respond_immediately\":true,\"since\":10,"
		  "\"upper\":null,\"largest_not_in_advance_of_upper\":9223372036854775807,"
		  "\"constraints\":{\"lower\":[{\"ts\":10,\"reason\":\"storage_input\",\"input\":\"u1\"}],"
		  "\"upper\":[]}}");
	/* no inputs */
	dt_ok("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, \"inputs\": []}",
		  "{\"timestamp\":9223372036854775807,\"respond_immediately\":true,\"since\":0,"
		  "\"upper\":null,\"largest_not_in_advance_of_upper\":9223372036854775807,"
		  "\"constraints\":{\"lower\":[],\"upper\":[]}}");
}

static void
test_dt_since_violation(void **state)
{
	const char *out = NULL;
	mzc_since_violation viol;
	mzc_error	err;

	assert_int_equal(dt("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"as_of\", \"ts\": 5}, "
						"\"inputs\": [{\"id\": \"u1\", \"since\": 10, \"upper\": 20},"
						" {\"id\": \"u2\", \"since\": 3, \"upper\": 20},"
						" {\"id\": \"u3\", \"since\": null, \"upper\": 20}]}",
						&out, &viol, &err), MZC_ERR_SINCE_VIOLATION);
	assert_string_equal(err.message, "timestamp 5 is not valid for all inputs");
	assert_int_equal(viol.timestamp, 5);
	assert_int_equal(viol.n, 2);
	assert_string_equal(viol.ids[0], "u1");
	assert_frontier_at(viol.sinces[0], 10);
	assert_string_equal(viol.ids[1], "u3");
	assert_frontier_empty(viol.sinces[1]);
}

static void
test_dt_malformed(void **state)
{
	dt_invalid("[]", "request: expected an object, found an array");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}}",
			   "request.inputs: missing key");
	dt_invalid("{\"when\": {\"kind\": \"immediately\"}, " INPUT1 "}",
			   "request.isolation: missing key");
	dt_invalid("{\"isolation\": \"repeatable read\", \"when\": {\"kind\": \"immediately\"}, " INPUT1 "}",
			   "request.isolation: unrecognized isolation level \"repeatable read\"");
	dt_invalid("{\"isolation\": 1, \"when\": {\"kind\": \"immediately\"}, " INPUT1 "}",
			   "request.isolation: expected a string, found a number");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"soon\"}, " INPUT1 "}",
			   "request.when.kind: unrecognized kind \"soon\"");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"as_of\"}, " INPUT1 "}",
			   "request.when.ts: missing key");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\", \"ts\": 4}, " INPUT1 "}",
			   "request.when.ts: a timestamp is only allowed with kind as_of or as_of_at_least");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"as_of\", \"ts\": -4}, " INPUT1 "}",
			   "request.when.ts: must not be negative: -4");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"as_of\", \"ts\": 4.5}, " INPUT1 "}",
			   "request.when.ts: expected an integer, found 4.5");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"as_of\", \"ts\": 4e2}, " INPUT1 "}",
			   "request.when.ts: expected an integer, found 4e2");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"as_of\", \"ts\": 99999999999999999999}, " INPUT1 "}",
			   "request.when.ts: integer out of range: 99999999999999999999");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"as_of\", \"ts\": null}, " INPUT1 "}",
			   "request.when.ts: expected a non-negative integer, found null");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, \"inputs\": {}}",
			   "request.inputs: expected an array, found an object");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, "
			   "\"inputs\": [{\"id\": \"u1\", \"since\": 10, \"upper\": 20}, {\"id\": \"u2\", \"since\": -1, \"upper\": 20}]}",
			   "request.inputs[1].since: must not be negative: -1");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, "
			   "\"inputs\": [{\"id\": \"u1\", \"upper\": 20}]}",
			   "request.inputs[0].since: missing key");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, "
			   "\"inputs\": [{\"id\": \"u1\", \"since\": \"10\", \"upper\": 20}]}",
			   "request.inputs[0].since: expected a non-negative integer or null, found a string");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, "
			   "\"inputs\": [{\"id\": \"u1\", \"since\": 1, \"upper\": 20}, {\"id\": \"u1\", \"since\": 1, \"upper\": 20}]}",
			   "request.inputs[1].id: duplicate input id \"u1\"");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, "
			   "\"inputs\": [{\"id\": \"\", \"since\": 1, \"upper\": 20}]}",
			   "request.inputs[0].id: id must not be empty");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, "
			   "\"inputs\": [{\"id\": \"u1\", \"since\": 1, \"upper\": 20, \"extra\": 1}]}",
			   "request.inputs[0].extra: unrecognized key");
	dt_invalid("{\"isolation\": \"serializable\", \"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, " INPUT1 "}",
			   "request.isolation: duplicate key");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, " INPUT1 ", \"oracle\": 5}",
			   "request.oracle: unrecognized key");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, " INPUT1 ", \"timeline\": 1}",
			   "request.timeline: expected a boolean, found a number");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, " INPUT1 ", \"session_oracle_read_ts\": 3}",
			   "request.session_oracle_read_ts: only allowed with strong session serializable isolation");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, " INPUT1 ", \"real_time_recency_ts\": 3}",
			   "request.real_time_recency_ts: only allowed with strict serializable isolation");
	dt_invalid("{\"isolation\": \"strict serializable\", \"when\": {\"kind\": \"as_of\", \"ts\": 12}, " INPUT1 ", \"real_time_recency_ts\": 3}",
			   "request.real_time_recency_ts: cannot be combined with an as-of");
	dt_invalid("{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, " INPUT1 "} trailing",
			   "request: invalid JSON at byte 115: unexpected data after the value");
}

static void
test_dt_arena_retry(void **state)
{
	static char small[256];
	const char *req = "{\"isolation\": \"serializable\", \"when\": {\"kind\": \"immediately\"}, " INPUT1 "}";
	mzc_arena	a;
	const char *out;
	size_t		len;
	mzc_error	err;

	mzc_arena_init(&a, small, sizeof(small));
	assert_int_equal(mzc_json_determine_timestamp(req, strlen(req), &a, &out,
												  &len, NULL, &err),
					 MZC_ERR_NO_SPACE);
	mzc_arena_init(&a, arena_mem, mzc_json_arena_size(strlen(req)));
	assert_int_equal(mzc_json_determine_timestamp(req, strlen(req), &a, &out,
												  &len, NULL, &err), MZC_OK);
	assert_int_equal(len, strlen(out));
}

/* ---- select_as_ofs through JSON ---- */

static mzc_status
sa(const char *req, const char **out, mzc_error *err)
{
	mzc_arena	a;
	size_t		len;

	mzc_arena_init(&a, arena_mem, sizeof(arena_mem));
	mzc_error_clear(err);
	return mzc_json_select_as_ofs(req, strlen(req), &a, out, &len, err);
}

static void
sa_ok(const char *req, const char *expect)
{
	const char *out = NULL;
	mzc_error	err;

	if (sa(req, &out, &err) != MZC_OK)
		fail_msg("request failed: %s", err.message);
	if (strcmp(out, expect) != 0)
		fail_msg("result\n  %s\nexpected\n  %s", out, expect);
}

static void
sa_invalid(const char *req, const char *message)
{
	const char *out = NULL;
	mzc_error	err;

	assert_int_equal(sa(req, &out, &err), MZC_ERR_INVALID);
	if (strcmp(err.message, message) != 0)
		fail_msg("message\n  %s\nexpected\n  %s", err.message, message);
}

static void
test_sa_scenarios(void **state)
{
	/* scenario 2: downstream storage constraints */
	sa_ok("{\"now\": 100, \"storage\": {\"s1\": {\"since\": 10, \"upper\": 20}, "
		  "\"u3\": {\"since\": 10, \"upper\": 15}, \"u4\": {\"since\": 10, \"upper\": 13}}, "
		  "\"dataflows\": [{\"id\": \"u1\", \"inputs\": [\"s1\"]}, {\"id\": \"u2\", \"inputs\": [\"s1\"]}, "
		  "{\"id\": \"u3\", \"inputs\": [\"u2\"]}, {\"id\": \"u4\", \"inputs\": [\"u2\"]}]}",
		  "{\"u1\":19,\"u2\":12,\"u3\":14,\"u4\":12}");
	/* scenario 4: index read policies */
	sa_ok("{\"now\": 100, \"read_only\": false, \"storage\": {\"s1\": {\"since\": 10, \"upper\": 20}, "
		  "\"u6\": {\"since\": 10, \"upper\": 18}}, \"dataflows\": ["
		  "{\"id\": \"u1\", \"inputs\": [\"s1\"], \"policy\": {\"lag\": 5, \"granularity\": 1}},"
		  "{\"id\": \"u2\", \"inputs\": [\"s1\"], \"policy\": {\"lag\": 15, \"granularity\": 1}},"
		  "{\"id\": \"u3\", \"inputs\": [\"s1\"], \"policy\": {\"valid_from\": 13}},"
		  "{\"id\": \"u4\", \"inputs\": [\"s1\"], \"policy\": {\"valid_from\": 5}},"
		  "{\"id\": \"u5\", \"inputs\": [], \"policy\": {\"lag\": 5, \"granularity\": 1}},"
		  "{\"id\": \"u6\", \"inputs\": [\"s1\"], \"policy\": {\"valid_from\": 13}}]}",
		  "{\"u1\":15,\"u2\":10,\"u3\":13,\"u4\":10,\"u5\":95,\"u6\":17}");
	/* scenario 7: read-only pruning */
	sa_ok("{\"now\": 15, \"read_only\": true, \"storage\": {\"s1\": {\"since\": 10, \"upper\": 20}, "
		  "\"s2\": {\"since\": null, \"upper\": null}, \"u4\": {\"since\": 10, \"upper\": 20}}, "
		  "\"dataflows\": [{\"id\": \"u1\", \"inputs\": [\"s1\"], \"policy\": null}, "
		  "{\"id\": \"u2\", \"inputs\": [\"s2\"]}, {\"id\": \"u3\", \"inputs\": [\"s1\", \"s2\"]}, "
		  "{\"id\": \"u4\", \"inputs\": [\"u2\"]}]}",
		  "{\"u1\":15,\"u2\":null,\"u3\":null,\"u4\":null}");
	/* default granularity 1000; inputs may name later dataflows */
	sa_ok("{\"now\": 5000, \"storage\": {}, \"dataflows\": ["
		  "{\"id\": \"b\", \"inputs\": [\"a\"]}, {\"id\": \"a\", \"inputs\": [], \"policy\": {\"lag\": 1500}}]}",
		  "{\"b\":5000,\"a\":3000}");
	sa_ok("{\"now\": 1, \"storage\": {}, \"dataflows\": []}", "{}");
}

static void
test_sa_malformed(void **state)
{
	sa_invalid("{\"storage\": {}, \"dataflows\": []}", "request.now: missing key");
	sa_invalid("{\"now\": -1, \"storage\": {}, \"dataflows\": []}",
			   "request.now: must not be negative: -1");
	sa_invalid("{\"now\": 1, \"storage\": [], \"dataflows\": []}",
			   "request.storage: expected an object, found an array");
	sa_invalid("{\"now\": 1, \"storage\": {\"s1\": {\"since\": 1}}, \"dataflows\": []}",
			   "request.storage.s1.upper: missing key");
	sa_invalid("{\"now\": 1, \"storage\": {\"s1\": {\"since\": 1, \"upper\": 2}, \"s1\": {\"since\": 1, \"upper\": 2}}, \"dataflows\": []}",
			   "request.storage.s1: duplicate storage id");
	sa_invalid("{\"now\": 1, \"storage\": {\"\": {\"since\": 1, \"upper\": 2}}, \"dataflows\": []}",
			   "request.storage.: id must not be empty");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [\"s9\"]}]}",
			   "request.dataflows[0].inputs[0]: unknown input \"s9\"");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": []}, {\"id\": \"u1\", \"inputs\": []}]}",
			   "request.dataflows[1].id: duplicate dataflow id \"u1\"");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [\"u2\"]}, {\"id\": \"u2\", \"inputs\": [\"u1\"]}]}",
			   "request.dataflows[0].inputs: dataflow inputs form a cycle through \"u1\"");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [\"u1\"]}]}",
			   "request.dataflows[0].inputs[0]: a dataflow cannot read itself");
	sa_invalid("{\"now\": 1, \"storage\": {\"s\": {\"since\": 1, \"upper\": 2}}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [\"s\", \"s\"]}]}",
			   "request.dataflows[0].inputs[1]: input \"s\" is listed twice");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [7]}]}",
			   "request.dataflows[0].inputs[0]: expected a string, found a number");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\"}]}",
			   "request.dataflows[0].inputs: missing key");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [], \"policy\": {\"lag\": 5, \"valid_from\": 3}}]}",
			   "request.dataflows[0].policy.lag: unrecognized key");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [], \"policy\": {}}]}",
			   "request.dataflows[0].policy.lag: missing key");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [], \"policy\": {\"lag\": 5, \"granularity\": 0}}]}",
			   "request.dataflows[0].policy.granularity: granularity must be positive");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [], \"policy\": {\"valid_from\": null}}]}",
			   "request.dataflows[0].policy.valid_from: expected a non-negative integer, found null");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [], \"policy\": 5}]}",
			   "request.dataflows[0].policy: expected an object, found a number");
	sa_invalid("{\"now\": 1, \"read_only\": \"no\", \"storage\": {}, \"dataflows\": []}",
			   "request.read_only: expected a boolean, found a string");
	sa_invalid("{\"now\": 1, \"storage\": {}, \"dataflows\": [], \"x\": 1}",
			   "request.x: unrecognized key");
}

/*
 * Random mutations of valid requests: every outcome is OK (with a result
 * that parses back), INVALID with a message naming a path under "request",
 * or a since violation; nothing else, and no crash (ASan in the fuzzers).
 */
static void
test_mutations(void **state)
{
	const char *seeds[] = {
		"{\"isolation\": \"strict serializable\", \"when\": {\"kind\": \"as_of_at_least\", \"ts\": 15}, "
		"\"inputs\": [{\"id\": \"u1\", \"since\": 10, \"upper\": 20}, {\"id\": \"u2\", \"since\": 12, \"upper\": null}], "
		"\"oracle_read_ts\": 30, \"timeline\": true}",
		"{\"now\": 100, \"read_only\": true, \"storage\": {\"s1\": {\"since\": 10, \"upper\": 20}, "
		"\"u3\": {\"since\": 14, \"upper\": 15}}, \"dataflows\": [{\"id\": \"u1\", \"inputs\": [\"s1\"], "
		"\"policy\": {\"lag\": 1, \"granularity\": 1}}, {\"id\": \"u2\", \"inputs\": [\"u1\"]}, "
		"{\"id\": \"u3\", \"inputs\": [\"u1\"]}]}",
	};
	const char alphabet[] = "{}[]\":,0123456789-.eE nultrfasu\\";
	test_rng	r;
	int			iter,
				ok = 0,
				invalid = 0;

	rng_seed(&r, 5);
	for (iter = 0; iter < 20000; iter++)
	{
		int			which = (int) (iter % 2);
		char		buf[512];
		size_t		len = strlen(seeds[which]);
		int			k,
					edits = (int) rng_range(&r, 1, 4);
		mzc_arena	a;
		const char *out;
		size_t		out_len;
		mzc_error	err;
		mzc_status	st;

		memcpy(buf, seeds[which], len);
		for (k = 0; k < edits; k++)
		{
			size_t		pos = (size_t) rng_range(&r, 0, (int64_t) len - 1);

			switch (rng_range(&r, 0, 2))
			{
				case 0:			/* replace */
					buf[pos] = alphabet[rng_range(&r, 0, sizeof(alphabet) - 2)];
					break;
				case 1:			/* delete */
					memmove(buf + pos, buf + pos + 1, len - pos - 1);
					len--;
					break;
				default:		/* insert */
					if (len + 1 < sizeof(buf))
					{
						memmove(buf + pos + 1, buf + pos, len - pos);
						buf[pos] = alphabet[rng_range(&r, 0, sizeof(alphabet) - 2)];
						len++;
					}
			}
		}
		mzc_arena_init(&a, arena_mem, sizeof(arena_mem));
		mzc_error_clear(&err);
		if (which == 0)
			st = mzc_json_determine_timestamp(buf, len, &a, &out, &out_len,
											  NULL, &err);
		else
			st = mzc_json_select_as_ofs(buf, len, &a, &out, &out_len, &err);
		if (st == MZC_OK)
		{
			mzc_arena	b;
			const mzc_json *v;
			static char mem2[1 << 16];

			ok++;
			mzc_arena_init(&b, mem2, sizeof(mem2));
			assert_int_equal(mzc_json_parse(out, out_len, "result", &b, &v, NULL),
							 MZC_OK);
			assert_int_equal(v->type, MZC_JSON_OBJECT);
		}
		else if (st == MZC_ERR_INVALID)
		{
			invalid++;
			assert_memory_equal(err.path, "request", 7);
			assert_memory_equal(err.message, "request", 7);
		}
		else
			assert_int_equal(st, MZC_ERR_SINCE_VIOLATION);
	}
	assert_true(ok > 500);
	assert_true(invalid > 5000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_arena_exhaustion),
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_dt_scenarios),
		cmocka_unit_test(test_dt_since_violation),
		cmocka_unit_test(test_dt_malformed),
		cmocka_unit_test(test_dt_arena_retry),
		cmocka_unit_test(test_sa_scenarios),
		cmocka_unit_test(test_sa_malformed),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
