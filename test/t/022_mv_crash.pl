# Crashes in the middle of refreshing materialized views (issue 12), under
# write load: at the failpoints of src/compute/refresh.c
# (refresh_after_history: the differences are in the view's history, its
# upper not advanced; refresh_before_commit: the upper advanced, nothing
# committed) and at a plain immediate stop.  The failpoint raises PANIC, so
# the postmaster crash-restarts the server; the setting survives in
# postgresql.auto.conf, so the test then stops the server, removes it and
# starts it (as 017_crash_points.pl does).
#
# After each restart, once the views caught up with their inputs:
#   - no regression: no view's durable upper is below what was observed
#     before the crash;
#   - no loss, no duplicate: at every time an input changed (and the time
#     before it) from the view's as-of to its upper, the view read as of
#     that time equals its query over read_at of the inputs at that time
#     (EXCEPT ALL both ways: a refresh applied twice, or a time skipped,
#     shows as a difference); a scheduled view at each refresh time and
#     just before the next one equals its query at that refresh time;
#   - the view's relation equals its query over the inputs now;
#   - check_consistency() is clean.
# Last, a REFRESH AT CREATION view committed while the coordinator is kept
# from refreshing (read-only mode) and then crashed runs after the restart,
# at its committed as-of.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();

my $node = mzcoord_node('mvcrash', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE a (k int, v int);
	CREATE TABLE b (g int, label text);
	SELECT mzcoord.create_table('a', '1 hour');
	SELECT mzcoord.create_table('b', '1 hour');
	INSERT INTO a SELECT g, g FROM generate_series(1, 40) g;
	INSERT INTO b SELECT g, 'l' || (g % 3) FROM generate_series(0, 9) g;
	SELECT mzcoord.create_materialized_view('m_filter',
		'SELECT k, v FROM a WHERE v % 3 = 0', '1 hour');
	SELECT mzcoord.create_materialized_view('m_join',
		'SELECT b.label, count(*) AS n, sum(a.v) AS total FROM a JOIN b ON b.g = a.k % 10 GROUP BY b.label',
		'1 hour');
	SELECT mzcoord.create_materialized_view('m_mv',
		'SELECT count(*) AS labels, sum(n) AS n, sum(total) AS total FROM m_join', '1 hour');
	SELECT mzcoord.create_materialized_view('m_sched',
		'SELECT k % 5 AS g, sum(v) AS total FROM a GROUP BY 1', '1 hour',
		ARRAY['every 300 milliseconds']);

	-- The reference query of each view, over read_at of its inputs at $T.
	CREATE TABLE ref (mv regclass, q text);
	INSERT INTO ref VALUES
	('m_filter', 'SELECT k, v FROM mzcoord.read_at(NULL::a, $T) WHERE v % 3 = 0'),
	('m_join', 'SELECT b.label, count(*), sum(a.v) FROM mzcoord.read_at(NULL::a, $T) a
	              JOIN mzcoord.read_at(NULL::b, $T) b ON b.g = a.k % 10 GROUP BY b.label'),
	('m_mv', 'SELECT count(*), sum(n), sum(total) FROM (SELECT b.label, count(*) AS n, sum(a.v) AS total
	            FROM mzcoord.read_at(NULL::a, $T) a JOIN mzcoord.read_at(NULL::b, $T) b
	              ON b.g = a.k % 10 GROUP BY b.label) x'),
	('m_sched', 'SELECT k % 5, sum(v) FROM mzcoord.read_at(NULL::a, $T) GROUP BY 1');

	CREATE FUNCTION mismatches(q1 text, q2 text) RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE n bigint;
	BEGIN
		EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
		               q1, q2, q2, q1) INTO n;
		RETURN n;
	END $$;
	CREATE FUNCTION hist(rel regclass) RETURNS text LANGUAGE sql AS
	$$ SELECT history::text FROM mzcoord.storage WHERE relation = rel $$;

	-- Times to check a view at, and the time of the query to compare it
	-- with there: for a continual view every time an input changed and the
	-- time before it, from its as-of to its upper; for a scheduled one each
	-- refresh time below its upper and the time before the next (both
	-- compared with the query at the refresh time).
	CREATE FUNCTION check_times(p_mv regclass, OUT t bigint, OUT q_at bigint)
	RETURNS SETOF record LANGUAGE plpgsql AS $$
	DECLARE
		v_as_of bigint; v_upper bigint; v_sched text[]; v_every bigint;
	BEGIN
		SELECT c.as_of, coalesce(f.upper, 9223372036854775807), i.refresh
		  INTO v_as_of, v_upper, v_sched
		  FROM mzcoord.frontiers f JOIN mzcoord.collections c USING (global_id)
		  JOIN mzcoord.items i ON i.id = c.item_id
		 WHERE f.relation = p_mv;
		IF v_sched IS NULL THEN
			RETURN QUERY EXECUTE format(
				'SELECT DISTINCT x, x FROM (SELECT ts AS x FROM %s UNION SELECT ts - 1 FROM %s
				                            UNION SELECT ts FROM %s UNION SELECT ts - 1 FROM %s
				                            UNION SELECT $1) y
				  WHERE x >= $1 AND x < $2',
				hist('a'), hist('a'), hist('b'), hist('b')) USING v_as_of, v_upper;
		ELSE
			v_every := substring(v_sched[1] FROM 'every (\d+) milliseconds')::bigint;
			RETURN QUERY
			SELECT r + d, r FROM generate_series(v_as_of, v_upper - 1, v_every) r,
			                     (VALUES (0::bigint), (v_every - 1)) v(d)
			 WHERE r + d < v_upper;
		END IF;
	END $$;

	-- Per view: how many times were checked and how many rows differed.
	CREATE FUNCTION check_views(OUT mv text, OUT times bigint, OUT wrong bigint)
	RETURNS SETOF record LANGUAGE plpgsql AS $$
	DECLARE r record; c record;
	BEGIN
		FOR r IN SELECT * FROM ref x ORDER BY x.mv::text LOOP
			mv := r.mv::text; times := 0; wrong := 0;
			FOR c IN SELECT * FROM check_times(r.mv) LOOP
				times := times + 1;
				wrong := wrong + mismatches(format('SELECT * FROM mzcoord.read_at(NULL::%s, %s)', r.mv, c.t),
				                            replace(r.q, '$T', c.q_at::text));
			END LOOP;
			RETURN NEXT;
		END LOOP;
	END $$;

	-- The relation of each continual view against its query over the
	-- inputs now (the inputs are quiet when this is called).
	CREATE FUNCTION check_relations(OUT mv text, OUT wrong bigint)
	RETURNS SETOF record LANGUAGE plpgsql AS $$
	DECLARE r record; v_t bigint;
	BEGIN
		SELECT upper - 1 INTO v_t FROM mzcoord.frontiers WHERE relation = 'a'::regclass;
		FOR r IN SELECT * FROM ref x WHERE x.mv::text <> 'm_sched' ORDER BY x.mv::text LOOP
			mv := r.mv::text;
			wrong := mismatches(format('SELECT * FROM %s', r.mv), replace(r.q, '$T', v_t::text));
			RETURN NEXT;
		END LOOP;
	END $$;
});

