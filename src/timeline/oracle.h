/*-------------------------------------------------------------------------
 *
 * oracle.h
 *	  The timeline: the timestamp oracle that times table writes and closes
 *	  times for reads, and the shared table upper that follows it.  See the
 *	  header comment of oracle.c for the protocol and its locking rule.
 *
 * IDENTIFICATION
 *	  src/timeline/oracle.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_ORACLE_H
#define MZCOORD_ORACLE_H

#include "postgres.h"

#include "storage/lwlock.h"

#include "frontier.h"

extern Size mzcoord_oracle_shmem_size(void);
extern void mzcoord_oracle_shmem_init(LWLock *lock, LWLock *ceiling_lock,
									  bool found);
extern mzc_ts mzcoord_now_ms(void);
extern void mzcoord_check_user_time(int64 ts, const char *what);
extern mzc_ts mzcoord_write_ts(void);
extern bool mzcoord_has_write_ts(void);
extern bool mzcoord_oracle_observe(mzc_ts floor);
extern mzc_ts mzcoord_oracle_seal(void);
extern void mzcoord_oracle_bulk(bool on);
extern mzc_ts mzcoord_oracle_seal_early(void);
extern void mzcoord_oracle_pre_commit(void);
extern void mzcoord_oracle_committed(void);
extern void mzcoord_oracle_end_write(void);
extern mzc_ts mzcoord_oracle_tick(void);
extern mzc_ts mzcoord_oracle_read_ts(void);
extern mzc_ts mzcoord_oracle_read_ts_upper(mzc_ts *upper);
extern mzc_ts mzcoord_oracle_readable(void);
extern mzc_ts mzcoord_oracle_latest(void);
extern mzc_ts mzcoord_oracle_now(void);
extern void mzcoord_oracle_state(mzc_ts *closed, mzc_ts *ceiling);
extern mzc_ts mzcoord_table_upper(void);
extern void mzcoord_oracle_bootstrap(mzc_ts max_table_upper);
extern void mzcoord_oracle_register_wal(void);
extern mzc_ts mzcoord_oracle_replayed_upper(void);
extern void mzcoord_upper_advanced(void);
extern void mzcoord_wait_for_table_upper(mzc_ts ts);
extern void mzcoord_prepare_upper_wait(void);
extern void mzcoord_upper_wait(long timeout_ms);
extern void mzcoord_end_upper_wait(void);

#endif							/* MZCOORD_ORACLE_H */
