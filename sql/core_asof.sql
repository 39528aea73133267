--
-- As-of selection through mzcoord.select_as_ofs: the eight scenarios of
-- reference 3.5 and malformed requests with their SQLSTATEs.
--

-- One row per dataflow, in request order.
CREATE FUNCTION pg_temp.as_ofs(request jsonb)
RETURNS TABLE (id text, as_of bigint) LANGUAGE sql AS $$
    SELECT d->>'id', (mzcoord.select_as_ofs(request)->>(d->>'id'))::bigint
      FROM jsonb_array_elements(request->'dataflows') WITH ORDINALITY AS e(d, n)
     ORDER BY n
$$;

-- 1. upstream storage constraints
SELECT * FROM pg_temp.as_ofs($${"now": 0,
  "storage": {"s1": {"since": 10, "upper": 20}, "s2": {"since": 20, "upper": 30}},
  "dataflows": [{"id": "u1", "inputs": ["s1"]}, {"id": "u2", "inputs": ["s2"]},
                {"id": "u3", "inputs": ["s1", "s2"]}, {"id": "u4", "inputs": ["u1", "u2"]}]}$$);

-- 2. downstream storage constraints (u3 and u4 are materialized views)
SELECT * FROM pg_temp.as_ofs($${"now": 100,
  "storage": {"s1": {"since": 10, "upper": 20}, "u3": {"since": 10, "upper": 15},
              "u4": {"since": 10, "upper": 13}},
  "dataflows": [{"id": "u1", "inputs": ["s1"]}, {"id": "u2", "inputs": ["s1"]},
                {"id": "u3", "inputs": ["u2"]}, {"id": "u4", "inputs": ["u2"]}]}$$);

-- 3. warmup constraints
SELECT * FROM pg_temp.as_ofs($${"now": 100,
  "storage": {"s1": {"since": 10, "upper": 20}, "s2": {"since": 10, "upper": 30},
              "s3": {"since": 10, "upper": 40}, "s4": {"since": 10, "upper": 50}},
  "dataflows": [{"id": "u1", "inputs": ["s1"]}, {"id": "u2", "inputs": ["s2"]},
                {"id": "u3", "inputs": ["s3"]}, {"id": "u4", "inputs": ["s4"]},
                {"id": "u5", "inputs": ["u1", "u2"]}, {"id": "u6", "inputs": ["u3", "u4"]}]}$$);

-- 4. index read policy constraints (u6 is a materialized view: its policy
--    is ignored)
SELECT * FROM pg_temp.as_ofs($${"now": 100,
  "storage": {"s1": {"since": 10, "upper": 20}, "u6": {"since": 10, "upper": 18}},
  "dataflows": [
    {"id": "u1", "inputs": ["s1"], "policy": {"lag": 5, "granularity": 1}},
    {"id": "u2", "inputs": ["s1"], "policy": {"lag": 15, "granularity": 1}},
    {"id": "u3", "inputs": ["s1"], "policy": {"valid_from": 13}},
    {"id": "u4", "inputs": ["s1"], "policy": {"valid_from": 5}},
    {"id": "u5", "inputs": [], "policy": {"lag": 5, "granularity": 1}},
    {"id": "u6", "inputs": ["s1"], "policy": {"valid_from": 13}}]}$$);

-- 5. index current time constraints
SELECT * FROM pg_temp.as_ofs($${"now": 15,
  "storage": {"s1": {"since": 10, "upper": 20}, "s2": {"since": 20, "upper": 30},
              "u4": {"since": 10, "upper": 12}, "u5": {"since": 10, "upper": 18}},
  "dataflows": [{"id": "u1", "inputs": ["s1"]}, {"id": "u2", "inputs": ["s2"]},
                {"id": "u3", "inputs": ["s1"]}, {"id": "u4", "inputs": ["u3"]},
                {"id": "u5", "inputs": ["s1"]}, {"id": "u6", "inputs": []}]}$$);

-- 6. a sealed storage sink is not installed (null)
SELECT * FROM pg_temp.as_ofs($${"now": 100,
  "storage": {"s1": {"since": 10, "upper": 20}, "u1": {"since": 10, "upper": null}},
  "dataflows": [{"id": "u1", "inputs": ["s1"]}]}$$);

