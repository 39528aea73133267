/*-------------------------------------------------------------------------
 *
 * status.h
 *	  Errors as values for mzcoord's pure core.
 *
 * Every fallible core function returns an mzc_status and, when the caller
 * passes a non-NULL mzc_error, fills it with the same status and a
 * human-readable message.  The core takes structs, not text: naming the
 * offending value of a request (e.g. a JSON path) is the caller's business.
 *
 * Failing functions never change any state: every operation validates its
 * input and checks the capacity of caller-provided memory before it mutates
 * anything.
 *
 * IDENTIFICATION
 *	  src/core/status.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZC_STATUS_H
#define MZC_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mzc_status
{
	MZC_OK = 0,
	MZC_ERR_INVALID,			/* malformed argument or request */
	MZC_ERR_NO_SPACE,			/* caller-provided memory is too small */
	MZC_ERR_NOT_FOUND,			/* no such collection / reader / slot */
	MZC_ERR_NEGATIVE_COUNT,		/* S7: a count would become negative */
	MZC_ERR_BEFORE_FRONTIER,	/* S7: a hold below the current frontier */
	MZC_ERR_SINCE_VIOLATION,	/* R4 / 2.5: a time below a since */
	MZC_ERR_STATE,				/* operation not allowed in this state */
	MZC_ERR_ISSUER_GONE,		/* R7/R8: the hold issuer no longer exists */
	MZC_ERR_FENCED				/* K3/K5: a newer epoch owns the reader */
} mzc_status;

#define MZC_ERRMSG_LEN 512

typedef struct mzc_error
{
	mzc_status	status;
	char		message[MZC_ERRMSG_LEN];
} mzc_error;

#if defined(__GNUC__) || defined(__clang__)
#define MZC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MZC_PRINTF(f, a)
#endif

/* Resets err (if not NULL) to MZC_OK with empty texts. */
extern void mzc_error_clear(mzc_error *err);

/*
 * Records an error in err (which may be NULL) and returns status, so that
 * callers can write "return mzc_fail(err, MZC_ERR_INVALID, ...)".
 */
extern mzc_status mzc_fail(mzc_error *err, mzc_status status,
						   const char *fmt,...) MZC_PRINTF(3, 4);

#endif							/* MZC_STATUS_H */
