/*-------------------------------------------------------------------------
 *
 * extension.c
 *	  DROP EXTENSION mzcoord takes its locks in an order that cannot deadlock
 *	  with the sessions using the extension, and the sessions find out
 *	  without a lock whether such a drop is under way.
 *
 * PostgreSQL's DROP EXTENSION locks the extension, then every object that
 * depends on it as it finds them (the histories, the catalog tables, the
 * relations mzcoord created), and only while it deletes them the tables
 * those objects hang on: a registered table when its capture triggers go,
 * the table of an mzcoord index when the index goes.  Sessions take the
 * other order: a writer locks its table, then (in the capture trigger, or
 * when it opens the table's indexes) the history or the index; DDL locks
 * its table, then mzcoord's event triggers read the catalog and analyse
 * the definitions of materialized views, locking their input tables.
 * Hence 40P01.
 *
 * A utility hook therefore takes, before PostgreSQL's own work, the
 * extension's lock, makes sure that no transaction that may touch
 * mzcoord's relations is still running (below), and then takes, in OID
 * order, an ACCESS EXCLUSIVE lock on each table the drop will reach: the
 * registered tables and sources (the relations of the histories), the
 * relations mzcoord created, and the tables of the indexes it created.
 *
 * LOCKING RULE (the guard)
 *
 * Every entry point of the extension (SQL functions, the capture trigger,
 * the event triggers, the coordinator's compaction) calls
 * mzcoord_extension_guard() before it locks anything of mzcoord's.  Once a
 * transaction has passed it, no DROP EXTENSION mzcoord of its database gets
 * past step D3 until the transaction ends; a transaction that calls it
 * while a drop is past D2 fails with 55000 instead.  Shared state:
 * drops_active (drops past D2, not yet past D5), generation (advanced by
 * every drop that reached D5, committed or not) and, per backend, the local
 * transaction id with which it last passed the guard (passed[]).
 *
 * A session, once per transaction:
 *	 G1. passed[MyBackendId] := its lxid; full memory barrier.
 *	 G2. Read drops_active, then (read barrier) generation.
 *	 G3. If drops_active is 0 and generation is the value it read when it
 *		 last found the extension under the extension's lock: pass, without
 *		 any lock.
 *	 G4. Otherwise: a share lock on the extension, without waiting (55000
 *		 if a drop holds or waits for it), kept to the end of the
 *		 transaction; then the catalog names the extension; remember it with
 *		 the generation read in G2.
 *
 * DROP EXTENSION mzcoord, in this hook and at the end of its transaction:
 *	 D1. ACCESS EXCLUSIVE lock on the extension (waits for G4 sessions and
 *		 the coordinator's tick, which hold the share lock).
 *	 D2. drops_active += 1 (an atomic, full barrier).
 *	 D3. Wait for the running transaction of every other backend of the
 *		 database whose passed[] names it (VirtualXactLock).
 *	 D4. Lock the tables in OID order; PostgreSQL's drop.
 *	 D5. Once the transaction has released its locks, committed or not (a
 *		 resource owner callback, after the locks): generation += 1, then
 *		 drops_active -= 1.
 *
 * Why this holds.  G1 and D2 are each a store followed by a full barrier,
 * G2 and D3 each a load of the other's store: a session that read
 * drops_active = 0 stored passed[] before D2, so D3 sees it and waits for
 * its transaction.  While D3 waits, the drop holds no lock but the
 * extension's, which mzcoord never waits for (G4 and the waits for the
 * coordinator take it conditionally), so the wait closes no cycle of
 * mzcoord's making.  A session that reads drops_active > 0 takes G4 and
 * fails while the drop holds the lock.  A session that reads the 0 written
 * by D5 also reads the generation D5 advanced before it, and takes G4,
 * which finds the extension's fate in the catalog.  So the common path
 * costs a store, a barrier and two reads, and no heavyweight lock.
 *
 * One thing PostgreSQL itself does waits for the extension's lock: it
 * share-locks the object a new dependency references.  Code that records a
 * dependency on the extension therefore takes that lock first, without
 * waiting (mzcoord_extension_lock_for_dependency()).
 *
 * A count, not a flag, because drops in several databases can overlap
 * (each waits only for the backends of its own database; the others only
 * take G4 meanwhile).  The generation is what lets G3 trust the extension
 * OID remembered from an earlier transaction.  A crash restart resets
 * shared memory together with every transaction, the drop's included.  A
 * transaction that dropped the extension cannot be prepared: its locks
 * would outlive D5.  A session waiting for the coordinator (which cannot
 * tick while a drop holds the lock) calls mzcoord_extension_check_waiters()
 * in every round and fails with 55000 rather than hold up D3 forever.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"
#include "port/atomics.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/sinvaladt.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/resowner.h"

#include "extension.h"
#include "ids.h"

PG_FUNCTION_INFO_V1(mzcoord_extension_guard_sql);

/* The shared state of the guard; see the locking rule above. */
typedef struct MzcDropGuard
{
	pg_atomic_uint32 drops_active;
	pg_atomic_uint64 generation;
	int			nbackends;		/* entries of passed[] */
	pg_atomic_uint32 passed[FLEXIBLE_ARRAY_MEMBER]; /* by BackendId - 1 */
} MzcDropGuard;

