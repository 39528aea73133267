/*-------------------------------------------------------------------------
 *
 * request.h
 *	  Reading a jsonb request into the core's structs and building a jsonb
 *	  result: paths for messages, strict type and key checks, an id map.
 *
 * IDENTIFICATION
 *	  src/funcs/request.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REQUEST_H
#define MZCOORD_REQUEST_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "frontier.h"
#include "status.h"

/* Ids and isolation levels quoted in a message are cut to this many bytes. */
#define QUOTE_MAX 64

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

extern void mzcoord_req_path_key(jpath *out, const jpath *parent, const char *key, int keylen);
extern void mzcoord_req_path_index(jpath *out, const jpath *parent, int i);
extern char *mzcoord_req_quote_text(const char *s, int len);
extern void mzcoord_req_error(const jpath *path, const char *fmt,...)
			pg_attribute_printf(2, 3) pg_attribute_noreturn();
extern void *mzcoord_req_alloc_array(size_t n, size_t size);
extern void mzcoord_req_wrong_type(const jpath *path, const JsonbValue *v, const char *expected);
extern void mzcoord_req_request_root(Jsonb *jb, JsonbValue *root);
extern void mzcoord_req_require_object(const JsonbValue *v, const jpath *path);
extern void mzcoord_req_require_array(const JsonbValue *v, const jpath *path);
extern bool mzcoord_req_string_is(const JsonbValue *v, const char *s);
extern void mzcoord_req_check_keys(const JsonbValue *obj, const jpath *path, const char *const *allowed, int nallowed);
extern JsonbValue *mzcoord_req_member(const JsonbValue *obj, const jpath *path, const char *key, bool optional, jpath *child);
extern mzc_frontier mzcoord_req_read_frontier(const JsonbValue *v, const jpath *path, bool allow_null);
extern mzc_ts mzcoord_req_read_ts(const JsonbValue *v, const jpath *path);
extern bool mzcoord_req_read_bool(const JsonbValue *v, const jpath *path);
extern char *mzcoord_req_read_id(const JsonbValue *v, const jpath *path);
extern bool mzcoord_req_optional_ts(const JsonbValue *obj, const jpath *path, const char *key, mzc_ts *ts, jpath *child);
extern void mzcoord_req_idmap_init(idmap *m, int32 n);
extern int32 mzcoord_req_idmap_find(const idmap *m, const char *key);
extern bool mzcoord_req_idmap_insert(idmap *m, const char *key, int32 val);
extern void mzcoord_req_push_key(JsonbParseState **ps, const char *key);
extern void mzcoord_req_push_int(JsonbParseState **ps, const char *key, int64 t);
extern void mzcoord_req_push_frontier(JsonbParseState **ps, const char *key, mzc_frontier f);
extern void mzcoord_req_push_bool(JsonbParseState **ps, const char *key, bool b);
extern void mzcoord_req_push_string(JsonbParseState **ps, const char *key, const char *s);
extern void mzcoord_req_report_core_error(mzc_status st, const mzc_error *err)
			pg_attribute_noreturn();

#endif							/* MZCOORD_REQUEST_H */
