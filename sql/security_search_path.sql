--
-- Security: no statement mzcoord runs with rights other than the caller's
-- (the coordinator as the bootstrap superuser, a backend switched to the
-- extension or relation owner) resolves a function, operator or aggregate
-- through the caller's, the role's or the database's search_path.
--
-- An unprivileged role shadows pg_catalog's length(text), array_agg, count(*),
-- text and bigint "=" and bigint "<" in schema public, and puts public before
-- pg_catalog in the search_path of its session, of its role and of the
-- database.  Each shadow records who called it and, if that is a superuser,
-- makes the attacker superuser.  Then every entry point is driven and the
-- coordinator restarted: the log must hold only the attacker's own calls.
--
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);

CREATE TABLE public.mzc_attack_log (who name, what text);
GRANT SELECT, INSERT ON public.mzc_attack_log TO PUBLIC;
CREATE ROLE mzc_attacker;
GRANT CREATE ON SCHEMA public TO mzc_attacker;

SET ROLE mzc_attacker;
CREATE FUNCTION public.mzc_trap(what text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    INSERT INTO public.mzc_attack_log VALUES (current_user, what);
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE mzc_attacker SUPERUSER';
    END IF;
END
$$;
CREATE FUNCTION public.length(t text) RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM public.mzc_trap('length(text)');
    RETURN pg_catalog.length(t);
END
$$;
CREATE FUNCTION public.mzc_agg_step(s text[], v text) RETURNS text[]
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM public.mzc_trap('array_agg(text)');
    RETURN pg_catalog.array_append(s, v);
END
$$;
CREATE AGGREGATE public.array_agg(text) (SFUNC = public.mzc_agg_step, STYPE = text[]);
CREATE FUNCTION public.mzc_count_step(s bigint) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM public.mzc_trap('count(*)');
    RETURN s OPERATOR(pg_catalog.+) 1;
END
$$;
CREATE AGGREGATE public.count(*) (SFUNC = public.mzc_count_step, STYPE = bigint, INITCOND = '0');
CREATE FUNCTION public.mzc_text_eq(a text, b text) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM public.mzc_trap('text = text');
    RETURN pg_catalog.texteq(a, b);
END
$$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.mzc_text_eq);
CREATE FUNCTION public.mzc_int8_eq(a bigint, b bigint) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM public.mzc_trap('bigint = bigint');
    RETURN pg_catalog.int8eq(a, b);
END
$$;
CREATE OPERATOR public.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.mzc_int8_eq);
CREATE FUNCTION public.mzc_int8_lt(a bigint, b bigint) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM public.mzc_trap('bigint < bigint');
    RETURN pg_catalog.int8lt(a, b);
END
$$;
CREATE OPERATOR public.< (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.mzc_int8_lt);
RESET ROLE;

-- The database's and the role's search_path put the shadows first.
DO $$ BEGIN
    EXECUTE format('ALTER DATABASE %I SET search_path = public, pg_catalog',
                   current_database());
END $$;
ALTER ROLE mzc_attacker SET search_path = public, pg_catalog;

-- The coordinator restarts with the database's search_path.
SELECT pid AS old_pid FROM mzcoord.worker_status() \gset
SELECT pg_terminate_backend(pid) FROM pg_stat_activity
 WHERE backend_type = 'mzcoord coordinator';
SELECT wait_until(format($$SELECT pid IS NOT NULL AND pid <> %s
                                  AND ticks > 2 FROM mzcoord.worker_status()$$, :old_pid));

