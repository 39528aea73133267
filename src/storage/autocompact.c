/*-------------------------------------------------------------------------
 *
 * autocompact.c
 *	  The compactor's step: which histories to compact, when.
 *
 * Policy of the compactor, a background worker of its own (worker.c):
 * compaction is storage's work, and no compaction, however long, may delay
 * the coordinator's tick.  A compaction scans every row below S, so it runs
 * only when it pays, and only retractions make it pay: each removes itself
 * and the insertion it cancels, while an insertion that nothing retracts is
 * left where it is (compact.c).  So a collection is compacted when it has
 * retractions between its compacted frontier C and its since S, and either
 * the rows they remove number at least a quarter of the history's rows (the
 * rows the last compaction left, or the live rows the cumulative statistics
 * count if the history has grown since), or the last compaction is older
 * than one second per thousand of those rows (at least one second).  A large
 * table with a trickle of updates is thus compacted at most about every
 * rows/1000 seconds, a busy one after every 25% of removable rows, a small
 * one within a second or two; a history that only grows (an insert-only
 * table, a log) is never compacted, and its compacted frontier stays where
 * it is (mzcoord.compact() still moves it).  The retractions below the
 * since are counted once per compaction cycle: each look goes on from
 * where the last one stopped (count_removable).  Each step examines only what
 * may have become due: the collections whose bound the tick published
 * (mzcoord_tick_take_published, a list in the controller's shared memory
 * that the coordinator fills and the step empties), and at most
 * MZC_COMPACT_SCAN of those that may still have retractions above their
 * compacted frontier, least recently examined first; an idle collection
 * costs nothing.  The compactor's memory of those starts from the catalog
 * (every collection whose compacted frontier is below its bound:
 * load_pending), when it starts and after the controller was rebuilt.
 * Examining one opens its history, so a step examines for at most 1/200 of
 * the tick interval (but at least 8 collections); the compactor takes steps
 * once per tick interval, at once when a tick published bounds, and every 50
 * ms while more are pending than a step looks at, so that a backlog (100,000
 * bounds moved at once, or the catalog read at start) is worked off in the
 * background.  It stops starting compactions once half a tick interval has
 * passed (but always starts the first one due, so that a loaded machine
 * still makes progress); one compaction is not interrupted.  A collection
 * found with no retraction above its compacted frontier is not opened again
 * until its history is written (the cumulative statistics count the writes).
 * A compaction that fails is logged and retried a minute later; it never
 * stops the compactor.  Nor does one that would wait: a compaction whose
 * history (mzcoord.compact() running) or storage row (a transaction that
 * locked it) is held elsewhere is put off for a second, and the compactor
 * goes on with the others; so is a look at a history that someone holds
 * so that it cannot be read (ALTER TABLE, VACUUM FULL), which does not
 * count as finding it without retractions.
 * mzcoord.compact(rel) compacts one collection now, whatever the policy.
 * mzcoord.auto_compact = off pauses the compactor (for
 * maintenance, or to keep history around while investigating).
 *
 * IDENTIFICATION
 *	  src/storage/autocompact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/ilist.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/shmem.h"
#include "storage/smgr.h"
#include "storage/spin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "autocompact.h"
#include "compact.h"
#include "controller.h"
#include "extension.h"
#include "history.h"
#include "ids.h"
#include "rec_storage.h"
#include "settings.h"
#include "tick.h"

/* Collections a step examines, at most ... */
#define MZC_COMPACT_SCAN 32
/* ... and at least, however long they take ... */
#define MZC_COMPACT_MIN_EXAMINE 8
/* ... within this share of the tick interval (at least 2 ms). */
#define MZC_COMPACT_EXAMINE_SHARE 200
/* Compact when the new updates reach this fraction of the compacted rows. */
#define MZC_COMPACT_RATIO_DIVISOR 4
/* ... or after this many milliseconds per compacted row (at least 1 s). */
#define MZC_COMPACT_MS_PER_ROW 1
#define MZC_COMPACT_MIN_AGE_MS 1000
/* A failed compaction is retried after this long. */
#define MZC_COMPACT_RETRY_MS 60000
/* One put off because its history or storage row was held, after this long. */
#define MZC_COMPACT_HELD_RETRY_MS 1000

