/*-------------------------------------------------------------------------
 *
 * json.h
 *	  A small, strict JSON reader and writer over caller memory.
 *
 * Reader.  mzc_json_parse() builds a tree of mzc_json nodes in a bump arena
 * the caller provides.  It accepts exactly RFC 8259 JSON: one value with
 * optional surrounding whitespace, nothing after it; strings must be valid
 * UTF-8 without raw control characters, escapes are decoded (surrogate
 * pairs joined; lone surrogates and \u0000 are refused, so every decoded
 * string is a valid NUL-terminated C string).  Numbers keep their source
 * text and, when they are integers without fraction or exponent that fit in
 * int64, their exact value; range and integrality are for the caller to
 * judge, so it can report them with a path.  Nesting deeper than
 * MZC_JSON_MAX_DEPTH is refused, so recursion is bounded.  Duplicate object
 * keys are kept; callers that care detect them.  Syntax errors name the
 * byte offset and the path of the value being read ("request.inputs[2]").
 *
 * Writer.  mzc_jw_* append to a caller buffer and remember overflow instead
 * of failing at each call; mzc_jw_finish() reports it.
 *
 * Arena.  A bump allocator over one caller block; nothing is ever freed
 * individually.  Exhaustion is MZC_ERR_NO_SPACE, which callers can retry
 * with a larger block.
 *
 * IDENTIFICATION
 *	  src/core/json.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_JSON_H
#define MZC_JSON_H

#include "frontier.h"
#include "status.h"

#define MZC_JSON_MAX_DEPTH 64

typedef struct mzc_arena
{
	char	   *base;
	size_t		size;
	size_t		used;
} mzc_arena;

extern void mzc_arena_init(mzc_arena *arena, void *mem, size_t size);

/* size bytes aligned to 8, or NULL when the arena is exhausted. */
extern void *mzc_arena_alloc(mzc_arena *arena, size_t size);

typedef enum mzc_json_type
{
	MZC_JSON_NULL = 0,
	MZC_JSON_BOOL,
	MZC_JSON_NUMBER,
	MZC_JSON_STRING,
	MZC_JSON_ARRAY,
	MZC_JSON_OBJECT
} mzc_json_type;

typedef struct mzc_json
{
	mzc_json_type type;
	bool		boolean;		/* BOOL */
	bool		integral;		/* NUMBER: no fraction, no exponent */
	bool		in_range;		/* NUMBER: integral and fits in int64 */
	int64_t		integer;		/* NUMBER: the value when in_range */
	const char *str;			/* STRING: decoded; NUMBER: source text */
	size_t		len;
	const char *key;			/* object members: the decoded key */
	size_t		key_len;
	int32_t		count;			/* ARRAY/OBJECT: number of children */
	struct mzc_json *first;		/* ARRAY/OBJECT: first child */
	struct mzc_json *next;		/* next sibling */
} mzc_json;

/*
 * Parses text[0..len-1]; `root` names the top-level value in error paths
 * (e.g. "request").  *out points into the arena.
 */
extern mzc_status mzc_json_parse(const char *text, size_t len,
								 const char *root, mzc_arena *arena,
								 const mzc_json **out, mzc_error *err);

/* The first member named key of an object, or NULL. */
extern const mzc_json *mzc_json_member(const mzc_json *object,
									   const char *key);

/* "null", "boolean", "number", "string", "array", "object". */
extern const char *mzc_json_type_name(mzc_json_type type);

/* Writer. */
typedef struct mzc_json_writer
{
	char	   *buf;
	size_t		cap;
	size_t		len;
	bool		overflow;
	int			depth;
	bool		need_comma[MZC_JSON_MAX_DEPTH + 1];
	bool		after_key;
} mzc_json_writer;

extern void mzc_jw_init(mzc_json_writer *w, char *buf, size_t cap);
extern void mzc_jw_begin_object(mzc_json_writer *w);
extern void mzc_jw_end_object(mzc_json_writer *w);
extern void mzc_jw_begin_array(mzc_json_writer *w);
extern void mzc_jw_end_array(mzc_json_writer *w);
extern void mzc_jw_key(mzc_json_writer *w, const char *key);
extern void mzc_jw_string(mzc_json_writer *w, const char *s);
extern void mzc_jw_int(mzc_json_writer *w, int64_t v);
extern void mzc_jw_bool(mzc_json_writer *w, bool v);
extern void mzc_jw_null(mzc_json_writer *w);
/* {t} as t, {} as null. */
extern void mzc_jw_frontier(mzc_json_writer *w, mzc_frontier f);

/* NUL-terminates; false if anything did not fit. */
extern bool mzc_jw_finish(mzc_json_writer *w);

#endif							/* MZC_JSON_H */
