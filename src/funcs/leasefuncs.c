/*-------------------------------------------------------------------------
 *
 * leasefuncs.c
 *	  The SQL functions of leases: mzcoord.create_lease, renew_lease,
 *	  advance_lease and drop_lease, and the rows of the leases view
 *	  (_lease_holds) and of its check (_lease_validate).
 *
 * They check their arguments and the caller's privileges, stage the change
 * in the shared lease table that lease.c owns (which applies it at COMMIT;
 * see there for what a lease holds, its handover and its expiry), raise
 * what stood in its way after the controller lock is released, and write
 * the durable record through mzcoord._lease_write().  They never see an
 * entry of the table nor take the controller lock: lease.c's functions do.
 *
 * IDENTIFICATION
 *	  src/funcs/leasefuncs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/index.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/timestamp.h"

#include "acquire.h"
#include "controller.h"
#include "errors.h"
#include "ids.h"
#include "lease.h"
#include "rec_bounds.h"
#include "readhold.h"
#include "settings.h"
#include "shmem.h"
#include "frontier.h"

PG_FUNCTION_INFO_V1(mzcoord_create_lease);
PG_FUNCTION_INFO_V1(mzcoord_renew_lease);
PG_FUNCTION_INFO_V1(mzcoord_advance_lease);
PG_FUNCTION_INFO_V1(mzcoord_drop_lease);
PG_FUNCTION_INFO_V1(mzcoord_lease_holds);
PG_FUNCTION_INFO_V1(mzcoord_lease_validate);

#define LEASE_MS_PER_DAY INT64CONST(86400000)

/*
 * The relation whose privileges and row security govern a lease on relid:
 * for an index, the relation it indexes (an index has no privileges of its
 * own, and a read of it is a read of that relation); else relid itself.
 */
static Oid
lease_acl_relation(Oid relid)
{
	if (get_rel_relkind(relid) == RELKIND_INDEX)
		return IndexGetRelation(relid, true);
	return relid;
}

/* ----------------------------------------------------------------
 * The durable record
 * ----------------------------------------------------------------
 */

/*
 * Call mzcoord._lease_write(op, name, owner, gids, held_at, ttl,
 * expires_at): SECURITY DEFINER, so the record is written with the
 * extension owner's rights, after the checks made here as the caller.
 * fmgr does not check EXECUTE, which PUBLIC lacks.  Returns its result
 * (for 'lock': whether the record exists, now locked).
 */
static bool
lease_write(const char *op, const char *name, Oid owner, ArrayType *gids,
			mzc_ts held_at, int64 ttl_ms, TimestampTz expires_at)
{
	Oid			argtypes[7] = {TEXTOID, TEXTOID, OIDOID, TEXTARRAYOID,
	INT8OID, INTERVALOID, TIMESTAMPTZOID};
	Oid			fnoid;
	FmgrInfo	flinfo;
	Interval   *ttl = palloc0(sizeof(Interval));
	Datum		result;

	LOCAL_FCINFO(fcinfo, 7);

	fnoid = LookupFuncName(list_make2(makeString("mzcoord"),
									  makeString("_lease_write")),
						   7, argtypes, false);
	fmgr_info(fnoid, &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, 7, InvalidOid, NULL, NULL);
	ttl->time = ttl_ms * 1000;
	fcinfo->args[0].value = CStringGetTextDatum(op);
	fcinfo->args[1].value = CStringGetTextDatum(name);
	fcinfo->args[2].value = ObjectIdGetDatum(owner);
	fcinfo->args[3].value = PointerGetDatum(gids);
	fcinfo->args[4].value = Int64GetDatum(held_at);
	fcinfo->args[5].value = IntervalPGetDatum(ttl);
	fcinfo->args[6].value = TimestampTzGetDatum(expires_at);
	for (int i = 0; i < 7; i++)
		fcinfo->args[i].isnull = false;
	fcinfo->args[3].isnull = gids == NULL;
	result = FunctionCallInvoke(fcinfo);
	return !fcinfo->isnull && DatumGetBool(result);
}

/* ----------------------------------------------------------------
 * SQL: arguments
 * ----------------------------------------------------------------
 */

static char *
lease_name_arg(FunctionCallInfo fcinfo)
{
	char	   *name;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lease name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (name[0] == '\0' || strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid lease name: \"%s\"", name),
				 errdetail("A lease name has between 1 and %d bytes.",
						   NAMEDATALEN - 1)));
	return name;
}

/*
 * The name of a new lease: besides lease_name_arg()'s checks, no control
 * character (a newline or an escape would garble every listing and log line
 * that shows it) and not only spaces (it would look like no name at all).
 * Only creation checks this, so that a lease created under the older rules
 * can still be renewed and dropped by its name.
 */
