/*-------------------------------------------------------------------------
 *
 * status.c
 *	  Errors as values for mzcoord's pure core.
 *
 * IDENTIFICATION
 *	  src/core/status.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>

#include "status.h"

void
mzc_error_clear(mzc_error *err)
{
	if (err == NULL)
		return;
	err->status = MZC_OK;
	err->message[0] = '\0';
}

mzc_status
mzc_fail(mzc_error *err, mzc_status status, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return status;
	err->status = status;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return status;
}

const char *
mzc_status_name(mzc_status status)
{
	switch (status)
	{
		case MZC_OK:
			return "ok";
		case MZC_ERR_INVALID:
			return "invalid";
		case MZC_ERR_NO_SPACE:
			return "no space";
		case MZC_ERR_NOT_FOUND:
			return "not found";
		case MZC_ERR_NEGATIVE_COUNT:
			return "negative count";
		case MZC_ERR_BEFORE_FRONTIER:
			return "before frontier";
		case MZC_ERR_SINCE_VIOLATION:
			return "since violation";
		case MZC_ERR_STATE:
			return "wrong state";
		case MZC_ERR_ISSUER_GONE:
			return "issuer gone";
		case MZC_ERR_FENCED:
			return "fenced";
	}
	return "unknown";
}