/* ----------------------------------------------------------------
 * The compactor's step
 * ----------------------------------------------------------------
 */

/* What the compactor remembers of a history between steps. */
typedef struct MzcCompactState
{
	int64		gid;			/* hash key */
	bool		known;			/* has a history */
	Oid			relid;
	Oid			histid;
	Oid			retidx;			/* its index of retractions (install.c) */
	int64		compacted;
	int64		base;			/* rows the last compaction left */
	TimestampTz compacted_at;
	TimestampTz retry_after;
	uint64		round;			/* round in which it was last loaded */
	bool		pending;		/* may have retractions above the compacted
								 * frontier (then on pending_states) */
	dlist_node	pending_node;
	int64		changes_seen;	/* the history's write counters when last probed */

	/*
	 * The retractions counted so far with count_from <= ts < count_upto
	 * (count_from: the compacted frontier they were counted from, -1 for
	 * none).  A since, once published, has every update below it committed,
	 * so they stay counted until the next compaction: each probe counts
	 * only those that came below the since since the last one.
	 */
	int64		count_from;
	int64		count_upto;
	int64		counted;
} MzcCompactState;

static HTAB *compact_states = NULL;
/* The pending states: what a step chooses from, without a walk of all. */
static dlist_head pending_states = DLIST_STATIC_INIT(pending_states);
static int64 npending_states = 0;
static MemoryContext compact_cxt = NULL;
static uint64 scan_round = 1;	/* counts the compaction steps */

/*
 * What the compaction step shows (mzcoord.compaction_status()): written
 * only by the compactor, read by anyone; each value on its own.  And the
 * compactor's latch, which the coordinator sets when a tick published
 * bounds (mutex; the process that attached sets and clears it).
 */
typedef struct MzcCompactionShared
{
	pg_atomic_uint64 pending;	/* collections that may have updates to compact */
	pg_atomic_uint64 steps;
	pg_atomic_uint64 examined;	/* collections looked at, all steps */
	pg_atomic_uint64 compactions;	/* compactions run, all steps */
	slock_t		mutex;
	int			pid;			/* the compactor, or 0 */
	Latch	   *latch;			/* its latch, or NULL */
} MzcCompactionShared;

/*
 * The controller incarnation (MzcController.epoch) whose catalog this
 * process's memory of pending collections started from, and the buffer the
 * tick's news are taken into (capacity entries, once per process).
 */
static uint64 loaded_epoch = 0;
static int64 *news = NULL;

/* How many collections the last step examined. */
static int	last_examined = 0;

static MzcCompactionShared *compaction_shared = NULL;

Size
mzcoord_compaction_shmem_size(void)
{
	return MAXALIGN(sizeof(MzcCompactionShared));
}

void
mzcoord_compaction_shmem_init(void)
{
	bool		found;

	compaction_shared = ShmemInitStruct("mzcoord compaction",
										mzcoord_compaction_shmem_size(), &found);
	if (!found)
	{
		pg_atomic_init_u64(&compaction_shared->pending, 0);
		pg_atomic_init_u64(&compaction_shared->steps, 0);
		pg_atomic_init_u64(&compaction_shared->examined, 0);
		pg_atomic_init_u64(&compaction_shared->compactions, 0);
		SpinLockInit(&compaction_shared->mutex);
		compaction_shared->pid = 0;
		compaction_shared->latch = NULL;
	}
}

/* on_shmem_exit of the compactor. */
static void
compaction_detach(int code, Datum arg)
{
	SpinLockAcquire(&compaction_shared->mutex);
	if (compaction_shared->pid == MyProcPid)
	{
		compaction_shared->pid = 0;
		compaction_shared->latch = NULL;
	}
	SpinLockRelease(&compaction_shared->mutex);
}

