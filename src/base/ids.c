/*-------------------------------------------------------------------------
 *
 * ids.c
 *	  Item kinds and global ids: parsing and formatting.
 *
 * IDENTIFICATION
 *	  src/base/ids.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ids.h"

/* Indexed by MzcKind; the spelling mzcoord.items.kind stores. */
static const char *const kind_names[] = {
	"table", "source", "materialized_view", "index", "sink"
};

const char *
mzcoord_kind_name(MzcKind kind)
{
	return kind_names[kind];
}

bool
mzcoord_kind_parse(const char *name, MzcKind *kind)
{
	for (int i = 0; i < lengthof(kind_names); i++)
		if (strcmp(name, kind_names[i]) == 0)
		{
			*kind = (MzcKind) i;
			return true;
		}
	return false;
}

/*
 * Parses "u<N>" with N a positive decimal without leading zeros, so that
 * every collection has exactly one spelling.
 */
bool
mzcoord_parse_gid(const char *text, int64 *gid)
{
	int64		v = 0;

	if (text[0] != 'u' || text[1] < '1' || text[1] > '9')
		return false;
	for (const char *p = text + 1; *p; p++)
	{
		if (*p < '0' || *p > '9')
			return false;
		if (v > (PG_INT64_MAX - (*p - '0')) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	*gid = v;
	return true;
}

/* The text form of a global id, palloc'd in the current context. */
char *
mzcoord_gid_text(int64 gid)
{
	return psprintf(MZC_GID_FMT, gid);
}