static void
check_new_lease_name(const char *name)
{
	bool		only_spaces = true;

	for (int i = 0; name[i] != '\0'; i++)
	{
		unsigned char c = (unsigned char) name[i];

		/* C0 controls and DEL; in UTF-8 also C1 controls (U+0080..U+009F). */
		if (c < 0x20 || c == 0x7f ||
			(GetDatabaseEncoding() == PG_UTF8 && c == 0xc2 &&
			 (unsigned char) name[i + 1] >= 0x80 &&
			 (unsigned char) name[i + 1] <= 0x9f))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("invalid lease name: it contains a control character"),
					 errdetail("Byte %d of the name is a control character.",
							   i + 1),
					 errhint("Use a name of printable characters.")));
		if (c != ' ')
			only_spaces = false;
	}
	if (only_spaces)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid lease name: it consists only of spaces"),
				 errhint("Use a name with at least one printable character that is not a space.")));
}

/* A ttl in milliseconds, checked against mzcoord.max_lease_ttl. */
static int64
lease_ttl_arg(FunctionCallInfo fcinfo, int argno)
{
	Interval   *iv;
	int64		max_ms = (int64) mzcoord_max_lease_ttl * 1000;
	int64		days;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lease ttl must not be null")));
	iv = PG_GETARG_INTERVAL_P(argno);
	days = (int64) iv->day + (int64) iv->month * DAYS_PER_MONTH;

	/* Far beyond any limit either way: refuse before multiplying. */
	if (days > max_ms / LEASE_MS_PER_DAY + 1 || iv->time / 1000 > max_ms ||
		days * LEASE_MS_PER_DAY + iv->time / 1000 <= 0 ||
		days * LEASE_MS_PER_DAY + iv->time / 1000 > max_ms)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid lease ttl: %s",
						DatumGetCString(DirectFunctionCall1(interval_out,
															IntervalPGetDatum(iv)))),
				 errdetail("A lease ttl is positive and at most mzcoord.max_lease_ttl (%d s).",
						   mzcoord_max_lease_ttl)));
	return days * LEASE_MS_PER_DAY + iv->time / 1000;
}

/*
 * A lease pins history for reads as of a time, and the history applies no
 * row security policy: as read_at() refuses a relation under row-level
 * security for the reader, a lease on it is refused for its owner, when it
 * is created and at every renewal (policies can be enabled later).
 */
static void
check_lease_rls(Oid relid, Oid owner, const char *verb)
{
	relid = lease_acl_relation(relid);
	/* noError: the caller's row_security setting changes nothing here. */
	if (check_enable_rls(relid, owner, true) != RLS_ENABLED)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("cannot %s a lease on \"%s\" under row-level security",
					verb, get_rel_name(relid)),
			 errdetail("Row-level security applies to role \"%s\" on \"%s\", and its history does not apply the row security policies of the table.",
					   GetUserNameFromId(owner, false), get_rel_name(relid))));
}

/*
 * regclass[] -> relation OIDs, each readable by the caller: a lease keeps
 * history, so only those who may read a relation may lease it.
 */
static Oid *
lease_rels_arg(FunctionCallInfo fcinfo, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	Oid		   *rels;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relations must not be null")));
	if (ARR_NDIM(PG_GETARG_ARRAYTYPE_P(1)) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("relations must be given as a one-dimensional array")));
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(1), REGCLASSOID, sizeof(Oid), true,
					  TYPALIGN_INT, &elems, &nulls, n);
	if (*n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a lease needs at least one relation")));
	if (*n > MZC_LEASE_MAX_RELS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a lease cannot hold more than %d relations",
						MZC_LEASE_MAX_RELS)));
	rels = palloc(sizeof(Oid) * *n);
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("relations must not be null")));
		rels[i] = DatumGetObjectId(elems[i]);
		if (!OidIsValid(get_rel_relkind(rels[i])))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("relation with OID %u does not exist", rels[i])));
		for (int j = 0; j < i; j++)
			if (rels[j] == rels[i])
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("relation \"%s\" is given more than once",
								get_rel_name(rels[i]))));
		if (pg_class_aclcheck(lease_acl_relation(rels[i]), GetUserId(),
							  ACL_SELECT) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV,
						   get_relkind_objtype(get_rel_relkind(lease_acl_relation(rels[i]))),
						   get_rel_name(lease_acl_relation(rels[i])));
		check_lease_rls(rels[i], GetUserId(), "create");
	}
	return rels;
}

/* ----------------------------------------------------------------
 * SQL: create_lease
 * ----------------------------------------------------------------
 */

