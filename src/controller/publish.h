/*-------------------------------------------------------------------------
 *
 * publish.h
 *	  Publication of staged catalog changes at commit, collection creation
 *	  and the durable hold (publish.c).
 *
 * A staged change is made by stage.c and handed here at PRE_COMMIT and
 * COMMIT; its type belongs to this module, which interprets it, so that
 * stage.c depends on publish.c and never the other way round.
 *
 * IDENTIFICATION
 *	  src/controller/publish.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef MZCOORD_PUBLISH_H
#define MZCOORD_PUBLISH_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "frontier.h"
#include "ids.h"
#include "policy.h"
#include "status.h"

/* A staged controller change, applied at commit in list order. */
typedef enum MzcStageOp
{
	MZC_STAGE_CREATE,
	MZC_STAGE_POLICY,
	MZC_STAGE_DROP,
	MZC_STAGE_UPPER,
	MZC_STAGE_INPUTS			/* a view's new inputs (a replacement) */
} MzcStageOp;

typedef struct MzcStaged
{
	MzcStageOp	op;
	int			nest_level;		/* (sub)transaction that staged it */
	int64		gid;
	/* CREATE (ninputs and inputs: also INPUTS) */
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

/* Staging, PRE_COMMIT, COMMIT and ABORT; each takes the lock. */
extern void mzcoord_ctl_check_inputs(const int64 *gids, int n);
extern void mzcoord_ctl_reserve(List *staged, MzcReservation *r);
extern void mzcoord_ctl_unreserve(const MzcReservation *r);
extern void mzcoord_ctl_publish(List *staged, const MzcReservation *r);

/* Policies */
extern mzc_policy mzcoord_ctl_retain_policy(int64 retain_ms);
extern mzc_policy mzcoord_ctl_policy_for(MzcKind kind, int64 retain_ms);

/* Caller holds the controller lock exclusively. */
extern bool mzcoord_ctl_create_locked(int64 gid, const char *item_id,
									  Oid relid, MzcKind kind,
									  mzc_frontier since, mzc_frontier upper,
									  const int32 *deps, int ndeps,
									  int32 *slot_out, mzc_error *err);
extern void mzcoord_ctl_durable_hold_advance_locked(int32 slot,
													mzc_frontier since);

#endif							/* MZCOORD_PUBLISH_H */
