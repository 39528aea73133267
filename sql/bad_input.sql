--
-- The bad-input corpus: every SQL entry point of the extension, public and
-- internal, called as superuser with NULLs, extremes, empty and duplicate
-- arrays, relations of the wrong kind, dropped and zero OIDs, malformed and
-- deeply nested JSON, long and quoted names; and direct writes of bad rows
-- to the catalog.  Each call must succeed or fail with a clear SQLSTATE:
-- never XX000 (an internal error), a crash or an unbounded wait.
--
-- Every call runs as its own top-level statement (so that statement_timeout
-- bounds each one) inside a subtransaction that is always rolled back, so
-- that a call that succeeds (a drop, an append) leaves the state as it was
-- for the next one.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
SET lock_timeout = '2s';

CREATE SCHEMA bi;
SET search_path = bi, public;
CREATE TABLE bi_t (a int, b text);
SELECT mzcoord.create_table('bi_t') IS NOT NULL AS registered;
SELECT mzcoord.create_source('bi_s', 'a int, b text') IS NOT NULL AS source;
SELECT mzcoord.create_materialized_view('bi_mv', 'SELECT a FROM bi.bi_t') IS NOT NULL AS mv;
SELECT mzcoord.create_index('bi_idx', 'bi_t', '{a}') IS NOT NULL AS idx;
SELECT mzcoord.create_sink('bi_sink', 'bi_t') IS NOT NULL AS sink;
CREATE TABLE bi_plain (a int);
CREATE VIEW bi_view AS SELECT 1 AS a;
CREATE SEQUENCE bi_seq;
CREATE INDEX bi_plain_idx ON bi_plain (a);
CREATE TABLE bi_gone (a int);
CREATE TABLE public.bi_dropped AS SELECT 'bi.bi_gone'::regclass::oid AS o;
DROP TABLE bi_gone;
SELECT mzcoord.create_lease('bi_lease', '{bi.bi_t,bi.bi_s}') > 0 AS leased;
-- Labelled IMMUTABLE, but not (issue 19: refused in a view definition).
CREATE FUNCTION bi_fake_immutable() RETURNS float8 IMMUTABLE LANGUAGE sql
AS 'SELECT random()';

-- The cases: one statement each.  %R, %T, %J and %N in a template are
-- replaced by each bad relation, time, JSON document and name.
CREATE TABLE public.bi_cases (n serial PRIMARY KEY, stmt text NOT NULL,
                              waits boolean NOT NULL DEFAULT false,
                              sqlstate text, message text);
CREATE TABLE public.bi_rels (r text);
INSERT INTO public.bi_rels VALUES
    ('NULL'), ('0'), ('(SELECT o FROM public.bi_dropped)'), ('4294967295'),
    ($$'bi.bi_view'$$), ($$'bi.bi_seq'$$), ($$'bi.bi_plain_idx'$$),
    ($$'bi.bi_plain'$$), ($$'pg_class'$$), ($$'mzcoord.items'$$),
    ($$'bi.bi_t'$$), ($$'bi.bi_s'$$), ($$'bi.bi_mv'$$), ($$'bi.bi_idx'$$),
    ($$'bi.bi_sink'$$);
CREATE TABLE public.bi_times (t text);
INSERT INTO public.bi_times VALUES
    ('NULL'), ('-1'), ('0'), ('9223372036854775807'), ('-9223372036854775807'),
    ('9223372036854775806');
CREATE TABLE public.bi_json (j text);
INSERT INTO public.bi_json VALUES
    ('NULL'), ($$'null'$$), ($$'{}'$$), ($$'[]'$$), ($$'"x"'$$), ($$'1'$$),
    ($$'{"now": '$$), ($$'{"x": }'$$),
    ($$(repeat('[', 100000) || repeat(']', 100000))$$),
    ($$(repeat('{"a":', 5000) || '1' || repeat('}', 5000))$$),
    ($$('{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": ' || repeat('[', 200) || repeat(']', 200) || '}')$$),
    ($$'{"isolation": "serializable", "when": {"kind": "as_of", "ts": 99999999999999999999}, "inputs": []}'$$),
    ($$'{"isolation": "serializable", "when": {"kind": "as_of", "ts": -9223372036854775808}, "inputs": []}'$$),
    ($$'{"isolation": "serializable", "when": {"kind": "as_of", "ts": 9223372036854775807}, "inputs": [{"id": "u1", "since": 9223372036854775807, "upper": null}]}'$$),
    ($$'{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [{"id": "u1", "since": 20, "upper": 10}]}'$$),
    ($$'{"isolation": "strict serializable", "when": {"kind": "immediately"}, "inputs": [{"id": "u1", "since": 0, "upper": 9223372036854775807}], "oracle_read_ts": 9223372036854775807}'$$),
    ($$'{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [{"id": "u1", "since": 1, "upper": 2}, {"id": "u1", "since": 1, "upper": 2}]}'$$),
    ($$'{"isolation": "serializable", "when": {"kind": "immediately"}, "inputs": [{"id": "", "since": 1, "upper": 2}]}'$$),
    ($$'{"now": 9223372036854775807, "storage": {"s1": {"since": 9223372036854775807, "upper": null}}, "dataflows": [{"id": "d", "inputs": ["s1"], "policy": {"lag": 9223372036854775807, "granularity": 9223372036854775807}}]}'$$),
    ($$'{"now": 0, "storage": {"s1": {"since": 5, "upper": 1}}, "dataflows": [{"id": "d", "inputs": ["s1"]}]}'$$),
    ($$'{"now": 10, "storage": {"m": {"since": 1, "upper": 5}}, "dataflows": [{"id": "m", "inputs": ["m"]}]}'$$),
    ($$'{"now": 10, "storage": {}, "dataflows": [{"id": "a", "inputs": ["b"]}, {"id": "b", "inputs": ["a"]}]}'$$),
    ($$'{"now": 10, "storage": {"s": {"since": 1, "upper": 5}}, "dataflows": [{"id": "a", "inputs": ["s", "s"]}, {"id": "a", "inputs": []}]}'$$),
    ($$'{"now": 10, "storage": {"s": {"since": 1, "upper": 5}}, "dataflows": [{"id": "a", "inputs": ["s"], "policy": {"valid_from": -1}}]}'$$);
CREATE TABLE public.bi_names (nm text);
INSERT INTO public.bi_names VALUES
    ('NULL'), ($$''$$), ($$'"'$$), ($$'""'$$), ($$'bi.'$$), ($$'.x'$$),
    ($$'a.b.c.d'$$), ($$'nosuchschema.x'$$), ($$'"we""ird"'$$),
    ($$'pg_catalog.bi_x'$$), ($$'mzcoord.bi_x'$$),
    ($$repeat('n', 64)$$), ($$repeat('n', 10000)$$), ($$'bi.' || repeat('q', 100)$$),
    ($$'"' || repeat('é', 40) || '"'$$), ($$'bi.bi_t'$$), ($$'x; DROP TABLE bi.bi_t'$$),
    ($$E'a\\x01b'$$), ($$' '$$), ($$E'\n'$$);