/*
 * The greatest committed compaction bound of the relations (0 if none has
 * one): a lease whose time the caller left to us starts there at the
 * least.  The live since can be below it while a transaction holds it
 * back (transaction holds keep the since, not the bound), and
 * _lease_write() refuses a time below a bound.
 */
static mzc_ts
committed_bound_floor(const Oid *rels, int n)
{
	mzc_ts		floor;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	floor = mzcoord_rec_max_bound_of(rels, n);
	SPI_finish();
	return floor;
}

static void
report_create_failure(const char *name, const Oid *rels, int n,
					  const MzcLeaseCheck *c)
{
	if (c->not_collection >= 0 && c->not_storage)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("relation \"%s\" cannot be leased",
						mzcoord_qualified_relname(rels[c->not_collection])),
				 errdetail("Leases hold mzcoord tables, sources, materialized views and indexes.")));
	if (c->not_collection >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("relation \"%s\" is not an mzcoord collection",
						mzcoord_qualified_relname(rels[c->not_collection])),
				 errhint("Register a table with mzcoord.create_table(), or create a source with mzcoord.")));
	if (c->violation)
	{
		const char **names = palloc(sizeof(char *) * n);
		mzc_frontier *sinces = palloc(sizeof(mzc_frontier) * n);
		int			k = 0;

		for (int i = 0; i < n; i++)
			if (!mzc_frontier_le_ts(c->sinces[i], c->at))
			{
				names[k] = mzcoord_qualified_relname(rels[i]);
				sinces[k++] = c->sinces[i];
			}
		mzcoord_report_since_violation(c->at, k, names, sinces);
	}
	if (c->taken)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("lease \"%s\" already exists", name)));
	if (c->role_limit)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many mzcoord leases for role \"%s\"",
						GetUserNameFromId(GetUserId(), false)),
				 errdetail("The role has %d leases, and mzcoord.max_leases allows %d.",
						   c->held, mzcoord_max_leases),
				 errhint("Drop leases of the role (expired ones count too), or have a superuser raise mzcoord.max_leases.")));
	if (c->full || c->no_nodes)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many mzcoord leases"),
				 errdetail("Shared memory has room for %d leases and their counts.",
						   mzcoord_lease_area_capacity()),
				 errhint("Drop leases, or raise mzcoord.max_holds, which sizes the lease area and the count pool.")));
	if (c->no_holds)
		mzcoord_report_no_hold_space(&c->hf);
}

static ArrayType *
gid_array(const int64 *gids, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * n);

	for (int i = 0; i < n; i++)
		d[i] = CStringGetTextDatum(mzcoord_gid_text(gids[i]));
	return construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT);
}

/*
 * mzcoord.create_lease(name text, rels regclass[], at bigint DEFAULT NULL,
 *		ttl interval DEFAULT '5 minutes') RETURNS bigint
 */
Datum
mzcoord_create_lease(PG_FUNCTION_ARGS)
{
	char	   *name;
	Oid		   *rels;
	int			n;
	int64		ttl_ms;
	int64		gids[MZC_LEASE_MAX_RELS];
	MzcLeaseCheck c;
	Oid			role = GetUserId();
	TimestampTz now;
	int32		entry;

	mzcoord_require_shmem();
	name = lease_name_arg(fcinfo);
	check_new_lease_name(name);
	rels = lease_rels_arg(fcinfo, &n);
	memset(&c, 0, sizeof(c));
	c.not_collection = -1;
	c.at = PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2);
	if (!PG_ARGISNULL(2) && !mzc_ts_valid(c.at))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease time must not be negative: " INT64_FORMAT, c.at)));
	ttl_ms = lease_ttl_arg(fcinfo, 3);
	mzcoord_ctl_require_ready_fn(fcinfo->flinfo->fn_oid);
	if (PG_ARGISNULL(2))
		c.floor = committed_bound_floor(rels, n);
	mzcoord_reserve_local_holds(n);
	mzcoord_lease_reserve_op();
	now = GetCurrentTimestamp();

	entry = mzcoord_lease_stage_create(name, role, rels, n, !PG_ARGISNULL(2),
									   ttl_ms, now, &c, gids);
	if (entry < 0)
		report_create_failure(name, rels, n, &c);
	(void) lease_write("create", name, role, gid_array(gids, n), c.at, ttl_ms,
					   mzcoord_lease_time(mzcoord_lease_ms(now) + ttl_ms));
	PG_RETURN_INT64(c.at);
}

/* ----------------------------------------------------------------
 * SQL: renew, advance, drop
 * ----------------------------------------------------------------
 */

