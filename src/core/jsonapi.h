/*-------------------------------------------------------------------------
 *
 * jsonapi.h
 *	  JSON entry points to timestamp selection and as-of selection.
 *
 * Pure C (fuzzed by test/fuzz), used by the SQL functions
 * mzcoord.determine_timestamp(jsonb) and mzcoord.select_as_ofs(jsonb).
 * Both take the request text and a caller arena, and return the result text
 * (NUL-terminated, in the arena) or an error with the JSON path of the
 * offending value, e.g. "request.inputs[2].since: ...".  Requests are
 * checked strictly: unknown keys, missing keys, wrong types, fractions and
 * exponents, integers beyond int64, negative timestamps, unknown or
 * duplicate ids and cycles are all MZC_ERR_INVALID; nesting is bounded.
 * MZC_ERR_NO_SPACE means the arena was too small: retry with a larger one
 * (mzc_json_arena_size() is a generous first guess).
 *
 * determine_timestamp request:
 *	 {"isolation": "serializable" | "strict serializable"
 *				   | "strong session serializable",
 *	  "when": {"kind": "immediately" | "freshest_table_write"
 *					 | "as_of" | "as_of_at_least",
 *			   "ts": N (as_of and as_of_at_least only)},
 *	  "inputs": [{"id": "u1", "since": N|null, "upper": N|null}, ...],
 *	  "oracle_read_ts": N|null,				(optional, default null)
 *	  "timeline": true|false,				(optional, default true)
 *	  "session_oracle_read_ts": N|null,		(optional, strong session only)
 *	  "real_time_recency_ts": N|null}		(optional, strict only)
 * result:
 *	 {"timestamp": N, "respond_immediately": bool, "since": N|null,
 *	  "upper": N|null, "largest_not_in_advance_of_upper": N,
 *	  "constraints": {"lower": [C, ...], "upper": [C, ...]}}
 * where each binding constraint C is
 *	 {"ts": N|null, "reason": "storage_input", "input": "u1"}
 *	 {"ts": N, "reason": "query_as_of"}
 *	 {"ts": N, "reason": "isolation_level", "isolation": "..."}
 *	 {"ts": N, "reason": "real_time_recency"}
 * A request whose candidate lies below some input's since fails with
 * MZC_ERR_SINCE_VIOLATION and fills the violation (every blocking input id
 * and its since).
 *
 * select_as_ofs request:
 *	 {"now": N, "read_only": bool (optional, default false),
 *	  "storage": {"s1": {"since": N|null, "upper": N|null}, ...},
 *	  "dataflows": [{"id": "u1", "inputs": ["s1", ...],
 *					 "policy": {"lag": N, "granularity": N (default 1000)}
 *							 | {"valid_from": N} | null (optional)}, ...]}
 * result: {"u1": N|null, ...} in dataflow order (null: sealed or pruned).
 * A dataflow whose id is also under "storage" writes that collection (a
 * materialized view); the others are indexes.  Inputs under "storage" are
 * storage inputs, the others must be dataflow ids.
 *
 * IDENTIFICATION
 *	  src/core/jsonapi.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_JSONAPI_H
#define MZC_JSONAPI_H

#include "json.h"

/* The blocking inputs of a failed timestamp determination (in the arena). */
typedef struct mzc_since_violation
{
	mzc_ts		timestamp;		/* the candidate that was not valid */
	int32_t		n;
	const char **ids;
	mzc_frontier *sinces;
} mzc_since_violation;

/* A first arena size for a request of request_len bytes. */
extern size_t mzc_json_arena_size(size_t request_len);

extern mzc_status mzc_json_determine_timestamp(const char *request,
											   size_t request_len,
											   mzc_arena *arena,
											   const char **result,
											   size_t *result_len,
											   mzc_since_violation *violation,
											   mzc_error *err);

extern mzc_status mzc_json_select_as_ofs(const char *request,
										 size_t request_len,
										 mzc_arena *arena,
										 const char **result,
										 size_t *result_len,
										 mzc_error *err);

#endif							/* MZC_JSONAPI_H */