/*
 * Make this process the compactor; false if another one is.  Its memory
 * of pending collections starts empty, and is read from the catalog at its
 * first step (load_pending).
 */
bool
mzcoord_compaction_attach(void)
{
	bool		ok;

	SpinLockAcquire(&compaction_shared->mutex);
	ok = compaction_shared->pid == 0;
	if (ok)
	{
		compaction_shared->pid = MyProcPid;
		compaction_shared->latch = MyLatch;
	}
	SpinLockRelease(&compaction_shared->mutex);
	if (ok)
		on_shmem_exit(compaction_detach, (Datum) 0);
	return ok;
}

/* Wake the compactor, if one runs (the coordinator, after a tick). */
void
mzcoord_compaction_wake(void)
{
	SpinLockAcquire(&compaction_shared->mutex);
	if (compaction_shared->latch != NULL)
		SetLatch(compaction_shared->latch);
	SpinLockRelease(&compaction_shared->mutex);
}

/* A new state: not pending until set_pending says so. */
static void
init_state(MzcCompactState *st)
{
	st->histid = InvalidOid;
	st->retry_after = 0;
	st->known = false;
	st->round = 0;
	st->pending = false;
	st->changes_seen = -1;
	st->count_from = -1;
}

/* Keep st on pending_states exactly while st->pending. */
static void
set_pending(MzcCompactState *st, bool pending)
{
	if (pending && !st->pending)
	{
		/* New work first; the examined go to the back (find_due). */
		dlist_push_head(&pending_states, &st->pending_node);
		npending_states++;
	}
	else if (!pending && st->pending)
	{
		dlist_delete(&st->pending_node);
		npending_states--;
	}
	st->pending = pending;
}

/* Forget a state (its collection is gone). */
static void
forget_state(MzcCompactState *st)
{
	int64		gid = st->gid;

	set_pending(st, false);
	(void) hash_search(compact_states, &gid, HASH_REMOVE, NULL);
}

/* Load the storage rows of the given collections into compact_states. */
static void
load_states(int64 *gids, int n)
{
	MzcRecStorage *rows = NULL;
	int			nrows;

	for (int i = 0; i < n; i++)
	{
		bool		found;
		MzcCompactState *st = hash_search(compact_states, &gids[i], HASH_ENTER, &found);

		if (!found)
			init_state(st);
		st->known = false;
		st->round = scan_round;
	}
	if (!mzcoord_rec_storage_compactions(gids, n, &rows, &nrows))
		elog(ERROR, "could not read mzcoord.storage");
	for (int r = 0; r < nrows; r++)
	{
		int64		gid;
		MzcCompactState *st;
		char		idxname[NAMEDATALEN];

		if (!mzcoord_parse_gid(rows[r].global_id, &gid))
			continue;
		st = hash_search(compact_states, &gid, HASH_FIND, NULL);
		if (st == NULL)
			continue;
		st->relid = rows[r].relid;
		if (rows[r].histid != st->histid)
		{
			/* New to us (or a new history under a reused id): probe it. */
			st->histid = rows[r].histid;
			set_pending(st, true);
			st->changes_seen = -1;
			st->retry_after = 0;
			st->count_from = -1;
		}
		st->compacted = rows[r].compacted;
		st->base = rows[r].compacted_rows;
		st->compacted_at = rows[r].compacted_at;
		snprintf(idxname, sizeof(idxname), "history_u" INT64_FORMAT "_retractions", gid);
		st->retidx = get_relname_relid(idxname, get_rel_namespace(st->histid));
		st->known = OidIsValid(st->retidx);
	}
}

/* What count_between returns when it cannot count (see there). */
#define MZC_COUNT_UNUSABLE (-1)
#define MZC_COUNT_HELD (-2)

