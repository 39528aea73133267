/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  mzcoord's configuration parameters (doc/operations.md lists them).
 *
 * Reloadable settings exist in every process that loads the library; the
 * ones that size shared memory or name the served database only when the
 * library is preloaded, since nothing else could use them.
 *
 * IDENTIFICATION
 *	  src/base/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "settings.h"

/* Settings; see doc/operations.md. */
char	   *mzcoord_database = NULL;
int			mzcoord_tick_interval = 1000;
int			mzcoord_max_collections = 4096;
int			mzcoord_max_holds = 8192;
int			mzcoord_publish_interval = 10000;
bool		mzcoord_auto_compact = true;
bool		mzcoord_read_only = false;
bool		mzcoord_incremental = true;
char	   *mzcoord_failpoint = NULL;
int			mzcoord_clock_offset = 0;
bool		mzcoord_log_read_upper = false;
int			mzcoord_standby_lease_ttl = 60;
int			mzcoord_ready_timeout = 10000;
int			mzcoord_max_future = 366 * 24 * 60;
int			mzcoord_max_holds_per_backend = -1;
int			mzcoord_max_holds_per_role = -1;
int			mzcoord_max_collections_per_role = -1;
int			mzcoord_max_leases = 16;
int			mzcoord_max_lease_ttl = 24 * 3600;

/* Maintenance workers: how many, and how long one step may run. */
int			mzcoord_max_maintenance_workers = 2;
int			mzcoord_maintenance_step_timeout = 60000;

/*
 * The maintenance workers (src/compute/maintain.c): the pool's size sizes
 * shared memory, so it is set at server start only, and only when
 * preloading; the step timeout is reloadable.
 */
