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