/* Lock the record of `name`, or raise that it does not exist. */
static void
lock_record(const char *name)
{
	if (!lease_write("lock", name, InvalidOid, NULL, 0, 0, 0))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("lease \"%s\" does not exist", name)));
}

/*
 * Renewing and advancing need what creating needed: the owner of the lease
 * must still be allowed to SELECT from each relation it holds.  A lease
 * keeps history, so without this a role that lost the privilege could go
 * on pinning the relation's history by renewing.  The check is on the
 * owner, also when a superuser renews: the lease protects the owner's
 * reads.  On failure the call raises 42501 and extends nothing; the lease
 * stops protecting at its current expiry, at most its ttl later (not at
 * once: the failed call's transaction aborts, so it cannot change the
 * durable record, and shared memory must keep agreeing with the record).
 * Leases of other owners are left to report_found().
 */
static void
check_owner_privileges(const char *name, const char *verb)
{
	Oid			owner = InvalidOid;
	Oid			relids[MZC_LEASE_MAX_RELS];
	int			n = 0;

	if (!mzcoord_lease_owner_rels(name, &owner, relids, &n) ||
		(owner != GetUserId() && !superuser()))
		return;
	for (int i = 0; i < n; i++)
	{
		bool		missing = false;

		if (!OidIsValid(relids[i]))
			continue;
		if (pg_class_aclcheck_ext(lease_acl_relation(relids[i]), owner, ACL_SELECT,
								  &missing) != ACLCHECK_OK && !missing)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to %s lease \"%s\"", verb, name),
					 errdetail("Role \"%s\", the owner of the lease, no longer has SELECT privilege on relation \"%s\".",
							   GetUserNameFromId(owner, false),
							   mzcoord_qualified_relname(lease_acl_relation(relids[i]))),
					 errhint("The lease is not extended and stops protecting when it expires. Drop it with mzcoord.drop_lease().")));
		if (!missing)
			check_lease_rls(relids[i], owner, verb);
	}
}

/* Raise what mzcoord_lease_stage_*() found; returns if nothing. */
static void
report_found(const char *name, const MzcLeaseFound *f, const char *verb)
{
	if (f->entry < 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lease \"%s\" is not loaded in shared memory", name),
				 errhint("Try again once the coordinator has loaded the catalog.")));
	if (f->owner != GetUserId() && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to %s lease \"%s\"", verb, name),
				 errdetail("Only the owner of a lease or a superuser may %s it.",
						   verb)));
	if (f->expired)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lease \"%s\" has expired", name),
				 errdetail("An expired lease protects nothing and cannot be renewed or advanced."),
				 errhint("Drop it with mzcoord.drop_lease() and create it again.")));
	if (f->no_nodes)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many mzcoord leases"),
				 errdetail("The shared count pool is full or reserved for changes being committed."),
				 errhint("Drop leases, or raise mzcoord.max_holds, which sizes the count pool.")));
	if (f->no_holds)
		mzcoord_report_no_hold_space(&f->hf);
}

/* mzcoord.renew_lease(name text) RETURNS timestamptz */
Datum
mzcoord_renew_lease(PG_FUNCTION_ARGS)
{
	char	   *name;
	MzcLeaseFound f;
	TimestampTz now;
	bool		ok;

	mzcoord_require_shmem();
	name = lease_name_arg(fcinfo);
	mzcoord_ctl_require_ready_fn(fcinfo->flinfo->fn_oid);
	lock_record(name);
	check_owner_privileges(name, "renew");
	mzcoord_reserve_local_holds(MZC_LEASE_MAX_RELS);
	mzcoord_lease_reserve_op();
	memset(&f, 0, sizeof(f));
	now = GetCurrentTimestamp();

	ok = mzcoord_lease_stage_renew(name, now, &f);
	if (!ok)
		report_found(name, &f, "renew");
	(void) lease_write("renew", name, InvalidOid, NULL, 0, 0,
					   mzcoord_lease_time(f.expires_ms));
	PG_RETURN_TIMESTAMPTZ(mzcoord_lease_time(f.expires_ms));
}