static MzcDropGuard *drop_guard = NULL;

/* This backend's view: what it passed the guard with. */
static LocalTransactionId guarded_lxid = InvalidLocalTransactionId;
static bool guarded_locked = false; /* by G4, holding the share lock */
static Oid	cached_ext = InvalidOid;
static uint64 cached_generation = 0;

static bool mzcoord_extension_current(Oid ext);

/* Drops this backend's transaction counts in drops_active (D2 to D5). */
static uint32 my_drops = 0;
static bool drop_callbacks_registered = false;

static ProcessUtility_hook_type prev_process_utility = NULL;

/* ----------------------------------------------------------------
 * Shared memory
 * ----------------------------------------------------------------
 */

Size
mzcoord_drop_guard_shmem_size(void)
{
	return CACHELINEALIGN(add_size(offsetof(MzcDropGuard, passed),
								   mul_size(MaxBackends,
											sizeof(pg_atomic_uint32))));
}

/* From the shmem_startup_hook, under AddinShmemInitLock. */
void
mzcoord_drop_guard_shmem_init(void)
{
	bool		found;

	drop_guard = ShmemInitStruct("mzcoord drop guard",
								 mzcoord_drop_guard_shmem_size(), &found);
	if (!found)
	{
		pg_atomic_init_u32(&drop_guard->drops_active, 0);
		pg_atomic_init_u64(&drop_guard->generation, 0);
		drop_guard->nbackends = MaxBackends;
		for (int i = 0; i < MaxBackends; i++)
			pg_atomic_init_u32(&drop_guard->passed[i],
							   InvalidLocalTransactionId);
	}
}

/* ----------------------------------------------------------------
 * The guard (G1 to G4)
 * ----------------------------------------------------------------
 */

/* 55000: a drop holds or waits for the lock, possibly waiting for us. */
static void
report_busy(bool waits_for_us)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("extension \"mzcoord\" is being dropped or altered"),
			 waits_for_us ?
			 errdetail("DROP EXTENSION or ALTER EXTENSION waits for this transaction, and the coordinator pauses until it is done.") :
			 errdetail("DROP EXTENSION or ALTER EXTENSION holds or waits for the extension's lock."),
			 errhint("Retry once that command has finished.")));
}

/*
 * Before an entry point of the extension touches any of its relations
 * (histories, mzcoord.storage, the catalog tables, relations mzcoord
 * created), or an event trigger reads the catalog: see the locking rule at
 * the top of this file.  Once per transaction.  Without shared memory (the
 * library was not preloaded, so no drop hook runs either) every call takes
 * the share lock.
 */
