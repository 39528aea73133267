/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  mzcoord's configuration parameters, and the search_path of everything
 *	  it runs with rights other than the caller's.
 *
 * IDENTIFICATION
 *	  src/base/settings.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_SETTINGS_H
#define MZCOORD_SETTINGS_H

#include "postgres.h"

/* Settings (settings.c) */
extern char *mzcoord_database;
extern int	mzcoord_tick_interval;
extern int	mzcoord_max_collections;
extern int	mzcoord_max_holds;
extern int	mzcoord_publish_interval;
extern int	mzcoord_ready_timeout;
extern int	mzcoord_max_future;
extern int	mzcoord_max_holds_per_backend;
extern int	mzcoord_max_holds_per_role;
extern int	mzcoord_max_collections_per_role;
extern bool mzcoord_auto_compact;
extern bool mzcoord_read_only;
extern bool mzcoord_incremental;
extern char *mzcoord_failpoint;
extern int	mzcoord_clock_offset;
extern bool mzcoord_log_read_upper;
extern int	mzcoord_standby_lease_ttl;
extern int	mzcoord_max_leases;
extern int	mzcoord_max_lease_ttl;

/* Maintenance workers (settings.c, define_maintenance_settings) */
extern int	mzcoord_max_maintenance_workers;
extern int	mzcoord_maintenance_step_timeout;

/*
 * The search_path of every statement mzcoord runs with rights other than the
 * caller's: the coordinator's, and a backend's switched to an owner.  Only
 * built-ins resolve unqualified names; pg_temp last so that a temporary
 * object never shadows one.
 */
#define MZC_SAFE_SEARCH_PATH "pg_catalog, pg_temp"

extern bool mzcoord_define_settings(void);

#endif							/* MZCOORD_SETTINGS_H */
