/*-------------------------------------------------------------------------
 *
 * ceiling.c
 *	  The oracle's durable ceiling: a WAL record and the file
 *	  pg_mzcoord/oracle.
 *
 * The oracle never hands out or closes a time above the ceiling, and the
 * ceiling is made durable here before it is raised in memory, so after any
 * restart, and on a standby promoted after a failover, the timeline resumes
 * above every time used before.  Each raise is written twice:
 *
 * - as a WAL record of mzcoord's custom resource manager, flushed before
 *   the raise takes effect.  Streaming replication carries it to every
 *   standby, whose startup process replays it into the standby's oracle
 *   (and its file); with synchronous standbys the raise also waits, as a
 *   commit does, until they have it (mzcoord_ceiling_replicate).
 * - in the file, CRC-checked, written to a temporary file, fsynced and
 *   durably renamed, so a crash leaves either the old or the new ceiling.
 *   The file covers what WAL replay does not: records before the last
 *   checkpoint are never replayed again.
 *
 * The same resource manager carries the table timeline's upper, logged by
 * the coordinator's tick as it advances (not flushed: it rides with the
 * next flush).  Every commit below that upper precedes the record in WAL,
 * so a standby that replayed it has replayed all of them, and reads its
 * tables up to there (read.c).
 *
 * A custom resource manager rather than a WAL-logged catalog row: the
 * ceiling is raised inside other transactions' commits and by the
 * coordinator's tick, where no separate transaction can run, and its
 * replay must reach the standby's shared memory, which only a redo
 * function does.  The price: a server whose WAL holds such records must
 * preload mzcoord to recover (doc/replication.md).
 *
 * Both records are marked unimportant (XLOG_MARK_UNIMPORTANT), as
 * PostgreSQL marks its own informational records: on an otherwise idle
 * server they do not count as activity, so they cause no checkpoint and no
 * archive_timeout segment switch.  They are still flushed or replayed like
 * any other record.  An idle server writes about one of each per second
 * or two, whatever the number of collections.
 *
 * Callers serialise writes (the oracle's ceiling lock); the file is read
 * once, in the postmaster at shared memory initialisation.
 *
 * IDENTIFICATION
 *	  src/timeline/ceiling.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "replication/syncrep.h"
#include "storage/fd.h"

#include "ceiling.h"

#define MZC_CEILING_DIR "pg_mzcoord"
#define MZC_CEILING_FILE MZC_CEILING_DIR "/oracle"
#define MZC_CEILING_TMP MZC_CEILING_DIR "/oracle.tmp"
#define MZC_CEILING_MAGIC 0x4d5a4f31	/* "MZO1" */

/*
 * mzcoord's resource manager id.  128 is PostgreSQL's id for extensions
 * in development; mzcoord has not reserved one of its own yet (see
 * https://wiki.postgresql.org/wiki/CustomWALResourceManagers), so it
 * cannot run beside another extension that uses 128.
 */
#define MZC_RMGR_ID RM_EXPERIMENTAL_ID
#define MZC_XLOG_CEILING 0x10	/* a raised ceiling */
#define MZC_XLOG_UPPER 0x20		/* the table timeline's upper */

/* Either record's payload: the time. */
typedef struct MzcCeilingRecord
{
	int64		ceiling;
} MzcCeilingRecord;

/* The oracle's replay of each record (set at registration). */
static mzc_ceiling_replay_fn replay_ceiling = NULL;
static mzc_ceiling_replay_fn replay_upper = NULL;

typedef struct MzcCeilingFile
{
	uint32		magic;
	uint32		unused;
	int64		ceiling;
	pg_crc32c	crc;			/* of the fields above */
} MzcCeilingFile;

static pg_crc32c
ceiling_crc(const MzcCeilingFile *f)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, f, offsetof(MzcCeilingFile, crc));
	FIN_CRC32C(crc);
	return crc;
}

/*
 * The ceiling the last run wrote, 0 if there is none.  Runs in the
 * postmaster (shmem startup, also after a crash).  A damaged file is
 * reported and ignored: it can only come from a failed first write, since
 * every later one replaces it atomically.
 */
mzc_ts
mzcoord_ceiling_load(void)
{
	MzcCeilingFile f;
	FILE	   *file = AllocateFile(MZC_CEILING_FILE, PG_BINARY_R);
	size_t		n;

	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", MZC_CEILING_FILE)));
		return 0;
	}
	n = fread(&f, 1, sizeof(f), file);
	FreeFile(file);
	if (n != sizeof(f) || f.magic != MZC_CEILING_MAGIC ||
		!EQ_CRC32C(f.crc, ceiling_crc(&f)) || f.ceiling < 0)
	{
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("mzcoord: ignoring damaged timestamp oracle file \"%s\"",
						MZC_CEILING_FILE)));
		return 0;
	}
	return f.ceiling;
}

/*
 * Close the temporary ceiling file after a failed action on it, and raise
 * "could not <action> file" with the errno (save) of that action.
 */
static void
ceiling_tmp_fail(int fd, int save, const char *action)
{
	CloseTransientFile(fd);
	errno = save;
	ereport(ERROR,
			(errcode_for_file_access(),
			 errmsg("could not %s file \"%s\": %m", action, MZC_CEILING_TMP)));
}