/*
 * How many rows of a history (at most limit) its index of retractions
 * (idxid) has strictly between lo and hi, with a fresh snapshot.
 * MZC_COUNT_UNUSABLE if that index is not one a read can use (replaced by
 * hand): the compaction, which reads through it, then reports the problem,
 * and this process, which compacts every other collection, does not fail
 * on it.  MZC_COUNT_HELD if someone holds the history in a mode that
 * excludes reading it (ALTER TABLE, VACUUM FULL, LOCK TABLE): the step does
 * not wait, and asks again later.
 */
static int64
count_between(Oid histid, Oid idxid, int64 lo, int64 hi, int64 limit)
{
	Relation	hrel;
	Relation	idx;
	Snapshot	snapshot;
	IndexScanDesc scan;
	ScanKeyData keys[2];
	TupleTableSlot *slot;
	int64		n = 0;

	if (!ConditionalLockRelationOid(histid, AccessShareLock))
		return MZC_COUNT_HELD;
	hrel = try_table_open(histid, NoLock);
	if (hrel == NULL)
		return 0;
	/* Dropped or replaced since load_states found it by name: no error here. */
	idx = ConditionalLockRelationOid(idxid, AccessShareLock) ?
		try_relation_open(idxid, NoLock) : NULL;
	if (idx == NULL || idx->rd_rel->relkind != RELKIND_INDEX ||
		!mzcoord_history_index_serves(hrel, idx, true))
	{
		if (idx != NULL)
			relation_close(idx, AccessShareLock);
		table_close(hrel, AccessShareLock);
		return MZC_COUNT_UNUSABLE;
	}
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	slot = table_slot_create(hrel, NULL);
	ScanKeyInit(&keys[0], 1, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(lo));
	ScanKeyInit(&keys[1], 1, BTLessStrategyNumber, F_INT8LT, Int64GetDatum(hi));
	scan = index_beginscan(hrel, idx, snapshot, 2, 0);
	index_rescan(scan, keys, 2, NULL, 0);
	while (n < limit && index_getnext_slot(scan, ForwardScanDirection, slot))
		n++;
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	index_close(idx, AccessShareLock);
	table_close(hrel, AccessShareLock);
	return n;
}

/*
 * Is the history empty on disk (no block in its main fork)?  Asked of the
 * storage manager through the relation's catalog row, without opening the
 * relation: building a relation cache entry for each of thousands of
 * histories that were never written cost more than everything else the
 * step did.  A write that extends the file just after this is a write: it
 * brings the collection back to the step with its next bound.
 */
static bool
history_is_empty(Oid histid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(histid));
	Form_pg_class form;
	RelFileNode rnode;
	SMgrRelation srel;
	bool		empty;

	if (!HeapTupleIsValid(tup))
		return false;
	form = (Form_pg_class) GETSTRUCT(tup);
	if (form->relpersistence != RELPERSISTENCE_PERMANENT ||
		!OidIsValid(form->relfilenode))
	{
		ReleaseSysCache(tup);
		return false;
	}
	rnode.spcNode = OidIsValid(form->reltablespace) ? form->reltablespace :
		MyDatabaseTableSpace;
	rnode.dbNode = MyDatabaseId;
	rnode.relNode = form->relfilenode;
	ReleaseSysCache(tup);
	srel = smgropen(rnode, InvalidBackendId);
	empty = !smgrexists(srel, MAIN_FORKNUM) ||
		smgrnblocks(srel, MAIN_FORKNUM) == 0;
	return empty;
}

/*
 * A history, or its storage row, held by someone else when the step looked
 * at it or tried to compact it: it stays pending (no write may come to
 * bring it back) and is tried again in a second.  Returns false: not due
 * now.
 */
static bool
put_off(MzcCompactState *st, TimestampTz now)
{
	st->retry_after = TimestampTzPlusMilliseconds(now, MZC_COMPACT_HELD_RETRY_MS);
	return false;
}

/*
 * How many retractions (at most limit) st's history has from its compacted
 * frontier up to since (exclusive), or MZC_COUNT_HELD / MZC_COUNT_UNUSABLE
 * (count_between).  The count goes on from where the last one stopped:
 * a busy history is probed every tick, and counting from the compacted
 * frontier each time read the retractions of its whole cycle again at
 * every probe.  Nothing can be written at a time below a since
 * (writers commit above the upper, which is above it), so what was counted
 * below one stays; a compaction, which moves the compacted frontier,
 * starts the count again.
 */
