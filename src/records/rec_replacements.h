/*-------------------------------------------------------------------------
 *
 * rec_replacements.h
 *	  The rows of mzcoord.replacements: the pairs of a replacement and the
 *	  materialized view it replaces.
 *
 * Writers (doc/architecture.md, "Ownership and locking"):
 *
 *	mzcoord.replacements			create_replacement (_record_replacement)
 *									and apply_replacement (_swap_definition),
 *									src/compute/replace.c through
 *									src/sql/84_replacement.sql
 *	mzcoord.replaced_definitions	apply_replacement (_swap_definition);
 *									no C code reads it
 *
 * IDENTIFICATION
 *	  src/records/rec_replacements.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_REC_REPLACEMENTS_H
#define MZCOORD_REC_REPLACEMENTS_H

#include "postgres.h"

/* The pair a replacement belongs to. */
typedef struct MzcReplacementPair
{
	char	   *item_id;		/* the replacement */
	char	   *target_id;
	Oid			target_rel;
} MzcReplacementPair;

extern bool mzcoord_rec_replacements_is_one(const char *item_id);
extern MzcReplacementPair mzcoord_rec_replacements_pair(Oid relid);

#endif							/* MZCOORD_REC_REPLACEMENTS_H */