-- Every entry point, as the attacker with the shadows first in its session.
SET ROLE mzc_attacker;
SET search_path = public, pg_catalog;
CREATE TABLE public.mzc_t (k int, v text);
SELECT mzcoord.create_table('public.mzc_t', '1 s') IS NOT NULL AS registered;
INSERT INTO public.mzc_t VALUES (1, 'a'), (2, 'b');
UPDATE public.mzc_t SET v = 'c' WHERE k OPERATOR(pg_catalog.=) 2;
BEGIN;
SELECT mzcoord.select_timestamp(ARRAY['public.mzc_t'::regclass]) AS read_ts \gset
SELECT k, v FROM mzcoord.read_at(NULL::public.mzc_t, :read_ts) ORDER BY k;
COMMIT;
SELECT mzcoord.acquire_read_hold(ARRAY['public.mzc_t'::regclass]) IS NOT NULL AS held;
SELECT mzcoord.compact('public.mzc_t') IS NOT NULL AS compacted;
SELECT mzcoord.create_source('public.mzc_s', 'k int, v text', '1 hour') IS NOT NULL AS source;
SELECT upper AS s_upper FROM mzcoord.frontiers WHERE relation = 'public.mzc_s'::regclass \gset
SELECT mzcoord.append(NULL::public.mzc_s, :s_upper, ARRAY[ROW(1, 'x'), ROW(2, 'y')]::public.mzc_s[]);
SELECT mzcoord.advance_upper('public.mzc_s', :s_upper + 2);
SELECT mzcoord.append(NULL::public.mzc_s, :s_upper + 2, ARRAY[ROW(3, 'z')]::public.mzc_s[],
                      ARRAY[ROW(1, 'x')]::public.mzc_s[]);
SELECT mzcoord.advance_upper('public.mzc_s', :s_upper + 4);
SELECT k, v FROM public.mzc_s ORDER BY k;
SELECT mzcoord.compact('public.mzc_s') IS NOT NULL AS compacted;
SELECT mzcoord.create_materialized_view('public.mzc_mv', 'SELECT k FROM public.mzc_t', '1 s')
       IS NOT NULL AS view;
SELECT mzcoord.set_retain_history('public.mzc_t', '2 s');
ALTER TABLE public.mzc_t ADD COLUMN w text;
SELECT try('SELECT count(*) FROM mzcoord.check_consistency()');
-- Let the coordinator tick and persist frontiers with the shadows in place.
SELECT ticks AS ticks0 FROM mzcoord.worker_status() \gset
SELECT wait_until(format($$SELECT ticks OPERATOR(pg_catalog.>) %s
                            FROM mzcoord.worker_status()$$, :ticks0 + 10));
SELECT mzcoord.drop('public.mzc_mv');
SELECT mzcoord.drop('public.mzc_s');
SELECT mzcoord.drop('public.mzc_t');
RESET search_path;
RESET ROLE;

-- Another coordinator start under the database's search_path.  (The
-- bootstrap query runs only when shared memory is new, after a server
-- restart: the same pinned search_path covers it.)
SELECT pid AS old_pid FROM mzcoord.worker_status() \gset
SELECT pg_terminate_backend(pid) FROM pg_stat_activity
 WHERE backend_type = 'mzcoord coordinator';
SELECT wait_until(format($$SELECT pid IS NOT NULL AND pid <> %s
                                  AND ticks > 2 FROM mzcoord.worker_status()$$, :old_pid));

-- Nothing but the attacker itself ever called a shadow, and it is no
-- superuser.
SELECT DISTINCT what AS called_with_elevated_rights
  FROM public.mzc_attack_log WHERE who <> 'mzc_attacker' ORDER BY 1;
SELECT rolsuper AS attacker_is_superuser FROM pg_roles WHERE rolname = 'mzc_attacker';

-- Undo.
DO $$ BEGIN
    EXECUTE format('ALTER DATABASE %I RESET search_path', current_database());
END $$;
ALTER ROLE mzc_attacker NOSUPERUSER;
DROP OPERATOR public.< (bigint, bigint);
DROP OPERATOR public.= (bigint, bigint);
DROP OPERATOR public.= (text, text);
DROP AGGREGATE public.count(*);
DROP AGGREGATE public.array_agg(text);
DROP FUNCTION public.mzc_int8_lt(bigint, bigint), public.mzc_int8_eq(bigint, bigint),
    public.mzc_text_eq(text, text), public.mzc_count_step(bigint),
    public.mzc_agg_step(text[], text), public.length(text), public.mzc_trap(text);
DROP TABLE public.mzc_attack_log;
REVOKE CREATE ON SCHEMA public FROM mzc_attacker;
DROP ROLE mzc_attacker;
SELECT pid AS old_pid FROM mzcoord.worker_status() \gset
SELECT pg_terminate_backend(pid) FROM pg_stat_activity
 WHERE backend_type = 'mzcoord coordinator';
SELECT wait_until(format($$SELECT pid IS NOT NULL AND pid <> %s
                                  AND ticks > 2 FROM mzcoord.worker_status()$$, :old_pid));
SELECT wait_until($$SELECT ready FROM mzcoord.controller_status()$$);