static int64
count_removable(MzcCompactState *st, int64 since, int64 limit)
{
	int64		n;

	if (st->count_from != st->compacted)
	{
		st->count_from = st->compacted;
		st->count_upto = st->compacted;
		st->counted = 0;
	}
	if (st->counted >= limit || since <= st->count_upto)
		return st->counted;
	n = count_between(st->histid, st->retidx, st->count_upto - 1, since,
					  limit - st->counted);
	if (n < 0)
		return n;
	if (st->counted + n >= limit)
	{
		/* Stopped at the limit, somewhere below since: start again next time. */
		st->count_from = -1;
		return st->counted + n;
	}
	st->counted += n;
	st->count_upto = since;
	return st->counted;
}

/*
 * Is the collection due for compaction up to since?  (See the file header.)
 * A history nobody wrote since it was last found to have no retraction
 * above its compacted frontier is skipped without opening it: its write
 * counters in the cumulative statistics have not moved.
 */
static bool
compaction_due(MzcCompactState *st, int64 since, TimestampTz now)
{
	int64		rows = st->base;
	int64		limit;
	int64		above;
	int64		removable;
	int64		age_ms = (now - st->compacted_at) / 1000;
	int64		changes = -1;
	PgStat_StatTabEntry *tab;

	if (since <= st->compacted || now < st->retry_after)
		return false;
	tab = pgstat_fetch_stat_tabentry(st->histid);
	if (tab != NULL)
	{
		changes = tab->tuples_inserted + tab->tuples_updated + tab->tuples_deleted;
		/* What a compaction would rewrite: the history as it has grown. */
		rows = Max(rows, tab->n_live_tuples);
	}
	if (!st->pending && pgstat_track_counts && changes == st->changes_seen)
		return false;
	st->changes_seen = changes;
	if (history_is_empty(st->histid))
	{
		set_pending(st, false);
		return false;
	}
	above = count_between(st->histid, st->retidx, st->compacted - 1, PG_INT64_MAX, 1);
	if (above == 0)
	{
		set_pending(st, false);
		return false;
	}
	set_pending(st, true);
	if (above == MZC_COUNT_HELD)
		return put_off(st, now);
	/* An index reads cannot use: the compaction reports it (compact_one). */
	if (above == MZC_COUNT_UNUSABLE)
		return true;
	/*
	 * Each retraction removes itself and the insertion it cancels.  Those at
	 * the compacted frontier itself count: a compaction that stopped there
	 * (compact.c) left them.
	 */
	limit = Max(rows / MZC_COMPACT_RATIO_DIVISOR, 1);
	removable = count_removable(st, since, (limit + 1) / 2);
	if (removable == MZC_COUNT_HELD)
		return put_off(st, now);
	if (removable == MZC_COUNT_UNUSABLE)
		return true;
	removable *= 2;
	if (removable == 0)
		return false;
	if (removable >= limit)
		return true;
	return age_ms >= Max(MZC_COMPACT_MIN_AGE_MS, rows * MZC_COMPACT_MS_PER_ROW);
}

