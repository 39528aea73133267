/*-------------------------------------------------------------------------
 *
 * tsselect.h
 *	  Timestamp determination for a read (reference 2.5, scenarios T1-T14).
 *
 * Given the since and upper of every input, the isolation level, what the
 * query asked for ("when") and the oracle's read timestamp, choose the time
 * to read at.  With S = join of the input sinces (from {0}), U = meet of the
 * input uppers ({} if none) and L = largest time not in advance of U (F6):
 *
 *	 when			  lower bounds used			 preference
 *	 immediately	  S, oracle (strict), L		 freshest for serializable or
 *												 without a timeline; else
 *												 stalest valid
 *	 freshest write   S, oracle (always)		 stalest valid
 *	 as of t		  t (and t is also an upper bound; S only checked)
 *	 as of at least t t, S						 stalest valid
 *
 * The oracle timestamp is used only when the request needs one
 * (mzc_ts_needs_oracle): with a timeline, for freshest_table_write, and for
 * immediately under strict (or strong session) serializable.  A supplied
 * oracle timestamp is ignored otherwise, as Materialize never fetches it.
 * Strong session serializable adds the session oracle timestamp and
 * min(L, oracle) as lower bounds instead of the oracle itself.  A
 * real-time-recency timestamp is a further lower bound, allowed only for
 * strict serializable reads that may advance to the timeline (immediately,
 * freshest_table_write).
 *
 * Two formulations are implemented.  The classical one accumulates a
 * candidate and then checks S <= candidate.  The constraint one lists lower
 * and upper bounds with their reasons, takes the join of the lower bounds
 * (advanced to min(uppers, L) when preferring freshness) and fails if an
 * upper bound is below it.  The default mode, VERIFY, runs both: the
 * classical result (or error) is the answer, the constraint formulation
 * supplies the binding constraints, and `formulations_agree` says whether
 * both chose the same time (or both failed).  On success they always agree
 * (the unit tests check it over random requests); on failure they report
 * different candidates (the reference's T5 note).
 *
 * The constraint lists are minimised to the tight ones: lower bounds equal to
 * the join of all lower bounds, upper bounds equal to their meet.  Each input
 * is its own storage-input constraint, so the binding inputs are named.
 *
 * Failure (MZC_ERR_SINCE_VIOLATION): `candidate` is the time that was not
 * valid and `blocking` lists every input whose since is not <= it.
 *
 * The result also reports respond_immediately: candidate < U, or true for a
 * read without a timeline.
 *
 * IDENTIFICATION
 *	  src/core/tsselect.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_TSSELECT_H
#define MZC_TSSELECT_H

#include "frontier.h"
#include "status.h"

typedef enum mzc_isolation
{
	MZC_ISO_SERIALIZABLE = 0,
	MZC_ISO_STRICT_SERIALIZABLE,
	MZC_ISO_STRONG_SESSION_SERIALIZABLE
} mzc_isolation;

typedef enum mzc_when_kind
{
	MZC_WHEN_IMMEDIATELY = 0,
	MZC_WHEN_FRESHEST_TABLE_WRITE,
	MZC_WHEN_AS_OF,				/* exactly when_ts */
	MZC_WHEN_AS_OF_AT_LEAST		/* the stalest valid time >= when_ts */
} mzc_when_kind;

typedef enum mzc_ts_mode
{
	MZC_TS_VERIFY = 0,			/* classical answer, both computed */
	MZC_TS_CLASSICAL,
	MZC_TS_CONSTRAINTS
} mzc_ts_mode;

typedef struct mzc_ts_input
{
	mzc_frontier since;			/* the input's read frontier */
	mzc_frontier upper;			/* its write frontier */
} mzc_ts_input;

typedef struct mzc_ts_request
{
	mzc_isolation isolation;
	mzc_when_kind when;
	mzc_ts		when_ts;		/* AS_OF and AS_OF_AT_LEAST */
	const mzc_ts_input *inputs;
	int32_t		ninputs;
	bool		timeline;		/* false: a timestamp-independent read */
	bool		has_oracle_ts;
	mzc_ts		oracle_ts;		/* the timeline oracle's read timestamp */
	bool		has_session_ts;
	mzc_ts		session_ts;		/* strong session serializable only */
	bool		has_rtr_ts;
	mzc_ts		rtr_ts;			/* real-time recency */
	mzc_ts_mode mode;
} mzc_ts_request;

typedef enum mzc_ts_reason
{
	MZC_REASON_STORAGE_INPUT = 0,	/* `input` says which */
	MZC_REASON_QUERY_AS_OF,
	MZC_REASON_ISOLATION_LEVEL, /* `isolation` says which */
	MZC_REASON_REAL_TIME_RECENCY
} mzc_ts_reason;

typedef struct mzc_ts_constraint
{
	mzc_frontier bound;
	mzc_ts_reason reason;
	int32_t		input;			/* STORAGE_INPUT: index into inputs */
	mzc_isolation isolation;	/* ISOLATION_LEVEL */
} mzc_ts_constraint;

/* Lower constraints besides one per input: as-of, oracle, rtr, 2 x session. */
#define MZC_TS_EXTRA_LOWER 5

typedef struct mzc_ts_result
{
	/* Caller-provided buffers (set by mzc_ts_result_init). */
	mzc_ts_constraint *lower;	/* >= ninputs + MZC_TS_EXTRA_LOWER */
	int32_t		lower_capacity;
	int32_t    *blocking;		/* >= ninputs */
	int32_t		blocking_capacity;

	/* The determination. */
	mzc_ts		timestamp;
	bool		respond_immediately;
	mzc_frontier since;			/* join of the input sinces */
	mzc_frontier upper;			/* meet of the input uppers */
	mzc_ts		largest_not_in_advance_of_upper;
	bool		oracle_used;	/* the oracle timestamp was a constraint */
	bool		session_used;

	/* Binding constraints (minimised). */
	int32_t		nlower;
	mzc_ts_constraint upper_constraints[1];
	int32_t		nupper;

	/* On MZC_ERR_SINCE_VIOLATION. */
	mzc_ts		candidate;
	int32_t		nblocking;

	/* Both formulations, whatever the mode ran. */
	bool		classical_ok;
	mzc_ts		classical_ts;	/* the candidate, also on failure */
	bool		constraints_ok;
	mzc_ts		constraints_ts; /* the candidate, also on failure */
	bool		formulations_agree;
} mzc_ts_result;

extern void mzc_ts_result_init(mzc_ts_result *res, mzc_ts_constraint *lower,
							   int32_t lower_capacity, int32_t *blocking,
							   int32_t blocking_capacity);

/* Does this read use the timeline oracle's read timestamp? */
extern bool mzc_ts_needs_oracle(mzc_isolation isolation, mzc_when_kind when,
								bool timeline);

/*
 * Determines the timestamp.  MZC_ERR_INVALID for a malformed request,
 * MZC_ERR_NO_SPACE if the result buffers are too small,
 * MZC_ERR_SINCE_VIOLATION if no valid time exists (see above).
 */
extern mzc_status mzc_determine_timestamp(const mzc_ts_request *req,
										  mzc_ts_result *res, mzc_error *err);

extern const char *mzc_isolation_name(mzc_isolation isolation);
extern const char *mzc_ts_reason_name(mzc_ts_reason reason);

#endif							/* MZC_TSSELECT_H */
