/*-------------------------------------------------------------------------
 *
 * json.c
 *	  A small, strict JSON reader and writer over caller memory.
 *
 * IDENTIFICATION
 *	  src/core/json.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "json.h"

void
mzc_arena_init(mzc_arena *arena, void *mem, size_t size)
{
	arena->base = (char *) mem;
	arena->size = mem == NULL ? 0 : size;
	arena->used = 0;
}

void *
mzc_arena_alloc(mzc_arena *arena, size_t size)
{
	size_t		start = (arena->used + 7) & ~(size_t) 7;
	void	   *p;

	if (start < arena->used || start > arena->size ||
		size > arena->size - start)
		return NULL;
	p = arena->base + start;
	arena->used = start + size;
	return p;
}

const char *
mzc_json_type_name(mzc_json_type type)
{
	switch (type)
	{
		case MZC_JSON_NULL:
			return "null";
		case MZC_JSON_BOOL:
			return "boolean";
		case MZC_JSON_NUMBER:
			return "number";
		case MZC_JSON_STRING:
			return "string";
		case MZC_JSON_ARRAY:
			return "array";
		case MZC_JSON_OBJECT:
			return "object";
	}
	return "unknown";
}

const mzc_json *
mzc_json_member(const mzc_json *object, const char *key)
{
	const mzc_json *m;

	if (object == NULL || object->type != MZC_JSON_OBJECT)
		return NULL;
	for (m = object->first; m != NULL; m = m->next)
		if (strcmp(m->key, key) == 0)
			return m;
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Reader																  */
/* ---------------------------------------------------------------------- */

/* Keeps counts well inside int32 whatever the input size. */
#define MZC_JSON_MAX_CHILDREN 100000000

typedef struct parser
{
	const unsigned char *start;
	const unsigned char *p;
	const unsigned char *end;
	mzc_arena  *arena;
	mzc_error  *err;
	const char *root;
	int			depth;
	/* The path to the value being parsed: a key or an index per level. */
	const char *path_key[MZC_JSON_MAX_DEPTH + 1];
	int32_t		path_index[MZC_JSON_MAX_DEPTH + 1];
} parser;

static void
path_string(const parser *ps, char *buf, size_t cap)
{
	size_t		used;
	int			i;

	snprintf(buf, cap, "%s", ps->root);
	for (i = 1; i <= ps->depth; i++)
	{
		used = strlen(buf);
		if (used + 1 >= cap)
			break;
		if (ps->path_key[i] != NULL)
			snprintf(buf + used, cap - used, ".%s", ps->path_key[i]);
		else if (ps->path_index[i] >= 0)
			snprintf(buf + used, cap - used, "[%d]", (int) ps->path_index[i]);
	}
}

static mzc_status
syntax(parser *ps, const char *what)
{
	char		path[MZC_ERRPATH_LEN];

	path_string(ps, path, sizeof(path));
	return mzc_fail_at(ps->err, MZC_ERR_INVALID, path,
					   "invalid JSON at byte %lu: %s",
					   (unsigned long) (ps->p - ps->start), what);
}

static mzc_status
no_space(parser *ps)
{
	return mzc_fail(ps->err, MZC_ERR_NO_SPACE,
					"out of memory while parsing the request");
}