/* Compact one collection in its own transaction; errors are logged. */
static void
compact_one(MzcCompactState *st, int64 since)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	MzcCompaction res;
	bool		ok = false;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "mzcoord compaction");
	if (!mzcoord_extension_ready())
	{
		PopActiveSnapshot();
		CommitTransactionCommand();
		MemoryContextSwitchTo(oldcxt);
		return;
	}

	BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		MzcHistory *h = mzcoord_history_lookup(st->relid, true);

		if (h != NULL && h->histid == st->histid && h->gid == st->gid)
		{
			ok = mzcoord_compact_history(h, since, false, &res);
			if (!ok)
				(void) put_off(st, GetCurrentTimestamp());
			else
			{
				st->compacted = res.frontier;
				set_pending(st, true);
				if (res.compacted)
				{
					if (res.rows_left >= 0)
						st->base = res.rows_left;
					st->compacted_at = GetCurrentTimestamp();
				}
			}
		}
		else
			st->known = false;
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
			ReThrowError(edata);
		ereport(WARNING,
				(errmsg("mzcoord: could not compact the history of collection u" INT64_FORMAT ": %s",
						st->gid, edata->message),
				 errdetail("Compaction of this collection is retried in %d seconds.",
						   MZC_COMPACT_RETRY_MS / 1000)));
		st->retry_after = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													  MZC_COMPACT_RETRY_MS);
		FreeErrorData(edata);
	}
	PG_END_TRY();

	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(oldcxt);
	pgstat_report_stat(false);
}

/*
 * Create the compactor's memory context and its table of states, once per
 * process.
 */
static void
compact_states_init(void)
{
	HASHCTL		ctl;

	if (compact_cxt != NULL)
		return;
	compact_cxt = AllocSetContextCreate(TopMemoryContext, "mzcoord compaction",
										ALLOCSET_DEFAULT_SIZES);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(MzcCompactState);
	ctl.hcxt = TopMemoryContext;
	compact_states = hash_create("mzcoord compaction states", 256, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* Does a collection of this kind have a history? */
static bool
kind_has_history(MzcKind kind)
{
	return mzcoord_kind_has_history(kind);
}

/*
 * Load the states of the collections with a history among infos[0..n)
 * that were not loaded in this step (in a transaction): the catalog's
 * compacted frontier may have moved (mzcoord.compact()).
 */
static void
load_missing_states(const MzcCollectionInfo *infos, int n)
{
	int64	   *missing = palloc(sizeof(int64) * n);
	int			nmissing = 0;

	for (int i = 0; i < n; i++)
	{
		const MzcCollectionInfo *c = &infos[i];
		MzcCompactState *st;

		if (!kind_has_history(c->kind))
			continue;
		st = hash_search(compact_states, &c->gid, HASH_FIND, NULL);
		if (st == NULL || st->round != scan_round)
			missing[nmissing++] = c->gid;
	}
	if (nmissing > 0)
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		load_states(missing, nmissing);
		SPI_finish();
	}
}

/*
 * Is collection c, whose state is loaded, due for compaction at now (see
 * compaction_due)?  If so, *since gets how far (in a transaction).
 */
static bool
collection_due(const MzcCollectionInfo *c, TimestampTz now, int64 *since)
{
	MzcCompactState *st;

	if (!kind_has_history(c->kind) || c->since.empty)
		return false;
	st = hash_search(compact_states, &c->gid, HASH_FIND, NULL);
	if (st == NULL || !st->known)
		return false;
	*since = mzcoord_compaction_target(c);
	return *since >= 0 && compaction_due(st, *since, now);
}

/*
 * The collections among infos[0..n) due for compaction at now, into
 * due_gid and due_since (up to where); returns their number (in a
 * transaction).  Examining one opens its history: once `until` has passed
 * (and a few were examined), the others wait for the next step, first in
 * line.  *nexamined gets how many were examined.
 */
static int
find_due(const MzcCollectionInfo *infos, int n, TimestampTz now,
		 TimestampTz until, int64 *due_gid, int64 *due_since, int *nexamined)
{
	int			ndue = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		if (i >= MZC_COMPACT_MIN_EXAMINE && GetCurrentTimestamp() >= until)
			break;
		if (collection_due(&infos[i], now, &due_since[ndue]))
			due_gid[ndue++] = infos[i].gid;
	}
	*nexamined = i;
	/* The examined go to the back of the line; the others stay in front. */
	for (int j = 0; j < i; j++)
	{
		MzcCompactState *st = hash_search(compact_states, &infos[j].gid,
										  HASH_FIND, NULL);

		if (st != NULL && st->pending)
			dlist_move_tail(&pending_states, &st->pending_node);
	}
	return ndue;
}

