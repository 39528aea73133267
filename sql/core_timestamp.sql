--
-- Timestamp selection through mzcoord.determine_timestamp: scenarios
-- T1-T14 of reference 3.6, the binding constraints, the since-violation
-- error, and malformed requests with their SQLSTATEs.
--

-- A request over one input "u1" (since, upper).
CREATE FUNCTION pg_temp.req(iso text, kind text, ts bigint, since bigint,
                            upper bigint, oracle bigint DEFAULT NULL,
                            timeline boolean DEFAULT true,
                            session bigint DEFAULT NULL)
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'isolation', iso,
        'when', jsonb_build_object('kind', kind, 'ts', ts),
        'inputs', jsonb_build_array(
            jsonb_build_object('id', 'u1', 'since', since, 'upper', upper)),
        'oracle_read_ts', oracle,
        'timeline', timeline,
        'session_oracle_read_ts', session)
$$;

-- T1-T4, T11-T14.
SELECT name, r->'timestamp' AS ts, r->'respond_immediately' AS immediately
  FROM (VALUES
        ('T1', pg_temp.req('serializable', 'immediately', NULL, 10, 20)),
        ('T2', pg_temp.req('strict serializable', 'immediately', NULL, 10, 20, 25)),
        ('T3', pg_temp.req('strict serializable', 'immediately', NULL, 10, 20, 15)),
        ('T4', pg_temp.req('strict serializable', 'immediately', NULL, 10, 20, NULL, false)),
        ('T11', pg_temp.req('strong session serializable', 'immediately', NULL, 10, 20, 25, true, 12)),
        ('T12', pg_temp.req('strong session serializable', 'immediately', NULL, 10, 20, 15, true, 12)),
        ('T13', pg_temp.req('serializable', 'immediately', NULL, 0, 0)),
        ('T14', pg_temp.req('serializable', 'immediately', NULL, 10, NULL))
       ) AS t(name, q),
       LATERAL (SELECT mzcoord.determine_timestamp(q) AS r) AS x;

-- T6-T10 hold for every isolation level.
SELECT name, iso, r->'timestamp' AS ts, r->'respond_immediately' AS immediately
  FROM (VALUES ('serializable'), ('strict serializable'),
               ('strong session serializable')) AS i(iso),
       LATERAL (VALUES
        ('T6', pg_temp.req(iso, 'as_of', 12, 10, 20)),
        ('T7', pg_temp.req(iso, 'as_of', 30, 10, 20)),
        ('T8', pg_temp.req(iso, 'as_of_at_least', 5, 10, 20)),
        ('T9', pg_temp.req(iso, 'as_of_at_least', 15, 10, 20)),
        ('T10', pg_temp.req(iso, 'freshest_table_write', NULL, 10, 20, 25))
       ) AS t(name, q),
       LATERAL (SELECT mzcoord.determine_timestamp(q) AS r) AS x
 ORDER BY name, iso;

-- The whole result: since, upper, largest time not in advance of the upper,
-- and the binding constraints (only the tight ones are kept).
SELECT jsonb_pretty(mzcoord.determine_timestamp(
    pg_temp.req('strict serializable', 'immediately', NULL, 10, 20, 25)));
SELECT jsonb_pretty(mzcoord.determine_timestamp($${
    "isolation": "serializable",
    "when": {"kind": "as_of", "ts": 17},
    "inputs": [{"id": "t1", "since": 10, "upper": 40},
               {"id": "t2", "since": 17, "upper": 30},
               {"id": "mv", "since": 17, "upper": null}]
}$$));

-- T5: an as-of below the since.  The same error everywhere a time is below
-- a since: SQLSTATE 55000, each blocking input and its since, a hint.
SELECT mzcoord.determine_timestamp(pg_temp.req('serializable', 'as_of', 5, 10, 20));
SELECT try($$SELECT mzcoord.determine_timestamp(
    pg_temp.req('strict serializable', 'as_of', 5, 10, 20))$$);
SELECT mzcoord.determine_timestamp($${
    "isolation": "strict serializable",
    "when": {"kind": "as_of", "ts": 12},
    "inputs": [{"id": "t1", "since": 10, "upper": 40},
               {"id": "t2", "since": 15, "upper": 30},
               {"id": "dropped", "since": null, "upper": null}]
}$$);

-- Malformed requests: SQLSTATE 22023 with the path of the offending value.
SELECT try(format('SELECT mzcoord.determine_timestamp(%L)', q))
  FROM (VALUES
    ('[]'),
    ('{"when": {"kind": "immediately"}, "inputs": []}'),
    ('{"isolation": "read committed", "when": {"kind": "immediately"}, "inputs": []}'),
    ('{"isolation": "serializable", "when": {"kind": "later"}, "inputs": []}'),
    ('{"isolation": "serializable", "when": {"kind": "as_of"}, "inputs": []}'),
    ('{"isolation": "serializable", "when": {"kind": "as_of", "ts": -5}, "inputs": []}'),
    ('{"isolation": "serializable", "when": {"kind": "as_of", "ts": 1.5}, "inputs": []}'),
    ('{"isolation": "serializable", "when": {"kind": "as_of", "ts": 9223372036854775808}, "inputs": []}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately", "ts": 3}, "inputs": []}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately"}}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [{"id": "u1", "since": 1}]}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [{"id": "u1", "since": 1, "upper": 2}, {"id": "u2", "since": "1", "upper": 2}]}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [{"id": "u1", "since": 1, "upper": -2}]}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [{"id": "u1", "since": 1, "upper": 2}, {"id": "u1", "since": 1, "upper": 2}]}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [{"id": 7, "since": 1, "upper": 2}]}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [], "oracle": 3}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [], "timeline": "yes"}'),
    ('{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [], "real_time_recency_ts": 3}'),
    ('{"isolation": "strict serializable", "when": {"kind": "immediately"}, "inputs": [], "session_oracle_read_ts": 3}')
  ) AS t(q);

-- jsonb itself turns 1e3 into 1000 before the function sees it, so an
-- exponent that denotes an integer is accepted; 1.0 stays a fraction.
SELECT mzcoord.determine_timestamp('{"isolation": "serializable", "when": {"kind": "as_of", "ts": 1e1}, "inputs": []}')->'timestamp' AS ts;
SELECT try($$SELECT mzcoord.determine_timestamp('{"isolation": "serializable", "when": {"kind": "as_of", "ts": 1.0}, "inputs": []}')$$);

-- The same error as it reaches a client.
SELECT mzcoord.determine_timestamp('{"isolation": "serializable", "when": {"kind": "as_of", "ts": -5}, "inputs": []}');

-- NULL in, NULL out.
SELECT mzcoord.determine_timestamp(NULL) IS NULL AS is_null;