# Write load: a psql running autocommit writes until it is killed (or its
# server crashes under it).
my $script = $node->basedir . '/load.sql';
{
	srand(20261201);
	open my $fh, '>', $script or die $!;
	for my $i (1 .. 20000)
	{
		my $k = 1 + int(rand(40));
		my $r = rand();
		if ($r < 0.6)
		{
			print $fh "UPDATE a SET v = v + " . (1 + int(rand(5))) . " WHERE k = $k;\n";
		}
		elsif ($r < 0.75)
		{
			print $fh "DELETE FROM a WHERE k = $k;\n";
		}
		elsif ($r < 0.9)
		{
			print $fh "INSERT INTO a VALUES ($k, " . int(rand(100)) . ");\n";
		}
		else
		{
			my $g = int(rand(10));
			print $fh "UPDATE b SET label = 'l" . int(rand(4)) . "' WHERE g = $g;\n";
		}
		print $fh "SELECT pg_sleep(0.01);\n" if $i % 3 == 0;
	}
	close $fh;
}

sub start_load
{
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-f', $script ],
		'>', \$out, '2>', \$err);
}

sub stop_load
{
	my ($h) = @_;
	eval { $h->kill_kill; };
}

# Durable uppers of the views (-1: the empty frontier).
sub view_uppers
{
	my %u;
	for my $line (split /\n/, $node->safe_psql('postgres', q{
		SELECT s.relation, coalesce(c.upper, -1)
		  FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
		 WHERE s.relation IN ('m_filter'::regclass, 'm_join'::regclass, 'm_mv'::regclass,
		                      'm_sched'::regclass)}))
	{
		my ($rel, $upper) = split /\|/, $line;
		$u{$rel} = $upper;
	}
	return \%u;
}

