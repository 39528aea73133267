/*-------------------------------------------------------------------------
 *
 * extension.h
 *	  DROP EXTENSION mzcoord: the utility hook that takes its locks in a
 *	  fixed order before the drop runs.
 *
 * IDENTIFICATION
 *	  src/base/extension.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_EXTENSION_H
#define MZCOORD_EXTENSION_H

#include "postgres.h"

extern void mzcoord_install_drop_hook(void);

#endif							/* MZCOORD_EXTENSION_H */