/* mzcoord.advance_lease(name text, at bigint) RETURNS void */
Datum
mzcoord_advance_lease(PG_FUNCTION_ARGS)
{
	char	   *name;
	MzcLeaseFound f;
	mzc_ts		at;
	bool		ok;

	mzcoord_require_shmem();
	name = lease_name_arg(fcinfo);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lease time must not be null")));
	at = PG_GETARG_INT64(1);
	if (!mzc_ts_valid(at))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease time must not be negative: " INT64_FORMAT, at)));
	mzcoord_ctl_require_ready_fn(fcinfo->flinfo->fn_oid);
	lock_record(name);
	check_owner_privileges(name, "advance");
	mzcoord_reserve_local_holds(MZC_LEASE_MAX_RELS);
	mzcoord_lease_reserve_op();
	memset(&f, 0, sizeof(f));

	ok = mzcoord_lease_stage_advance(name, at, GetCurrentTimestamp(), &f);
	if (!ok)
	{
		report_found(name, &f, "advance");
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot move lease \"%s\" back from " INT64_FORMAT " to " INT64_FORMAT,
						name, f.held_at, at),
				 errdetail("A lease only moves forward.")));
	}
	(void) lease_write("advance", name, InvalidOid, NULL, at, 0, 0);
	PG_RETURN_VOID();
}

/* mzcoord.drop_lease(name text) RETURNS void */
Datum
mzcoord_drop_lease(PG_FUNCTION_ARGS)
{
	char	   *name;
	MzcLeaseFound f;
	bool		ok;

	mzcoord_require_shmem();
	name = lease_name_arg(fcinfo);
	mzcoord_ctl_require_ready_fn(fcinfo->flinfo->fn_oid);
	lock_record(name);
	mzcoord_lease_reserve_op();
	memset(&f, 0, sizeof(f));

	ok = mzcoord_lease_stage_drop(name, GetCurrentTimestamp(), &f);
	if (!ok)
	{
		f.expired = false;
		report_found(name, &f, "drop");
	}
	(void) lease_write("drop", name, InvalidOid, NULL, 0, 0, 0);
	PG_RETURN_VOID();
}

/* ----------------------------------------------------------------
 * Introspection and validation
 * ----------------------------------------------------------------
 */

/*
 * mzcoord._lease_holds(OUT global_id text, OUT relation regclass,
 *		OUT lease text, OUT held_time bigint, OUT held_since timestamptz,
 *		OUT behind_policy_ms bigint): the counts of the active leases.
 */
Datum
mzcoord_lease_holds(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MzcLeaseHoldCopy *hs;
	int			n;

	mzcoord_require_shmem();
	InitMaterializedSRF(fcinfo, 0);
	hs = palloc(sizeof(MzcLeaseHoldCopy) * mzcoord_lease_area_capacity() *
				MZC_LEASE_MAX_RELS);
	n = mzcoord_lease_copy_holds(hs);

	for (int i = 0; i < n; i++)
	{
		Datum		v[6];
		bool		nl[6] = {false, false, false, false, false, false};

		v[0] = CStringGetTextDatum(mzcoord_gid_text(hs[i].gid));
		v[1] = ObjectIdGetDatum(hs[i].relid);
		nl[1] = !OidIsValid(hs[i].relid);
		v[2] = CStringGetTextDatum(hs[i].name);
		v[3] = Int64GetDatum(hs[i].held_at);
		v[4] = TimestampTzGetDatum(hs[i].created_at);
		/* How far the lease keeps the since behind what the policy wants. */
		v[5] = Int64GetDatum(hs[i].implied.empty || hs[i].implied.ts <= hs[i].held_at ?
							 0 : hs[i].implied.ts - hs[i].held_at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nl);
	}
	return (Datum) 0;
}

/*
 * mzcoord._lease_validate(OUT check_name text, OUT object text,
 *		OUT detail text): every active lease is at or above the since of what
 *		it holds, and no lease is counted without a reader.
 */
Datum
mzcoord_lease_validate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MzcLeaseHoldCopy *hs;
	int			n;
	int			readerless = 0;

	mzcoord_require_shmem();
	InitMaterializedSRF(fcinfo, 0);
	hs = palloc(sizeof(MzcLeaseHoldCopy) * mzcoord_lease_area_capacity() *
				MZC_LEASE_MAX_RELS);
	n = mzcoord_lease_copy_validate(hs, &readerless);

	for (int i = 0; i <= n; i++)
	{
		Datum		v[3];
		bool		nl[3] = {false, false, false};

		if (i == n && readerless == 0)
			break;
		if (i < n && mzc_frontier_le_ts(hs[i].since, hs[i].held_at))
			continue;
		v[0] = CStringGetTextDatum(i < n ? "since <= lease" : "lease reader");
		v[1] = CStringGetTextDatum(i < n ? hs[i].name : "shared memory");
		v[2] = CStringGetTextDatum(i < n ?
								   psprintf("the since of " MZC_GID_FMT " is beyond the lease's time " INT64_FORMAT,
											hs[i].gid, hs[i].held_at) :
								   psprintf("%d counted leases have no reader", readerless));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nl);
	}
	return (Datum) 0;
}
