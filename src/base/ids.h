/*-------------------------------------------------------------------------
 *
 * ids.h
 *	  The vocabulary every plane shares: item kinds, global ids and the
 *	  default retain history.  One definition of each, here.
 *
 * IDENTIFICATION
 *	  src/base/ids.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_IDS_H
#define MZCOORD_IDS_H

#include "postgres.h"

#include "policy.h"

/*
 * The catalog version this library runs against: the extversion of
 * extension mzcoord, and default_version in mzcoord.control (the Makefile
 * refuses to build the install script if they differ).  Against any other
 * version the coordinator waits and SQL calls that need it fail (55000)
 * until ALTER EXTENSION mzcoord UPDATE (src/base/extension.c).
 */
#define MZC_CATALOG_VERSION "0.9"

/* Item kinds, as stored in mzcoord.items.kind. */
typedef enum MzcKind
{
	MZC_KIND_TABLE = 0,
	MZC_KIND_SOURCE,
	MZC_KIND_MATERIALIZED_VIEW,
	MZC_KIND_INDEX,
	MZC_KIND_SINK
} MzcKind;

extern const char *mzcoord_kind_name(MzcKind kind);
extern bool mzcoord_kind_parse(const char *name, MzcKind *kind);

/*
 * Kinds whose collection has a history relation (storage): tables, sources
 * and materialized views.  Of these, a "fed" history is written by explicit
 * appends at chosen times (a source's appends, a materialized view's
 * refreshes), and its relation, guarded against direct writes, shows the
 * contents at upper - 1; a table's history is captured from its writes.
 */
extern bool mzcoord_kind_has_history(MzcKind kind);
extern bool mzcoord_kind_is_fed(MzcKind kind);

/*
 * Global ids are "u<N>" with N > 0; shared memory keys collections by N.
 * MZC_GID_FMT formats N back into the text form (for messages and SPI).
 */
#define MZC_GID_FMT "u" INT64_FORMAT
extern bool mzcoord_parse_gid(const char *text, int64 *gid);
extern char *mzcoord_gid_text(int64 gid);

/* Longest item id ("u" and up to 19 digits) plus the terminator. */
#define MZC_ITEM_ID_LEN 24

/* Longest error message kept in shared memory for introspection. */
#define MZC_ERROR_LEN 256

/* Most inputs a collection can hold (its dependencies). */
#define MZC_MAX_INPUTS 16

/*
 * The default retain history is the lag of the default read policy (P5),
 * which the pure core defines; it is also the least a user may ask for.
 */
#define MZC_DEFAULT_RETAIN_MS MZC_DEFAULT_WINDOW_MS
#define MZC_MIN_RETAIN_MS MZC_DEFAULT_WINDOW_MS

#endif							/* MZCOORD_IDS_H */