/*
 * Keep gids[0..n) among the candidates of later steps (their state is
 * loaded then), without looking at them now.
 */
static void
remember_pending(const int64 *gids, int n)
{
	for (int i = 0; i < n; i++)
	{
		bool		found;
		MzcCompactState *st = hash_search(compact_states, &gids[i],
										  HASH_ENTER, &found);

		if (!found)
			init_state(st);
		set_pending(st, true);
	}
}

/*
 * The collections this step looks at, into infos (room for
 * MZC_COMPACT_SCAN): the collections whose bound the tick published join
 * those that may have updates above their compacted frontier, and the
 * first MZC_COMPACT_SCAN of that line are looked at (new work in front,
 * then the least recently examined: find_due sends the examined to the
 * back).  Nothing else can become due: an idle collection costs nothing,
 * and however many bounds one tick published, a step looks at a bounded
 * number, without walking or sorting the line.  States of collections
 * that are gone are forgotten.  Returns the number.
 */
static int
candidates(MzcCollectionInfo *infos, const int64 *published, int npublished)
{
	dlist_mutable_iter iter;
	int			n = 0;

	remember_pending(published, npublished);
	dlist_foreach_modify(iter, &pending_states)
	{
		MzcCompactState *st = dlist_container(MzcCompactState, pending_node,
											  iter.cur);

		if (n >= MZC_COMPACT_SCAN)
			break;
		if (mzcoord_ctl_peek_gid(st->gid, &infos[n]))
			n++;
		else
			forget_state(st);
	}
	return n;
}

/*
 * The collections whose compacted frontier is below their bound, from the
 * catalog, join the pending line: at the compactor's first step, and after
 * the controller was rebuilt (a restart, a rebootstrap), which may have
 * lost news the tick had for it.  Once per incarnation; its cost is the
 * catalog's, in the compactor, never in a tick.  In a transaction.
 */
static void
load_pending(void)
{
	uint64		epoch = pg_atomic_read_u64(&mzcoord_ctl->epoch);
	int64	   *gids;
	char	  **texts = NULL;
	int			n;

	if (epoch == loaded_epoch)
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (!mzcoord_rec_storage_behind_bounds(&texts, &n))
		elog(ERROR, "could not read mzcoord.storage");
	gids = palloc(sizeof(int64) * Max(n, 1));
	for (int r = 0; r < n; r++)
		if (!mzcoord_parse_gid(texts[r], &gids[r]))
			gids[r] = 0;
	/* Behind the news: what was published is newer work. */
	for (int r = 0; r < n; r++)
	{
		bool		found;
		MzcCompactState *st;

		if (gids[r] == 0)
			continue;
		st = hash_search(compact_states, &gids[r], HASH_ENTER, &found);
		if (!found)
			init_state(st);
		if (!st->pending)
		{
			dlist_push_tail(&pending_states, &st->pending_node);
			npending_states++;
			st->pending = true;
		}
	}
	SPI_finish();
	loaded_epoch = epoch;
}

/*
 * In one transaction: the candidates (see candidates), their states loaded,
 * and those due for compaction (see find_due), into due_gid and due_since
 * (room for MZC_COMPACT_SCAN).  Returns -1, having looked
 * at nothing, if the extension is not ready.  Leaves compact_cxt current.
 */
static int
select_due(const int64 *published, int npublished, TimestampTz now,
		   int64 *due_gid, int64 *due_since)
{
	MzcCollectionInfo *infos;
	int			n;
	int			ndue;
	int			nexamined;
	TimestampTz until;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	MemoryContextSwitchTo(compact_cxt);
	if (!mzcoord_extension_ready())
	{
		PopActiveSnapshot();
		CommitTransactionCommand();
		return -1;
	}
	load_pending();
	infos = palloc(sizeof(MzcCollectionInfo) * MZC_COMPACT_SCAN);
	n = candidates(infos, published, npublished);
	load_missing_states(infos, n);
	until = TimestampTzPlusMilliseconds(now,
										Max(mzcoord_tick_interval / MZC_COMPACT_EXAMINE_SHARE, 2));
	ndue = find_due(infos, n, now, until, due_gid, due_since, &nexamined);
	last_examined = nexamined;
	pg_atomic_fetch_add_u64(&compaction_shared->examined, nexamined);
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(compact_cxt);
	return ndue;
}