void
mzcoord_extension_guard(void)
{
	Oid			ext = cached_ext;
	uint64		generation = 0;

	if (guarded_lxid == MyProc->lxid)
		return;

	if (drop_guard != NULL && MyBackendId != InvalidBackendId &&
		MyBackendId <= drop_guard->nbackends)
	{
		uint32		active;

		/* G1 */
		pg_atomic_write_u32(&drop_guard->passed[MyBackendId - 1],
							MyProc->lxid);
		pg_memory_barrier();
		/* G2: drops_active first, see D5 */
		active = pg_atomic_read_u32(&drop_guard->drops_active);
		pg_read_barrier();
		generation = pg_atomic_read_u64(&drop_guard->generation);
		/* G3 */
		if (active == 0 && generation == cached_generation &&
			OidIsValid(ext))
		{
			guarded_lxid = MyProc->lxid;
			guarded_locked = false;
			return;
		}
	}

	/*
	 * G4.  The lock is taken without waiting, so it cannot be part of a
	 * deadlock itself; a lock on the OID of an extension that was dropped
	 * meanwhile protects nothing, hence the catalog lookup after it (taking
	 * the lock absorbed the invalidations, so the lookup is current).
	 */
	for (;;)
	{
		Oid			current;

		if (OidIsValid(ext) &&
			!ConditionalLockDatabaseObject(ExtensionRelationId, ext, 0,
										   AccessShareLock))
			report_busy(false);
		current = get_extension_oid("mzcoord", true);
		if (current == ext)
			break;
		if (OidIsValid(ext))
			UnlockDatabaseObject(ExtensionRelationId, ext, 0, AccessShareLock);
		ext = current;
		if (!OidIsValid(ext))
			break;
	}
	if (!OidIsValid(ext))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"mzcoord\" does not exist"),
				 errdetail("It was dropped while the statement ran.")));
	cached_ext = ext;
	cached_generation = generation;
	guarded_lxid = MyProc->lxid;
	guarded_locked = true;
}

/*
 * Called by a backend in every round of a wait for the coordinator (for
 * the controller to be ready, for an upper to pass a time).  While DROP
 * EXTENSION holds or waits for the extension's lock, the coordinator cannot
 * take its share and does not tick, so such a wait in a transaction the
 * drop waits for (D1 for a transaction that holds the share lock, D3 for
 * one that passed without it) would never end, and neither would the drop:
 * fail with 55000 instead.  A conditional lock in a mode this transaction
 * does not hold yet is refused while an exclusive request waits or is
 * granted; if granted, it is released at once.  A transaction that passed
 * without the lock only needs to look while a drop is past D2.
 */
void
mzcoord_extension_check_waiters(void)
{
	if (guarded_lxid != MyProc->lxid || !OidIsValid(cached_ext))
		return;
	if (!guarded_locked && drop_guard != NULL &&
		pg_atomic_read_u32(&drop_guard->drops_active) == 0)
		return;
	if (!ConditionalLockDatabaseObject(ExtensionRelationId, cached_ext, 0,
									   RowShareLock))
		report_busy(true);
	UnlockDatabaseObject(ExtensionRelationId, cached_ext, 0, RowShareLock);
}

/*
 * Before recording a dependency on the extension.  PostgreSQL (15.20 at
 * least) then locks the referenced object in share mode against a
 * concurrent drop, and waits for it: a transaction that passed the guard
 * without the lock would wait there for a drop that waits for it (D1 queued,
 * or D3).  Take the lock here without waiting instead, failing with 55000
 * if a drop holds or waits for it; PostgreSQL's request then finds it held.
 * Only catalog changes get here, never the common path.
 */
void
mzcoord_extension_lock_for_dependency(void)
{
	mzcoord_extension_guard();
	if (!ConditionalLockDatabaseObject(ExtensionRelationId, cached_ext, 0,
									   AccessShareLock))
		report_busy(false);
	guarded_locked = true;
}

/*
 * SQL: mzcoord._extension_guard() RETURNS void
 *
 * The guard for the event trigger functions written in PL/pgSQL, called
 * before they read the catalog.
 */
Datum
mzcoord_extension_guard_sql(PG_FUNCTION_ARGS)
{
	mzcoord_extension_guard();
	PG_RETURN_VOID();
}

/* ----------------------------------------------------------------
 * The drop (D1 to D5)
 * ----------------------------------------------------------------
 */

/* D5, after the transaction's locks are gone, committed or aborted. */
static void
drop_guard_release(ResourceReleasePhase phase, bool isCommit,
				   bool isTopLevel, void *arg)
{
	if (phase != RESOURCE_RELEASE_AFTER_LOCKS || !isTopLevel ||
		my_drops == 0)
		return;
	pg_atomic_fetch_add_u64(&drop_guard->generation, 1);
	pg_atomic_fetch_sub_u32(&drop_guard->drops_active, my_drops);
	my_drops = 0;
}

