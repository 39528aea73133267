
-- Part 70: hardening (issue 19), new in catalog 0.4.  Objects created here
-- are new in 0.4: the whole fragment goes into mzcoord--0.3--0.4.sql.
-- Functions of older fragments that changed in 0.4 are listed in
-- src/sql/upgrade/0.3--0.4.replace instead.

-- The time of an 'at creation' refresh: the creation's strict serializable
-- time over the view's inputs (src/controller/stage.c).  Called by
-- _create_materialized_view; not for users.
CREATE FUNCTION mzcoord._creation_refresh_ts(global_ids text[])
RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mzcoord_creation_refresh_ts';

REVOKE ALL ON FUNCTION mzcoord._creation_refresh_ts(text[]) FROM PUBLIC;
