/*-------------------------------------------------------------------------
 *
 * extension.h
 *	  DROP EXTENSION mzcoord: the utility hook that takes its locks in a
 *	  fixed order before the drop runs, and the guard every entry point
 *	  passes before it touches a relation of the extension (see the
 *	  locking rule at the top of extension.c).
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
extern Size mzcoord_drop_guard_shmem_size(void);
extern void mzcoord_drop_guard_shmem_init(void);
extern void mzcoord_extension_guard(void);
extern void mzcoord_extension_lock_for_dependency(void);
extern void mzcoord_extension_check_waiters(void);
extern bool mzcoord_extension_ready(void);
extern bool mzcoord_extension_lookup(Oid ext, char **version,
									 TransactionId *xmin);
extern char *mzcoord_extension_version(Oid ext);
extern void mzcoord_extension_require_current(Oid ext);

#endif							/* MZCOORD_EXTENSION_H */