/*
 * A prepared transaction keeps its locks past the end of this backend's
 * transaction, and so past D5: refuse.
 */
static void
drop_guard_xact(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_PRE_PREPARE && my_drops > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot PREPARE a transaction that ran DROP EXTENSION mzcoord"),
				 errdetail("Sessions would no longer know that the drop is in progress.")));
}

/*
 * D2 and D3: announce the drop, then wait for every transaction of this
 * database that passed the guard without the lock.  The caller holds the
 * extension's lock exclusively (D1), and mzcoord never waits for that lock,
 * so these waits end.
 */
static void
announce_and_wait(void)
{
	if (drop_guard == NULL)
		return;
	if (!drop_callbacks_registered)
	{
		RegisterResourceReleaseCallback(drop_guard_release, NULL);
		RegisterXactCallback(drop_guard_xact, NULL);
		drop_callbacks_registered = true;
	}

	/* D2; nothing may fail between the increment and its bookkeeping. */
	pg_atomic_fetch_add_u32(&drop_guard->drops_active, 1);
	my_drops++;

	/* D3 */
	for (int i = 0; i < drop_guard->nbackends; i++)
	{
		VirtualTransactionId vxid;
		PGPROC	   *proc;

		if (i + 1 == MyBackendId)
			continue;
		vxid.localTransactionId = pg_atomic_read_u32(&drop_guard->passed[i]);
		if (!LocalTransactionIdIsValid(vxid.localTransactionId))
			continue;
		vxid.backendId = i + 1;

		/*
		 * A backend of another database never touches this one's relations.
		 * One that is gone may have prepared the transaction:
		 * VirtualXactLock() waits for that too.
		 */
		proc = BackendIdGetProc(vxid.backendId);
		if (proc != NULL && proc->databaseId != MyDatabaseId)
			continue;
		CHECK_FOR_INTERRUPTS();
		(void) VirtualXactLock(vxid, true);
	}
}

/*
 * The other ends of the pg_depend rows of type deptype that reference the
 * given object (ref) or that it has (!ref), where that end is in
 * otherclass.
 */
static List *
depend_rows(Oid classid, Oid objid, bool ref, char deptype, Oid otherclass)
{
	Relation	depRel;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *result = NIL;

	depRel = table_open(DependRelationId, AccessShareLock);
	ScanKeyInit(&key[0],
				ref ? Anum_pg_depend_refclassid : Anum_pg_depend_classid,
				BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(classid));
	ScanKeyInit(&key[1],
				ref ? Anum_pg_depend_refobjid : Anum_pg_depend_objid,
				BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(objid));
	scan = systable_beginscan(depRel,
							  ref ? DependReferenceIndexId : DependDependerIndexId,
							  true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tup);

		if (dep->deptype != deptype)
			continue;
		if (ref && dep->classid == otherclass)
			result = lappend_oid(result, dep->objid);
		else if (!ref && dep->refclassid == otherclass)
			result = lappend_oid(result, dep->refobjid);
	}
	systable_endscan(scan);
	table_close(depRel, AccessShareLock);
	return result;
}

/*
 * Lock the extension, announce the drop and wait for the sessions that passed
 * the guard, then lock every table the drop will reach, in OID order.
 */
static void
lock_for_drop(Oid ext)
{
	List	   *tables = NIL;
	ListCell   *lc;

	/* D1 */
	LockDatabaseObject(ExtensionRelationId, ext, 0, AccessExclusiveLock);
	if (get_extension_oid("mzcoord", true) != ext)
		return;
	announce_and_wait();

	/*
	 * D4.  Only now read what the drop will reach: the transactions waited
	 * for above may have registered tables.
	 */

	/* Histories (an automatic extension dependency) and their relations. */
	foreach(lc, depend_rows(ExtensionRelationId, ext, true,
							DEPENDENCY_AUTO_EXTENSION, RelationRelationId))
		tables = list_concat_unique_oid(tables,
										depend_rows(RelationRelationId,
													lfirst_oid(lc), false,
													DEPENDENCY_AUTO,
													RelationRelationId));

	/* Relations mzcoord created; of an index, its table. */
	foreach(lc, depend_rows(ExtensionRelationId, ext, true,
							DEPENDENCY_NORMAL, RelationRelationId))
	{
		Oid			relid = lfirst_oid(lc);

		if (get_rel_relkind(relid) == RELKIND_INDEX)
			relid = IndexGetRelation(relid, true);
		if (OidIsValid(relid))
			tables = list_append_unique_oid(tables, relid);
	}

	list_sort(tables, list_oid_cmp);
	foreach(lc, tables)
		LockRelationOid(lfirst_oid(lc), AccessExclusiveLock);
}