# Wait until every continual view is complete past the last change of the
# inputs and the scheduled one past its first refresh after it.
sub wait_caught_up
{
	my ($what) = @_;
	my $last = $node->safe_psql('postgres', q{
		SELECT greatest((SELECT max(ts) FROM } . hist_of('a') . q{),
		                (SELECT max(ts) FROM } . hist_of('b') . q{))});
	$node->poll_query_until('postgres', qq{
		SELECT bool_and(upper > $last + CASE WHEN relation = 'm_sched'::regclass THEN 300 ELSE 0 END)
		  FROM mzcoord.frontiers
		 WHERE relation IN ('m_filter'::regclass, 'm_join'::regclass, 'm_mv'::regclass,
		                    'm_sched'::regclass)})
	  or die "$what: the views did not catch up with their inputs";
}

sub hist_of
{
	my ($rel) = @_;
	return $node->safe_psql('postgres',
		"SELECT history::text FROM mzcoord.storage WHERE relation = '$rel'::regclass");
}

sub check_after
{
	my ($what, $before) = @_;
	wait_caught_up($what);
	my $after = view_uppers();
	my @regressed;
	for my $rel (sort keys %$before)
	{
		my ($b, $a) = ($before->{$rel}, $after->{$rel});
		push @regressed, "$rel $b -> $a" if $b == -1 ? $a != -1 : ($a != -1 && $a < $b);
	}
	is(join('; ', @regressed), '', "$what: no view's upper went back");

	my $checks = $node->safe_psql('postgres',
		'SELECT mv, times, wrong FROM check_views() ORDER BY mv');
	my (@wrong, @few);
	for my $line (split /\n/, $checks)
	{
		my ($mv, $times, $wrong) = split /\|/, $line;
		push @wrong, "$mv: $wrong rows differ over $times times" if $wrong != 0;
		push @few, "$mv: $times times" if $times < 2;
	}
	is(join('; ', @wrong), '', "$what: each view equals its query at every change time");
	is(join('; ', @few), '', "$what: each view was checked at several times");
	note "$what: " . join(', ', split /\n/, $checks);
	is($node->safe_psql('postgres',
			"SELECT string_agg(mv || ':' || wrong, ',') FROM check_relations() WHERE wrong <> 0"),
		'', "$what: each view's relation equals its query now");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
		'0', "$what: check_consistency() is clean");
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM mzcoord.maintenance_status WHERE failures > 0"),
		'0', "$what: no refresh is failing");
}

# A first check without any crash: the views are right to begin with.
wait_caught_up('initial');
check_after('no crash', view_uppers());

