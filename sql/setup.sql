--
-- Installing the extension: objects, privileges, and reinstalling.
--
CREATE EXTENSION mzcoord;
SELECT extname, extversion, extrelocatable, nspname
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE extname = 'mzcoord';

-- Installing twice is an error, IF NOT EXISTS is not.
CREATE EXTENSION mzcoord;
CREATE EXTENSION IF NOT EXISTS mzcoord;

-- Another schema is refused: the extension is not relocatable.
CREATE SCHEMA elsewhere;
DROP EXTENSION mzcoord;
CREATE EXTENSION mzcoord SCHEMA elsewhere;
DROP SCHEMA elsewhere;
CREATE EXTENSION mzcoord;

-- Every function of the extension has explicit privileges (no default
-- PUBLIC grant left implicit) and lives in schema mzcoord.
SELECT p.proname, p.proacl IS NOT NULL AS explicit_acl,
       n.nspname
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension e ON e.oid = d.refobjid AND d.deptype = 'e'
  JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE e.extname = 'mzcoord' AND p.proacl IS NULL;

-- The settings exist and are reserved.
SHOW mzcoord.database;
SHOW mzcoord.tick_interval;
SELECT name, context, unit FROM pg_settings WHERE name LIKE 'mzcoord.%' ORDER BY name;
SET mzcoord.no_such_setting = 1;
SET mzcoord.tick_interval = 10;

-- Test helper used by later files: poll a boolean query until it holds.
-- pg_reload_conf() wakes the workers, which then act at once.
CREATE FUNCTION public.wait_until(cond text, timeout_s float8 DEFAULT 30)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + timeout_s * interval '1 second';
    ok boolean;
BEGIN
    LOOP
        EXECUTE cond INTO ok;
        IF ok THEN
            RETURN true;
        END IF;
        IF clock_timestamp() > deadline THEN
            RAISE WARNING 'timed out waiting for: %', cond;
            RETURN false;
        END IF;
        PERFORM pg_sleep(0.02);
    END LOOP;
END
$$;

-- Test helper: wait until the coordinator has completed n more ticks (a
-- setting reloaded before the call is in force for the last of them: the
-- coordinator reloads its configuration before each tick).  Waits on the
-- tick count, never on the clock, so a busy machine only makes it slower.
CREATE FUNCTION public.wait_ticks(n integer DEFAULT 3)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    start bigint := (SELECT ticks FROM mzcoord.worker_status());
BEGIN
    RETURN public.wait_until(format(
        'SELECT ticks >= %s FROM mzcoord.worker_status()', start + n), 60);
END
$$;

-- Test helper: run a statement and show how it failed, with its SQLSTATE,
-- without source locations (which change with every edit) and with times
-- (13-digit epoch milliseconds) masked as <ts>.
CREATE FUNCTION public.try(stmt text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text; hnt text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    RETURN regexp_replace(
        format('%s: %s', st, msg)
        || CASE WHEN det <> '' THEN E'\nDETAIL: ' || det ELSE '' END
        || CASE WHEN hnt <> '' THEN E'\nHINT: ' || hnt ELSE '' END,
        '\d{13}', '<ts>', 'g');
END
$$;
