-- Part 80: publication that follows change (issue 20).
--
-- New in catalog 0.5.  The coordinator's publication of compaction bounds,
-- sinces and uppers (src/controller/tick.c).

-- The coordinator rewrites a bound (and, in catalog 0.5, the since and
-- upper mirrored in mzcoord.collections; see part 83) whenever it moves
-- (at most once per mzcoord.publish_interval for a since that only follows
-- its policy).  None of those columns is indexed: with room left on each
-- page the updates are HOT, and write no index entries.
ALTER TABLE mzcoord.compaction_bounds SET (fillfactor = 50);
ALTER TABLE mzcoord.collections SET (fillfactor = 70);
