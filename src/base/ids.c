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
#include "implications.h"

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
mzcoord_kind_has_history(MzcKind kind)
{
	return kind == MZC_KIND_TABLE || mzcoord_kind_is_fed(kind);
}

bool
mzcoord_kind_is_fed(MzcKind kind)
{
	return kind == MZC_KIND_SOURCE || kind == MZC_KIND_MATERIALIZED_VIEW;
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

/* Global ids are parsed by the core, the one place that knows their form. */
bool
mzcoord_parse_gid(const char *text, int64 *gid)
{
	int64_t		v;

	if (!mzc_gid_parse(text, &v))
		return false;
	*gid = (int64) v;
	return true;
}

/* The text form of a global id, palloc'd in the current context. */
char *
mzcoord_gid_text(int64 gid)
{
	return psprintf(MZC_GID_FMT, gid);
}