static void
skip_ws(parser *ps)
{
	while (ps->p < ps->end &&
		   (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static mzc_json *
new_node(parser *ps, mzc_json_type type)
{
	mzc_json   *n = mzc_arena_alloc(ps->arena, sizeof(mzc_json));

	if (n != NULL)
	{
		memset(n, 0, sizeof(*n));
		n->type = type;
	}
	return n;
}

static int
hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads 4 hex digits after "\u"; -1 if malformed. */
static int32_t
read_hex4(parser *ps)
{
	int32_t		v = 0;
	int			i;

	if (ps->end - ps->p < 4)
		return -1;
	for (i = 0; i < 4; i++)
	{
		int			h = hex_value(ps->p[i]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	ps->p += 4;
	return v;
}

static size_t
put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80)
	{
		out[0] = (char) cp;
		return 1;
	}
	if (cp < 0x800)
	{
		out[0] = (char) (0xC0 | (cp >> 6));
		out[1] = (char) (0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000)
	{
		out[0] = (char) (0xE0 | (cp >> 12));
		out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char) (0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char) (0xF0 | (cp >> 18));
	out[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char) (0x80 | (cp & 0x3F));
	return 4;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid. */
static int
utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80,
				hi = 0xBF;
	int			n,
				i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
	{
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	}
	else if (c >= 0xF0 && c <= 0xF4)
	{
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	}
	else
		return 0;
	if (end - p < n)
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

/* Parses a string at ps->p (on the opening quote) into a NUL-terminated copy. */
static mzc_status
parse_string(parser *ps, const char **out, size_t *out_len)
{
	const unsigned char *q;
	char	   *buf;
	size_t		n = 0;

	ps->p++;					/* opening quote */
	/* Find the closing quote to size the copy (decoding never grows). */
	for (q = ps->p; q < ps->end && *q != '"'; q++)
		if (*q == '\\')
			q++;
	if (q >= ps->end)
		return syntax(ps, "unterminated string");
	buf = mzc_arena_alloc(ps->arena, (size_t) (q - ps->p) + 1);
	if (buf == NULL)
		return no_space(ps);

	while (*ps->p != '"')
	{
		unsigned char c = *ps->p;

		if (c < 0x20)
			return syntax(ps, "control character in string");
		if (c == '\\')
		{
			int32_t		cp;

			ps->p++;
			switch (*ps->p)
			{
				case '"':
				case '\\':
				case '/':
					buf[n++] = (char) *ps->p++;
					continue;
				case 'b':
					buf[n++] = '\b';
					ps->p++;
					continue;
				case 'f':
					buf[n++] = '\f';
					ps->p++;
					continue;
				case 'n':
					buf[n++] = '\n';
					ps->p++;
					continue;
				case 'r':
					buf[n++] = '\r';
					ps->p++;
					continue;
				case 't':
					buf[n++] = '\t';
					ps->p++;
					continue;
				case 'u':
					ps->p++;
					break;
				default:
					return syntax(ps, "invalid escape in string");
			}
			cp = read_hex4(ps);
			if (cp < 0)
				return syntax(ps, "invalid \\u escape");
			if (cp == 0)
				return syntax(ps, "\\u0000 is not allowed in strings");
			if (cp >= 0xDC00 && cp <= 0xDFFF)
				return syntax(ps, "unpaired low surrogate");
			if (cp >= 0xD800 && cp <= 0xDBFF)
			{
				int32_t		lo;

				if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
					return syntax(ps, "unpaired high surrogate");
				ps->p += 2;
				lo = read_hex4(ps);
				if (lo < 0xDC00 || lo > 0xDFFF)
					return syntax(ps, "unpaired high surrogate");
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			}
			n += put_utf8(buf + n, (uint32_t) cp);
			continue;
		}
		else
		{
			int			k = utf8_len(ps->p, ps->end);
			int			i;

			if (k == 0)
				return syntax(ps, "invalid UTF-8 in string");
			for (i = 0; i < k; i++)
				buf[n++] = (char) *ps->p++;
		}
	}
	ps->p++;					/* closing quote */
	buf[n] = '\0';
	*out = buf;
	*out_len = n;
	return MZC_OK;
}

static bool
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static mzc_status
parse_number(parser *ps, mzc_json *node)
{
	const unsigned char *s = ps->p;
	bool		negative = false;
	bool		overflow = false;
	uint64_t	mag = 0;
	uint64_t	limit;
	char	   *text;

	if (*ps->p == '-')
	{
		negative = true;
		ps->p++;
	}
	if (ps->p >= ps->end || !is_digit(*ps->p))
		return syntax(ps, "invalid number");
	if (*ps->p == '0' && ps->p + 1 < ps->end && is_digit(ps->p[1]))
		return syntax(ps, "leading zeros in number");
	limit = negative ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
	while (ps->p < ps->end && is_digit(*ps->p))
	{
		unsigned	d = (unsigned) (*ps->p - '0');

		if (mag > (limit - d) / 10)
			overflow = true;
		else
			mag = mag * 10 + d;
		ps->p++;
	}
	node->integral = true;
	if (ps->p < ps->end && *ps->p == '.')
	{
		ps->p++;
		if (ps->p >= ps->end || !is_digit(*ps->p))
			return syntax(ps, "invalid number");
		while (ps->p < ps->end && is_digit(*ps->p))
			ps->p++;
		node->integral = false;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E'))
	{
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (ps->p >= ps->end || !is_digit(*ps->p))
			return syntax(ps, "invalid number");
		while (ps->p < ps->end && is_digit(*ps->p))
			ps->p++;
		node->integral = false;
	}
	node->in_range = node->integral && !overflow;
	if (node->in_range)
	{
		if (negative)
			node->integer = mag == (uint64_t) INT64_MAX + 1 ? INT64_MIN
				: -(int64_t) mag;
		else
			node->integer = (int64_t) mag;
	}
	text = mzc_arena_alloc(ps->arena, (size_t) (ps->p - s) + 1);
	if (text == NULL)
		return no_space(ps);
	memcpy(text, s, (size_t) (ps->p - s));
	text[ps->p - s] = '\0';
	node->str = text;
	node->len = (size_t) (ps->p - s);
	return MZC_OK;
}

static mzc_status
parse_literal(parser *ps, const char *word, mzc_json *node)
{
	size_t		n = strlen(word);

	if ((size_t) (ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return syntax(ps, "invalid literal");
	ps->p += n;
	(void) node;
	return MZC_OK;
}

static mzc_status parse_value(parser *ps, mzc_json **out);

static mzc_status
parse_container(parser *ps, mzc_json *node, bool object)
{
	mzc_json   *tail = NULL;
	char		close = object ? '}' : ']';
	mzc_status	st;

	if (ps->depth >= MZC_JSON_MAX_DEPTH)
		return syntax(ps, "nesting too deep");
	ps->p++;					/* opening bracket */
	ps->depth++;
	ps->path_key[ps->depth] = NULL;
	ps->path_index[ps->depth] = -1;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close)
	{
		ps->p++;
		ps->depth--;
		return MZC_OK;
	}
	for (;;)
	{
		mzc_json   *child;
		const char *key = NULL;
		size_t		key_len = 0;

		skip_ws(ps);
		if (object)
		{
			if (ps->p >= ps->end || *ps->p != '"')
				return syntax(ps, "expected a string key");
			if ((st = parse_string(ps, &key, &key_len)) != MZC_OK)
				return st;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return syntax(ps, "expected ':'");
			ps->p++;
			ps->path_key[ps->depth] = key;
		}
		else
			ps->path_index[ps->depth] = node->count;
		if (node->count >= MZC_JSON_MAX_CHILDREN)
			return syntax(ps, "too many elements");
		if ((st = parse_value(ps, &child)) != MZC_OK)
			return st;
		/* separators belong to the container, not to the last element */
		ps->path_key[ps->depth] = NULL;
		ps->path_index[ps->depth] = -1;
		child->key = key;
		child->key_len = key_len;
		if (tail == NULL)
			node->first = child;
		else
			tail->next = child;
		tail = child;
		node->count++;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',')
		{
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close)
		{
			ps->p++;
			break;
		}
		return syntax(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
	ps->depth--;
	return MZC_OK;
}

static mzc_status
parse_value(parser *ps, mzc_json **out)
{
	mzc_json   *node;
	mzc_status	st;

	skip_ws(ps);
	if (ps->p >= ps->end)
		return syntax(ps, "unexpected end of input");
	switch (*ps->p)
	{
		case '{':
		case '[':
			node = new_node(ps, *ps->p == '{' ? MZC_JSON_OBJECT : MZC_JSON_ARRAY);
			if (node == NULL)
				return no_space(ps);
			st = parse_container(ps, node, node->type == MZC_JSON_OBJECT);
			break;
		case '"':
			node = new_node(ps, MZC_JSON_STRING);
			if (node == NULL)
				return no_space(ps);
			st = parse_string(ps, &node->str, &node->len);
			break;
		case 't':
		case 'f':
			node = new_node(ps, MZC_JSON_BOOL);
			if (node == NULL)
				return no_space(ps);
			node->boolean = *ps->p == 't';
			st = parse_literal(ps, node->boolean ? "true" : "false", node);
			break;
		case 'n':
			node = new_node(ps, MZC_JSON_NULL);
			if (node == NULL)
				return no_space(ps);
			st = parse_literal(ps, "null", node);
			break;
		default:
			if (*ps->p != '-' && !is_digit(*ps->p))
				return syntax(ps, "unexpected character");
			node = new_node(ps, MZC_JSON_NUMBER);
			if (node == NULL)
				return no_space(ps);
			st = parse_number(ps, node);
			break;
	}
	if (st != MZC_OK)
		return st;
	*out = node;
	return MZC_OK;
}

mzc_status
mzc_json_parse(const char *text, size_t len, const char *root,
			   mzc_arena *arena, const mzc_json **out, mzc_error *err)
{
	parser		ps;
	mzc_json   *value;
	mzc_status	st;

	memset(&ps, 0, sizeof(ps));
	ps.start = (const unsigned char *) text;
	ps.p = ps.start;
	ps.end = ps.start + (text == NULL ? 0 : len);
	ps.arena = arena;
	ps.err = err;
	ps.root = root;
	if ((st = parse_value(&ps, &value)) != MZC_OK)
		return st;
	skip_ws(&ps);
	if (ps.p != ps.end)
		return syntax(&ps, "unexpected data after the value");
	*out = value;
	return MZC_OK;
}

/* ---------------------------------------------------------------------- */
/* Writer																  */
/* ---------------------------------------------------------------------- */

void
mzc_jw_init(mzc_json_writer *w, char *buf, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->cap = buf == NULL ? 0 : cap;
}

static void
put(mzc_json_writer *w, const char *s, size_t n)
{
	/* keep one byte for the terminating NUL */
	if (w->overflow || w->cap == 0 || n > w->cap - 1 - w->len)
	{
		w->overflow = true;
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void
put_str(mzc_json_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

/* Separator before a value (not after a key). */
static void
before_value(mzc_json_writer *w)
{
	if (w->after_key)
	{
		w->after_key = false;
		return;
	}
	if (w->need_comma[w->depth])
		put(w, ",", 1);
	w->need_comma[w->depth] = true;
}

static void
open_container(mzc_json_writer *w, const char *bracket)
{
	before_value(w);
	put_str(w, bracket);
	if (w->depth >= MZC_JSON_MAX_DEPTH)
	{
		w->overflow = true;
		return;
	}
	w->depth++;
	w->need_comma[w->depth] = false;
}

static void
close_container(mzc_json_writer *w, const char *bracket)
{
	put_str(w, bracket);
	if (w->depth > 0)
		w->depth--;
}

void
mzc_jw_begin_object(mzc_json_writer *w)
{
	open_container(w, "{");
}

void
mzc_jw_end_object(mzc_json_writer *w)
{
	close_container(w, "}");
}

void
mzc_jw_begin_array(mzc_json_writer *w)
{
	open_container(w, "[");
}

void
mzc_jw_end_array(mzc_json_writer *w)
{
	close_container(w, "]");
}

static void
put_escaped(mzc_json_writer *w, const char *s)
{
	const unsigned char *p;

	put(w, "\"", 1);
	for (p = (const unsigned char *) s; *p != '\0'; p++)
	{
		char		tmp[8];

		switch (*p)
		{
			case '"':
				put(w, "\\\"", 2);
				break;
			case '\\':
				put(w, "\\\\", 2);
				break;
			case '\b':
				put(w, "\\b", 2);
				break;
			case '\f':
				put(w, "\\f", 2);
				break;
			case '\n':
				put(w, "\\n", 2);
				break;
			case '\r':
				put(w, "\\r", 2);
				break;
			case '\t':
				put(w, "\\t", 2);
				break;
			default:
				if (*p < 0x20)
				{
					snprintf(tmp, sizeof(tmp), "\\u%04x", (unsigned) *p);
					put_str(w, tmp);
				}
				else
					put(w, (const char *) p, 1);
		}
	}
	put(w, "\"", 1);
}

void
mzc_jw_key(mzc_json_writer *w, const char *key)
{
	if (w->need_comma[w->depth])
		put(w, ",", 1);
	w->need_comma[w->depth] = true;
	put_escaped(w, key);
	put(w, ":", 1);
	w->after_key = true;
}

void
mzc_jw_string(mzc_json_writer *w, const char *s)
{
	before_value(w);
	put_escaped(w, s);
}

void
mzc_jw_int(mzc_json_writer *w, int64_t v)
{
	char		tmp[32];

	before_value(w);
	snprintf(tmp, sizeof(tmp), "%lld", (long long) v);
	put_str(w, tmp);
}

void
mzc_jw_bool(mzc_json_writer *w, bool v)
{
	before_value(w);
	put_str(w, v ? "true" : "false");
}

void
mzc_jw_null(mzc_json_writer *w)
{
	before_value(w);
	put_str(w, "null");
}

void
mzc_jw_frontier(mzc_json_writer *w, mzc_frontier f)
{
	if (f.empty)
		mzc_jw_null(w);
	else
		mzc_jw_int(w, f.ts);
}

bool
mzc_jw_finish(mzc_json_writer *w)
{
	if (w->cap > 0)
		w->buf[w->len < w->cap ? w->len : w->cap - 1] = '\0';
	return !w->overflow && w->depth == 0;
}
