/*-------------------------------------------------------------------------
 *
 * ceiling.c
 *	  The oracle's durable ceiling: the file pg_mzcoord/oracle.
 *
 * The oracle never hands out or closes a time above the ceiling, and the
 * ceiling is written here before it is raised in memory, so after any
 * restart the timeline resumes above every time used before.  The file is
 * CRC-checked, written to a temporary file, fsynced and durably renamed, so
 * a crash leaves either the old or the new ceiling.  Callers serialise
 * writes (the oracle's ceiling lock); reading happens once, in the
 * postmaster at shared memory initialisation.
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

#include "common/file_perm.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "ceiling.h"

#define MZC_CEILING_DIR "pg_mzcoord"
#define MZC_CEILING_FILE MZC_CEILING_DIR "/oracle"
#define MZC_CEILING_TMP MZC_CEILING_DIR "/oracle.tmp"
#define MZC_CEILING_MAGIC 0x4d5a4f31	/* "MZO1" */

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

/* Write the ceiling durably (the caller serialises writers). */
void
mzcoord_ceiling_write(mzc_ts ceiling)
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