CREATE FUNCTION public.bi_add(tmpl text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF tmpl LIKE '%\%R%' THEN
        INSERT INTO public.bi_cases (stmt)
        SELECT replace(tmpl, '%R', r) FROM public.bi_rels;
    ELSIF tmpl LIKE '%\%T%' THEN
        INSERT INTO public.bi_cases (stmt)
        SELECT replace(tmpl, '%T', t) FROM public.bi_times;
    ELSIF tmpl LIKE '%\%J%' THEN
        INSERT INTO public.bi_cases (stmt)
        SELECT replace(tmpl, '%J', j) FROM public.bi_json;
    ELSIF tmpl LIKE '%\%N%' THEN
        INSERT INTO public.bi_cases (stmt)
        SELECT replace(tmpl, '%N', nm) FROM public.bi_names;
    ELSE
        INSERT INTO public.bi_cases (stmt) VALUES (tmpl);
    END IF;
END
$$;

SELECT count(*) AS templates FROM (SELECT public.bi_add(t) FROM (VALUES
-- status and core
('SELECT mzcoord.check_preloaded()'),
('SELECT mzcoord.worker_status()'),
('SELECT mzcoord.lag_frontier(%T, 1000)'),
('SELECT mzcoord.lag_frontier(1000, %T)'),
('SELECT mzcoord.lag_frontier(1000, 1000, %T)'),
('SELECT mzcoord.largest_not_in_advance_of_upper(%T)'),
('SELECT mzcoord.determine_timestamp(%J)'),
('SELECT mzcoord.determine_timestamp(%J::text::jsonb)'),
('SELECT mzcoord.select_as_ofs(%J)'),
-- catalog helpers
('SELECT mzcoord._retain_history_ms(NULL)'),
('SELECT mzcoord._retain_history_ms(''-1 ms'')'),
('SELECT mzcoord._retain_history_ms(''0'')'),
('SELECT mzcoord._retain_history_ms(''178000000 years'')'),
('SELECT mzcoord._retain_history_ms(''1 month'')'),
('SELECT mzcoord._retain_history_ms(''2147483647 days 2147483647 hours'')'),
('SELECT mzcoord._retain_history_ms(''-2147483648 days -2147483648 hours'')'),
('SELECT mzcoord._refresh_canonical(NULL)'),
('SELECT mzcoord._refresh_canonical(''{}'')'),
('SELECT mzcoord._refresh_canonical(''{NULL}'')'),
('SELECT mzcoord._refresh_canonical(''{{a},{b}}'')'),
('SELECT mzcoord._refresh_canonical(''{"at creation","at creation"}'')'),
('SELECT mzcoord._refresh_canonical(''{"at 9223372036854775807"}'')'),
('SELECT mzcoord._refresh_canonical(''{"at -1"}'')'),
('SELECT mzcoord._refresh_canonical(''{"at 99999999999999999999"}'')'),
('SELECT mzcoord._refresh_canonical(''{"every 0 seconds"}'')'),
('SELECT mzcoord._refresh_canonical(''{"every -1 seconds"}'')'),
('SELECT mzcoord._refresh_canonical(''{"every 1 second aligned to -9223372036854775807"}'')'),
('SELECT mzcoord._refresh_canonical(''{"every 1 second aligned to 9223372036854775807"}'')'),
('SELECT mzcoord._refresh_canonical(''{"every 2147483647 days"}'')'),
('SELECT mzcoord._refresh_canonical(''{"every 1.5 milliseconds"}'')'),
('SELECT mzcoord._refresh_canonical(''{"every"}'')'),
('SELECT mzcoord._refresh_canonical(''{"nonsense"}'')'),
('SELECT mzcoord._refresh_first(''{"every 1 second aligned to 0"}'', %T)'),
('SELECT mzcoord._refresh_first(''{"every 1 second"}'', %T)'),
('SELECT mzcoord._refresh_first(''{"at creation"}'', %T)'),
('SELECT mzcoord._refresh_first(''{"at 5"}'', %T)'),
('SELECT mzcoord._refresh_first(''{"every 7 milliseconds aligned to 9223372036854775806"}'', %T)'),
('SELECT mzcoord._refresh_first(''{"every 106751991167 days aligned to 1"}'', %T)'),
('SELECT mzcoord._refresh_first(NULL, 0)'),
('SELECT mzcoord._source_columns(NULL)'),
('SELECT mzcoord._source_columns('''')'),
('SELECT mzcoord._source_columns('')'')'),
('SELECT mzcoord._source_columns(''a int) ; DROP TABLE bi.bi_t; --'')'),
('SELECT mzcoord._source_columns(''a int, a int'')'),
('SELECT mzcoord._source_columns(''a int PRIMARY KEY'')'),
('SELECT mzcoord._source_columns(''ctid int'')'),
('SELECT mzcoord._source_columns(''a nosuchtype'')'),
('SELECT mzcoord._source_columns(''a anyelement'')'),
('SELECT mzcoord._source_columns(' || quote_literal(repeat('c', 100) || ' int') || ')'),
('SELECT mzcoord._source_columns(' || quote_literal((SELECT string_agg('c' || i || ' int', ', ') FROM generate_series(1, 2000) i)) || ')'),
('SELECT mzcoord._analyze_materialized_view(NULL)'),
('SELECT mzcoord._analyze_materialized_view('''')'),
('SELECT mzcoord._analyze_materialized_view(''SELECT 1; SELECT 2'')'),
('SELECT mzcoord._analyze_materialized_view(''INSERT INTO bi.bi_t VALUES (1)'')'),
('SELECT mzcoord._analyze_materialized_view(''SELECT * FROM bi.bi_view'')'),
('SELECT mzcoord._analyze_materialized_view(''SELECT * FROM bi.bi_sink'')'),
('SELECT mzcoord._analyze_materialized_view(''SELECT * FROM bi.bi_seq'')'),
('SELECT mzcoord._analyze_materialized_view(''SELECT now()'')'),
('SELECT mzcoord._analyze_materialized_view(''SELECT'')'),
('SELECT mzcoord._analyze_materialized_view(''VALUES (1)'')'),
('SELECT mzcoord._analyze_materialized_view(''SELECT 1 FROM (SELECT 1 FROM (SELECT 1 FROM (SELECT 1) a) b) c'')'),
('SELECT mzcoord._analyze_materialized_view(''SELECT '' || repeat(''('', 10000) || ''1'' || repeat('')'', 10000))'),
('SELECT mzcoord._query_relation_names(NULL)'),
('SELECT mzcoord._query_relation_names('''')'),
('SELECT mzcoord._query_relation_names(''SELECT 1; SELECT 2'')'),
('SELECT mzcoord._query_relation_names(''DROP TABLE bi.bi_t'')'),
('SELECT mzcoord._query_relation_names(''SELECT * FROM nosuch'')'),
('SELECT mzcoord._record_dependencies(%R, NULL, NULL, NULL)'),
('SELECT mzcoord._record_dependencies(''bi.bi_plain'', ''{0}'', ''{0}'', ''{0}'')'),
('SELECT mzcoord._record_dependencies(''bi.bi_plain'', ''{4294967295}'', NULL, NULL)'),
('SELECT mzcoord._record_dependencies(''bi.bi_plain'', NULL, ''{4294967295}'', NULL)'),
('SELECT mzcoord._record_dependencies(''bi.bi_plain'', NULL, NULL, ''{4294967295}'')'),
('SELECT mzcoord._record_dependencies(''bi.bi_plain'', ''{{1},{2}}'', NULL, NULL)'),
('SELECT mzcoord._record_dependencies(''bi.bi_plain'', ARRAY[''bi.bi_plain''::regclass::oid], NULL, NULL)'),
('SELECT mzcoord._index_key_list(%R, ''{a}'')'),
('SELECT mzcoord._index_key_list(''bi.bi_t'', NULL)'),
('SELECT mzcoord._index_key_list(''bi.bi_t'', ''{}'')'),
('SELECT mzcoord._index_key_list(''bi.bi_t'', ''{a,a}'')'),
('SELECT mzcoord._index_key_list(''bi.bi_t'', ''{NULL}'')'),
('SELECT mzcoord._index_key_list(''bi.bi_t'', ''{{a}}'')'),
('SELECT mzcoord._index_key_list(''bi.bi_t'', ''{ctid}'')'),
('SELECT mzcoord._index_key_list(''bi.bi_t'', ARRAY[repeat(''a'', 100)])'),
('SELECT mzcoord._sink_columns(%R)'),
('SELECT mzcoord._relation_columns(%R)'),
('SELECT mzcoord._check_table(%R)'),
('SELECT mzcoord._check_new_relation(NULL, NULL)'),
('SELECT mzcoord._check_new_relation(''bi'', NULL)'),
('SELECT mzcoord._check_new_relation(''nosuch'', ''x'')'),
('SELECT mzcoord._check_new_relation(''bi'', ''bi_t'')'),
('SELECT mzcoord._check_new_relation(''pg_catalog'', ''x'')'),
('SELECT mzcoord._check_new_relation('''', '''')'),
('SELECT mzcoord._check_new_relation(''bi'', repeat(''x'', 100))'),
('SELECT mzcoord._log(NULL, NULL, NULL, NULL)'),
('SELECT mzcoord._log(-1, ''u999999'', ''nonsense'', ''{}'')'),
('SELECT mzcoord._log_append_only()'),
('SELECT mzcoord._create_relation(NULL, NULL)'),
('SELECT mzcoord._create_relation((SELECT i FROM mzcoord.items i WHERE name = ''bi_t''), ''a int'')'),
('SELECT mzcoord._install_collection(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)'),
('SELECT mzcoord._install_collection(1, (SELECT i FROM mzcoord.items i WHERE name = ''bi_t''), ''bi.bi_plain'', -1, -1, ''{nosuch}'', ''{nosuch}'', ''{}'')'),
('SELECT mzcoord._create_table(NULL, NULL)'),
('SELECT mzcoord._create_table(1, (SELECT i FROM mzcoord.items i WHERE name = ''bi_t''))'),
('SELECT mzcoord._create_source(NULL, NULL)'),
('SELECT mzcoord._create_source(1, (SELECT i FROM mzcoord.items i WHERE name = ''bi_s''))'),
('SELECT mzcoord._create_materialized_view(NULL, NULL)'),
('SELECT mzcoord._create_materialized_view(1, (SELECT i FROM mzcoord.items i WHERE name = ''bi_mv''))'),
('SELECT mzcoord._read_item(NULL)'),
('SELECT mzcoord._read_item((SELECT i FROM mzcoord.items i WHERE name = ''bi_mv''))'),
('SELECT mzcoord._create_index(NULL, NULL)'),
('SELECT mzcoord._create_index(1, (SELECT i FROM mzcoord.items i WHERE name = ''bi_idx''))'),
('SELECT mzcoord._create_sink(NULL, NULL)'),
('SELECT mzcoord._create_sink(1, (SELECT i FROM mzcoord.items i WHERE name = ''bi_sink''))'),
('SELECT mzcoord._init_policy(NULL, NULL)'),
('SELECT mzcoord._init_policy(1, (SELECT i FROM mzcoord.items i WHERE name = ''bi_t''))'),
('SELECT mzcoord._check_alteration(NULL, NULL)'),
('SELECT mzcoord._check_alteration((SELECT i FROM mzcoord.items i WHERE name = ''bi_t''), (SELECT i FROM mzcoord.items i WHERE name = ''bi_s''))'),
('SELECT mzcoord._alter_item(NULL, NULL, NULL)'),
('SELECT mzcoord._alter_item(1, (SELECT i FROM mzcoord.items i WHERE name = ''bi_t''), (SELECT i FROM mzcoord.items i WHERE name = ''bi_s''))'),
('SELECT mzcoord._drop_item(NULL, NULL)'),
('SELECT mzcoord._apply_implications(NULL, NULL)'),
('SELECT mzcoord._apply_implications(''{}'', ''{}'')'),
('SELECT mzcoord._apply_implications(ARRAY[(SELECT i FROM mzcoord.items i WHERE name = ''bi_t'')], ARRAY[(SELECT i FROM mzcoord.items i WHERE name = ''bi_t''), (SELECT i FROM mzcoord.items i WHERE name = ''bi_t'')])'),
('SELECT mzcoord._apply_implications(ARRAY[NULL::mzcoord.items], ARRAY[NULL::mzcoord.items])'),
('SELECT mzcoord._items_trigger()'),
('SELECT mzcoord._applying_implications()'),
('SELECT mzcoord._catalog_insert(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)'),
('SELECT mzcoord._catalog_insert(''bogus'', ''bi'', ''x'', NULL, ''postgres'', NULL, NULL, NULL, NULL, NULL)'),
('SELECT mzcoord._catalog_insert(''materialized_view'', ''bi'', ''bi_x'', NULL, ''postgres'', NULL, NULL, ''SELECT 1; SELECT 2'', NULL, NULL)'),
('SELECT mzcoord._catalog_insert(''table'', ''bi'', ''bi_plain'', ''bi.bi_view'', ''postgres'', NULL, NULL, NULL, NULL, NULL)'),
('SELECT mzcoord._catalog_set_retain_history(NULL, NULL)'),
('SELECT mzcoord._catalog_set_retain_history(''u999999999'', ''1 hour'')'),
('SELECT mzcoord._catalog_set_retain_history(''not an id'', ''1 hour'')'),
-- DDL
('SELECT mzcoord.create_table(%R)'),
('SELECT mzcoord.create_table(''bi.bi_plain'', ''-1 s'')'),
('SELECT mzcoord.create_table(''bi.bi_plain'', ''1000000000 years'')'),
('SELECT mzcoord.create_source(%N, ''a int'')'),
('SELECT mzcoord.create_source(''bi.bi_src2'', NULL)'),
('SELECT mzcoord.create_source(''bi.bi_src2'', '''')'),
('SELECT mzcoord.create_source(''bi.bi_src2'', ''a int'', ''1 month'')'),
('SELECT mzcoord.create_materialized_view(%N, ''SELECT 1 AS x'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', NULL)'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT 1; SELECT 2'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT a FROM bi.bi_t'', NULL, ''{}'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT a FROM bi.bi_t'', NULL, ''{"at 9223372036854775807"}'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT a FROM bi.bi_t'', NULL, ''{"every 1 second aligned to 9223372036854775807"}'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT a FROM bi.bi_mv'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT * FROM bi.bi_mv2'')'),
('SELECT mzcoord.create_index(%N, ''bi.bi_t'', ''{a}'')'),
('SELECT mzcoord.create_index(''bi_idx2'', %R, ''{a}'')'),
('SELECT mzcoord.create_index(''bi_idx2'', ''bi.bi_t'', ''{}'')'),
('SELECT mzcoord.create_index(''bi_idx2'', ''bi.bi_t'', ''{a,a}'')'),
('SELECT mzcoord.create_index(''bi_idx2'', ''bi.bi_t'', NULL)'),
('SELECT mzcoord.create_sink(%N, ''bi.bi_t'')'),
('SELECT mzcoord.create_sink(''bi_sink2'', %R)'),
('SELECT mzcoord.set_retain_history(%R, ''1 hour'')'),
('SELECT mzcoord.set_retain_history(''bi.bi_t'', ''0'')'),
('SELECT mzcoord.set_retain_history(''bi.bi_sink'', ''1 hour'')'),
('SELECT mzcoord.drop(%R)'),
('SELECT mzcoord.drop(''bi.bi_t'', NULL)'),
('SELECT mzcoord.drop(''bi.bi_t'', true)'),
('SELECT mzcoord._on_sql_drop()'),
('SELECT mzcoord._definition_objects(%R)'),
('SELECT mzcoord._check_definition(NULL)'),
('SELECT mzcoord._check_definition((SELECT i FROM mzcoord.items i WHERE name = ''bi_mv''))'),
('SELECT mzcoord._on_ddl_command_end()'),
-- controller
('SELECT mzcoord._write_ts() IS NOT NULL'),
('SELECT mzcoord._creation_ts() IS NOT NULL'),
('SELECT mzcoord._hold_inputs(NULL)'),
('SELECT mzcoord._hold_inputs(''{}'')'),
('SELECT mzcoord._hold_inputs(''{NULL}'')'),
('SELECT mzcoord._hold_inputs(''{u999999999}'')'),
('SELECT mzcoord._hold_inputs(''{nonsense,"",u0}'')'),
('SELECT mzcoord._hold_inputs(''{{u1}}'')'),
('SELECT mzcoord._hold_inputs(ARRAY[(SELECT global_id FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id WHERE i.name = ''bi_t''), (SELECT global_id FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id WHERE i.name = ''bi_t'')]) IS NOT NULL'),
('SELECT mzcoord._stage_collection(NULL, NULL, NULL, NULL, NULL, NULL, NULL)'),
('SELECT mzcoord._stage_collection(''u999999999'', ''u999999999'', %R, ''table'', 0, 1, NULL)'),
('SELECT mzcoord._stage_collection(''u999999999'', ''u999999999'', ''bi.bi_plain'', ''nonsense'', 0, 1, NULL)'),
('SELECT mzcoord._stage_collection(''u999999999'', ''u999999999'', ''bi.bi_plain'', ''table'', %T, 1, NULL)'),
('SELECT mzcoord._stage_collection(''u999999999'', ''u999999999'', ''bi.bi_plain'', ''table'', 0, %T, NULL)'),
('SELECT mzcoord._stage_collection(''u999999999'', ''u999999999'', ''bi.bi_plain'', ''table'', 5, 1, NULL)'),
('SELECT mzcoord._stage_collection(''u999999999'', ''u999999999'', ''bi.bi_plain'', ''materialized_view'', 0, 1, ''{u999999998,u999999998}'')'),
('SELECT mzcoord._stage_collection(''u999999999'', ''u999999999'', ''bi.bi_plain'', ''materialized_view'', 0, 1, ''{u999999999}'')'),
('SELECT mzcoord._stage_collection('''', '''', ''bi.bi_plain'', ''table'', 0, 1, ''{}'')'),
('SELECT mzcoord._stage_collection(' || quote_literal(repeat('u', 1000)) || ', ''u1'', ''bi.bi_plain'', ''table'', 0, 1, ''{}'')'),
('SELECT mzcoord._stage_policy(NULL, NULL)'),
('SELECT mzcoord._stage_policy(''u999999999'', 1000)'),
('SELECT mzcoord._stage_policy((SELECT id FROM mzcoord.items WHERE name = ''bi_t''), %T)'),
('SELECT mzcoord._stage_drop(NULL)'),
('SELECT mzcoord._stage_drop(''u999999999'')'),
('SELECT mzcoord._stage_drop('''')'),
('SELECT mzcoord.acquire_read_hold(ARRAY[%R]::regclass[])'),
('SELECT mzcoord.acquire_read_hold(NULL)'),
('SELECT mzcoord.acquire_read_hold(''{}'')'),
('SELECT mzcoord.acquire_read_hold(''{{bi.bi_t}}'')'),
('SELECT mzcoord.acquire_read_hold(''{bi.bi_t,bi.bi_t}'') IS NOT NULL'),
('SELECT mzcoord.acquire_read_hold(''{bi.bi_t}'', %T) IS NOT NULL'),
('SELECT mzcoord.create_replacement(%R, ''bi_rp'', ''SELECT a FROM bi.bi_t'')'),
('SELECT mzcoord.create_replacement(''bi.bi_mv'', %N, ''SELECT a FROM bi.bi_t'')'),
('SELECT mzcoord.create_replacement(''bi.bi_mv'', ''bi_rp'', NULL)'),
('SELECT mzcoord.create_replacement(''bi.bi_mv'', ''bi_rp'', '''')'),
('SELECT mzcoord.create_replacement(''bi.bi_mv'', ''bi_rp'', ''SELECT 1'')'),
('SELECT mzcoord.create_replacement(''bi.bi_mv'', ''bi_rp'', ''SELECT a FROM bi.bi_mv'')'),
('SELECT mzcoord.create_replacement(''bi.bi_mv'', ''bi_rp'', ''SELECT a::bigint AS a FROM bi.bi_t'')'),
('SELECT mzcoord.apply_replacement(%R)'),
('SELECT mzcoord._stage_inputs(NULL, NULL)'),
('SELECT mzcoord._stage_inputs(''u999999'', ''{}'')'),
('SELECT mzcoord._stage_inputs(''bogus'', ''{u1}'')'),
('SELECT mzcoord._stage_inputs(''u1'', ''{u999999}'')'),
('SELECT mzcoord._forget_dependencies(NULL)'),
('SELECT mzcoord._forget_dependencies(%R)'),
('SELECT mzcoord._replacing()'),
('SELECT mzcoord._record_replacement(NULL, NULL)'),
('SELECT mzcoord._record_replacement(''u999999'', ''u999998'')'),
('SELECT mzcoord._swap_definition(NULL, NULL, NULL)'),
('SELECT mzcoord._swap_definition((SELECT id FROM mzcoord.items WHERE name = ''bi_mv''), (SELECT id FROM mzcoord.items WHERE name = ''bi_t''), 1)'),
('SELECT mzcoord._replace_definition(NULL, NULL, NULL)'),
('SELECT mzcoord._replace_definition(1, (SELECT i FROM mzcoord.items i WHERE name = ''bi_mv''), (SELECT i FROM mzcoord.items i WHERE name = ''bi_mv''))'),
('SELECT mzcoord.create_lease(''bi_l'', ARRAY[%R]::regclass[])'),
('SELECT mzcoord.create_lease(%N, ''{bi.bi_t}'')'),
('SELECT mzcoord.create_lease(NULL, NULL, NULL, NULL)'),
('SELECT mzcoord.create_lease(''bi_l'', NULL)'),
('SELECT mzcoord.create_lease(''bi_l'', ''{}'')'),
('SELECT mzcoord.create_lease(''bi_l'', ''{{bi.bi_t}}'')'),
('SELECT mzcoord.create_lease(''bi_l'', ''{bi.bi_t,bi.bi_t}'')'),
('SELECT mzcoord.create_lease(''bi_l'', ''{bi.bi_t,bi.bi_s}'')'),
('SELECT mzcoord.create_lease(''bi_l'', ''{bi.bi_t}'', %T)'),
('SELECT mzcoord.create_lease(''bi_l'', ''{bi.bi_t}'', NULL, NULL)'),
('SELECT mzcoord.create_lease(''bi_l'', ''{bi.bi_t}'', NULL, ''1 microsecond'')'),
('SELECT mzcoord.create_lease(''bi_l'', ''{bi.bi_t}'', NULL, ''178000000 years'')'),
('SELECT mzcoord.create_lease(''bi_l'', ''{bi.bi_t}'', NULL, ''-178000000 years'')'),
('SELECT mzcoord.create_lease(''bi_l'', ''{bi.bi_t}'', NULL, ''2147483647 days 2562047788:00:54.775807'')'),
('SELECT mzcoord.create_lease(''bi_lease'', ''{bi.bi_t}'')'),
('SELECT mzcoord.renew_lease(%N)'),
('SELECT mzcoord.renew_lease(''bi_lease'')'),
('SELECT mzcoord.advance_lease(''bi_lease'', %T)'),
('SELECT mzcoord.advance_lease(%N, 1)'),
('SELECT mzcoord.drop_lease(%N)'),
('SELECT mzcoord.drop_lease(''bi_lease'')'),
('SELECT mzcoord._lease_write(NULL, NULL, NULL, NULL, NULL, NULL, NULL)'),
('SELECT mzcoord._lease_write(''bogus'', ''x'', 0, NULL, 0, NULL, NULL)'),
('SELECT mzcoord._lease_write(''create'', ''bi_lease'', 0, NULL, -1, ''0'', NULL)'),
('SELECT count(*) >= 0 FROM mzcoord._lease_holds()'),
('SELECT count(*) >= 0 FROM mzcoord._lease_validate()'),
('SELECT mzcoord.explain_compaction(%R) IS NOT NULL'),
('SELECT mzcoord._create_bound(NULL, NULL, NULL)'),
('SELECT mzcoord._create_bound(''u999999'', ''table'', %T)'),
('SELECT mzcoord._record_requirements(NULL, NULL, NULL)'),
('SELECT mzcoord._record_requirements(''u999999'', ARRAY[''u999998''], %T)'),
('SELECT mzcoord._lock_input_bounds(NULL)'),
('SELECT mzcoord._lock_input_bounds(ARRAY[NULL, ''u1'', ''bogus''])'),
('SELECT mzcoord._protection_limit(NULL)'),
('UPDATE mzcoord.compaction_bounds SET bound = bound - 1'),
('UPDATE mzcoord.compaction_bounds SET global_id = global_id || ''x'''),
('UPDATE mzcoord.compaction_bounds SET bound = %T'),
('INSERT INTO mzcoord.read_requirements VALUES (NULL, NULL, NULL)'),
('UPDATE mzcoord.read_requirements SET at = at - 1'),
('UPDATE mzcoord.coordinator_epoch SET epoch = %T'),
('SELECT mzcoord.select_timestamp(ARRAY[%R]::regclass[]) IS NOT NULL'),
('SELECT mzcoord.select_timestamp(''{bi.bi_t}'', NULL) IS NOT NULL'),
('SELECT mzcoord.select_timestamp(''{bi.bi_t}'', '''') IS NOT NULL'),
('SELECT mzcoord.select_timestamp(''{bi.bi_t}'', ''serializable'', %T) IS NOT NULL'),
('SELECT mzcoord.select_timestamp(''{bi.bi_t}'', ''serializable'', NULL, %T) IS NOT NULL'),
('SELECT mzcoord.select_timestamp(''{bi.bi_t}'', ''serializable'', 1, 1)'),
('SELECT mzcoord.explain_timestamp(ARRAY[%R]::regclass[]) IS NOT NULL'),
('SELECT mzcoord.explain_timestamp(''{bi.bi_t}'', ''serializable'', %T) IS NOT NULL'),
('SELECT mzcoord.explain_timestamp(''{bi.bi_t}'', ''strong session serializable'', NULL, %T) IS NOT NULL'),
('SELECT count(*) >= 0 FROM mzcoord._controller_collections()'),
('SELECT count(*) >= 0 FROM mzcoord._controller_holds()'),
('SELECT (mzcoord.controller_status()).ready'),
('SELECT count(*) >= 0 FROM mzcoord._controller_validate()'),
('SELECT count(*) >= 0 FROM mzcoord.writes_in_flight()'),
('SELECT mzcoord.last_commit_ts() IS NULL OR true'),
('SELECT count(*) >= 0 FROM mzcoord.check_consistency()'),
-- data plane
('SELECT mzcoord._storage_install(NULL, NULL, NULL, NULL)'),
('SELECT mzcoord._storage_install(''u999999999'', ''table'', %R, 1)'),
('SELECT mzcoord._storage_install(''u999999999'', ''nonsense'', ''bi.bi_plain'', 1)'),
('SELECT mzcoord._storage_install(''u999999999'', ''table'', ''bi.bi_plain'', %T)'),
('SELECT mzcoord._storage_install((SELECT id FROM mzcoord.items WHERE name = ''bi_t''), ''table'', ''bi.bi_t'', 1)'),
('SELECT mzcoord._capture()'),
('SELECT mzcoord._row_is_own(NULL)'),
('SELECT mzcoord._row_is_own(''0'')'),
('SELECT mzcoord._row_is_own(''4294967295'')'),
('SELECT mzcoord._source_guard()'),
('SELECT mzcoord._storage_on_ddl()'),
('SELECT mzcoord._row_image()'),
('SELECT mzcoord._row_image(NULL)'),
('SELECT mzcoord._row_image(1, ''a'', NULL, ROW(1, 2), ARRAY[1])'),
('SELECT mzcoord._row_image(VARIADIC ARRAY[1, 2])'),
('SELECT mzcoord._row_image(VARIADIC NULL::int[])'),
('SELECT mzcoord._any_transfn(NULL::int, NULL::int)'),
('SELECT mzcoord._any(x) FROM (VALUES (1), (2), (NULL)) v(x)'),
('SELECT mzcoord._any(x) FROM (VALUES (NULL::int)) v(x)'),
('SELECT count(*) >= 0 FROM mzcoord._storage_problems()'),
('SELECT mzcoord._storage_on_drop()'),
('SELECT mzcoord._storage_reattach(NULL)'),
('SELECT mzcoord._storage_reattach(''nonsense'')'),
('SELECT mzcoord._storage_reattach(''u999999999'')'),
('SELECT mzcoord._storage_reattach((SELECT id FROM mzcoord.items WHERE name = ''bi_t''))'),
('SELECT mzcoord._storage_reattach((SELECT id FROM mzcoord.items WHERE name = ''bi_s''))'),
('SELECT mzcoord._storage_reattach((SELECT id FROM mzcoord.items WHERE name = ''bi_mv''))'),
('SELECT mzcoord._in_copy()'),
('SELECT mzcoord._controller_rebootstrap() >= 0'),
('SELECT (mzcoord.restore_after_dump()).histories >= 0'),
('SELECT count(*) FROM mzcoord.read_at(NULL::bi.bi_t, %T)'),
('SELECT count(*) FROM mzcoord.read_at(NULL::bi.bi_s, %T)'),
('SELECT count(*) FROM mzcoord.read_at(NULL::bi.bi_plain, 0)'),
('SELECT count(*) FROM mzcoord.read_at(NULL::bi.bi_view, 0)'),
('SELECT count(*) FROM mzcoord.read_at(NULL::bi.bi_mv, 0)'),
('SELECT count(*) FROM mzcoord.read_at(NULL::bi.bi_sink, 0)'),
('SELECT count(*) FROM mzcoord.read_at(NULL::int, 0)'),
('SELECT count(*) FROM mzcoord.read_at(NULL::pg_class, 0)'),
('SELECT count(*) FROM mzcoord.read_at(NULL::mzcoord.items, 0)'),
('SELECT count(*) FROM mzcoord.read_at(ROW(1, ''x'')::bi.bi_t, 0)'),
('SELECT count(*) FROM mzcoord.changes(NULL::bi.bi_t, %T, %T)'),
('SELECT count(*) FROM mzcoord.changes(NULL::bi.bi_t, 10, 5)'),
('SELECT count(*) FROM mzcoord.changes(NULL::bi.bi_mv, 0, 1)'),
('SELECT count(*) FROM mzcoord.changes(NULL::bi.bi_sink, 0, 1)'),
('SELECT count(*) FROM mzcoord.changes(NULL::bi.bi_plain, 0, 1)'),
('SELECT count(*) FROM mzcoord.changes(NULL::int, 0, 1)'),
('SELECT count(*) FROM mzcoord._updates_at(NULL::bi.bi_t, %T, 1)'),
('SELECT count(*) FROM mzcoord._updates_at(NULL::bi.bi_t, %T, -1)'),
('SELECT count(*) FROM mzcoord._updates_at(NULL::bi.bi_t, %T, 0)'),
('SELECT count(*) FROM mzcoord._updates_at(NULL::bi.bi_t, %T, NULL)'),
('SELECT count(*) FROM mzcoord._updates_at(NULL::bi.bi_t, NULL, 1)'),
('SELECT count(*) FROM mzcoord._updates_at(NULL::bi.bi_t, -1, 1)'),
('SELECT count(*) FROM mzcoord._updates_at(NULL::bi.bi_mv, 0, 1)'),
('SELECT count(*) FROM mzcoord._updates_at(NULL::bi.bi_plain, 0, 1)'),
('SELECT count(*) FROM mzcoord._updates_at(NULL::int, 0, 1)'),
('SELECT mzcoord.append(NULL::bi.bi_s, %T, ARRAY[ROW(1, ''a'')]::bi.bi_s[])'),
('SELECT mzcoord.append(NULL::bi.bi_s, %T, ARRAY[ROW(1, ''a'')]::bi.bi_s[], ARRAY[ROW(1, ''a'')]::bi.bi_s[])'),
('SELECT mzcoord.append(NULL::bi.bi_s, (SELECT upper FROM mzcoord.frontiers WHERE relation = ''bi.bi_s''::regclass), NULL)'),
('SELECT mzcoord.append(NULL::bi.bi_s, (SELECT upper FROM mzcoord.frontiers WHERE relation = ''bi.bi_s''::regclass), ''{}''::bi.bi_s[])'),
('SELECT mzcoord.append(NULL::bi.bi_s, (SELECT upper FROM mzcoord.frontiers WHERE relation = ''bi.bi_s''::regclass), ARRAY[NULL]::bi.bi_s[])'),
('SELECT mzcoord.append(NULL::bi.bi_s, (SELECT upper FROM mzcoord.frontiers WHERE relation = ''bi.bi_s''::regclass), ARRAY[[ROW(1, ''a'')]]::bi.bi_s[])'),
('SELECT mzcoord.append(NULL::bi.bi_s, (SELECT upper FROM mzcoord.frontiers WHERE relation = ''bi.bi_s''::regclass), ARRAY[ROW(1, ''a''), ROW(1, ''a'')]::bi.bi_s[], ARRAY[ROW(1, ''a''), ROW(1, ''a'')]::bi.bi_s[])'),
('SELECT mzcoord.append(NULL::bi.bi_s, (SELECT upper FROM mzcoord.frontiers WHERE relation = ''bi.bi_s''::regclass), ARRAY[1, 2])'),
('SELECT mzcoord.append(NULL::bi.bi_t, 0, ARRAY[ROW(1, ''a'')]::bi.bi_t[])'),
('SELECT mzcoord.append(NULL::bi.bi_plain, 0, ARRAY[ROW(1)]::bi.bi_plain[])'),
('SELECT mzcoord.append(NULL::bi.bi_mv, 0, ARRAY[ROW(1)]::bi.bi_mv[])'),
('SELECT mzcoord.append(NULL::int, 0, ARRAY[1])'),
('SELECT mzcoord.advance_upper(%R, 0)'),
('SELECT mzcoord.advance_upper(''bi.bi_s'', %T)'),
('SELECT mzcoord.compact(%R)'),
-- issue 19: impossible times are refused at once
('SELECT count(*) FROM mzcoord.read_at(NULL::bi.bi_mv, 9223372036854775807)'),
('SELECT mzcoord.explain_timestamp(''{bi.bi_t}'', ''serializable'', 9223372036854775807) IS NOT NULL'),
-- issue 19: refresh intervals below the tick (100 ms in this suite)
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT a FROM bi.bi_t'', NULL, ''{"every 1 ms"}'')'),
('SELECT mzcoord._refresh_canonical(''{"every 99 milliseconds"}'')'),
('SELECT mzcoord._refresh_canonical(''{"every 1 ms aligned to 0"}'')'),
('SELECT mzcoord._creation_refresh_ts(NULL)'),
('SELECT mzcoord._creation_refresh_ts(''{}'')'),
('SELECT mzcoord._creation_refresh_ts(''{u999999999}'')'),
-- issue 19: system schemas, which a dump does not carry
('SELECT mzcoord.create_table(''information_schema.sql_features'')'),
('SELECT mzcoord.create_source(''information_schema.s'', ''x int'')'),
('SELECT mzcoord.create_source(''pg_toast.s'', ''x int'')'),
('SELECT mzcoord.create_materialized_view(''information_schema.mv'', ''SELECT 1 AS x'')'),
('SELECT mzcoord.create_sink(''information_schema.k'', %R)'),
-- issue 19: the per-role collection limit
('SET mzcoord.max_collections_per_role = -2'),
('SET mzcoord.max_collections_per_role = 10000001'),
-- issue 20: publication, maintenance workers, the interval reads of a view
('SET mzcoord.publish_interval = -1'),
('SET mzcoord.publish_interval = ''2h'''),
('SET mzcoord.max_maintenance_workers = 3'),
('SET mzcoord.maintenance_step_timeout = ''1s'''),
('SELECT count(*) FROM mzcoord._history_rows(NULL::bi.bi_t, 5, 5, false) AS h(a int, b text)'),
('SELECT count(*) FROM mzcoord._history_rows(NULL::bi.bi_t, 0, 5, true) AS h(a int, b text)'),
('SELECT count(*) FROM mzcoord._history_rows(NULL::bi.bi_t, NULL, 5, false) AS h(a int, b text)'),
-- issue 19: DDL under session_replication_role = replica
('SET LOCAL session_replication_role = replica; SELECT mzcoord.create_source(''bi.bi_src2'', ''a int'')'),
('SET LOCAL session_replication_role = replica; SELECT mzcoord.create_table(''bi.bi_plain'')'),
('SET LOCAL session_replication_role = replica; SELECT mzcoord.drop(''bi.bi_t'')'),
('SET LOCAL session_replication_role = replica; SELECT mzcoord.set_retain_history(''bi.bi_t'', ''1 hour'')'),
('SET LOCAL session_replication_role = replica; DELETE FROM mzcoord.items'),
-- issue 19: view definitions that are immutable but not deterministic
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', $q$SELECT a, ''now''::timestamptz AS t FROM bi.bi_t$q$)'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT a FROM bi.bi_t LIMIT 1'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT a, b FROM bi.bi_t ORDER BY a OFFSET 1'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT DISTINCT ON (a) a, b FROM bi.bi_t'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', $q$SELECT string_agg(b, '','') AS s FROM bi.bi_t$q$)'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT a, row_number() OVER () AS n FROM bi.bi_t'')'),
('SELECT mzcoord.create_materialized_view(''bi.bi_mv2'', ''SELECT a, bi.bi_fake_immutable() AS r FROM bi.bi_t'')')
) v(t)) x;

