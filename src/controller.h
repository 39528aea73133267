/*-------------------------------------------------------------------------
 *
 * controller.h
 *	  The controller plane: shared-memory frontiers, holds, the oracle, and
 *	  the staging of catalog changes for commit-time publication.
 *
 * IDENTIFICATION
 *	  src/controller.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_CONTROLLER_H
#define MZCOORD_CONTROLLER_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "storage/lwlock.h"

#include "frontier.h"

/* Item kinds, as stored in mzcoord.items.kind. */
typedef enum MzcKind
{
	MZC_KIND_TABLE = 0,
	MZC_KIND_SOURCE,
	MZC_KIND_MATERIALIZED_VIEW,
	MZC_KIND_INDEX,
	MZC_KIND_SINK
} MzcKind;

extern const char *mzcoord_kind_name(MzcKind kind);
extern bool mzcoord_kind_parse(const char *name, MzcKind *kind);

/* Global ids are "u<N>"; the controller keys collections by N. */
extern bool mzcoord_parse_gid(const char *text, int64 *gid);

/* Default retain history: the lag of the default read policy (P5). */
#define MZC_DEFAULT_RETAIN_MS 1000

/* Longest item id ("u" and up to 19 digits) plus the terminator. */
#define MZC_ITEM_ID_LEN 24

/* Most inputs a collection can hold (its dependencies). */
#define MZC_MAX_INPUTS 16

/* A staged controller change (stage.c), applied at commit in list order. */
typedef enum MzcStageOp
{
	MZC_STAGE_CREATE,
	MZC_STAGE_POLICY,
	MZC_STAGE_DROP,
	MZC_STAGE_UPPER
} MzcStageOp;

typedef struct MzcStaged
{
	MzcStageOp	op;
	int			nest_level;		/* (sub)transaction that staged it */
	int64		gid;
	/* CREATE */
	char		item_id[MZC_ITEM_ID_LEN];
	Oid			relid;
	MzcKind		kind;
	mzc_frontier since;
	mzc_frontier upper;
	int			ninputs;
	int64	   *inputs;
	/* POLICY */
	int64		retain_ms;
	/* UPPER (also uses upper above) */
} MzcStaged;

/* What PRE_COMMIT reserved for the publication at COMMIT. */
typedef struct MzcReservation
{
	uint64		epoch;
	int32		slots;
	int32		nodes;
} MzcReservation;

/* A transaction hold of this backend. */
typedef struct MzcLocalHold
{
	uint64		epoch;			/* controller incarnation it belongs to */
	int32		slot;
	int32		entry;			/* its introspection entry */
	mzc_ts		time;
} MzcLocalHold;

/* stage.c */
extern void mzcoord_stage_init(void);
extern void mzcoord_reserve_local_holds(int n);
extern void mzcoord_record_local_hold(const MzcLocalHold *hold);
extern int	mzcoord_local_hold_count(void);
extern bool mzcoord_local_holds_cover(uint64 epoch, int32 slot, mzc_ts at);
extern void mzcoord_release_local_holds(void);

/*
 * A collection as the data plane sees it (controller.c): what a relation is
 * registered as, with its live frontiers.
 */
typedef struct MzcCollectionInfo
{
	int64		gid;
	MzcKind		kind;
	Oid			relid;
	mzc_frontier since;
	mzc_frontier upper;
} MzcCollectionInfo;

/* stage.c: stage a source's upper advance, published at commit. */
extern void mzcoord_stage_upper(int64 gid, mzc_frontier upper);

/* controller.c: the data plane's view */
extern bool mzcoord_ctl_lookup_rel(Oid relid, MzcCollectionInfo *info);
extern bool mzcoord_ctl_lookup_gid(int64 gid, MzcCollectionInfo *info);
extern void mzcoord_ctl_hold_for_read(Oid relid, mzc_ts at);
extern void mzcoord_ctl_wait_complete(Oid relid, mzc_ts at);
extern int	mzcoord_ctl_list_collections(MzcCollectionInfo **out);

/* controller.c */
extern Size mzcoord_controller_shmem_size(void);
extern void mzcoord_controller_shmem_init(LWLock *lock, bool found);
extern void mzcoord_ctl_require_ready_fn(Oid fn_oid);
#define mzcoord_ctl_require_ready() mzcoord_ctl_require_ready_fn(InvalidOid)
extern void mzcoord_ctl_check_inputs(const int64 *gids, int n);
extern mzc_ts mzcoord_ctl_hold_gids(const int64 *gids, int n);
extern void mzcoord_ctl_reserve(List *staged, MzcReservation *r);
extern void mzcoord_ctl_unreserve(const MzcReservation *r);
extern void mzcoord_ctl_publish(List *staged, const MzcReservation *r,
								const MzcLocalHold *holds, int nholds);
extern void mzcoord_ctl_release_holds(const MzcLocalHold *holds, int nholds);
extern void mzcoord_controller_tick(void);
extern void mzcoord_controller_tick_committed(void);
extern void mzcoord_controller_reset(void);

/* oracle.c */
extern Size mzcoord_oracle_shmem_size(void);
extern void mzcoord_oracle_shmem_init(LWLock *lock, LWLock *ceiling_lock,
									  bool found);
extern mzc_ts mzcoord_now_ms(void);
extern void mzcoord_check_user_time(int64 ts, const char *what);
extern mzc_ts mzcoord_write_ts(void);
extern bool mzcoord_has_write_ts(void);
extern bool mzcoord_write_ts_sealed(void);
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
extern void mzcoord_upper_advanced(void);
extern void mzcoord_wait_for_table_upper(mzc_ts ts);
extern void mzcoord_prepare_upper_wait(void);
extern void mzcoord_upper_wait(long timeout_ms);
extern void mzcoord_end_upper_wait(void);

#endif							/* MZCOORD_CONTROLLER_H */