/* Show how many collections are pending, after a step. */
static void
show_pending(void)
{
	pg_atomic_write_u64(&compaction_shared->pending, (uint64) npending_states);
}

/*
 * The compactor's step (outside a transaction): take the bounds the ticks
 * published, examine what may have become due and compact it.  Returns
 * whether work is left (pending collections, or news).
 */
bool
mzcoord_compaction_step(void)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	int			npublished;
	int64	   *due_gid;
	int64	   *due_since;
	int			ndue;
	TimestampTz start = GetCurrentTimestamp();
	TimestampTz deadline = TimestampTzPlusMilliseconds(start,
													   Max(mzcoord_tick_interval / 2, 20));

	/* A controller being rebuilt knows no collection yet: wait for it. */
	if (!mzcoord_ctl->ready)
		return false;
	compact_states_init();
	MemoryContextReset(compact_cxt);
	MemoryContextSwitchTo(compact_cxt);
	if (news == NULL)
		news = MemoryContextAlloc(TopMemoryContext,
								  sizeof(int64) * Max(mzcoord_ctl->capacity, 1));
	/* The bounds the ticks published, taken whether or not they are used. */
	npublished = mzcoord_tick_take_published(news, mzcoord_ctl->capacity);

	/*
	 * Paused by the operator, or read-only: histories keep growing,
	 * nothing is lost; what was published is remembered for when
	 * compaction resumes.
	 */
	if (!mzcoord_auto_compact || mzcoord_read_only)
	{
		remember_pending(news, npublished);
		show_pending();
		MemoryContextSwitchTo(oldcxt);
		return false;
	}
	scan_round++;
	last_examined = 0;
	pg_atomic_fetch_add_u64(&compaction_shared->steps, 1);
	due_gid = palloc(sizeof(int64) * MZC_COMPACT_SCAN);
	due_since = palloc(sizeof(int64) * MZC_COMPACT_SCAN);
	ndue = select_due(news, npublished, start, due_gid, due_since);
	for (int i = 0; i < ndue; i++)
	{
		MzcCompactState *st = hash_search(compact_states, &due_gid[i], HASH_FIND, NULL);

		/*
		 * The first due collection is always compacted: on a loaded machine
		 * the scan alone can take half a tick, and compaction must still
		 * make progress.
		 */
		if (i > 0 && GetCurrentTimestamp() >= deadline)
			break;
		if (st != NULL)
		{
			compact_one(st, due_since[i]);
			pg_atomic_fetch_add_u64(&compaction_shared->compactions, 1);
		}
		MemoryContextSwitchTo(compact_cxt);
	}
	if (ndue > 0)
		pgstat_report_activity(STATE_IDLE, NULL);
	show_pending();
	MemoryContextSwitchTo(oldcxt);
	/* Due ones left, news, or more pending than one step looks at. */
	return ndue > 0 || mzcoord_tick_has_news() ||
		npending_states > last_examined;
}

/*
 * mzcoord.compaction_status(): the compaction step's counters since the
 * server started.  Anyone may read them (counts only).
 */
PG_FUNCTION_INFO_V1(mzcoord_compaction_status);
Datum
mzcoord_compaction_status(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function returning record called in context that cannot accept type record")));
	values[0] = Int64GetDatum((int64) pg_atomic_read_u64(&compaction_shared->pending));
	values[1] = Int64GetDatum((int64) pg_atomic_read_u64(&compaction_shared->steps));
	values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&compaction_shared->examined));
	values[3] = Int64GetDatum((int64) pg_atomic_read_u64(&compaction_shared->compactions));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