-- Direct writes of bad rows to the catalog, as superuser.
INSERT INTO public.bi_cases (stmt) VALUES
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'SELECT 1; SELECT 2')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', '')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', ';')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'DELETE FROM bi.bi_t')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'WITH d AS (DELETE FROM bi.bi_t RETURNING a) SELECT a FROM d')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'CREATE TABLE bi.bi_y (a int)')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'SELECT * FROM bi.bi_x')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'SELECT a FROM bi.bi_t; DROP TABLE bi.bi_t')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'SELECT a FROM bi.bi_plain')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'SELECT a FROM bi.bi_mv WHERE a = (SELECT max(a) FROM bi.bi_t)')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition, refresh) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'SELECT a FROM bi.bi_t', '{"every 1 second aligned to 0"}')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition, refresh) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'SELECT a FROM bi.bi_t', '{nonsense}')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('source', 'bi', 'bi_x', 'postgres', 'a int); DROP TABLE bi.bi_t; --')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('source', 'bi', 'bi_x', 'postgres', '')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('source', 'nosuchschema', 'bi_x', 'postgres', 'a int')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('source', 'bi', '', 'postgres', 'a int')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner) VALUES ('table', 'bi', 'bi_plain', 'postgres')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, relation) VALUES ('table', 'bi', 'bi_view', 'postgres', 'bi.bi_view')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, relation) VALUES ('table', 'bi', 'bi_seq', 'postgres', 'bi.bi_seq')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, relation) VALUES ('table', 'bi', 'bi_plain', 'postgres', 0)$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, relation) VALUES ('table', 'bi', 'bi_plain', 'postgres', (SELECT o FROM public.bi_dropped)::regclass)$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, on_item, index_keys) VALUES ('index', 'bi', 'bi_x', 'postgres', 'u999999999', '{a}')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, on_item, index_keys) VALUES ('index', 'bi', 'bi_x', 'postgres', (SELECT id FROM mzcoord.items WHERE name = 'bi_t'), '{}')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, on_item, index_keys) VALUES ('index', 'bi', 'bi_x', 'postgres', (SELECT id FROM mzcoord.items WHERE name = 'bi_idx'), '{a}')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, on_item) VALUES ('sink', 'bi', 'bi_x', 'postgres', (SELECT id FROM mzcoord.items WHERE name = 'bi_sink'))$$),
($$INSERT INTO mzcoord.items (id, kind, schema_name, name, owner, on_item) VALUES ('u999999999', 'sink', 'bi', 'bi_x', 'postgres', 'u999999999')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, on_item, index_keys) VALUES ('index', 'bi', 'bi_x', 'postgres', (SELECT id FROM mzcoord.items WHERE name = 'bi_t'), '{nosuch}')$$),
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, retain_history, definition) VALUES ('source', 'bi', 'bi_x', 'postgres', '-1 s', 'a int')$$),
($$INSERT INTO mzcoord.items (id, kind, schema_name, name, owner, definition) VALUES ('u9223372036854775808', 'source', 'bi', 'bi_x', 'postgres', 'a int')$$),
($$UPDATE mzcoord.items SET retain_history = '0' WHERE name = 'bi_t'$$),
($$UPDATE mzcoord.items SET name = repeat('z', 63) WHERE name = 'bi_t'$$),
($$UPDATE mzcoord.items SET schema_name = 'nosuchschema' WHERE name = 'bi_t'$$),
($$UPDATE mzcoord.items SET owner = 'pg_read_all_data' WHERE name = 'bi_t'$$),
($$UPDATE mzcoord.items SET definition = 'SELECT 1; SELECT 2' WHERE name = 'bi_mv'$$),
($$UPDATE mzcoord.items SET relation = 'bi.bi_plain' WHERE name = 'bi_t'$$),
($$UPDATE mzcoord.items SET id = 'u999999999' WHERE name = 'bi_t'$$),
($$DELETE FROM mzcoord.items WHERE name = 'bi_t'$$),
($$DELETE FROM mzcoord.items$$),
($$UPDATE mzcoord.collections SET since = 9223372036854775807 WHERE item_id = (SELECT id FROM mzcoord.items WHERE name = 'bi_t')$$),
($$UPDATE mzcoord.collections SET since = -1 WHERE item_id = (SELECT id FROM mzcoord.items WHERE name = 'bi_t')$$),
($$UPDATE mzcoord.collections SET upper = 0 WHERE item_id = (SELECT id FROM mzcoord.items WHERE name = 'bi_s')$$),
($$INSERT INTO mzcoord.item_inputs VALUES ('u999999999', 'u999999999', 'u999999999')$$),
($$UPDATE mzcoord.implication_log SET detail = '{}'$$),
($$DELETE FROM mzcoord.storage$$),
($$TRUNCATE mzcoord.items CASCADE$$),
-- issue 19: the authority's tables are guarded against a superuser too
($$DELETE FROM mzcoord.coordinator_epoch$$),
($$TRUNCATE mzcoord.coordinator_epoch$$),
($$UPDATE mzcoord.coordinator_epoch SET epoch = epoch - 1$$),
($$UPDATE mzcoord.coordinator_epoch SET epoch = 4611686018427387905$$),
($$TRUNCATE mzcoord.compaction_bounds$$),
($$TRUNCATE mzcoord.read_requirements$$),
-- issue 19: a definition written directly is checked as create_materialized_view's
($$INSERT INTO mzcoord.items (kind, schema_name, name, owner, definition) VALUES ('materialized_view', 'bi', 'bi_x', 'postgres', 'SELECT a FROM bi.bi_t LIMIT 1')$$);