static void
mzc_process_utility(PlannedStmt *pstmt, const char *queryString,
					bool readOnlyTree, ProcessUtilityContext context,
					ParamListInfo params, QueryEnvironment *queryEnv,
					DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	if (IsA(parsetree, DropStmt) &&
		((DropStmt *) parsetree)->removeType == OBJECT_EXTENSION)
	{
		ListCell   *lc;

		foreach(lc, ((DropStmt *) parsetree)->objects)
		{
			Node	   *name = lfirst(lc);
			Oid			ext;

			if (!IsA(name, String) || strcmp(strVal(name), "mzcoord") != 0)
				continue;
			ext = get_extension_oid("mzcoord", true);
			if (OidIsValid(ext))
				lock_for_drop(ext);
		}
	}

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

void
mzcoord_install_drop_hook(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = mzc_process_utility;
}

/*
 * Is the extension installed, committed, not being dropped or altered, and
 * is its catalog the version this library runs against?  Must run inside a
 * transaction.  On success the share lock on the extension is held until
 * the end of the transaction, so the extension's objects stay in place for
 * the whole tick.
 */
bool
mzcoord_extension_ready(void)
{
	Oid			extoid;

	if (RecoveryInProgress())
		return false;
	extoid = get_extension_oid("mzcoord", true);
	if (!OidIsValid(extoid))
		return false;
	if (!ConditionalLockDatabaseObject(ExtensionRelationId, extoid, 0,
									   AccessShareLock))
		return false;
	/* Taking the lock absorbed invalidations: look again. */
	if (get_extension_oid("mzcoord", true) != extoid)
		return false;

	/*
	 * A catalog of another version (the library was updated, ALTER
	 * EXTENSION mzcoord UPDATE has not run yet): nothing of this library
	 * may run against it.
	 */
	return mzcoord_extension_current(extoid);
}

/* ----------------------------------------------------------------
 * The catalog version
 * ----------------------------------------------------------------
 */

/*
 * Looks up extension ext in pg_extension: false if there is none; else
 * *version (if not NULL) gets its extversion, palloc'd (NULL if null), and
 * *xmin (if not NULL) the xmin of its row.  Inside a transaction.
 */
bool
mzcoord_extension_lookup(Oid ext, char **version, TransactionId *xmin)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	found = HeapTupleIsValid(tup);
	if (found && version != NULL)
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		*version = isnull ? NULL : text_to_cstring(DatumGetTextPP(d));
	}
	if (found && xmin != NULL)
		*xmin = HeapTupleHeaderGetXmin(tup->t_data);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * The version of the catalog of extension ext (pg_extension.extversion),
 * palloc'd, or NULL if there is no such extension.  Inside a transaction.
 */
char *
mzcoord_extension_version(Oid ext)
{
	char	   *version = NULL;

	if (!mzcoord_extension_lookup(ext, &version, NULL))
		return NULL;
	return version;
}

/*
 * Is the catalog of extension ext the version this library runs against
 * (MZC_CATALOG_VERSION)?
 */
static bool
mzcoord_extension_current(Oid ext)
{
	char	   *version = mzcoord_extension_version(ext);

	return version != NULL && strcmp(version, MZC_CATALOG_VERSION) == 0;
}

/*
 * Raise 55000 unless the catalog of extension ext is the version this
 * library runs against: the coordinator does not serve another version, so
 * waiting for it would only time out.
 */
void
mzcoord_extension_require_current(Oid ext)
{
	char	   *version = mzcoord_extension_version(ext);

	if (version == NULL || strcmp(version, MZC_CATALOG_VERSION) == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("extension \"mzcoord\" is at version %s, but its library needs version %s",
					version, MZC_CATALOG_VERSION),
			 errdetail("The coordinator does not run against the catalog of another version."),
			 errhint("Run ALTER EXTENSION mzcoord UPDATE.")));
}
