/*-------------------------------------------------------------------------
 *
 * bootstrap.h
 *	  Building the controller from the catalog (bootstrap.c).
 *
 * IDENTIFICATION
 *	  src/controller/bootstrap.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_BOOTSTRAP_H
#define MZCOORD_BOOTSTRAP_H

#include "postgres.h"

/* Takes the controller lock itself; see bootstrap.c. */
extern void mzcoord_ctl_bootstrap(Oid ext);

#endif							/* MZCOORD_BOOTSTRAP_H */
