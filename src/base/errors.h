/*-------------------------------------------------------------------------
 *
 * errors.h
 *	  Error reports shared by the SQL functions of the core and the
 *	  controller.
 *
 * IDENTIFICATION
 *	  src/base/errors.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_ERRORS_H
#define MZCOORD_ERRORS_H

#include "postgres.h"

#include "frontier.h"

/*
 * Raises SQLSTATE 55000 "timestamp N is not valid for all inputs", with a
 * detail naming each of the n blocking inputs (names[i], which the report
 * quotes) and its since (sinces[i]; {} reads "no readable time"), and a hint
 * about as_of_at_least and retain history.
 */
extern void mzcoord_report_since_violation(mzc_ts ts, int n,
										   const char *const *names,
										   const mzc_frontier *sinces) pg_attribute_noreturn();


#endif							/* MZCOORD_ERRORS_H */
