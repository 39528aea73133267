/*-------------------------------------------------------------------------
 *
 * rec_items.h
 *	  The rows of the catalog of items: mzcoord.items, mzcoord.item_inputs
 *	  and mzcoord.sink_options, read (and, for a dropped relation's item,
 *	  deleted) by the statements of rec_items.c.
 *
 * Writers, one per table and column (doc/architecture.md, "Ownership and
 * locking"):
 *
 *	mzcoord.items			every column: the catalog DDL functions
 *							(src/catalog/ddl.c, and the rows of a dropped
 *							relation: mzcoord_rec_items_delete_dropped) and
 *							the implications they trigger (the PL/pgSQL
 *							leaves of src/sql/20_catalog_functions.sql);
 *							items.definition also apply_replacement
 *							(_swap_definition, src/sql/84_replacement.sql)
 *	mzcoord.item_inputs		the implications (_install_collection,
 *							_drop_item, and _replace_definition for a
 *							replaced view's new inputs)
 *	mzcoord.sink_options	create_sink (src/catalog/ddl.c, through
 *							_catalog_set_sink_options, src/sql/61_sinks.sql)
 *	mzcoord.implication_log	the implications (_log), which no C code reads
 *
 * Unless a function says otherwise, the caller is connected to SPI.
 *
 * IDENTIFICATION
 *	  src/records/rec_items.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_ITEMS_H
#define MZCOORD_REC_ITEMS_H

#include "postgres.h"

#include "utils/array.h"

/*
 * What the catalog knows about a relation: the item it belongs to and the
 * global id of the item's primary collection.  Strings are palloc'd.
 */
typedef struct MzcItemRef
{
	bool		found;
	char	   *id;				/* item id */
	char	   *kind;			/* item kind */
	char	   *global_id;		/* primary collection, NULL if none yet */
} MzcItemRef;

/* What the catalog says of a sink (read after it is locked). */
typedef struct MzcRecSink
{
	int64		as_of;
	int64		upper;
	bool		sealed;			/* upper is the empty frontier */
	int64		input;			/* global id of its input */
	bool		snapshot;
} MzcRecSink;

/* What the catalog says of a materialized view (read after it is locked). */
typedef struct MzcRecView
{
	char	   *definition;
	ArrayType  *schedule;		/* NULL: continual */
	int64		as_of;
	int64		upper;
	bool		sealed;			/* upper is the empty frontier */
	int			ninputs;
	int64	   *inputs;			/* global ids */
} MzcRecView;

/* One row of mzcoord.item_inputs, as global id numbers. */
typedef struct MzcRecRead
{
	int64		reader;
	int64		input;
} MzcRecRead;

extern char *mzcoord_rec_fresh_value(const char *sql, Oid type, Datum value);
extern void mzcoord_rec_items_lookup(Oid relid, MzcItemRef *ref);
extern char *mzcoord_rec_items_dependents(const char *item_id);
extern void mzcoord_rec_items_delete_dropped(Datum relids);
extern bool mzcoord_rec_items_transition(const char *tablename, Datum *rows);
extern int	mzcoord_rec_items_reads_among(Datum ids, MzcRecRead **reads);
extern bool mzcoord_rec_items_read_sink(int64 gid, MzcRecSink *s);
extern bool mzcoord_rec_items_read_view(int64 gid, MemoryContext cxt,
										MzcRecView *v);
extern bool mzcoord_rec_items_claim(int64 gid);
extern char *mzcoord_rec_items_kind_of(Oid relid);
extern char *mzcoord_rec_items_id_of(Oid relid);
extern char *mzcoord_rec_items_relation_text(const char *item_id);
extern void mzcoord_rec_items_settings(const char *item_id, Oid relid,
									   Datum *values, char *nulls);
extern bool mzcoord_rec_items_reads_target(const char *item_id,
										   const char *target_id);

#endif							/* MZCOORD_REC_ITEMS_H */
