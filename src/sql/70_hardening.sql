
-- Part 70: hardening (issue 19), new in catalog 0.4.  Objects created here
-- are new in 0.4: the whole fragment goes into mzcoord--0.3--0.4.sql.
-- Functions of older fragments that changed in 0.4 are listed in
-- src/sql/upgrade/0.3--0.4.replace instead.