static void
define_maintenance_settings(bool preloading)
{
	DefineCustomIntVariable("mzcoord.maintenance_step_timeout",
							"Longest time one refresh or export step may run.",
							"A step that runs longer is canceled, recorded in "
							"mzcoord.maintenance and retried after a back-off; "
							"0 disables the limit.",
							&mzcoord_maintenance_step_timeout,
							60000, 0, 24 * 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
	if (!preloading)
		return;
	DefineCustomIntVariable("mzcoord.max_maintenance_workers",
							"Number of background workers that refresh views and export sinks.",
							"Each runs one step at a time; they count against "
							"max_worker_processes.",
							&mzcoord_max_maintenance_workers,
							2, 1, 64,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

/* Timing of the coordinator and of calls that wait for it. */
static void
define_timing_settings(void)
{
	/*
	 * Reloadable settings exist in every process that loads the library, so
	 * that SET and SHOW work even where the library was loaded late.
	 */
	DefineCustomIntVariable("mzcoord.tick_interval",
							"Interval between two ticks of the mzcoord coordinator.",
							"Each tick advances frontiers, writes changed frontiers to the "
							"catalog and tells the compactor which bounds moved.",
							&mzcoord_tick_interval,
							1000, 10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("mzcoord.publish_interval",
							"Least time between two publications of a compaction bound that only follows its policy.",
							"A since never passes its published bound, so this also bounds how "
							"far such a since may lag its policy, and how much longer its history "
							"is kept; 0 publishes every change at the next tick.",
							&mzcoord_publish_interval,
							10000, 0, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("mzcoord.ready_timeout",
							"How long a call waits for the coordinator to load the catalog.",
							"After a start, a crash restart or CREATE EXTENSION, calls that need "
							"the controller wait up to this long before failing with 57P03.",
							&mzcoord_ready_timeout,
							10000, 0, 3600 * 1000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("mzcoord.max_future",
							"How far beyond the wall clock a time given by a user may be.",
							"Appends, upper advances and refresh times beyond it are refused.",
							&mzcoord_max_future,
							366 * 24 * 60, 1, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_MIN,
							NULL, NULL, NULL);

}

/* What one session or role may hold (superuser-only). */
static void
define_limit_settings(void)
{
	/*
	 * Superuser-only: a user must not raise the limit that protects every
	 * other user from them.  A superuser can set them per role with ALTER
	 * ROLE ... SET.
	 */
	DefineCustomIntVariable("mzcoord.max_holds_per_backend",
							"Maximum number of read holds one session may hold at once.",
							"-1 means a quarter of mzcoord.max_holds, so that one session "
							"can never take every hold.",
							&mzcoord_max_holds_per_backend,
							-1, -1, 10000000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("mzcoord.max_holds_per_role",
							"Maximum number of read holds the sessions of one role may hold at once.",
							"-1 means half of mzcoord.max_holds, so that one role can never "
							"take every hold.",
							&mzcoord_max_holds_per_role,
							-1, -1, 10000000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	/*
	 * Collections owned by one role (ddl.c): superuser-only for the same
	 * reason, so that one role cannot take every collection slot.
	 */
	DefineCustomIntVariable("mzcoord.max_collections_per_role",
							"Maximum number of collections one role may own.",
							"Tables, sources, materialized views, indexes and sinks count. "
							"-1 means half of mzcoord.max_collections, so that one role can "
							"never take every collection slot.",
							&mzcoord_max_collections_per_role,
							-1, -1, 10000000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	/*
	 * Leases (lease.c): superuser-only for the same reason.  A long ttl is
	 * how an abandoned lease pins history, so it has a ceiling.
	 */
	DefineCustomIntVariable("mzcoord.max_leases",
							"Maximum number of leases one role may own.",
							"Expired leases count until they are dropped.",
							&mzcoord_max_leases,
							16, 0, 1000000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("mzcoord.max_lease_ttl",
							"Maximum ttl of a lease.",
							"A lease that is not renewed within its ttl expires and stops "
							"protecting history.",
							&mzcoord_max_lease_ttl,
							24 * 3600, 1, INT_MAX / 1000,
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);
}

/* Operating modes: compaction, read-only, test failpoints. */
static void
define_mode_settings(void)
{
	DefineCustomBoolVariable("mzcoord.auto_compact",
							 "Lets the coordinator compact histories up to their since.",
							 "Off pauses physical compaction; histories grow until it is "
							 "turned on again or mzcoord.compact() is called.",
							 &mzcoord_auto_compact,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("mzcoord.read_only",
							 "Keeps the coordinator from publishing compaction bounds and from compacting.",
							 "Reads and read holds keep working; sinces stay at their "
							 "committed compaction bounds until it is turned off.",
							 &mzcoord_read_only,
							 false,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	/*
	 * Read by the coordinator, which refreshes the views: set it with ALTER
	 * SYSTEM (or in postgresql.conf) and reload.
	 */
	DefineCustomBoolVariable("mzcoord.incremental",
							 "Lets the coordinator refresh eligible continual materialized views from their inputs' updates.",
							 "Off recomputes every view's query at each time its inputs "
							 "changed; the contents are the same either way.",
							 &mzcoord_incremental,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	/*
	 * Test-only: names a failpoint (src/base/failpoint.c) at which the
	 * server crashes.  Superuser only; GUC_NOT_IN_SAMPLE keeps it out of
	 * postgresql.conf.sample.
	 */
	DefineCustomStringVariable("mzcoord.failpoint",
							   "Test only: crash the server (PANIC) at the named failpoint.",
							   "Empty means none.  Points: publish_before_commit, "
							   "compaction_before_record, bootstrap, lease_expiry, "
							   "refresh_after_history, refresh_before_commit, "
							   "export_before_upper, export_before_commit.",
							   &mzcoord_failpoint,
							   "",
							   PGC_SUSET,
							   GUC_NOT_IN_SAMPLE,
							   NULL, NULL, NULL);

	/*
	 * Test-only: puts this session's clock ahead, so that a test can run
	 * the timeline ahead of the wall clock (its writes then commit, and its
	 * strict reads close the timeline, up to that far ahead) and show that
	 * the durable ceiling carries such times across a crash or a failover.
	 */
	/*
	 * Set by a standby's strict serializable reads on their connection to
	 * the primary (controller/standby.c): the primary then logs the table
	 * upper at the read's time at once, rather than at its next tick.
	 */
	DefineCustomBoolVariable("mzcoord.log_read_upper",
							 "Logs in WAL the table upper at the time each strict serializable read of this session chose.",
							 "A standby that replayed it can answer at that time without "
							 "waiting for the coordinator's next tick.  Standbys set it on "
							 "their own connections to the primary.",
							 &mzcoord_log_read_upper,
							 false,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	/* Read by the lease keeper of a standby (worker/keeper.c). */
	DefineCustomIntVariable("mzcoord.standby_lease_ttl",
							"Time to live of the lease a standby keeps on the primary for its readers.",
							"Renewed every third of it while readers hold times; once the "
							"standby is gone the primary keeps the history this long.",
							&mzcoord_standby_lease_ttl,
							60, 3, 24 * 60 * 60,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("mzcoord.clock_offset",
							"Test only: moves this session's clock ahead by this much.",
							"Its writes and strict serializable reads then put the "
							"shared timeline that far ahead of the wall clock.",
							&mzcoord_clock_offset,
							0, 0, 24 * 60 * 60 * 1000,
							PGC_SUSET,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

}

/* Settings that size shared memory or name the database (postmaster). */
static void
define_postmaster_settings(void)
{
	DefineCustomStringVariable("mzcoord.database",
							   "Database served by the mzcoord coordinator.",
							   "The coordinator waits, without logging errors, "
							   "until this database exists.",
							   &mzcoord_database,
							   "postgres",
							   PGC_POSTMASTER,
							   0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("mzcoord.max_collections",
							"Maximum number of collections the controller tracks.",
							"Sizes shared memory; a full table rejects new collections.",
							&mzcoord_max_collections,
							4096, 16, 1000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("mzcoord.max_holds",
							"Maximum number of read holds held at once in shared memory.",
							"Sizes shared memory; a full table rejects new holds.",
							&mzcoord_max_holds,
							8192, 64, 10000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

/*
 * Defines every setting.  Returns true when the library is being preloaded
 * (and not under pg_upgrade), that is when shared memory and the worker
 * should be set up.
 */
bool
mzcoord_define_settings(void)
{
	define_timing_settings();
	define_limit_settings();
	define_mode_settings();
	define_maintenance_settings(process_shared_preload_libraries_in_progress &&
								!IsBinaryUpgrade);
	if (!process_shared_preload_libraries_in_progress)
	{
		MarkGUCPrefixReserved("mzcoord");
		return false;
	}

	/* No worker and no shared state while pg_upgrade drives the server. */
	if (IsBinaryUpgrade)
	{
		MarkGUCPrefixReserved("mzcoord");
		return false;
	}

	define_postmaster_settings();
	MarkGUCPrefixReserved("mzcoord");
	return true;
}