/* Write the ceiling file durably (the caller serialises writers). */
void
mzcoord_ceiling_store(mzc_ts ceiling)
{
	MzcCeilingFile f;
	int			fd;

	if (mkdir(MZC_CEILING_DIR, pg_dir_create_mode) == 0)
		fsync_fname(".", true);
	else if (errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", MZC_CEILING_DIR)));

	memset(&f, 0, sizeof(f));
	f.magic = MZC_CEILING_MAGIC;
	f.ceiling = ceiling;
	f.crc = ceiling_crc(&f);

	fd = OpenTransientFile(MZC_CEILING_TMP, O_CREAT | O_TRUNC | O_WRONLY | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", MZC_CEILING_TMP)));
	errno = 0;
	if (write(fd, &f, sizeof(f)) != sizeof(f))
		ceiling_tmp_fail(fd, errno ? errno : ENOSPC, "write");
	if (pg_fsync(fd) != 0)
		ceiling_tmp_fail(fd, errno, "fsync");
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", MZC_CEILING_TMP)));
	/* Renames, then fsyncs the file and its directory. */
	durable_rename(MZC_CEILING_TMP, MZC_CEILING_FILE, ERROR);
}


/*
 * Make a raised ceiling durable: the WAL record (flushed) first, then the
 * file.  Returns the record's end, for mzcoord_ceiling_replicate.  The
 * caller serialises writers; never called during recovery.
 */
XLogRecPtr
mzcoord_ceiling_write(mzc_ts ceiling)
{
	MzcCeilingRecord rec;
	XLogRecPtr	lsn;

	rec.ceiling = ceiling;
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	XLogSetRecordFlags(XLOG_MARK_UNIMPORTANT);
	lsn = XLogInsert(MZC_RMGR_ID, MZC_XLOG_CEILING);
	XLogFlush(lsn);
	mzcoord_ceiling_store(ceiling);
	return lsn;
}

/*
 * Log the table timeline's upper for standbys (not flushed; never during
 * recovery).  The caller saw every commit below it end.
 */
void
mzcoord_ceiling_log_upper(mzc_ts upper)
{
	MzcCeilingRecord rec;

	rec.ceiling = upper;
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	XLogSetRecordFlags(XLOG_MARK_UNIMPORTANT);
	(void) XLogInsert(MZC_RMGR_ID, MZC_XLOG_UPPER);
}

/*
 * Wait, as a commit does, until the synchronous standbys have the ceiling
 * record ending at lsn (nothing to do without them, or when this session's
 * synchronous_commit does not ask for it).  A time handed out below the
 * raised ceiling then survives a failover to any of them.
 */
void
mzcoord_ceiling_replicate(XLogRecPtr lsn)
{
	if (!XLogRecPtrIsInvalid(lsn))
		SyncRepWaitForLSN(lsn, false);
}

/* ----------------------------------------------------------------
 * The resource manager
 * ----------------------------------------------------------------
 */

static void
ceiling_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	MzcCeilingRecord rec;

	if ((info != MZC_XLOG_CEILING && info != MZC_XLOG_UPPER) ||
		XLogRecGetDataLen(record) != sizeof(rec))
		elog(PANIC, "mzcoord: unknown WAL record (info 0x%X, length %u)",
			 info, (unsigned) XLogRecGetDataLen(record));
	memcpy(&rec, XLogRecGetData(record), sizeof(rec));
	if (info == MZC_XLOG_CEILING && replay_ceiling != NULL)
		replay_ceiling(rec.ceiling);
	else if (info == MZC_XLOG_UPPER && replay_upper != NULL)
		replay_upper(rec.ceiling);
}

static void
ceiling_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	MzcCeilingRecord rec;

	if ((info == MZC_XLOG_CEILING || info == MZC_XLOG_UPPER) &&
		XLogRecGetDataLen(record) == sizeof(rec))
	{
		memcpy(&rec, XLogRecGetData(record), sizeof(rec));
		appendStringInfo(buf, "%s " INT64_FORMAT,
						 info == MZC_XLOG_CEILING ? "ceiling" : "upper",
						 rec.ceiling);
	}
}

static const char *
ceiling_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case MZC_XLOG_CEILING:
			return "CEILING";
		case MZC_XLOG_UPPER:
			return "UPPER";
	}
	return NULL;
}

static RmgrData ceiling_rmgr = {
	.rm_name = "mzcoord",
	.rm_redo = ceiling_redo,
	.rm_desc = ceiling_desc,
	.rm_identify = ceiling_identify
};

/*
 * Register mzcoord's resource manager (from _PG_init, while the library is
 * preloaded); recovery calls ceiling for each ceiling record it replays and
 * upper for each table upper.
 */
void
mzcoord_ceiling_register(mzc_ceiling_replay_fn ceiling,
						 mzc_ceiling_replay_fn upper)
{
	replay_ceiling = ceiling;
	replay_upper = upper;
	RegisterCustomRmgr(MZC_RMGR_ID, &ceiling_rmgr);
}