for my $point ('refresh_after_history', 'refresh_before_commit', 'immediate stop')
{
	my $load = start_load();
	sleep 2;
	my $before = view_uppers();
	if ($point eq 'immediate stop')
	{
		$node->stop('immediate');
		stop_load($load);
		$node->start;
	}
	else
	{
		my $logpos = -s $node->logfile;
		# The setting is written in one session, then reloaded by pg_ctl: the
		# crash may come before a session that reloaded it could end.
		$node->safe_psql('postgres', "ALTER SYSTEM SET mzcoord.failpoint = '$point'");
		$node->reload;
		ok($node->wait_for_log(qr/failpoint "$point" reached/, $logpos),
			"$point: the server crashed at the failpoint");
		stop_load($load);
		# The point is reached again after every crash restart: stop,
		# remove the setting, start.
		$node->stop('immediate');
		$node->adjust_conf('postgresql.auto.conf', 'mzcoord.failpoint', undef);
		$node->start;
	}
	$node->poll_query_until('postgres', 'SELECT ready FROM mzcoord.controller_status()')
	  or die "$point: controller not ready after the restart";
	check_after($point, $before);
}

# REFRESH AT CREATION committed, then a crash before the coordinator ran
# it (read-only mode keeps it from refreshing anything): after the restart
# it runs once, at its committed as-of.  Its input has the default retain
# history, so its as-of (the least valid read) is after the first write
# and before the second.
$node->safe_psql('postgres', q{
	CREATE TABLE c (k int, v int);
	SELECT mzcoord.create_table('c') IS NOT NULL;
});
my $t1 = $node->safe_psql('postgres', q{
	INSERT INTO c VALUES (1, 10), (2, 20);
	SELECT mzcoord.last_commit_ts();
});
$node->poll_query_until('postgres',
	"SELECT since > $t1 FROM mzcoord.frontiers WHERE relation = 'c'::regclass")
  or die 'the since of c did not pass its first write';
# From here on c keeps its history (the since stays, P6), so that the view
# can be compared with c at its as-of after the restart, however soon the
# view's release of c is published.
$node->safe_psql('postgres', q{SELECT mzcoord.set_retain_history('c', '1 hour')});
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET mzcoord.read_only = on;
	SELECT pg_reload_conf();
});
$node->poll_query_until('postgres', q{SELECT current_setting('mzcoord.read_only') = 'on'})
  or die 'read_only not set';
sleep 1;
$node->safe_psql('postgres', q{
	SELECT mzcoord.create_materialized_view('m_once', 'SELECT k, v FROM c', '1 hour',
		ARRAY['at creation']);
});
my $as_of = $node->safe_psql('postgres', q{
	SELECT c.as_of FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
	 WHERE s.relation = 'm_once'::regclass;
});
ok($as_of > $t1, 'at creation: its as-of is after the first write');
$node->safe_psql('postgres', q{INSERT INTO c VALUES (3, 30)});
sleep 1;
is($node->safe_psql('postgres', q{
	SELECT upper = as_of FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
	 WHERE s.relation = 'm_once'::regclass}), 't',
	'at creation: not refreshed before the crash');
$node->stop('immediate');
$node->adjust_conf('postgresql.auto.conf', 'mzcoord.read_only', undef);
$node->start;
$node->poll_query_until('postgres', q{
	SELECT upper IS NULL FROM mzcoord.frontiers WHERE relation = 'm_once'::regclass})
  or die 'at creation: the view was not refreshed after the restart';
is($node->safe_psql('postgres', qq{
	SELECT mismatches('SELECT * FROM mzcoord.read_at(NULL::m_once, $as_of)',
	                  'SELECT * FROM mzcoord.read_at(NULL::c, $as_of)')
	     + mismatches('SELECT * FROM m_once', 'SELECT * FROM mzcoord.read_at(NULL::c, $as_of)')}),
	'0', 'at creation: refreshed at its committed as-of after the restart');
is($node->safe_psql('postgres', q{SELECT string_agg(k || ':' || v, ',' ORDER BY k) FROM m_once}),
	'1:10,2:20', 'at creation: the rows before its as-of, not the one written after');
is($node->safe_psql('postgres', q{
	SELECT steps FROM mzcoord.maintenance m JOIN mzcoord.items i ON i.id = m.item_id
	 WHERE i.name = 'm_once'}), '1', 'at creation: refreshed once');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'at creation: check_consistency() is clean');

$node->stop;
done_testing();
