/*-------------------------------------------------------------------------
 *
 * controller.h
 *	  The controller plane: shared-memory frontiers, holds, the oracle, and
 *	  the staging of catalog changes for commit-time publication.
 *
 * IDENTIFICATION
 *	  src/controller/controller.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_CONTROLLER_H
#define MZCOORD_CONTROLLER_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "storage/lwlock.h"

#include "frontier.h"
#include "ids.h"

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
extern Oid	mzcoord_ctl_served_extension(void);
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

#endif							/* MZCOORD_CONTROLLER_H */