-- The driver: one statement per case, always rolled back.
CREATE FUNCTION public.bi_run(p_n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    st text;
    msg text;
BEGIN
    BEGIN
        EXECUTE (SELECT stmt FROM public.bi_cases WHERE n = p_n);
        RAISE SQLSTATE 'MZOK0';
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
    END;
    UPDATE public.bi_cases
       SET sqlstate = CASE WHEN st = 'MZOK0' THEN 'ok' ELSE st END,
           message = CASE WHEN st = 'MZOK0' THEN NULL ELSE msg END
     WHERE n = p_n;
END
$$;

-- Reads at times that are not complete wait by design (until the upper
-- passes them, which a source's upper or a far future time never does):
-- they must end in statement_timeout, a short one to keep the test quick.
-- A time that can never be complete (the largest, or a table's beyond
-- mzcoord.max_future) is refused at once: only a source's time below the
-- largest may still come, and is waited for.
UPDATE public.bi_cases SET waits = true
 WHERE stmt ~ 'read_at\(NULL::bi\.bi_s, 9223372036854775806'
    OR stmt ~ $$select_timestamp\(ARRAY\['bi\.bi_s'$$;

-- Long names are truncated with a NOTICE, as PostgreSQL truncates
-- identifiers; the corpus does not show them.
SET client_min_messages = warning;
\o /dev/null
SELECT format('SET statement_timeout = %L', CASE WHEN waits THEN '300ms' ELSE '60s' END),
       format('SELECT public.bi_run(%s)', n)
  FROM public.bi_cases ORDER BY n \gexec
\o
RESET statement_timeout;
RESET client_min_messages;

-- Every case, with how it ended.
SELECT n, sqlstate, left(stmt, 200) AS stmt FROM public.bi_cases ORDER BY n;

-- The figures, and what went wrong.
SELECT count(*) AS inputs_tried,
       count(*) FILTER (WHERE sqlstate <> 'ok' AND sqlstate NOT LIKE 'XX%'
                          AND NOT (waits AND sqlstate = '57014')) AS clear_errors,
       count(*) FILTER (WHERE sqlstate LIKE 'XX%') AS internal_errors,
       count(*) FILTER (WHERE waits AND sqlstate = '57014') AS waited_by_design,
       count(*) FILTER (WHERE sqlstate = 'ok') AS succeeded,
       count(*) FILTER (WHERE sqlstate IS NULL) AS not_run
  FROM public.bi_cases;
-- No internal error, no unexpected wait, every case run: no rows.
SELECT n, sqlstate, message FROM public.bi_cases
 WHERE sqlstate LIKE 'XX%' OR sqlstate IS NULL
    OR (sqlstate = '57014') <> waits
 ORDER BY n;

-- Names over 63 bytes: truncated with PostgreSQL's NOTICE (42622).
BEGIN;
SELECT mzcoord.create_source('bi.' || repeat('q', 70), 'a int') IS NOT NULL AS created;
SELECT mzcoord.create_materialized_view(repeat('"', 1) || repeat('M', 64) || '"', 'SELECT 1 AS x') IS NOT NULL AS created;
SELECT mzcoord.create_index(repeat('i', 64), 'bi.bi_t', '{a}') IS NOT NULL AS created;
SELECT length(name), kind FROM mzcoord.items WHERE schema_name = 'bi' AND length(name) = 63 ORDER BY kind;
ROLLBACK;

-- Nothing the corpus did survived it.
SELECT count(*) AS problems FROM mzcoord.check_consistency();
SELECT name, kind FROM mzcoord.items WHERE schema_name = 'bi' ORDER BY name;

SELECT mzcoord.drop_lease('bi_lease');
DROP SCHEMA bi CASCADE;
DROP TABLE public.bi_cases, public.bi_rels, public.bi_times, public.bi_json,
           public.bi_names, public.bi_dropped;
DROP FUNCTION public.bi_add(text), public.bi_run(int);
RESET search_path;
RESET lock_timeout;