-- 7. read-only mode prunes dependants of dropped storage collections
SELECT * FROM pg_temp.as_ofs($${"now": 15, "read_only": true,
  "storage": {"s1": {"since": 10, "upper": 20}, "s2": {"since": null, "upper": null},
              "u4": {"since": 10, "upper": 20}},
  "dataflows": [{"id": "u1", "inputs": ["s1"]}, {"id": "u2", "inputs": ["s2"]},
                {"id": "u3", "inputs": ["s1", "s2"]}, {"id": "u4", "inputs": ["u2"]}]}$$);

-- 8. database-issues#9273: index write frontiers come from input write
--    frontiers, not from input as-of bounds
SELECT * FROM pg_temp.as_ofs($${"now": 100,
  "storage": {"s1": {"since": 10, "upper": 20}, "u3": {"since": 14, "upper": 15}},
  "dataflows": [
    {"id": "u1", "inputs": ["s1"], "policy": {"lag": 1, "granularity": 1}},
    {"id": "u2", "inputs": ["u1"], "policy": {"lag": 1, "granularity": 1}},
    {"id": "u3", "inputs": ["u1"]}]}$$);

-- The raw result object.
SELECT mzcoord.select_as_ofs($${"now": 100, "storage": {"s1": {"since": 10, "upper": 20}},
  "dataflows": [{"id": "i1", "inputs": ["s1"]}, {"id": "i2", "inputs": ["i1"]}]}$$);

-- Malformed requests: SQLSTATE 22023 with the path of the offending value.
SELECT try(format('SELECT mzcoord.select_as_ofs(%L)', q))
  FROM (VALUES
    ('"now"'),
    ('{"storage": {}, "dataflows": []}'),
    ('{"now": -1, "storage": {}, "dataflows": []}'),
    ('{"now": 1.5, "storage": {}, "dataflows": []}'),
    ('{"now": 1, "storage": {"s1": {"since": 1}}, "dataflows": []}'),
    ('{"now": 1, "storage": {"s1": {"since": 1, "upper": -2}}, "dataflows": []}'),
    ('{"now": 1, "storage": {}, "dataflows": [{"id": "u1", "inputs": ["s9"]}]}'),
    ('{"now": 1, "storage": {}, "dataflows": [{"id": "u1", "inputs": []}, {"id": "u1", "inputs": []}]}'),
    ('{"now": 1, "storage": {}, "dataflows": [{"id": "a", "inputs": ["b"]}, {"id": "b", "inputs": ["c"]}, {"id": "c", "inputs": ["a"]}]}'),
    ('{"now": 1, "storage": {}, "dataflows": [{"id": "a", "inputs": ["a"]}]}'),
    ('{"now": 1, "storage": {}, "dataflows": [{"id": "a", "inputs": "s1"}]}'),
    ('{"now": 1, "storage": {}, "dataflows": [{"id": "a", "inputs": [], "policy": {"lag": 5, "granularity": 0}}]}'),
    ('{"now": 1, "storage": {}, "dataflows": [{"id": "a", "inputs": [], "policy": {"retain": 5}}]}'),
    ('{"now": 1, "storage": {}, "dataflows": [{"id": "a", "inputs": [], "policy": {"valid_from": -3}}]}'),
    ('{"now": 1, "storage": {}, "dataflows": [], "read_only": 1}'),
    ('{"now": 1, "storage": {}, "dataflows": [], "extra": true}')
  ) AS t(q);

-- Deep nesting is refused cleanly: the request is read only where it has a
-- shape, never recursively, so a nested value is refused by its type.
SELECT try(format('SELECT mzcoord.select_as_ofs(%L)',
    '{"now": 1, "storage": {}, "dataflows": [], "x": ' ||
    repeat('[', 100) || repeat(']', 100) || '}')) AS error
UNION ALL
SELECT try(format('SELECT mzcoord.select_as_ofs(%L)',
    '{"now": 1, "storage": {}, "dataflows": [{"id": "a", "inputs": ' ||
    repeat('[', 100) || repeat(']', 100) || '}]}'));

-- NULL in, NULL out.
SELECT mzcoord.select_as_ofs(NULL) IS NULL AS is_null;
