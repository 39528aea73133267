--
-- F6 through mzcoord.largest_not_in_advance_of_upper: {u} -> u - 1
-- (saturating at 0), {} (NULL) -> 2^63 - 1.
--
SELECT upper, mzcoord.largest_not_in_advance_of_upper(upper) AS largest
  FROM (VALUES (20::bigint), (1), (0), (NULL), (9223372036854775807)) AS t(upper);

-- A negative upper is not a timestamp.
SELECT mzcoord.largest_not_in_advance_of_upper(-1);
DO $$
BEGIN
    PERFORM mzcoord.largest_not_in_advance_of_upper(-1);
EXCEPTION WHEN invalid_parameter_value THEN
    RAISE NOTICE 'caught SQLSTATE %', SQLSTATE;
END
$$;

SELECT provolatile, proisstrict, proparallel
  FROM pg_proc WHERE proname = 'largest_not_in_advance_of_upper';
